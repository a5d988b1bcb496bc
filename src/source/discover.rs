//! Finding transcript files: the paths given (or each format's default places), walked
//! recursively without following a symlink loop twice, each file given to the format that claims it.

use crate::error::{Error, Result};
use crate::format::{FileMatch, Format};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The hasher of maps keyed by paths: a fast one, not SipHash, since a start hashes tens of
/// thousands of long paths (benchmarks/ANALYSIS.md, "A compact corpus").
pub(crate) type PathHasher = foldhash::fast::RandomState;

/// A path as a key: the XXH3-64 of its bytes (a million paths are not kept twice to be found
/// by; two paths of one corpus with the same hash, a chance of about 3 in 10^8 at a million
/// files, would be one file to the lookups that use it).
pub(crate) fn path_key(path: &std::path::Path) -> u64 {
    xxhash_rust::xxh3::xxh3_64(path.as_os_str().as_encoded_bytes())
}

/// A file found for a format.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as found (the searched path joined with the file's place below it).
    pub path: PathBuf,
    /// The canonical path when it is not `path` ([`SourceFile::canonical`]): most files are
    /// found by the path that names them, and a million paths are not kept twice.
    canonical_if_other: Option<PathBuf>,
    /// Its size when found: txq reads this many bytes, so a file still being written reads as a
    /// consistent prefix.
    pub size: u64,
    /// Its modification time when found, in nanoseconds since the epoch.
    pub modified: Option<u64>,
    /// Its inode number when found (unix only).
    pub inode: Option<u64>,
    /// Its status change time (ctime) when found, in nanoseconds since the epoch (unix only): any
    /// write moves it, and unlike the modification time nothing can set it back.
    pub changed: Option<u64>,
}

/// What discovery found: files per format (in the order of `formats`), and problems on the way.
#[derive(Debug, Default)]
pub struct Discovery {
    pub files: Vec<Vec<SourceFile>>,
    /// Files more than one format's rules claim: which format's list holds each (the first by
    /// rank), its index there, and the other formats that claim it, by rank; its content decides
    /// among them ([`crate::table::corpus`]).
    pub(crate) contested: Vec<Contested>,
    /// The directories searched.
    pub(crate) searched: Vec<PathBuf>,
    /// The places discovery was given (the paths, or the default places found): what a
    /// scheduler searches again for the same files.
    pub(crate) given: Vec<PathBuf>,
    /// Non-fatal problems: unreadable directories, symlink loops.
    pub(crate) warnings: Vec<String>,
}

impl Discovery {
    /// A hash of every file found, in order: its format, path, canonical path, size and stamps.
    /// Two discoveries of the same stamp found the same files as they were.
    pub(crate) fn stamp(&self) -> u64 {
        let mut hash = xxhash_rust::xxh3::Xxh3Default::new();
        let mut bytes = |b: &[u8]| {
            hash.update(&(b.len() as u64).to_le_bytes());
            hash.update(b);
        };
        for (format, files) in self.files.iter().enumerate() {
            bytes(&(format as u64).to_le_bytes());
            for file in files {
                bytes(file.path.as_os_str().as_encoded_bytes());
                bytes(file.canonical().as_os_str().as_encoded_bytes());
                for value in [Some(file.size), file.modified, file.inode, file.changed] {
                    bytes(&value.map_or([0xff; 9], |v| {
                        let mut b = [0u8; 9];
                        b[1..].copy_from_slice(&v.to_le_bytes());
                        b
                    }));
                }
            }
        }
        hash.digest()
    }
}

/// A file more than one format claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Contested {
    pub(crate) format: usize,
    pub(crate) index: usize,
    pub(crate) others: Vec<usize>,
}

