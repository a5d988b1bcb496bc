//! Transcripts restored from an archive (`txq archive`) into txq's cache: the folders they are
//! restored under, how a restored file's path spells the path it had where it was archived
//! (`<root>/<machine>/file/home/ana/.claude/...` for `/home/ana/.claude/...`,
//! `<root>/<machine>/s3/bucket/key` for `s3://bucket/key`), and so which live file it is.

use std::path::{Component, Path, PathBuf};

/// The scheme folder of a local path's restored copy.
const LOCAL: &str = "file";

/// The folders archives are restored under for a reading; each holds a folder per machine of its
/// archive (`0`, `1`, ...), each the archived paths below it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Restored {
    roots: Vec<PathBuf>,
}

impl Restored {
    pub fn new(roots: Vec<PathBuf>) -> Restored {
        Restored { roots }
    }

    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The path the file at `path` had where it was archived, when it is a restored copy.
    pub fn original_of(&self, path: &Path) -> Option<String> {
        let below = self.roots.iter().find_map(|root| path.strip_prefix(root).ok())?;
        let mut parts = below.components();
        parts.next()?; // the machine's folder
        let scheme = parts.next()?.as_os_str().to_str()?;
        let rest = parts.as_path().to_str()?;
        match scheme {
            LOCAL => Some(format!("/{rest}")),
            scheme => Some(format!("{scheme}://{rest}")),
        }
    }
}

/// Where the file archived as `original` (a local absolute path or a store URL) is restored
/// below a machine's folder: `None` for a path that could climb out of it (`..`, a relative
/// path), which an archive's manifest could hold only if someone wrote it by hand.
pub fn restored_path(machine_folder: &Path, original: &str) -> Option<PathBuf> {
    let (scheme, rest) = match original.split_once("://") {
        Some((scheme, rest))
            if !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) =>
        {
            (scheme, rest)
        }
        Some(_) => return None,
        None => (LOCAL, original.strip_prefix('/')?),
    };
    if scheme == LOCAL && original.contains("://") {
        return None;
    }
    let rest = Path::new(rest);
    let plain = rest.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain || rest.as_os_str().is_empty() || original.chars().any(char::is_control) {
        return None;
    }
    Some(machine_folder.join(scheme).join(rest))
}

/// `path` without a `.zst` ending: a compressed transcript and its plain file are one.
pub fn plain_name(path: &str) -> &str {
    path.strip_suffix(".zst").unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restored_path_spells_its_original_back() {
        let root = PathBuf::from("/cache/archives/ab12");
        let restored = Restored::new(vec![root.clone()]);
        for original in ["/home/ana/.claude/projects/p/s.jsonl", "s3://bucket/homes/a/x.jsonl"] {
            let path = restored_path(&root.join("0"), original).unwrap();
            assert!(path.starts_with(&root));
            assert_eq!(restored.original_of(&path).as_deref(), Some(original));
        }
        assert_eq!(restored.original_of(Path::new("/home/ana/x.jsonl")), None);
    }

    #[test]
    fn a_path_that_could_climb_out_is_not_restored() {
        let folder = Path::new("/cache/0");
        for hostile in [
            "/a/../../etc/passwd",
            "relative/x.jsonl",
            "/",
            "",
            "s3://b/../x",
            "../x",
            "/a/\n.jsonl",
            "S3://b/x",
        ] {
            assert_eq!(restored_path(folder, hostile), None, "{hostile:?}");
        }
    }
}
