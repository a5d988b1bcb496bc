//! Widening an exported table when its columns grew since OUT was written (a field seen for the
//! first time): the dataset's columns become those of the table now plus any the export held
//! that the table no longer has, and every file of the table is given them all (null where it
//! had none), so that every reader, with its own defaults, reads one schema. A column whose type
//! changed is refused: no reader reads one column with two types.

use super::paths::Root;
use super::tables::ExportTable;
use super::writer::properties;
use crate::error::Error;
use crate::text::escape;
use datafusion::arrow::array::{ArrayRef, RecordBatch, new_null_array};
use datafusion::arrow::datatypes::{Field, FieldRef, Schema, SchemaRef};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The columns of a file of the table: those of `relative` under `root`.
fn file_schema(root: &Root, relative: &Path) -> Result<SchemaRef, Error> {
    let path = root.join(relative)?;
    let file = File::open(&path).map_err(|e| Error::Write { path: path.to_path_buf(), source: e })?;
    Ok(ParquetRecordBatchReaderBuilder::try_new(file)?.schema().clone())
}

/// The columns the table's dataset has after this append: the table's columns now, then those
/// of the files already exported (`files`, below `out`) that the table no longer has; and the
/// files that lack some of them. `before` is the manifest's record of the table's columns
/// (`name: type`), which must agree with the table now on every column's type, as the files
/// must.
pub(crate) fn dataset_columns(
    out: &Root,
    table: &ExportTable,
    before: &[String],
    files: &[PathBuf],
) -> Result<(SchemaRef, Vec<PathBuf>), Error> {
    let now = &table.columns;
    for field in now.fields() {
        let prefix = format!("{}: ", field.name());
        let now_type = field.data_type().to_string();
        if let Some(was) = before.iter().find_map(|c| c.strip_prefix(&prefix)).filter(|was| *was != now_type)
        {
            return Err(type_changed(out, table, field.name(), was, &now_type));
        }
    }
    let mut fields: Vec<FieldRef> = now.fields().iter().cloned().collect();
    let mut schemas = Vec::with_capacity(files.len());
    for file in files {
        let schema = file_schema(out, file)?;
        for field in schema.fields() {
            match fields.iter().find(|f| f.name() == field.name()) {
                Some(known) if known.data_type() != field.data_type() => {
                    return Err(type_changed(
                        out,
                        table,
                        field.name(),
                        &field.data_type().to_string(),
                        &known.data_type().to_string(),
                    ));
                }
                Some(_) => {}
                None => fields.push(Arc::new(field.as_ref().clone().with_nullable(true))),
            }
        }
        schemas.push((file.clone(), schema));
    }
    // A column some file lacks reads as null there: it must take nulls.
    let fields: Vec<FieldRef> = fields
        .into_iter()
        .map(|f| {
            let everywhere = schemas.iter().all(|(_, s)| s.field_with_name(f.name()).is_ok());
            if everywhere || f.is_nullable() { f } else { Arc::new(f.as_ref().clone().with_nullable(true)) }
        })
        .collect();
    let dataset = Arc::new(Schema::new_with_metadata(fields, now.metadata().clone()));
    let narrower = schemas.into_iter().filter(|(_, s)| !same_columns(s, &dataset)).map(|(f, _)| f).collect();
    Ok((dataset, narrower))
}

fn type_changed(out: &Root, table: &ExportTable, column: &str, was: &str, now: &str) -> Error {
    Error::Usage(format!(
        "{}: the column {} was {} when {} was written and is {} now: no reader reads one column \
         with two types; export again with --overwrite",
        escape::text(&table.qualified()),
        escape::text(column),
        escape::text(was),
        escape::path(out.path()),
        escape::text(now)
    ))
}

/// Whether two schemas have the same columns, in the same order, of the same types and
/// nullability.
pub(crate) fn same_columns(a: &Schema, b: &Schema) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields().iter().zip(b.fields()).all(|(x, y)| {
            x.name() == y.name() && x.data_type() == y.data_type() && x.is_nullable() == y.is_nullable()
        })
}