/// The default places of every format that exist, relative to `cwd` (`~/` meaning `home`).
pub fn default_paths(formats: &[Format], cwd: &Path, home: Option<&Path>) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut looked = Vec::new();
    for format in formats {
        for group in format.default_roots {
            let existing = group.iter().filter_map(|p| expand(p, home)).find(|p| {
                // Formats sharing a place name it once.
                let shown = crate::text::escape::path(p);
                if !looked.contains(&shown) {
                    looked.push(shown);
                }
                cwd.join(p).is_dir()
            });
            if let Some(path) = existing
                && !found.contains(&path)
            {
                found.push(path);
            }
        }
    }
    if found.is_empty() {
        return Err(Error::NoDefaultPlace(looked.join(", ")));
    }
    Ok(found)
}

/// A default place as a path: `~/` becomes the home directory, `$NAME/` the directory an
/// environment variable names (`None` when it is unset or empty: the place is not looked at);
/// others stay relative, so that the `file` column shows them as the user knows them.
fn expand(place: &str, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(variable) = place.strip_prefix('$') {
        let (name, rest) = variable.split_once('/').unwrap_or((variable, ""));
        let dir = std::env::var_os(name).filter(|v| !v.is_empty())?;
        return Some(PathBuf::from(dir).join(rest));
    }
    Some(match (place.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(place),
    })
}

/// Walks `paths` and gives each file to the first format that claims it: formats matching a file
/// by its exact name go before those matching it by extension.
pub fn discover(formats: &[Format], paths: &[PathBuf]) -> Result<Discovery> {
    discover_listed(formats, paths, &HashMap::new())
}

/// [`discover`] over local paths and remote places (`s3://bucket/prefix`) alike: the remote ones
/// are listed first (all at once), then each object is claimed as a file is.
pub async fn discover_all(formats: &[Format], paths: &[PathBuf]) -> Result<Discovery> {
    let listings = super::remote::list_all(paths).await?;
    discover_listed(formats, paths, &listings)
}

