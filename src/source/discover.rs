//! Finding transcript files: the paths given (or each format's default places), walked
//! recursively without following a symlink loop twice, each file given to the format that claims it.

use super::files::{
    Canonical, PathHasher, Pushed, SourceFiles, SourceFilesBuilder, inode_and_changed, modified_ns, path_key,
};
use crate::error::{Error, Result};
use crate::format::{FileMatch, Format};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What discovery found: files per format (in the order of `formats`), and problems on the way.
#[derive(Debug, Default)]
pub struct Discovery {
    pub files: Vec<SourceFiles>,
    /// For files more than one format's rules claim, the other formats that claim them, by
    /// rank, under the number their rows carry ([`SourceFiles::claimed_also_by`]; 0, no other,
    /// first): a file's list is the first format's by rank, and its content decides among them
    /// ([`crate::table::corpus`]). A million files claimed by two formats share one list.
    pub(crate) claimed_also: Vec<Vec<usize>>,
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
        let mut bytes = |parts: &[&[u8]]| {
            hash.update(&(parts.iter().map(|p| p.len()).sum::<usize>() as u64).to_le_bytes());
            for part in parts {
                hash.update(part);
            }
        };
        for (format, files) in self.files.iter().enumerate() {
            bytes(&[&(format as u64).to_le_bytes()]);
            for i in 0..files.len() {
                bytes(&files.path_parts(i).get());
                bytes(&files.canonical_parts(i).get());
                for value in files.stamps(i) {
                    bytes(&[&value.map_or([0xff; 9], |v| {
                        let mut b = [0u8; 9];
                        b[1..].copy_from_slice(&v.to_le_bytes());
                        b
                    })]);
                }
            }
        }
        hash.digest()
    }
}

impl Discovery {
    /// Every file more than one format claims, as its list's format and its index there.
    pub(crate) fn contested(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.files.iter().enumerate().flat_map(|(format, files)| {
            (0..files.len()).filter(move |&i| files.claimed_also_by(i) != 0).map(move |i| (format, i))
        })
    }

    /// The formats that claim file `index` of format `format`'s list, by rank: that one first.
    pub(crate) fn claimants(&self, format: usize, index: usize) -> Vec<usize> {
        let others = &self.claimed_also[self.files[format].claimed_also_by(index) as usize];
        std::iter::once(format).chain(others.iter().copied()).collect()
    }
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

/// Walks `paths` and gives each file to the first format that claims it (formats matching a file
/// by its exact name before those matching it by extension), noting the other formats that claim
/// it too, for the corpus's owners step to decide by content.
pub fn discover(formats: &[Format], paths: &[PathBuf]) -> Result<Discovery> {
    discover_listed(formats, paths, &HashMap::new())
}

/// [`discover`] over local paths and remote places (`s3://bucket/prefix`) alike: the remote ones
/// are listed first (all at once), then each object is claimed as a file is.
pub async fn discover_all(formats: &[Format], paths: &[PathBuf]) -> Result<Discovery> {
    let listings = super::remote::list_all(paths).await?;
    discover_apart(formats, paths, listings).await
}

/// [`discover_listed`] on a thread for blocking work, not on an async worker: a walk of a million
/// files holds no worker (Ctrl-C and a progress line stay live), and stops at its next file once
/// the future is dropped.
pub(crate) async fn discover_apart(
    formats: &[Format],
    paths: &[PathBuf],
    listings: HashMap<PathBuf, super::remote::Listing>,
) -> Result<Discovery> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return discover_listed(formats, paths, &listings);
    };
    let stop = StopWhenDropped(Arc::new(AtomicBool::new(false)));
    let (formats, paths, stopped) = (formats.to_vec(), paths.to_vec(), stop.0.clone());
    let walk = runtime.spawn_blocking(move || discover_until(&formats, &paths, &listings, &stopped));
    match walk.await {
        Ok(found) => found,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(_) => Err(Error::Cancelled),
        },
    }
}

/// Tells a walk to stop when dropped.
struct StopWhenDropped(Arc<AtomicBool>);

impl Drop for StopWhenDropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// [`discover`], with the listing of each remote place among `paths`.
pub fn discover_listed(
    formats: &[Format],
    paths: &[PathBuf],
    listings: &HashMap<PathBuf, super::remote::Listing>,
) -> Result<Discovery> {
    discover_until(formats, paths, listings, &AtomicBool::new(false))
}

