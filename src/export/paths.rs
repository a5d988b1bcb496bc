//! Every path `txq export` writes or removes. A table's name becomes its folder in a safe,
//! documented form that no name can steer out of OUT ([`folder_name`]); and every path below a
//! folder the export owns is reached through a [`Root`], which proves it inside: plain names
//! only (no `..`, `.`, root or prefix), and no symbolic link on the way, so that the export never
//! writes or removes anything through one.

use crate::error::Error;
use crate::text::escape;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::fs::File;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// The longest folder name a table gets: longer ones are cut, with a hash of the whole name.
const MAX_FOLDER_BYTES: usize = 120;
/// What a cut folder name keeps of the escaped name, before `~` and the hash.
const CUT_FOLDER_BYTES: usize = 100;
/// The folder of a table whose name is empty: `%` is never alone in an escaped name.
const EMPTY_NAME_FOLDER: &str = "%";

/// The folder a schema or table is exported to. Lowercase ASCII letters, digits, `_` and `-`
/// are kept, and `.` but as the first character; every other byte of the name's UTF-8 is written
/// `%XX` (uppercase hex). So `usage` is `usage`, `a/b` is `a%2Fb`, `..` is `%2E.`, `Usage` is
/// `%55sage`: one name, one folder, on file systems that ignore case too. An empty name is `%`;
/// a name whose folder would be longer than 120 bytes keeps its first 100 bytes (never half an
/// escape), then `~` and 16 hex digits of the SHA-256 of the whole name (`~` is in no other
/// folder name).
pub(crate) fn folder_name(name: &str) -> String {
    if name.is_empty() {
        return EMPTY_NAME_FOLDER.to_string();
    }
    let mut out = String::with_capacity(name.len());
    let mut escapes_at = Vec::new();
    for (i, byte) in name.bytes().enumerate() {
        let kept = byte.is_ascii_lowercase()
            || byte.is_ascii_digit()
            || matches!(byte, b'_' | b'-')
            || (byte == b'.' && i > 0);
        if kept {
            out.push(byte as char);
        } else {
            escapes_at.push(out.len());
            let _ = write!(out, "%{byte:02X}");
        }
    }
    if out.len() <= MAX_FOLDER_BYTES {
        return out;
    }
    let mut cut = CUT_FOLDER_BYTES;
    if let Some(&start) = escapes_at.iter().rev().find(|&&at| at < cut)
        && start + 3 > cut
    {
        cut = start;
    }
    out.truncate(cut);
    out.push('~');
    for byte in &Sha256::digest(name.as_bytes())[..8] {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// A table's folder below the export's root: `<schema>/<table>`, each named by [`folder_name`].
pub(crate) fn table_folder(schema: &str, table: &str) -> PathBuf {
    Path::new(&folder_name(schema)).join(folder_name(table))
}

/// A folder the export owns (OUT, the new dataset beside it, its staging folder, or the folder
/// OUT is in, for the export's own siblings of OUT), and the only way the export reaches a path
/// below it. The root itself is the user's (OUT may be a link they made); what is below it is
/// not trusted.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    path: PathBuf,
}

impl Root {
    pub(crate) fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `relative` below the root, proven to stay inside it: every component a plain name, and
    /// every folder on the way that exists a folder, not a symbolic link. The last component is
    /// not checked: what is done with it says whether it may be a link (it may be removed or
    /// renamed, never written through).
    pub(crate) fn join(&self, relative: &Path) -> Result<PathBuf, Error> {
        let names = plain_names(relative)?;
        let mut path = self.path.clone();
        for (i, name) in names.iter().enumerate() {
            path.push(name);
            if i + 1 < names.len() && !self.is_folder(&path)? {
                // Not there: nor is anything below it.
                return Ok(self.path.join(relative));
            }
        }
        Ok(path)
    }

    /// Whether `path` (below the root) is a folder; false when it does not exist; an error when
    /// it is a link or something else.
    fn is_folder(&self, path: &Path) -> Result<bool, Error> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => Err(self.link_refused(path)),
            Ok(meta) if meta.is_dir() => Ok(true),
            Ok(_) => {
                Err(Error::Write { path: path.to_path_buf(), source: refused("exists and is not a folder") })
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(e) => Err(io_error(path, e)),
        }
    }

    fn link_refused(&self, path: &Path) -> Error {
        Error::Usage(format!(
            "{}: a symbolic link inside {}: txq export writes only inside it, never through a link; \
             remove the link (or export into a new folder)",
            escape::path(path),
            escape::path(&self.path)
        ))
    }

    /// Makes the folder `relative` and those on the way, each a real folder (none a link).
    pub(crate) fn create_dir_all(&self, relative: &Path) -> Result<PathBuf, Error> {
        let mut path = self.path.clone();
        for name in plain_names(relative)? {
            path.push(name);
            if !self.is_folder(&path)? {
                match std::fs::create_dir(&path) {
                    Ok(()) => {}
                    // Made meanwhile by another writer: it must be a folder still.
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                        if !self.is_folder(&path)? {
                            return Err(io_error(&path, e));
                        }
                    }
                    Err(e) => return Err(io_error(&path, e)),
                }
            }
        }
        Ok(path)
    }

    /// Creates the new file `relative`, its folders first. It must not exist: a file is never
    /// opened over an old one, nor through a link of that name.
    pub(crate) fn create_file(&self, relative: &Path) -> Result<File, Error> {
        if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_dir_all(parent)?;
        }
        let path = self.join(relative)?;
        std::fs::OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| io_error(&path, e))
    }

    /// Renames `relative` to `to` below `target`, making the folders `to` is in; a link named
    /// `relative` is renamed itself, and one at `to` replaced.
    pub(crate) fn rename(&self, relative: &Path, target: &Root, to: &Path) -> Result<(), Error> {
        let from = self.join(relative)?;
        if let Some(parent) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
            target.create_dir_all(parent)?;
        }
        let to = target.join(to)?;
        std::fs::rename(&from, &to).map_err(|e| io_error(&to, e))
    }

    /// Removes the file (or link: never what it points to) `relative`; nothing if it is gone.
    pub(crate) fn remove_file(&self, relative: &Path) -> Result<(), Error> {
        let path = self.join(relative)?;
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(io_error(&path, e)),
            _ => Ok(()),
        }
    }

    /// Removes the folder `relative` and all it holds, no link followed (a link at `relative`
    /// is removed itself); nothing if it is gone.
    pub(crate) fn remove_dir_all(&self, relative: &Path) -> Result<(), Error> {
        let path = self.join(relative)?;
        match std::fs::remove_dir_all(&path) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(io_error(&path, e)),
            _ => Ok(()),
        }
    }

    /// Every entry below the folder `relative` (the root when empty) that is not a folder (files,
    /// and links, which are not followed), relative to the root, in name order; none when it
    /// does not exist. The folder itself must be a folder, not a link.
    pub(crate) fn entries_below(&self, relative: &Path) -> Result<Vec<PathBuf>, Error> {
        Ok(self.walk(relative)?.into_iter().map(|(path, _)| path).collect())
    }

    /// The files below the folder `relative`, relative to the root; an error naming the first
    /// link below it, as for a link on the way to it.
    pub(crate) fn files_below(&self, relative: &Path) -> Result<Vec<PathBuf>, Error> {
        let mut files = Vec::new();
        for (path, kind) in self.walk(relative)? {
            if kind.is_symlink() {
                return Err(self.link_refused(&self.path.join(path)));
            }
            if kind.is_file() {
                files.push(path);
            }
        }
        Ok(files)
    }

    /// The entries below `relative` (the root itself when empty) that are not folders.
    fn walk(&self, relative: &Path) -> Result<Vec<(PathBuf, std::fs::FileType)>, Error> {
        let dir = if relative.as_os_str().is_empty() {
            self.path.clone()
        } else {
            let dir = self.join(relative)?;
            if !self.is_folder(&dir)? {
                return Ok(Vec::new());
            }
            dir
        };
        let mut found = Vec::new();
        let walk = walkdir::WalkDir::new(&dir).follow_links(false).follow_root_links(false);
        for entry in walk.sort_by_file_name() {
            let entry = entry.map_err(|e| Error::Write {
                path: e.path().unwrap_or(&dir).to_path_buf(),
                source: e.into(),
            })?;
            if !entry.file_type().is_dir() {
                let below = entry.path().strip_prefix(&self.path).expect("walked below the root");
                found.push((below.to_path_buf(), entry.file_type()));
            }
        }
        Ok(found)
    }
}

