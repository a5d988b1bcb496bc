//! The manifest an export keeps in `OUT/_txq_export.json`: how OUT was written (partitioning,
//! tables and their columns) and which transcripts it holds, each with its size when exported
//! and whether it was still open, so that `--append` knows what to add and what to redo. It is
//! read back from OUT, so it is not trusted: no name in it is ever used as a path.

use super::paths::Root;
use super::tables::ExportTable;
use crate::error::Error;
use crate::text::escape;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's file name in OUT; readers of the dataset skip names starting with `_`.
pub const FILE_NAME: &str = "_txq_export.json";
/// The manifest format this txq writes and reads.
const VERSION: u32 = 1;

/// One transcript unit as exported: a rupu run, or a reeval attempt with its raw stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitRecord {
    pub schema: String,
    /// `run_<ULID>` for rupu; `runs/<runId>/<eval>/<cell>/<n>` or `history/…` for reeval.
    pub id: String,
    /// Its files, as the `file` column spells them.
    pub files: Vec<String>,
    /// Their total size when exported.
    pub(crate) bytes: u64,
    /// Still being written when exported: its rows are in `*-open-*` files, redone next time.
    pub open: bool,
    /// The export that wrote its rows.
    pub(crate) generation: u32,
}

/// What OUT holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub(crate) txq_export: u32,
    /// Exports into OUT so far; data files are named after the one that wrote them.
    pub generation: u32,
    /// `date`, `run`, or none.
    pub(crate) partition_by: Option<String>,
    /// True when every table was exported (no `--tables`).
    pub(crate) all_tables: bool,
    /// `schema.table` → its columns as `name: type`.
    pub tables: BTreeMap<String, Vec<String>>,
    /// `schema.table` → its folder in OUT, `<schema>/<table>` as [`super::paths::folder_name`]
    /// names them. Only said, for readers of OUT: an export writes where the name says.
    #[serde(default)]
    pub folders: BTreeMap<String, String>,
    pub units: Vec<UnitRecord>,
}

impl Manifest {
    pub(crate) fn new(partition_by: Option<String>, all_tables: bool) -> Self {
        Self {
            txq_export: VERSION,
            generation: 0,
            partition_by,
            all_tables,
            tables: BTreeMap::new(),
            folders: BTreeMap::new(),
            units: vec![],
        }
    }

    pub(crate) fn path(out: &Path) -> PathBuf {
        out.join(FILE_NAME)
    }

    /// The manifest in `out`, if there is one. A manifest that is a link is refused.
    pub(crate) fn read(out: &Path) -> Result<Option<Self>, Error> {
        let path = Self::path(out);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Usage(format!(
                "{}: a symbolic link, not a manifest txq wrote: export into a new folder",
                escape::path(&path)
            )));
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::Usage(format!("{}: cannot read: {e}", escape::path(&path)))),
        };
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| Error::Usage(format!("{}: not a txq export manifest: {e}", escape::path(&path))))?;
        if manifest.txq_export != VERSION {
            return Err(Error::Usage(format!(
                "{}: written by another version of txq (manifest {}); export with --overwrite",
                escape::path(&path),
                manifest.txq_export
            )));
        }
        Ok(Some(manifest))
    }

    /// Writes the manifest into `out` under a temporary name, then renames it into place.
    pub(crate) fn write(&self, out: &Root) -> Result<(), Error> {
        let partial = PathBuf::from(format!("{FILE_NAME}.partial"));
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::Write { path: out.path().join(&partial), source: e.into() })?;
        out.remove_file(&partial)?;
        let mut file = out.create_file(&partial)?;
        std::io::Write::write_all(&mut file, (text + "\n").as_bytes())
            .map_err(|e| Error::Write { path: out.path().join(&partial), source: e })?;
        out.rename(&partial, out, Path::new(FILE_NAME))
    }

    /// Records a table exported: its columns and its folder.
    pub(crate) fn record_table(&mut self, table: &ExportTable) {
        self.tables.insert(table.qualified(), table.signature());
        self.folders.insert(table.qualified(), table.folder().to_string_lossy().replace('\\', "/"));
    }

    pub fn unit(&self, schema: &str, id: &str) -> Option<&UnitRecord> {
        self.units.iter().find(|u| u.schema == schema && u.id == id)
    }

    /// Records `unit`, in place of an earlier record of it.
    pub(crate) fn record(&mut self, unit: UnitRecord) {
        match self.units.iter_mut().find(|u| u.schema == unit.schema && u.id == unit.id) {
            Some(old) => *old = unit,
            None => self.units.push(unit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_replaces_records() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), None);
        let mut manifest = Manifest::new(Some("date".into()), true);
        let unit = |bytes, open| UnitRecord {
            schema: "rupu".into(),
            id: "run_1".into(),
            files: vec!["t/run_1.jsonl".into()],
            bytes,
            open,
            generation: 1,
        };
        manifest.record(unit(10, true));
        manifest.record(unit(20, false));
        assert_eq!(manifest.units, [unit(20, false)]);
        manifest.write(&Root::new(dir.path())).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), Some(manifest));
        std::fs::write(Manifest::path(dir.path()), "{}").unwrap();
        assert!(Manifest::read(dir.path()).unwrap_err().to_string().contains("not a txq export manifest"));
    }
}