/// [`discover_listed`], ended with [`Error::Cancelled`] at the first file walked after `stop`.
fn discover_until(
    formats: &[Format],
    paths: &[PathBuf],
    listings: &HashMap<PathBuf, super::remote::Listing>,
    stop: &AtomicBool,
) -> Result<Discovery> {
    let mut out = Discovery { given: paths.to_vec(), ..Default::default() };
    let mut found = Found::new(formats.len());
    let claimer = Claimer::new(formats);
    let claim = |path: &Path| claimer.claim(path);
    let paths = with_beside(formats, paths);

    // Every file found goes straight to its format's list, and each root's share of a list is
    // then sorted in walk order and rid of the files reached before (through a symlink, or a
    // root given twice): no list of every file is made beside the lists themselves.
    let mut seen: HashSet<u64, PathHasher> = HashSet::default();
    for (at, root) in paths.iter().enumerate() {
        let starts: Vec<usize> = found.lists.iter().map(Vec::len).collect();
        if super::remote::is_remote(root) {
            let listing = listings.get(root).ok_or_else(|| Error::Path {
                path: root.clone(),
                why: "a remote place is listed before it is searched".into(),
            })?;
            remote_files(&claimer, root, listing, &mut out, &mut found);
            found.keep_first(&starts, &mut seen);
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
            match candidates.split_first() {
                Some((&i, others)) => {
                    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
                    found.push((i, others), root, Canonical::Is(&canonical), &meta, &mut out.warnings);
                }
                None => out.warnings.push(format!(
                    "{}: not read: no format reads files of this name",
                    crate::text::escape::path(root)
                )),
            }
            found.keep_first(&starts, &mut seen);
            continue;
        }
        out.searched.push(root.clone());
        // Walked in the file system's order and sorted once after: a walk sorted by name
        // compares names by parsing paths, tens of times a file.
        let walk = walkdir::WalkDir::new(root).follow_links(true);
        // Without a symlink, a walk reaches each file once.
        let mut symlinked = false;
        // The depths of the linked folders the walk is in, outermost first.
        let mut in_links: Vec<usize> = Vec::new();
        let mut real_root: Option<PathBuf> = None;
        for entry in walk {
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    out.warnings.push(walk_warning(&e));
                    continue;
                }
            };
            symlinked |= entry.path_is_symlink();
            while in_links.last().is_some_and(|&depth| depth >= entry.depth()) {
                in_links.pop();
            }
            if entry.path_is_symlink() && entry.file_type().is_dir() {
                in_links.push(entry.depth());
            }
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
            // A file reached through a link is claimed, and named, by the path the walk reaches
            // it by without links, when its real path is below the root's (a link to a folder
            // of the same home); else by the path the walk met.
            let linked = entry.path_is_symlink() || !in_links.is_empty();
            let real = linked.then(|| std::fs::canonicalize(entry.path()).ok()).flatten();
            let path = match &real {
                Some(real) => {
                    let real_root = real_root
                        .get_or_insert_with(|| std::fs::canonicalize(root).unwrap_or_else(|_| root.clone()));
                    match real.strip_prefix(&*real_root) {
                        Ok(below) => root.join(below),
                        Err(_) => entry.path().to_path_buf(),
                    }
                }
                None => entry.path().to_path_buf(),
            };
            let candidates = claimer.candidates(&path);
            if let Some((&i, others)) = candidates.split_first() {
                let meta = match entry.metadata() {
                    Ok(m) => m,
                    Err(e) => {
                        out.warnings.push(walk_warning(&e));
                        continue;
                    }
                };
                // A file that is no symlink is its directory's canonical path and its name (one
                // canonicalisation a directory, not one a file).
                if linked {
                    let canonical = real.unwrap_or_else(|| entry.path().to_path_buf());
                    found.push((i, others), &path, Canonical::Is(&canonical), &meta, &mut out.warnings);
                } else {
                    found.push((i, others), entry.path(), Canonical::OfDirectory, &meta, &mut out.warnings);
                }
            }
        }
        let below = root.as_os_str().len();
        for (rows, &start) in found.lists.iter_mut().zip(&starts) {
            found.builder.sort(&mut rows[start..], below, walk_order);
        }
        // The files of one root walked without a symlink, with none before them or after:
        // nothing to compare (a million keys are not held for nothing).
        let alone = seen.is_empty() && at + 1 == paths.len() && !symlinked;
        if !alone {
            found.keep_first(&starts, &mut seen);
        }
    }
    drop(seen);
    out.files = found.builder.finish(found.lists);
    out.claimed_also = found.claimed_also;
    Ok(out)
}