/// The components of a relative path, each a plain name; an error for any other.
fn plain_names(relative: &Path) -> Result<Vec<&std::ffi::OsStr>, Error> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => names.push(name),
            _ => {
                return Err(Error::Write {
                    path: relative.to_path_buf(),
                    source: refused(
                        "not a plain path below the export's folder; txq export writes nothing else",
                    ),
                });
            }
        }
    }
    if names.is_empty() {
        return Err(Error::Write {
            path: relative.to_path_buf(),
            source: refused("an empty path below the export's folder"),
        });
    }
    Ok(names)
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Write { path: path.to_path_buf(), source: e }
}

/// A path txq export will not write: its reason as the error of the write.
fn refused(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_stay_and_others_are_escaped() {
        for name in ["usage", "tool_call", "turn-end", "v1.2", "a.b.c"] {
            assert_eq!(folder_name(name), name);
        }
        assert_eq!(folder_name("../../../victim"), "%2E.%2F..%2F..%2Fvictim");
        assert_eq!(folder_name("/abs/x"), "%2Fabs%2Fx");
        assert_eq!(folder_name("a/b"), "a%2Fb");
        assert_eq!(folder_name(""), "%");
        assert_eq!(folder_name("."), "%2E");
        assert_eq!(folder_name(".."), "%2E.");
        assert_eq!(folder_name(".hidden"), "%2Ehidden");
        assert_eq!(folder_name("a\u{0}b"), "a%00b");
        assert_eq!(folder_name("a\nb\u{1b}"), "a%0Ab%1B");
        assert_eq!(folder_name("Usage"), "%55sage");
        assert_eq!(folder_name("50%"), "50%25");
        assert_eq!(folder_name("ü"), "%C3%BC");
    }

    #[test]
    fn every_folder_is_one_plain_name() {
        let names = ["../../../victim", "/abs/x", "a/b", "", ".", "..", "a\u{0}b", "\\", "C:", "~", "%"];
        for name in names {
            let folder = folder_name(name);
            let components: Vec<Component> = Path::new(&folder).components().collect();
            assert!(matches!(components[..], [Component::Normal(_)]), "{name:?} -> {folder:?}");
            assert!(!folder.starts_with('.') && !folder.starts_with('~'), "{name:?} -> {folder:?}");
            assert!(folder.bytes().all(|b| b.is_ascii_graphic() && b != b'/' && b != b'\\'), "{folder:?}");
        }
    }

    #[test]
    fn names_get_folders_of_their_own() {
        let names = ["a/b", "a%2Fb", "A", "a", "%41", "", "%", ".", "%2E", "..", "%2E.", "x~1"];
        let folders: std::collections::HashSet<String> =
            names.iter().map(|n| folder_name(n).to_ascii_lowercase()).collect();
        assert_eq!(folders.len(), names.len(), "no two names share a folder, whatever the case");
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let long = "l".repeat(300);
        let folder = folder_name(&long);
        assert_eq!(folder.len(), CUT_FOLDER_BYTES + 1 + 16);
        assert!(folder.starts_with(&"l".repeat(CUT_FOLDER_BYTES)) && folder.contains('~'), "{folder}");
        assert_ne!(folder, folder_name(&"l".repeat(301)));
        assert_eq!(folder, folder_name(&long), "the same name, the same folder");
        // An escape is never cut in half.
        let escapes = format!("{}{}", "l".repeat(CUT_FOLDER_BYTES - 1), "/".repeat(100));
        let folder = folder_name(&escapes);
        assert_eq!(folder.split('~').next().unwrap(), "l".repeat(CUT_FOLDER_BYTES - 1));
        assert_eq!(folder_name(&"/".repeat(40)).len(), MAX_FOLDER_BYTES, "not cut at the limit");
    }

    #[test]
    fn paths_that_leave_the_root_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        for bad in ["../x", "a/../../x", "/etc/x", "./x", ""] {
            assert!(root.join(Path::new(bad)).is_err(), "{bad}");
            assert!(root.create_dir_all(Path::new(bad)).is_err(), "{bad}");
        }
        assert_eq!(root.join(Path::new("a/b")).unwrap(), dir.path().join("a/b"));
    }

    #[cfg(unix)]
    #[test]
    fn links_below_the_root_are_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        root.create_dir_all(Path::new("out/rupu")).unwrap();
        let root = Root::new(dir.path().join("out"));
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("out/rupu/usage")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("f"), dir.path().join("out/rupu/file")).unwrap();
        let refused = |e: Error| {
            let text = e.to_string();
            assert!(text.contains("symbolic link") && text.contains("out/rupu/"), "{text}");
        };
        refused(root.create_dir_all(Path::new("rupu/usage/date=x")).unwrap_err());
        refused(root.create_file(Path::new("rupu/usage/part.parquet")).unwrap_err());
        refused(root.entries_below(Path::new("rupu/usage")).unwrap_err());
        assert!(
            root.create_file(Path::new("rupu/file")).is_err(),
            "a new file is never opened through a link"
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0, "nothing written elsewhere");
        // A link itself may be removed: what it points to stays.
        std::fs::write(elsewhere.path().join("kept"), "x").unwrap();
        root.remove_dir_all(Path::new("rupu/usage")).unwrap();
        assert!(elsewhere.path().join("kept").exists());
        assert_eq!(root.entries_below(Path::new("rupu")).unwrap(), [PathBuf::from("rupu/file")]);
        refused(root.files_below(Path::new("rupu")).unwrap_err());
    }
}
