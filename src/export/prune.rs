//! Taking the rows of some transcripts out of an exported Parquet file, so that a unit can be
//! exported again whole: the file is left alone, deleted, or rewritten without those rows under
//! a temporary name that then replaces it.

use super::paths::Root;
use super::writer::properties;
use crate::error::Error;
use datafusion::arrow::array::{Array, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::compute::{cast, filter_record_batch};
use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::errors::ParquetError;
use std::collections::HashSet;
use std::fs::File;
use std::path::Path;

/// What became of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pruned {
    /// It held none of the rows.
    Untouched,
    /// It held only those rows, and is gone.
    Deleted,
    /// It was rewritten with the other rows.
    Rewritten,
}

/// Removes from the Parquet file `relative` of `root` every row whose `file` column is in
/// `files`.
pub(crate) fn remove_rows(root: &Root, relative: &Path, files: &HashSet<String>) -> Result<Pruned, Error> {
    let path = root.join(relative)?;
    let open = || File::open(&path).map_err(|e| Error::Write { path: path.to_path_buf(), source: e });
    let builder = ParquetRecordBatchReaderBuilder::try_new(open()?)?;
    let Ok(file_column) = builder.schema().index_of("file") else {
        return Ok(Pruned::Untouched);
    };
    let total = builder.metadata().file_metadata().num_rows() as usize;
    let only_file = ProjectionMask::roots(builder.parquet_schema(), [file_column]);
    let mut matching = 0;
    for batch in builder.with_projection(only_file).build()? {
        matching += drop_mask(&batch?, 0, files)?.true_count();
    }
    if matching == 0 {
        return Ok(Pruned::Untouched);
    }
    if matching == total {
        root.remove_file(relative)?;
        return Ok(Pruned::Deleted);
    }
    let partial = relative.with_extension("parquet.partial");
    root.remove_file(&partial)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(open()?)?;
    let mut writer =
        ArrowWriter::try_new(root.create_file(&partial)?, builder.schema().clone(), Some(properties()))?;
    for batch in builder.build()? {
        let batch = batch?;
        let keep = datafusion::arrow::compute::not(&drop_mask(&batch, file_column, files)?)?;
        writer.write(&filter_record_batch(&batch, &keep)?)?;
    }
    writer.close()?;
    root.rename(&partial, root, relative)?;
    Ok(Pruned::Rewritten)
}

/// True for the rows of `batch` whose column `column` names one of `files`.
fn drop_mask(
    batch: &RecordBatch,
    column: usize,
    files: &HashSet<String>,
) -> Result<BooleanArray, ParquetError> {
    let names = cast(batch.column(column), &DataType::Utf8)?;
    let names = names.as_any().downcast_ref::<StringArray>().expect("cast to Utf8");
    Ok((0..names.len()).map(|i| Some(names.is_valid(i) && files.contains(names.value(i)))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{Field, Schema};
    use std::sync::Arc;

    fn write(path: &Path, files: &[&str]) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, true),
            Field::new("file", DataType::Utf8, true),
        ]));
        let numbers = Int64Array::from_iter_values(0..files.len() as i64);
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(numbers), Arc::new(StringArray::from(files.to_vec()))],
        )
        .unwrap();
        let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }

    fn numbers(path: &Path) -> Vec<i64> {
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap().build().unwrap();
        reader
            .flat_map(|b| {
                let b = b.unwrap();
                b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec()
            })
            .collect()
    }

    #[test]
    fn untouched_rewritten_or_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part.parquet");
        write(&path, &["a", "b", "a", "c"]);
        let drop = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
        let (root, relative) = (Root::new(dir.path()), Path::new("part.parquet"));
        assert_eq!(remove_rows(&root, relative, &drop(&["x"])).unwrap(), Pruned::Untouched);
        assert_eq!(remove_rows(&root, relative, &drop(&["a"])).unwrap(), Pruned::Rewritten);
        assert_eq!(numbers(&path), [1, 3]);
        assert!(!dir.path().join("part.parquet.partial").exists());
        assert_eq!(remove_rows(&root, relative, &drop(&["b", "c"])).unwrap(), Pruned::Deleted);
        assert!(!path.exists());
    }
}