/// The files found so far: rows over one arena of names, a list a format.
struct Found {
    builder: SourceFilesBuilder,
    lists: Vec<Vec<Pushed>>,
    /// The lists of other formats that claim a file, each once ([`Discovery::claimed_also`]).
    claimed_also: Vec<Vec<usize>>,
}

impl Found {
    fn new(formats: usize) -> Found {
        Found {
            builder: SourceFilesBuilder::default(),
            lists: vec![Vec::new(); formats],
            claimed_also: vec![vec![]],
        }
    }

    /// Adds a file at `path` with metadata `meta` to format `format`'s list, claimed also by
    /// the formats `others` (in rank order).
    fn push(
        &mut self,
        (format, others): (usize, &[usize]),
        path: &Path,
        canonical: Canonical<'_>,
        meta: &std::fs::Metadata,
        warnings: &mut Vec<String>,
    ) {
        let (inode, changed) = inode_and_changed(meta);
        let row = self.builder.push(path, canonical, meta.len(), modified_ns(meta), inode, changed);
        self.pushed((format, others), path, row, warnings);
    }

    /// Puts a row pushed to the builder for the file at `path` in format `format`'s list,
    /// claimed also by the formats `others`; `None` is a file not kept, and a warning.
    fn pushed(
        &mut self,
        (format, others): (usize, &[usize]),
        path: &Path,
        row: Option<Pushed>,
        warnings: &mut Vec<String>,
    ) {
        let Some(row) = row else {
            warnings.push(too_many(path));
            return;
        };
        let number = match others {
            [] => 0,
            _ => self.claimed_also.iter().position(|o| o == others).unwrap_or_else(|| {
                self.claimed_also.push(others.to_vec());
                self.claimed_also.len() - 1
            }),
        };
        self.lists[format].push(row.claimed_also_by(number as u32));
    }

    /// Keeps, of each list's files from `starts` on (one root's, in walk order), those whose
    /// canonical path no file kept before has, in place.
    fn keep_first(&mut self, starts: &[usize], seen: &mut HashSet<u64, PathHasher>) {
        for (rows, &start) in self.lists.iter_mut().zip(starts) {
            let mut kept = start;
            for at in start..rows.len() {
                if seen.insert(self.builder.key(&rows[at])) {
                    rows.swap(kept, at);
                    kept += 1;
                }
            }
            rows.truncate(kept);
        }
    }
}

/// The warning for a file not kept because the arena of names is full.
fn too_many(path: &Path) -> String {
    format!(
        "{}: not read: more names than one search keeps (4 GiB of file names); search fewer places at once",
        crate::text::escape::path(path)
    )
}

/// The objects of one remote place that a format claims, in key order, each to its format.
fn remote_files(
    claimer: &Claimer<'_>,
    root: &Path,
    listing: &super::remote::Listing,
    out: &mut Discovery,
    found: &mut Found,
) {
    if !listing.is_object {
        out.searched.push(root.to_path_buf());
    }
    // The objects the listing left out (keys no store path names), each said.
    out.warnings.extend(listing.warnings.iter().cloned());
    let Ok(place) = super::remote::RemotePath::parse(root) else { return };
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
        let modified = object.last_modified.timestamp_nanos_opt().and_then(|n| u64::try_from(n).ok());
        let changed = super::remote::version_stamp(object);
        let row = found.builder.push(&path, Canonical::Is(&path), object.size, modified, None, changed);
        found.pushed((i, others), &path, row, &mut out.warnings);
    }
}

/// A format's path patterns compiled into one set, each list compiled once a process (a walk,
/// the status line's claims and discovery each make a claimer; compiling them is the most of
/// what a claimer costs).
fn compiled(patterns: &'static [&'static str]) -> Arc<globset::GlobSet> {
    type Compiled = HashMap<&'static [&'static str], Arc<globset::GlobSet>>;
    static COMPILED: std::sync::OnceLock<std::sync::Mutex<Compiled>> = std::sync::OnceLock::new();
    let mut compiled = COMPILED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    compiled
        .entry(patterns)
        .or_insert_with(|| {
            let mut set = globset::GlobSetBuilder::new();
            for pattern in patterns {
                let glob = globset::GlobBuilder::new(&format!("**/{pattern}"))
                    .literal_separator(true)
                    .build()
                    .expect("a format's path pattern is a valid glob");
                set.add(glob);
            }
            Arc::new(set.build().expect("a format's path patterns compile"))
        })
        .clone()
}

