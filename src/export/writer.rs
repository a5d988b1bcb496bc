//! Writing one table's batches as zstd Parquet files, split into Hive folders (`date=…`,
//! `run=…`) by each row's transcript, with a bounded number of files open at once and row groups
//! cut by size, so that memory stays bounded however many partitions there are.

use super::paths::Root;
use super::progress::Progress;
use crate::error::Error;
use datafusion::arrow::array::{Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;
use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files a writer keeps open; past that, the least recently written is finished.
const MAX_OPEN_FILES: usize = 32;
/// A file's buffered row group is written out once it holds this many bytes.
const ROW_GROUP_BYTES: usize = 32 << 20;
/// The rows buffered in all open files together stay under this many bytes: past it, the file
/// holding the most writes its row group out.
const BUFFERED_BYTES: usize = 64 << 20;
/// The Hive value of a row whose partition is not known (a run whose start time is unreadable).
/// Not Hive's `__HIVE_DEFAULT_PARTITION__`: pyarrow reads that as null, and then pandas cannot
/// put a table's partitions together ("Cannot yet unify dictionaries with nulls"). A word every
/// reader takes as text, and no day or run id spells.
pub(crate) const UNKNOWN_PARTITION: &str = "unknown";

/// How rows are split into folders: the folder key, and each transcript's value, by the path in
/// the `file` column.
#[derive(Debug, Clone)]
pub(crate) struct Partitioning {
    pub(crate) key: &'static str,
    pub(crate) by_file: Arc<HashMap<String, String>>,
}

/// The properties every exported file is written with.
pub(crate) fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("zstd level 3 exists")))
        .set_created_by(format!("txq {}", env!("CARGO_PKG_VERSION")))
        .build()
}

struct OpenFile {
    partition: Option<String>,
    path: PathBuf,
    writer: ArrowWriter<BufWriter<File>>,
    counted_bytes: usize,
}

/// Writes one stream of a table's batches under the folder `dir` of `root`, naming files
/// `<prefix><n>.parquet`.
pub(crate) struct TableWriter {
    root: Root,
    dir: PathBuf,
    prefix: String,
    schema: SchemaRef,
    partitioning: Option<Partitioning>,
    file_column: Option<usize>,
    open: Vec<OpenFile>,
    next: usize,
    progress: Arc<Progress>,
    /// The files finished so far.
    pub(crate) written: Vec<PathBuf>,
}

impl TableWriter {
    pub(crate) fn new(
        root: Root,
        dir: PathBuf,
        prefix: String,
        schema: SchemaRef,
        partitioning: Option<Partitioning>,
        progress: Arc<Progress>,
    ) -> Result<Self, Error> {
        let file_column = schema.index_of("file").ok();
        if partitioning.is_some() && file_column.is_none() {
            return Err(Error::Sql(datafusion::error::DataFusionError::Internal(
                "the table has no file column to partition by".into(),
            )));
        }
        Ok(Self {
            root,
            dir,
            prefix,
            schema,
            partitioning,
            file_column,
            open: Vec::new(),
            next: 0,
            progress,
            written: vec![],
        })
    }