/// [`discover`], with the listing of each remote place among `paths`.
pub fn discover_listed(
    formats: &[Format],
    paths: &[PathBuf],
    listings: &HashMap<PathBuf, super::remote::Listing>,
) -> Result<Discovery> {
    let mut out =
        Discovery { files: vec![Vec::new(); formats.len()], given: paths.to_vec(), ..Default::default() };
    let claimer = Claimer::new(formats);
    let claim = |path: &Path| claimer.claim(path);
    let paths = with_beside(formats, paths);
    let mut contested: Vec<(PathBuf, Vec<usize>)> = Vec::new();

    // Every file found goes straight to its format's list, and each root's share of a list is
    // then sorted in walk order and rid of the files reached before (through a symlink, or a
    // root given twice): no list of every file is made beside the lists themselves.
    let mut seen: HashSet<u64, PathHasher> = HashSet::default();
    for root in &paths {
        let starts: Vec<usize> = out.files.iter().map(Vec::len).collect();
        if super::remote::is_remote(root) {
            let listing = listings.get(root).ok_or_else(|| Error::Path {
                path: root.clone(),
                why: "a remote place is listed before it is searched".into(),
            })?;
            for (i, file) in remote_files(&claimer, root, listing, &mut contested, &mut out) {
                out.files[i].push(file);
            }
            keep_first(&mut out.files, &starts, &mut seen);
            continue;
        }
        let meta = std::fs::metadata(root).map_err(|e| unreachable(root, &e))?;
        if let Some(kind) = special_kind(&meta.file_type()) {
            out.warnings
                .push(format!("{}: not read: not a regular file: {kind}", crate::text::escape::path(root)));
            continue;
        }
        if meta.is_file() {
            let candidates = claimer.candidates(root);
            if candidates.len() > 1 {
                contested.push((root.clone(), candidates[1..].to_vec()));
            }
            match candidates.first().copied() {
                Some(i) => out.files[i].push(source(root.clone(), None, &meta)),
                None => out.warnings.push(format!(
                    "{}: not read: no format reads files of this name",
                    crate::text::escape::path(root)
                )),
            }
            keep_first(&mut out.files, &starts, &mut seen);
            continue;
        }
        out.searched.push(root.clone());
        // Walked in the file system's order and sorted once after: a walk sorted by name
        // compares names by parsing paths, tens of times a file.
        let walk = walkdir::WalkDir::new(root).follow_links(true);
        // The canonical path of the last directory met: a file in it that is no symlink is that
        // and its name (one canonicalisation a directory, not one a file).
        let mut last_dir: Option<(PathBuf, PathBuf)> = None;
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    out.warnings.push(walk_warning(&e));
                    continue;
                }
            };
            if !entry.file_type().is_file() {
                // A FIFO named like a transcript would block the read that opened it: it is
                // never opened, and said so.
                if let Some(kind) = special_kind(&entry.file_type())
                    && claim(entry.path()).is_some()
                {
                    let path = crate::text::escape::path(entry.path());
                    out.warnings.push(format!("{path}: not read: not a regular file: {kind}"));
                }
                continue;
            }
            let candidates = claimer.candidates(entry.path());
            if let Some((&i, others)) = candidates.split_first() {
                if !others.is_empty() {
                    contested.push((entry.path().to_path_buf(), others.to_vec()));
                }
                let meta = match entry.metadata() {
                    Ok(m) => m,
                    Err(e) => {
                        out.warnings.push(walk_warning(&e));
                        continue;
                    }
                };
                let canonical = match entry.path().parent() {
                    Some(dir) if !entry.path_is_symlink() => {
                        if last_dir.as_ref().is_none_or(|(d, _)| d.as_os_str() != dir.as_os_str()) {
                            last_dir = std::fs::canonicalize(dir).ok().map(|c| (dir.to_path_buf(), c));
                        }
                        last_dir.as_ref().map(|(_, c)| c.join(entry.file_name()))
                    }
                    _ => None,
                };
                out.files[i].push(source(entry.into_path(), canonical, &meta));
            }
        }
        let below = root.as_os_str().len();
        for (files, &start) in out.files.iter_mut().zip(&starts) {
            files[start..].sort_unstable_by(|a, b| {
                let (a, b) = (a.path.as_os_str().as_encoded_bytes(), b.path.as_os_str().as_encoded_bytes());
                walk_order(a.get(below..).unwrap_or(a), b.get(below..).unwrap_or(b))
            });
        }
        keep_first(&mut out.files, &starts, &mut seen);
    }
    drop(seen);
    if !contested.is_empty() {
        let contested: HashMap<PathBuf, Vec<usize>> = contested.into_iter().collect();
        for (format, files) in out.files.iter().enumerate() {
            for (index, file) in files.iter().enumerate() {
                if let Some(others) = contested.get(&file.path) {
                    out.contested.push(Contested { format, index, others: others.clone() });
                }
            }
        }
    }
    Ok(out)
}

/// The objects of one remote place that a format claims, in key order, each with its format.
fn remote_files(
    claimer: &Claimer<'_>,
    root: &Path,
    listing: &super::remote::Listing,
    contested: &mut Vec<(PathBuf, Vec<usize>)>,
    out: &mut Discovery,
) -> Vec<(usize, SourceFile)> {
    if !listing.is_object {
        out.searched.push(root.to_path_buf());
    }
    let Ok(place) = super::remote::RemotePath::parse(root) else { return Vec::new() };
    let mut found = Vec::new();
    for object in &listing.objects {
        let path = super::remote::RemotePath::path_of(&place.store, &object.location);
        let candidates = claimer.candidates(&path);
        let Some((&i, others)) = candidates.split_first() else {
            if listing.is_object {
                out.warnings.push(format!(
                    "{}: not read: no format reads files of this name",
                    crate::text::escape::path(&path)
                ));
            }
            continue;
        };
        if !others.is_empty() {
            contested.push((path.clone(), others.to_vec()));
        }
        let modified = object.last_modified.timestamp_nanos_opt().and_then(|n| u64::try_from(n).ok());
        let changed = super::remote::version_stamp(object);
        let file = SourceFile::new(path.clone(), path, object.size, modified, None, changed);
        found.push((i, file));
    }
    found
}

