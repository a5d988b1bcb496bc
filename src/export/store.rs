//! An export into an object store (`--out s3://bucket/prefix`): the export already there (for
//! `--append` and `--overwrite`) brought into a folder of this machine, the export made in that
//! folder as into any other (so every rule of a local export holds), then the folder put in the
//! store under the prefix, its manifest last, and the objects it no longer holds removed.

use super::{ExportOptions, Mode, Summary};
use crate::error::Error;
use crate::source::remote::{RemotePath, registry, short};
use crate::sql::session::Engine;
use crate::text::escape;
use futures::StreamExt;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

/// A folder of this machine, removed when dropped.
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Exports the engine's corpus into the store place `options.out`.
pub(crate) async fn export(engine: &Engine, options: &ExportOptions) -> Result<Summary, Error> {
    let out = &options.out;
    let failed = |why: String| Error::Path { path: out.clone(), why };
    let place = RemotePath::parse(out).map_err(failed)?;
    let store = registry().store(&place.store).map_err(|e| failed(short(&e)))?;
    let before = list(&store, &place.key).await.map_err(|e| failed(format!("cannot list: {}", short(&e))))?;
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let staging = Staging(std::env::temp_dir().join(format!("txq-export-{}-{nanos}", std::process::id())));
    let local = staging.0.join("export");
    std::fs::create_dir_all(&staging.0).map_err(Error::write(&staging.0))?;
    // What the export into the folder must see of what is there: all of it, for --append to add
    // to; else the manifest (or, with none, one object), for the export to refuse a place that
    // holds something else, or a new export over one, as it refuses such a folder.
    let manifest = place.key.clone().join(super::MANIFEST_FILE);
    let needed: Vec<&StorePath> = match options.mode {
        Mode::Append => before.iter().collect(),
        _ => match before.iter().find(|k| **k == manifest) {
            Some(manifest) => vec![manifest],
            None => before.iter().take(1).collect(),
        },
    };
    for key in needed {
        download(&store, &place.key, key, &local).await.map_err(|e| failed(short(&e)))?;
    }
    let staged = ExportOptions { out: local.clone(), ..options.clone() };
    let summary = super::export_local(engine, &staged).await.map_err(|e| named_as(e, &local, out))?;
    let written = upload(&store, &place.key, &local).await.map_err(|e| failed(short(&e)))?;
    for key in before.iter().filter(|k| !written.contains(*k)) {
        store.delete(key).await.map_err(|e| failed(format!("cannot remove {key}: {}", short(&e))))?;
    }
    Ok(summary)
}

/// Every object under `prefix`.
async fn list(
    store: &Arc<dyn ObjectStore>,
    prefix: &StorePath,
) -> Result<Vec<StorePath>, object_store::Error> {
    let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
    let mut keys = Vec::new();
    let mut objects = store.list(prefix);
    while let Some(object) = objects.next().await {
        keys.push(object?.location);
    }
    Ok(keys)
}

/// Writes object `key` (under `prefix`) into `local`, at its place below the prefix.
async fn download(
    store: &Arc<dyn ObjectStore>,
    prefix: &StorePath,
    key: &StorePath,
    local: &Path,
) -> Result<(), object_store::Error> {
    let Some(parts) = key.prefix_match(prefix) else { return Ok(()) };
    // Each part is one segment of a key (no `/`, never `.` or `..`): the file stays in `local`.
    let path = parts.fold(local.to_path_buf(), |path, part| path.join(part.as_ref()));
    let io = |e: std::io::Error| object_store::Error::Generic { store: "export", source: Box::new(e) };
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir).await.map_err(io)?;
    }
    let mut file = tokio::fs::File::create(&path).await.map_err(io)?;
    let mut body = store.get(key).await?.into_stream();
    while let Some(chunk) = body.next().await {
        file.write_all(&chunk?).await.map_err(io)?;
    }
    file.flush().await.map_err(io)
}

/// Puts every file below `local` in the store under `prefix` (the manifest last: a reader sees
/// the old export's until the new one is whole); the keys written.
async fn upload(
    store: &Arc<dyn ObjectStore>,
    prefix: &StorePath,
    local: &Path,
) -> Result<HashSet<StorePath>, object_store::Error> {
    let io = |e: std::io::Error| object_store::Error::Generic { store: "export", source: Box::new(e) };
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(local)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    let manifest = local.join(super::MANIFEST_FILE);
    files.sort_by_key(|f| (*f == manifest, f.clone()));
    let mut written = HashSet::new();
    for file in files {
        let below = file.strip_prefix(local).map_err(|e| io(std::io::Error::other(e)))?;
        let mut key = prefix.clone();
        for part in below.iter() {
            let part = part.to_str().ok_or_else(|| io(std::io::Error::other("a name that is not UTF-8")))?;
            key = key.join(part);
        }
        let mut writer = object_store::buffered::BufWriter::new(store.clone(), key.clone());
        let mut source = tokio::fs::File::open(&file).await.map_err(io)?;
        tokio::io::copy(&mut source, &mut writer).await.map_err(io)?;
        writer.shutdown().await.map_err(io)?;
        written.insert(key);
    }
    Ok(written)
}

/// `e` with the staging folder named as the store place the user gave.
fn named_as(e: Error, local: &Path, out: &Path) -> Error {
    let (from, to) = (escape::path(local), escape::path(out));
    match e {
        Error::Usage(text) => Error::Usage(text.replace(&from, &to)),
        Error::Path { path, why } if path.starts_with(local) => {
            let below = path.strip_prefix(local).unwrap_or(Path::new(""));
            Error::Path { path: out.join(below), why }
        }
        Error::Write { path, source } if path.starts_with(local) => {
            let below = path.strip_prefix(local).unwrap_or(Path::new(""));
            Error::Write { path: out.join(below), source }
        }
        other => other,
    }
}