    /// Writes a batch, each run of rows of one partition to that partition's file.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let values = self.partition_values(batch)?;
        let mut start = 0;
        while start < batch.num_rows() {
            let mut end = start + 1;
            while end < batch.num_rows() && values[end] == values[start] {
                end += 1;
            }
            self.write_to(values[start].clone(), &batch.slice(start, end - start))?;
            start = end;
        }
        self.progress.add_rows(batch.num_rows() as u64);
        Ok(())
    }

    /// Finishes every open file.
    pub(crate) fn finish(mut self) -> Result<Vec<PathBuf>, Error> {
        while !self.open.is_empty() {
            self.close(0)?;
        }
        Ok(self.written)
    }

    fn partition_values(&self, batch: &RecordBatch) -> Result<Vec<Option<String>>, Error> {
        let (Some(partitioning), Some(column)) = (&self.partitioning, self.file_column) else {
            return Ok(vec![None; batch.num_rows()]);
        };
        let files = datafusion::arrow::compute::cast(batch.column(column), &DataType::Utf8)?;
        let files = files.as_any().downcast_ref::<StringArray>().expect("cast to Utf8");
        Ok((0..files.len())
            .map(|i| {
                let value = files.is_valid(i).then(|| partitioning.by_file.get(files.value(i))).flatten();
                Some(value.map_or(UNKNOWN_PARTITION.to_string(), |v| hive_escape(v)))
            })
            .collect())
    }

    fn write_to(&mut self, partition: Option<String>, rows: &RecordBatch) -> Result<(), Error> {
        let at = match self.open.iter().position(|f| f.partition == partition) {
            Some(at) => at,
            None => {
                if self.open.len() >= MAX_OPEN_FILES {
                    self.close(0)?;
                }
                let file = self.create(partition)?;
                self.open.push(file);
                self.open.len() - 1
            }
        };
        let mut file = self.open.remove(at);
        file.writer.write(rows)?;
        if file.writer.in_progress_size() >= ROW_GROUP_BYTES {
            file.writer.flush()?;
        }
        self.open.push(file);
        let buffered: usize = self.open.iter().map(|f| f.writer.in_progress_size()).sum();
        if buffered > BUFFERED_BYTES
            && let Some(fullest) = self.open.iter_mut().max_by_key(|f| f.writer.in_progress_size())
        {
            fullest.writer.flush()?;
        }
        for file in &mut self.open {
            let written = file.writer.bytes_written();
            self.progress.add_bytes((written - file.counted_bytes) as u64);
            file.counted_bytes = written;
        }
        Ok(())
    }

    fn create(&mut self, partition: Option<String>) -> Result<OpenFile, Error> {
        let mut relative = self.dir.clone();
        if let (Some(partitioning), Some(value)) = (&self.partitioning, &partition) {
            relative.push(format!("{}={value}", partitioning.key));
        }
        relative.push(format!("{}{:03}.parquet", self.prefix, self.next));
        self.next += 1;
        let sink = self.root.create_file(&relative)?;
        let path = self.root.path().join(&relative);
        let writer = ArrowWriter::try_new(BufWriter::new(sink), self.schema.clone(), Some(properties()))?;
        Ok(OpenFile { partition, path, writer, counted_bytes: 0 })
    }

    fn close(&mut self, at: usize) -> Result<(), Error> {
        let file = self.open.remove(at);
        let mut writer = file.writer;
        writer.finish()?;
        let written = writer.bytes_written();
        self.progress.add_bytes((written - file.counted_bytes) as u64);
        self.progress.add_file();
        self.written.push(file.path);
        Ok(())
    }
}

/// Writes the new file `relative` of `root`, holding no rows, only `schema`: what an empty
/// table exports as.
pub(crate) fn write_empty(root: &Root, relative: &Path, schema: SchemaRef) -> Result<(), Error> {
    let sink = root.create_file(relative)?;
    ArrowWriter::try_new(BufWriter::new(sink), schema, Some(properties()))?.close()?;
    Ok(())
}

/// A partition value as a Hive folder name: characters other than letters, digits, `.`, `_`
/// and `-` written as `%XX`.
pub(crate) fn hive_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    #[test]
    fn hive_values_are_escaped() {
        assert_eq!(hive_escape("2026-10-07"), "2026-10-07");
        assert_eq!(hive_escape("run_01ABC"), "run_01ABC");
        assert_eq!(hive_escape("a b=c/ü"), "a%20b%3Dc%2F%C3%BC");
    }

    #[test]
    fn rows_go_to_their_partition_and_files_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("file", DataType::Utf8, true),
            Field::new("n", DataType::Int64, true),
        ]));
        let files: Vec<String> = (0..MAX_OPEN_FILES + 8).map(|i| format!("f{i}")).collect();
        let by_file = files.iter().map(|f| (f.clone(), format!("day{}", &f[1..]))).collect();
        let partitioning = Partitioning { key: "date", by_file: Arc::new(by_file) };
        let progress = Arc::new(Progress::default());
        let mut writer = TableWriter::new(
            Root::new(dir.path()),
            PathBuf::from("rupu/usage"),
            "part-".into(),
            schema.clone(),
            Some(partitioning),
            progress.clone(),
        )
        .unwrap();
        // Rows of more partitions than files kept open, interleaved twice.
        for _ in 0..2 {
            let names: Vec<&str> = files.iter().flat_map(|f| [f.as_str(), f.as_str()]).collect();
            let numbers: Vec<i64> = (0..names.len() as i64).collect();
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(StringArray::from(names)), Arc::new(Int64Array::from(numbers))],
            )
            .unwrap();
            writer.write(&batch).unwrap();
        }
        let written = writer.finish().unwrap();
        assert_eq!(progress.rows(), 4 * files.len() as u64);
        assert!(written.len() > files.len(), "files closed to stay under the limit were opened anew");
        let mut rows_by_folder: HashMap<String, usize> = HashMap::new();
        for path in &written {
            let folder = path.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
            let reader =
                ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap().build().unwrap();
            for batch in reader {
                let batch = batch.unwrap();
                let names = batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
                for name in names.iter().flatten() {
                    assert_eq!(folder, format!("date=day{}", &name[1..]));
                }
                *rows_by_folder.entry(folder.clone()).or_default() += batch.num_rows();
            }
        }
        assert_eq!(rows_by_folder.len(), files.len());
        assert!(rows_by_folder.values().all(|n| *n == 4));
    }
}