/// Keeps, of each list's files from `starts` on (one root's, in walk order), those whose
/// canonical path no file kept before has, in place.
fn keep_first(files: &mut [Vec<SourceFile>], starts: &[usize], seen: &mut HashSet<u64, PathHasher>) {
    for (files, &start) in files.iter_mut().zip(starts) {
        let mut kept = start;
        for at in start..files.len() {
            if seen.insert(path_key(files[at].canonical())) {
                files.swap(kept, at);
                kept += 1;
            }
        }
        files.truncate(kept);
    }
}

/// Which format a file is: the first, in the order of [`crate::format::FileMatch::claim_rank`],
/// whose rule matches its name, its folder or its path.
struct Claimer<'a> {
    formats: &'a [Format],
    order: Vec<usize>,
    /// Each format's path patterns, compiled (`None` for a format matched by name).
    patterns: Vec<Option<globset::GlobSet>>,
}

impl<'a> Claimer<'a> {
    fn new(formats: &'a [Format]) -> Self {
        let mut order: Vec<usize> = (0..formats.len()).collect();
        order.sort_by_key(|&i| formats[i].files.claim_rank());
        let patterns = formats
            .iter()
            .map(|format| match format.files {
                FileMatch::Patterns(patterns) => {
                    let mut set = globset::GlobSetBuilder::new();
                    for pattern in patterns {
                        let glob = globset::GlobBuilder::new(&format!("**/{pattern}"))
                            .literal_separator(true)
                            .build()
                            .expect("a format's path pattern is a valid glob");
                        set.add(glob);
                    }
                    Some(set.build().expect("a format's path patterns compile"))
                }
                _ => None,
            })
            .collect();
        Self { formats, order, patterns }
    }

    fn claim(&self, path: &Path) -> Option<usize> {
        self.candidates(path).first().copied()
    }

    /// Every format whose rules match `path`, in the order they claim it.
    fn candidates(&self, path: &Path) -> Vec<usize> {
        // A compressed file is claimed as the file inside it (`x.jsonl.zst` as `x.jsonl`).
        let inner = crate::format::is_compressed(path).then(|| path.with_extension(""));
        let path = inner.as_deref().unwrap_or(path);
        let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let folder = path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy());
        let candidates = self.order.iter().copied().filter(|&i| match &self.patterns[i] {
            Some(set) => set.is_match(path),
            None => self.formats[i].files.matches(&name, folder.as_deref()),
        });
        // Formats sharing a schema (reeval and its raw parts) never contest a file.
        let mut names: Vec<&str> = Vec::new();
        candidates
            .filter(|&i| {
                let fresh = !names.contains(&self.formats[i].name);
                names.push(self.formats[i].name);
                fresh
            })
            .collect()
    }
}

/// The format that claims `path`, if one does.
#[cfg(test)]
pub(crate) fn claim(formats: &[Format], path: &Path) -> Option<usize> {
    Claimer::new(formats).claim(path)
}

/// `paths` and, after them, each existing directory a format keeps beside one of them
/// ([`crate::format::Beside`]: `.rupu/netflow` beside `.rupu/transcripts`) that is not among
/// them already.
fn with_beside(formats: &[Format], paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = paths.to_vec();
    for beside in formats.iter().filter_map(|f| f.beside) {
        for path in paths {
            let named = path.file_name().is_some_and(|n| n == beside.searched);
            let sibling = path.parent().map(|parent| parent.join(beside.folder));
            if let Some(sibling) = sibling.filter(|s| named && s.is_dir() && !out.contains(s)) {
                out.push(sibling);
            }
        }
    }
    out
}