/// Which format a file is: the first, in the order of [`crate::format::FileMatch::claim_rank`],
/// whose rule matches its name, its folder or its path.
pub(crate) struct Claimer<'a> {
    formats: &'a [Format],
    order: Vec<usize>,
    /// Each format's path patterns, compiled (`None` for a format matched by name).
    patterns: Vec<Option<Arc<globset::GlobSet>>>,
}

impl<'a> Claimer<'a> {
    pub(crate) fn new(formats: &'a [Format]) -> Self {
        let mut order: Vec<usize> = (0..formats.len()).collect();
        order.sort_by_key(|&i| formats[i].files.claim_rank());
        let patterns = formats
            .iter()
            .map(|format| match format.files {
                FileMatch::Patterns(patterns) => Some(compiled(patterns)),
                _ => None,
            })
            .collect();
        Self { formats, order, patterns }
    }

    pub(crate) fn claim(&self, path: &Path) -> Option<usize> {
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

/// The order of a walk that visits each directory's entries by name: paths (each in its two
/// parts) compared component by component (a separator sorts before any byte of a name).
fn walk_order(a: &[&[u8]; 2], b: &[&[u8]; 2]) -> std::cmp::Ordering {
    let rank = |c: Option<&u8>| c.map(|&c| if c == b'/' { 0 } else { u16::from(c) + 1 });
    let (mut a, mut b) = (a[0].iter().chain(a[1]), b[0].iter().chain(b[1]));
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => return rank(x).cmp(&rank(y)),
        }
    }
}

/// Of one format's `files`, each that is a compressed copy of a plain file among them (`x.jsonl`
/// for `x.jsonl.zst`), with that file's path: that one is read, and the copy is not (a harness
/// that compresses an idle file writes the copy before it removes the plain one, and inflates the
/// copy again to append to it, so the plain file is the newer).
pub(crate) fn plain_beside(files: &SourceFiles) -> Vec<(usize, PathBuf)> {
    let compressed =
        |i: usize| crate::format::is_compressed(Path::new(name_of(files.path_parts(i).get()[1])));
    // Only the few compressed files' plain paths are wanted: no set of every path is made.
    let wanted: HashMap<u64, (usize, PathBuf), PathHasher> = (0..files.len())
        .filter(|&i| compressed(i))
        .map(|i| {
            let plain = files.path(i).with_extension("");
            (path_key(&plain), (i, plain))
        })
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(usize, PathBuf)> = (0..files.len())
        .filter(|&i| !compressed(i))
        .filter_map(|i| wanted.get(&super::files::parts_key(files.path_parts(i).get())))
        .cloned()
        .collect();
    found.sort_unstable_by_key(|(i, _)| *i);
    found.dedup_by_key(|(i, _)| *i);
    found
}

/// Of one format's `files`, each that is a copy by the format's rule ([`crate::format::Copies`])
/// of a file among them, with that file's path: that one is read, and the copy is not.
pub(crate) fn copy_of(files: &SourceFiles, copies: Option<crate::format::Copies>) -> Vec<(usize, PathBuf)> {
    let Some(rule) = copies else { return Vec::new() };
    let under = |dir: &[u8], folder: &str| dir.split(|&b| b == b'/').any(|c| c == folder.as_bytes());
    // The copies are few: their names are looked for among the kept files.
    let mut wanted: HashMap<std::ffi::OsString, Vec<usize>> = HashMap::new();
    for i in 0..files.len() {
        let dir = files.path_parts(i).dir();
        if under(dir, rule.copy)
            && let Some(name) = crate::format::claimed_name(&files.path(i))
        {
            wanted.entry(name.to_os_string()).or_default().push(i);
        }
    }
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for i in 0..files.len() {
        let dir = files.path_parts(i).dir();
        if !under(dir, rule.kept) || under(dir, rule.copy) {
            continue;
        }
        let path = files.path(i);
        if let Some(copies) = crate::format::claimed_name(&path).and_then(|name| wanted.remove(name)) {
            found.extend(copies.into_iter().map(|copy| (copy, path.clone())));
        }
    }
    found.sort_unstable_by_key(|(i, _)| *i);
    found
}

/// A name kept as bytes, as a name.
fn name_of(bytes: &[u8]) -> &std::ffi::OsStr {
    // SAFETY: the bytes are a file's name as kept, cut from an OS string at a separator.
    unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(bytes) }
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
        paths.sort_by(|a, b| walk_order(&[a.as_bytes(), &[]], &[b.as_bytes(), &[]]));
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
        let plain = transcripts.join("run_1.jsonl");
        assert_eq!(plain_beside(&found.files[rupu]), [(1, plain)]);
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
