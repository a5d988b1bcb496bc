//! A prices CSV, the format txq's list had before LiteLLM's: `#` comment lines, a header
//! naming `model` and any of the `prices` table's other columns in any order, one row per
//! model, prices in US dollars per million tokens (empty for none). The old columns
//! `price_date` (read and passed over) and `note` (the `source` column's old name) still read.

use super::{Entry, PRICE_COLUMNS, schema};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The file's rows, each a model's entry.
pub(super) fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let full = schema();
    let known = || full.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(",");
    let header = text
        .lines()
        .find(|line| !line.starts_with('#') && !line.trim().is_empty())
        .ok_or_else(|| "no header line".to_string())?;
    let mut named: Vec<Field> = Vec::new();
    for name in header.split(',').map(|n| n.trim().trim_matches('"').trim_start_matches('\u{feff}')) {
        let field = match name {
            "note" => Field::new(name, DataType::Utf8, true),
            "price_date" => Field::new(name, DataType::Date32, true),
            _ => full
                .field_with_name(name)
                .map_err(|_| format!("unknown column {name:?} (the columns are {})", known()))?
                .clone()
                .with_nullable(true),
        };
        if named.iter().any(|f| f.name() == name) {
            return Err(format!("column {name} is named twice"));
        }
        named.push(field);
    }
    let has = |name: &str| named.iter().any(|f| f.name() == name);
    if !has("model") {
        return Err(format!("no model column (the columns are {})", known()));
    }
    if has("note") && has("source") {
        return Err("columns note and source are one column (note is its old name): name one".into());
    }
    let file_schema = Arc::new(Schema::new(named));
    let reader = datafusion::arrow::csv::ReaderBuilder::new(file_schema.clone())
        .with_header(true)
        .with_comment(b'#')
        .build(std::io::Cursor::new(text.as_bytes()))
        .map_err(|e| e.to_string())?;
    let batches: Vec<RecordBatch> =
        reader.collect::<Result<_, _>>().map_err(|e| format!("{e} (the columns are {})", known()))?;
    let mut entries = Vec::new();
    let mut seen = BTreeSet::new();
    for batch in &batches {
        for row in 0..batch.num_rows() {
            let text = |name: &str| {
                let column = batch.column_by_name(name)?;
                column.is_valid(row).then(|| column.as_string::<i32>().value(row).to_string())
            };
            let float = |name: &str| {
                let column = batch.column_by_name(name)?;
                column.is_valid(row).then(|| column.as_primitive::<Float64Type>().value(row))
            };
            let whole = |name: &str| {
                let column = batch.column_by_name(name)?;
                column.is_valid(row).then(|| column.as_primitive::<Int64Type>().value(row))
            };
            let model = text("model")
                .filter(|m| !m.is_empty())
                .ok_or(format!("row {} names no model", entries.len() + 1))?;
            if !seen.insert(model.clone()) {
                return Err(format!("{model} is priced twice"));
            }
            entries.push(Entry {
                model,
                provider: text("provider"),
                prices: PRICE_COLUMNS.map(float),
                long_context_above: whole("long_context_above"),
                max_input_tokens: whole("max_input_tokens"),
                mode: text("mode"),
                source: text("source").or_else(|| text("note")),
                service_tiers: Default::default(),
            });
        }
    }
    Ok(entries)
}