/// Why a path given cannot be looked at, in words that say what to fix.
fn unreachable(path: &Path, e: &std::io::Error) -> Error {
    use std::io::ErrorKind;
    let why = match e.kind() {
        // A path through a file (`run_1.jsonl/x`) does not exist either.
        ErrorKind::NotFound | ErrorKind::NotADirectory => {
            return Error::Path { path: path.to_path_buf(), why: "no such file or directory".into() };
        }
        _ if is_symlink_loop(e) => "symlink loop (too many levels of symbolic links)".to_string(),
        ErrorKind::InvalidFilename => {
            "name too long (a name over 255 bytes, or a path over 4096 bytes)".to_string()
        }
        ErrorKind::PermissionDenied => {
            "permission denied (a directory on the way may not be searched)".into()
        }
        _ => format!("cannot read: {e}"),
    };
    Error::Path { path: path.to_path_buf(), why }
}

#[cfg(unix)]
fn is_symlink_loop(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
fn is_symlink_loop(_: &std::io::Error) -> bool {
    false
}

/// What a file that is neither a regular file nor a directory is (txq never opens one: a FIFO
/// would block the read).
#[cfg(unix)]
fn special_kind(file_type: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        Some("a FIFO")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// The order of a walk that visits each directory's entries by name: paths compared component
/// by component (a separator sorts before any byte of a name).
fn walk_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let rank = |rest: &[u8]| rest.first().map(|&c| if c == b'/' { 0 } else { u16::from(c) + 1 });
    rank(&a[common..]).cmp(&rank(&b[common..]))
}

/// The modification time, in nanoseconds since the epoch.
fn modified_ns(meta: &std::fs::Metadata) -> Option<u64> {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
}

/// The inode number and the status change time (ns since the epoch) of a file.
#[cfg(unix)]
fn inode_and_changed(meta: &std::fs::Metadata) -> (Option<u64>, Option<u64>) {
    use std::os::unix::fs::MetadataExt;
    let changed = u64::try_from(meta.ctime())
        .ok()
        .and_then(|s| s.checked_mul(1_000_000_000)?.checked_add(u64::try_from(meta.ctime_nsec()).ok()?));
    (Some(meta.ino()), changed)
}

#[cfg(not(unix))]
fn inode_and_changed(_: &std::fs::Metadata) -> (Option<u64>, Option<u64>) {
    (None, None)
}

impl SourceFile {
    /// A file found at `path` (`canonical` the path it is read by and known by when reached
    /// twice), with its size and stamps when found.
    pub fn new(
        path: PathBuf,
        canonical: PathBuf,
        size: u64,
        modified: Option<u64>,
        inode: Option<u64>,
        changed: Option<u64>,
    ) -> SourceFile {
        let canonical_if_other = (canonical != path).then_some(canonical);
        SourceFile { path, canonical_if_other, size, modified, inode, changed }
    }

    /// The canonical path, used to read it and to recognise it when reached twice.
    pub fn canonical(&self) -> &Path {
        self.canonical_if_other.as_deref().unwrap_or(&self.path)
    }

    /// Whether the file is an object in a remote store (`s3://bucket/key`).
    pub fn is_remote(&self) -> bool {
        super::remote::is_remote(self.canonical())
    }

    /// Whether the file is compressed (`*.zst`): read as the bytes it inflates to, from its start.
    pub(crate) fn compressed(&self) -> bool {
        crate::format::is_compressed(&self.path)
    }

    /// Whether the file is still what it was when found: the same size, modification time,
    /// inode and status change time.
    pub(crate) fn unchanged(&self) -> bool {
        // An object is replaced whole, never written in place, and each statement lists its
        // store anew: what the listing said is what is there.
        if self.is_remote() {
            return true;
        }
        std::fs::metadata(self.canonical()).is_ok_and(|meta| {
            let (inode, changed) = inode_and_changed(&meta);
            self.modified.is_some()
                && (meta.len(), modified_ns(&meta), inode, changed)
                    == (self.size, self.modified, self.inode, self.changed)
        })
    }
}

/// For each of one format's `files`, the plain file it is a compressed copy of when that lies
/// beside it among them (`x.jsonl` for `x.jsonl.zst`): that one is read, and the copy is not (a
/// harness that compresses an idle file writes the copy before it removes the plain one, and
/// inflates the copy again to append to it, so the plain file is the newer).
pub(crate) fn plain_beside(files: &[std::sync::Arc<SourceFile>]) -> Vec<Option<&Path>> {
    let plain: HashSet<&Path, PathHasher> =
        files.iter().filter(|f| !f.compressed()).map(|f| f.path.as_path()).collect();
    files
        .iter()
        .map(|f| {
            let inside = f.path.with_extension("");
            f.compressed().then(|| plain.get(inside.as_path()).copied()).flatten()
        })
        .collect()
}

/// For each of one format's `files`, the file it is a copy of by the format's rule
/// ([`crate::format::Copies`]), when that is among them: that one is read, and the copy is not.
pub(crate) fn copy_of(
    files: &[std::sync::Arc<SourceFile>],
    copies: Option<crate::format::Copies>,
) -> Vec<Option<&Path>> {
    let Some(rule) = copies else { return vec![None; files.len()] };
    let under = |file: &SourceFile, folder: &str| {
        file.path.parent().is_some_and(|p| p.components().any(|c| c.as_os_str() == folder))
    };
    let kept: HashMap<&std::ffi::OsStr, &Path> = files
        .iter()
        .filter(|f| under(f, rule.kept) && !under(f, rule.copy))
        .filter_map(|f| Some((crate::format::claimed_name(&f.path)?, f.path.as_path())))
        .collect();
    files
        .iter()
        .map(|f| {
            let name = crate::format::claimed_name(&f.path)?;
            under(f, rule.copy).then(|| kept.get(name).copied()).flatten()
        })
        .collect()
}

/// A file found at `path` with metadata `meta`; its `canonical` path when known already.
fn source(path: PathBuf, canonical: Option<PathBuf>, meta: &std::fs::Metadata) -> SourceFile {
    let canonical =
        canonical.unwrap_or_else(|| std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone()));
    let (inode, changed) = inode_and_changed(meta);
    SourceFile::new(path, canonical, meta.len(), modified_ns(meta), inode, changed)
}

