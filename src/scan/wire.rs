//! A scan as bytes, for a cluster: everything an executor needs to run a [`ScanExec`] that a
//! scheduler planned (the format by id, the table and the inference figures its columns come
//! from, the files of each partition with their size, times, damage and events by type, the
//! projection and the limit).

use super::ScanSource;
use super::exec::{ScanConfig, ScanExec};
use crate::infer::stats::{FieldShapes, FormatStats, ShapeSet};
use crate::source::files::SourceFile;
use crate::table::corpus::{FormatData, ProblemLog};
use crate::table::file_events::FileEvents;
use datafusion::error::{DataFusionError, Result};
use prost::Message;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Clone, PartialEq, prost::Message)]
struct ScanNode {
    /// [`crate::format::Format::id`].
    #[prost(string, tag = "1")]
    format: String,
    #[prost(string, tag = "2")]
    table: String,
    /// The format's figures, type by type ([`FormatData::stats`]).
    #[prost(message, repeated, tag = "3")]
    types: Vec<TypeNode>,
    #[prost(message, repeated, tag = "4")]
    partitions: Vec<PartitionNode>,
    #[prost(message, repeated, tag = "5")]
    damaged_elsewhere: Vec<FileNode>,
    #[prost(uint64, repeated, tag = "6")]
    projection: Vec<u64>,
    #[prost(bool, tag = "7")]
    projected: bool,
    #[prost(uint64, optional, tag = "8")]
    limit: Option<u64>,
    #[prost(uint64, tag = "9")]
    batch_size: u64,
    #[prost(uint64, tag = "10")]
    max_line_bytes: u64,
    /// The events by type: the types, and each shape's type ([`FileEvents::parts`]).
    #[prost(string, repeated, tag = "11")]
    event_types: Vec<String>,
    #[prost(uint32, repeated, tag = "12")]
    type_of_shape: Vec<u32>,
    /// Each partition's number among the scan's first partitions ([`ScanExec::split_by_child`]).
    #[prost(uint64, repeated, tag = "13")]
    global: Vec<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct TypeNode {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(uint64, tag = "2")]
    events: u64,
    #[prost(string, repeated, tag = "3")]
    keys: Vec<String>,
    /// Each key's shapes ([`ShapeSet::bits`]).
    #[prost(uint32, repeated, tag = "4")]
    shapes: Vec<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct PartitionNode {
    #[prost(message, repeated, tag = "1")]
    files: Vec<FileNode>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct FileNode {
    #[prost(bytes = "vec", tag = "1")]
    path: Vec<u8>,
    /// Empty when it is `path`.
    #[prost(bytes = "vec", tag = "2")]
    canonical: Vec<u8>,
    #[prost(uint64, tag = "3")]
    size: u64,
    #[prost(uint64, optional, tag = "4")]
    modified: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    inode: Option<u64>,
    #[prost(uint64, optional, tag = "6")]
    changed: Option<u64>,
    #[prost(uint64, tag = "7")]
    damaged_lines: u64,
    /// Its shapes with their events ([`FileEvents::parts`]).
    #[prost(bytes = "vec", tag = "8")]
    events: Vec<u8>,
}

impl ScanExec {
    /// The scan as bytes; an error for one that cannot run elsewhere (a followed statement's,
    /// which keeps where it stopped in this process).
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>> {
        if self.config.follow.is_some() {
            return Err(DataFusionError::NotImplemented(
                "a followed statement (--follow) runs on this machine, not on a cluster".into(),
            ));
        }
        let data = &self.source.data;
        let (types, type_of_shape, events) = data.file_events.parts();
        let events: Vec<&[u8]> = events.collect();
        let file = |&index: &u32| {
            let index = index as usize;
            let file = data.files.get(index);
            let canonical = match file.canonical() == file.path {
                true => Vec::new(),
                false => bytes_of(file.canonical()),
            };
            FileNode {
                path: bytes_of(&file.path),
                canonical,
                size: file.size,
                modified: file.modified,
                inode: file.inode,
                changed: file.changed,
                damaged_lines: data.file_damage.of_file(index),
                events: events.get(index).map_or_else(Vec::new, |e| e.to_vec()),
            }
        };
        let node = ScanNode {
            format: data.format.id.to_string(),
            table: self.source.table.name.clone(),
            types: data
                .stats
                .types
                .iter()
                .map(|(name, stats)| TypeNode {
                    name: name.to_string(),
                    events: stats.events,
                    keys: stats.fields.iter().map(|(key, _)| key.clone()).collect(),
                    shapes: stats.fields.iter().map(|(_, shapes)| u32::from(shapes.bits())).collect(),
                })
                .collect(),
            partitions: self
                .partitions
                .iter()
                .map(|files| PartitionNode { files: files.iter().map(file).collect() })
                .collect(),
            damaged_elsewhere: self.damaged_elsewhere.iter().map(file).collect(),
            projection: self.config.projection.iter().flatten().map(|&i| i as u64).collect(),
            projected: self.config.projection.is_some(),
            limit: self.config.limit.map(|l| l as u64),
            batch_size: self.config.batch_size as u64,
            max_line_bytes: self.source.max_line_bytes as u64,
            event_types: types.iter().map(|t| t.to_string()).collect(),
            type_of_shape: type_of_shape.to_vec(),
            global: self.global.iter().map(|&g| g as u64).collect(),
        };
        Ok(node.encode_to_vec())
    }

    /// The scan of [`ScanExec::to_bytes`], its table made again from the format's figures, its
    /// files read from this machine or from the stores of the task's runtime; `inputs` is the
    /// child of a split scan.
    pub(crate) fn from_bytes(
        bytes: &[u8],
        inputs: &[Arc<dyn datafusion::physical_plan::ExecutionPlan>],
    ) -> Result<ScanExec> {
        let bad =
            |why: String| DataFusionError::Internal(format!("a transcript scan sent to this process: {why}"));
        let node = ScanNode::decode(bytes).map_err(|e| bad(e.to_string()))?;
        let format = crate::format::by_id(&node.format)
            .ok_or_else(|| bad(format!("no format {:?} in this txq (another version?)", node.format)))?;
        let mut stats = FormatStats::default();
        for t in &node.types {
            let fields: FieldShapes = (t.keys.iter().cloned())
                .zip(t.shapes.iter().map(|&bits| ShapeSet::from_bits(bits as u8)))
                .collect();
            stats.add_type(&Arc::from(t.name.as_str()), &fields, t.events, true);
        }
        let tables = crate::table::event_table::all_tables(&format, &stats);
        let table = tables
            .into_iter()
            .find(|t| t.name == node.table)
            .map(Arc::new)
            .ok_or_else(|| bad(format!("no table {}.{} in what was sent", format.name, node.table)))?;
        // Every file once, with its damage and its events, in the order of the partitions.
        let mut files: Vec<(SourceFile, u64)> = Vec::new();
        let mut events: Vec<Vec<u8>> = Vec::new();
        let mut take = |file: &FileNode| {
            let path = path_of(&file.path);
            let canonical = if file.canonical.is_empty() { path.clone() } else { path_of(&file.canonical) };
            let source = SourceFile::new(path, canonical, file.size, file.modified, file.inode, file.changed);
            files.push((source, file.damaged_lines));
            events.push(file.events.clone());
            (files.len() - 1) as u32
        };
        let partitions: Vec<Vec<u32>> =
            node.partitions.iter().map(|p| p.files.iter().map(&mut take).collect()).collect();
        let damaged_elsewhere: Vec<u32> = node.damaged_elsewhere.iter().map(&mut take).collect();
        let types: Vec<Arc<str>> = node.event_types.iter().map(|t| Arc::from(t.as_str())).collect();
        let file_events = FileEvents::from_parts(types, node.type_of_shape.clone(), events);
        let data = FormatData::of_scan(format, files, file_events, vec![table.clone()], stats);
        let source = ScanSource {
            data: Arc::new(data),
            table,
            store: crate::source::read::local_store(),
            max_line_bytes: usize::try_from(node.max_line_bytes).unwrap_or(usize::MAX),
            problems: Arc::new(ProblemLog::default()),
        };
        let config = ScanConfig {
            projection: node.projected.then(|| node.projection.iter().map(|&i| i as usize).collect()),
            limit: node.limit.map(|l| l as usize),
            batch_size: node.batch_size.max(1) as usize,
            follow: None,
        };
        let mut scan = ScanExec::of_partitions(Arc::new(source), partitions, config)
            .with_damaged_elsewhere(damaged_elsewhere);
        if node.global.len() != scan.partitions.len() {
            return Err(bad("partition numbers that do not fit the partitions".into()));
        }
        scan.global = node.global.iter().map(|&g| g as usize).collect();
        scan.split = inputs.first().cloned();
        Ok(scan)
    }
}

/// A path as bytes, as it is on this machine (any bytes on unix).
#[cfg(unix)]
pub(crate) fn bytes_of(path: &std::path::Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

/// The path of [`bytes_of`].
#[cfg(unix)]
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
pub(crate) fn bytes_of(path: &std::path::Path) -> Vec<u8> {
    path.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}