/// `batch` with the columns of `schema`: its own where it has them (by name), null elsewhere.
pub(crate) fn to_columns(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, Error> {
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|field: &Arc<Field>| match batch.column_by_name(field.name()) {
            Some(column) => column.clone(),
            None => new_null_array(field.data_type(), batch.num_rows()),
        })
        .collect();
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

/// Rewrites the file `relative` of `root` with the columns of `schema`, under a temporary name
/// that then replaces it.
pub(crate) fn widen_file(root: &Root, relative: &Path, schema: &SchemaRef) -> Result<(), Error> {
    let path = root.join(relative)?;
    let file = File::open(&path).map_err(|e| Error::Write { path: path.to_path_buf(), source: e })?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)?.build()?;
    let partial = relative.with_extension("parquet.partial");
    root.remove_file(&partial)?;
    let mut writer = ArrowWriter::try_new(root.create_file(&partial)?, schema.clone(), Some(properties()))?;
    for batch in reader {
        writer.write(&to_columns(&batch?, schema)?)?;
    }
    writer.close()?;
    root.rename(&partial, root, relative)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, Int64Array, StringArray};
    use datafusion::arrow::datatypes::DataType;

    fn write(root: &Root, name: &str, batch: &RecordBatch) {
        let mut writer =
            ArrowWriter::try_new(root.create_file(Path::new(name)).unwrap(), batch.schema(), None).unwrap();
        writer.write(batch).unwrap();
        writer.close().unwrap();
    }

    fn table(fields: Vec<Field>) -> ExportTable {
        ExportTable { schema: "rupu", name: "usage".into(), columns: Arc::new(Schema::new(fields)) }
    }

    #[test]
    fn a_new_column_widens_the_old_files_and_a_changed_type_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path());
        let old = Arc::new(Schema::new(vec![
            Field::new("file", DataType::Utf8, true),
            Field::new("gone", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            old.clone(),
            vec![Arc::new(StringArray::from(vec!["a", "b"])), Arc::new(Int64Array::from(vec![1, 2]))],
        )
        .unwrap();
        write(&root, "old.parquet", &batch);
        let before = vec!["file: Utf8".to_string(), "gone: Int64".to_string()];
        let now =
            table(vec![Field::new("file", DataType::Utf8, true), Field::new("region", DataType::Utf8, true)]);
        let files = vec![PathBuf::from("old.parquet")];
        let (dataset, narrower) = dataset_columns(&root, &now, &before, &files).unwrap();
        let names: Vec<&String> = dataset.fields().iter().map(|f| f.name()).collect();
        assert_eq!(names, ["file", "region", "gone"], "the table's columns now, then those it lost");
        assert!(dataset.field_with_name("gone").unwrap().is_nullable(), "new files have no value for it");
        assert_eq!(narrower, files);
        widen_file(&root, Path::new("old.parquet"), &dataset).unwrap();
        let widened = file_schema(&root, Path::new("old.parquet")).unwrap();
        assert!(same_columns(&widened, &dataset));
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(File::open(dir.path().join("old.parquet")).unwrap())
                .unwrap()
                .build()
                .unwrap();
        let batch = reader.map(Result::unwrap).next().unwrap();
        assert_eq!(batch.column_by_name("region").unwrap().null_count(), 2);
        assert_eq!(batch.column_by_name("gone").unwrap().null_count(), 0, "its values are kept");
        assert!(!dir.path().join("old.parquet.partial").exists());
        // Once widened, nothing more to do.
        assert!(dataset_columns(&root, &now, &before, &files).unwrap().1.is_empty());

        let retyped =
            table(vec![Field::new("file", DataType::Utf8, true), Field::new("gone", DataType::Utf8, true)]);
        let error = dataset_columns(&root, &retyped, &before, &files).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "rupu.usage: the column gone was Int64 when {} was written and is Utf8 now: no reader \
                 reads one column with two types; export again with --overwrite",
                dir.path().display()
            )
        );
        // The manifest says so even where no file holds the column.
        let error = dataset_columns(&root, &retyped, &before, &[]).unwrap_err().to_string();
        assert!(error.contains("the column gone was Int64"), "{error}");
    }
}