fn walk_warning(e: &walkdir::Error) -> String {
    let path = e.path().map(crate::text::escape::path).unwrap_or_default();
    if let Some(ancestor) = e.loop_ancestor() {
        format!("{path}: symlink loop back to {}; not followed again", crate::text::escape::path(ancestor))
    } else if let Some(io) = e.io_error() {
        format!("{path}: not read: {io}")
    } else {
        format!("{path}: not read: {e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_in_the_order_of_a_walk_by_name() {
        let mut paths = vec!["a.x/1", "a/b/2", "ab", "a/c", "a b/3", "a/b", "b", "a/b/1"];
        paths.sort_by(|a, b| walk_order(a.as_bytes(), b.as_bytes()));
        assert_eq!(paths, vec!["a/b", "a/b/1", "a/b/2", "a/c", "a b/3", "a.x/1", "ab", "b"]);
        let mut by_components = paths.clone();
        by_components.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
        assert_eq!(paths, by_components);
    }

    #[test]
    fn ledgers_beside_a_searched_transcripts_directory_are_found_and_claimed_as_ledgers() {
        let dir = tempfile::tempdir().unwrap();
        let (transcripts, netflow) = (dir.path().join(".rupu/transcripts"), dir.path().join(".rupu/netflow"));
        std::fs::create_dir_all(transcripts.join("netflow")).unwrap();
        std::fs::create_dir_all(&netflow).unwrap();
        for file in [
            transcripts.join("run_1.jsonl"),
            netflow.join("run_1.jsonl"),
            transcripts.join("netflow/run_2.jsonl"),
        ] {
            std::fs::write(file, "{}\n").unwrap();
        }
        let formats = crate::format::all();
        let index = |name: &str| formats.iter().position(|f| f.name == name).unwrap();
        let names = |found: &Discovery, format: usize| -> Vec<PathBuf> {
            found.files[format]
                .iter()
                .map(|f| f.path.strip_prefix(dir.path()).unwrap().to_path_buf())
                .collect()
        };
        let found = discover(&formats, std::slice::from_ref(&transcripts)).unwrap();
        assert_eq!(names(&found, index("rupu")), [PathBuf::from(".rupu/transcripts/run_1.jsonl")]);
        assert_eq!(
            names(&found, index("rupu_netflow")),
            [
                PathBuf::from(".rupu/transcripts/netflow/run_2.jsonl"),
                PathBuf::from(".rupu/netflow/run_1.jsonl")
            ]
        );
        // Given beside it already, or given alone, the ledger folder is searched once.
        let both = discover(&formats, &[transcripts.clone(), netflow.clone()]).unwrap();
        assert_eq!(names(&both, index("rupu_netflow")).len(), 2);
        let alone = discover(&formats, &[netflow.join("run_1.jsonl")]).unwrap();
        assert_eq!(names(&alone, index("rupu_netflow")), [PathBuf::from(".rupu/netflow/run_1.jsonl")]);
    }

    #[test]
    fn a_compressed_file_is_claimed_as_the_file_inside_and_set_aside_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let transcripts = dir.path().join(".rupu/transcripts");
        std::fs::create_dir_all(transcripts.join("netflow")).unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        for name in [
            ".rupu/transcripts/run_1.jsonl",
            ".rupu/transcripts/run_1.jsonl.zst",
            ".rupu/transcripts/run_2.jsonl.zst",
            ".rupu/transcripts/netflow/run_3.jsonl.zst",
            ".rupu/transcripts/notes.txt.zst",
            ".rupu/transcripts/.zst",
            "a/b/transcript.jsonl.zst",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let formats = crate::format::all();
        let found = discover(&formats, &[dir.path().to_path_buf()]).unwrap();
        let claimed = |format: &str| -> Vec<String> {
            let i = formats.iter().position(|f| f.name == format).unwrap();
            let files = &found.files[i];
            files.iter().map(|f| f.path.strip_prefix(dir.path()).unwrap().display().to_string()).collect()
        };
        assert_eq!(
            claimed("rupu"),
            [
                ".rupu/transcripts/run_1.jsonl",
                ".rupu/transcripts/run_1.jsonl.zst",
                ".rupu/transcripts/run_2.jsonl.zst"
            ]
        );
        assert_eq!(claimed("rupu_netflow"), [".rupu/transcripts/netflow/run_3.jsonl.zst"]);
        assert_eq!(claimed("reeval"), ["a/b/transcript.jsonl.zst"]);
        let rupu = formats.iter().position(|f| f.name == "rupu").unwrap();
        let files: Vec<std::sync::Arc<SourceFile>> =
            found.files[rupu].iter().cloned().map(std::sync::Arc::new).collect();
        let plain = transcripts.join("run_1.jsonl");
        assert_eq!(plain_beside(&files), [None, Some(plain.as_path()), None]);
    }

    #[test]
    fn tilde_means_home() {
        assert_eq!(
            expand("~/.rupu/transcripts", Some(Path::new("/home/me"))).unwrap(),
            Path::new("/home/me/.rupu/transcripts")
        );
        assert_eq!(expand(".rupu/transcripts", None).unwrap(), Path::new(".rupu/transcripts"));
        assert_eq!(expand("$TXQ_TEST_SURELY_UNSET_VARIABLE/projects", None), None);
    }
}
