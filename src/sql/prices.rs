//! The `prices` table: what a model's tokens cost, in US dollars per million tokens, with the
//! long-context tier of the models that have one, from the CSV embedded in the binary
//! (`prices/prices.csv`) with the rows of one the user gives (`--prices FILE`, `TXQ_PRICES`)
//! laid over it by model; `txq prices`; and the models a query priced without finding a price for.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray, new_null_array};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::MemTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// The table's name, in the default schema.
pub(crate) const TABLE: &str = "prices";
/// The environment variable naming a prices file.
pub(crate) const ENV: &str = "TXQ_PRICES";
const EMBEDDED: &str = include_str!("../../prices/prices.csv");

/// The price columns (US dollars per million tokens), in the order of the table.
pub(crate) const PRICE_COLUMNS: [&str; 8] = [
    "input",
    "output",
    "cached_input",
    "cache_write",
    "long_input",
    "long_output",
    "long_cached_input",
    "long_cache_write",
];

/// The table's columns, in the order the built-in CSV has them.
pub(crate) fn schema() -> SchemaRef {
    let price = |name: &str| Field::new(name, DataType::Float64, true);
    let mut fields =
        vec![Field::new("model", DataType::Utf8, true), Field::new("provider", DataType::Utf8, true)];
    fields.extend(PRICE_COLUMNS[..4].iter().map(|name| price(name)));
    fields.push(Field::new("long_context_above", DataType::Int64, true));
    fields.extend(PRICE_COLUMNS[4..].iter().map(|name| price(name)));
    fields.push(Field::new("price_date", DataType::Date32, true));
    fields.push(Field::new("note", DataType::Utf8, true));
    Arc::new(Schema::new(fields))
}

/// A list of prices and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct PriceList {
    pub(crate) source: String,
    pub(crate) batch: RecordBatch,
}

impl PriceList {
    /// The list built into txq.
    pub(crate) fn embedded() -> crate::error::Result<Self> {
        Self::parse("built-in prices", EMBEDDED)
    }

    /// The built-in list with a prices file's rows laid over it (see [`Self::overlaid`]).
    pub(crate) fn from_file(path: &Path) -> crate::error::Result<Self> {
        let source = crate::text::escape::path(path);
        let text = std::fs::read_to_string(path).map_err(|e| crate::error::Error::Input {
            file: source.clone(),
            why: format!("cannot read: {e}"),
        })?;
        let built_in = Self::embedded()?;
        built_in.overlaid(&Self::parse(&source, &text)?)
    }

    /// The list the command line asks for: the built-in list with `flag`'s file laid over it,
    /// else with the file `$TXQ_PRICES` names; `None` when neither is given (the built-in list
    /// stays).
    pub(crate) fn chosen(flag: Option<&Path>) -> crate::error::Result<Option<Self>> {
        match (flag, std::env::var_os(ENV).filter(|v| !v.is_empty())) {
            (Some(path), _) => Self::from_file(path).map(Some),
            (None, Some(path)) => Self::from_file(Path::new(&path)).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// Reads a prices CSV: `#` comment lines, a header naming `model` and any of the other
    /// columns of [`schema`] in any order, one row per model, prices as decimal numbers (empty
    /// for none), `long_context_above` as a whole number of tokens, dates as YYYY-MM-DD. The
    /// columns it does not name are null.
    pub(crate) fn parse(source: &str, text: &str) -> crate::error::Result<Self> {
        let invalid = |why: String| crate::error::Error::Input { file: source.to_string(), why };
        let full = schema();
        let known = || full.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(",");
        let header = text
            .lines()
            .find(|line| !line.starts_with('#') && !line.trim().is_empty())
            .ok_or_else(|| invalid("no header line".into()))?;
        let mut named: Vec<Field> = Vec::new();
        for name in header.split(',').map(|n| n.trim().trim_matches('"')) {
            let field = full
                .field_with_name(name)
                .map_err(|_| invalid(format!("unknown column {name:?} (the columns are {})", known())))?;
            if named.iter().any(|f| f.name() == name) {
                return Err(invalid(format!("column {name} is named twice")));
            }
            named.push(field.clone());
        }
        if !named.iter().any(|f| f.name() == "model") {
            return Err(invalid(format!("no model column (the columns are {})", known())));
        }
        let file_schema = Arc::new(Schema::new(named));
        let reader = datafusion::arrow::csv::ReaderBuilder::new(file_schema.clone())
            .with_header(true)
            .with_comment(b'#')
            .build(std::io::Cursor::new(text.as_bytes()))
            .map_err(|e| invalid(e.to_string()))?;
        let batches: Vec<RecordBatch> = reader
            .collect::<Result<_, _>>()
            .map_err(|e| invalid(format!("{e} (the columns are {})", known())))?;
        let read = datafusion::arrow::compute::concat_batches(&file_schema, &batches)
            .map_err(|e| invalid(e.to_string()))?;
        // Every column of the table, the ones the file does not name null.
        let columns: Vec<ArrayRef> = full
            .fields()
            .iter()
            .map(|field| match read.column_by_name(field.name()) {
                Some(column) => column.clone(),
                None => new_null_array(field.data_type(), read.num_rows()),
            })
            .collect();
        let batch = RecordBatch::try_new(full, columns).map_err(|e| invalid(e.to_string()))?;
        check(&batch).map_err(invalid)?;
        Ok(Self { source: source.to_string(), batch })
    }

    /// This list with `over`'s rows laid over it by model: a model of `over` this list has
    /// keeps each value `over` leaves null (a column the file does not name, or an empty cell)
    /// and takes the others; a model this list lacks is added as `over` has it. Models keep
    /// this list's order, new ones after it in `over`'s.
    pub(crate) fn overlaid(&self, over: &PriceList) -> crate::error::Result<Self> {
        let invalid = |why: String| crate::error::Error::Input { file: over.source.clone(), why };
        let models = |batch: &RecordBatch| -> Vec<String> {
            batch.column(0).as_string::<i32>().iter().map(|m| m.unwrap_or_default().to_string()).collect()
        };
        let (base, top) = (models(&self.batch), models(&over.batch));
        let top_rows: std::collections::HashMap<&str, usize> =
            top.iter().enumerate().map(|(row, model)| (model.as_str(), row)).collect();
        let base_models: BTreeSet<&str> = base.iter().map(String::as_str).collect();
        // Each output row's (batch, row) in `interleave`'s terms: 0 this list, 1 `over`.
        let columns: Vec<ArrayRef> = (0..self.batch.num_columns())
            .map(|column| {
                let (under, above) = (self.batch.column(column), over.batch.column(column));
                let mut picks: Vec<(usize, usize)> = (0..base.len())
                    .map(|row| match top_rows.get(base[row].as_str()) {
                        Some(&laid) if above.is_valid(laid) => (1, laid),
                        _ => (0, row),
                    })
                    .collect();
                picks.extend(
                    (0..top.len())
                        .filter(|&row| !base_models.contains(top[row].as_str()))
                        .map(|row| (1, row)),
                );
                datafusion::arrow::compute::interleave(&[under.as_ref(), above.as_ref()], &picks)
                    .map_err(|e| invalid(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let batch = RecordBatch::try_new(self.batch.schema(), columns).map_err(|e| invalid(e.to_string()))?;
        check(&batch).map_err(invalid)?;
        Ok(Self { source: format!("{} over {}", over.source, self.source), batch })
    }
}

/// Every row names a model, once, no price is negative, and a long-context price comes with
/// the threshold it applies above.
fn check(batch: &RecordBatch) -> Result<(), String> {
    let models = batch.column(0).as_any().downcast_ref::<StringArray>().ok_or("model is not text")?;
    let mut seen = BTreeSet::new();
    for (row, model) in models.iter().enumerate() {
        let model = model.filter(|m| !m.is_empty()).ok_or(format!("row {} names no model", row + 1))?;
        if !seen.insert(model) {
            return Err(format!("{model} is priced twice"));
        }
    }
    let schema = batch.schema();
    for name in PRICE_COLUMNS {
        let (index, _) = schema.column_with_name(name).ok_or(format!("no column {name}"))?;
        let prices = datafusion::arrow::array::as_primitive_array::<Float64Type>(batch.column(index));
        if let Some(row) = prices.iter().position(|p| p.is_some_and(|p| p < 0.0 || p.is_nan())) {
            return Err(format!("{name} of {} is negative", models.value(row)));
        }
    }
    let (threshold, _) = schema.column_with_name("long_context_above").ok_or("no long_context_above")?;
    let threshold = batch.column(threshold);
    for name in &PRICE_COLUMNS[4..] {
        let (index, _) = schema.column_with_name(name).ok_or(format!("no column {name}"))?;
        if let Some(row) =
            (0..batch.num_rows()).find(|&r| batch.column(index).is_valid(r) && threshold.is_null(r))
        {
            return Err(format!("{name} of {} has no long_context_above to apply above", models.value(row)));
        }
    }
    if let Some(row) = datafusion::arrow::array::as_primitive_array::<Int64Type>(threshold)
        .iter()
        .position(|t| t.is_some_and(|t| t < 0))
    {
        return Err(format!("long_context_above of {} is negative", models.value(row)));
    }
    Ok(())
}

/// Makes `list` the session's `prices` table, in place of any before it.
pub(crate) fn register(ctx: &SessionContext, list: &PriceList) -> Result<()> {
    let table = MemTable::try_new(list.batch.schema(), vec![vec![list.batch.clone()]])?;
    ctx.deregister_table(TABLE)?;
    ctx.register_table(TABLE, Arc::new(table))?;
    Ok(())
}

/// Makes the built-in list the session's `prices` table.
pub(crate) fn register_built_in(ctx: &SessionContext) -> Result<()> {
    let list = PriceList::embedded().map_err(|e| DataFusionError::Internal(e.to_string()))?;
    register(ctx, &list)
}

/// Whether a plan reads the `prices` table.
pub(crate) fn reads_prices(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node
            && scan.table_name.table() == TABLE
        {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}

/// The models of rupu's `usage` that the `prices` table has no row for, in name order.
pub(crate) async fn unpriced_models(ctx: &SessionContext) -> Result<Vec<String>> {
    let sql = "select distinct model from rupu.usage \
               where model is not null and model not in (select model from prices where model is not null) \
               order by model";
    let batches = ctx.sql(sql).await?.collect().await?;
    let mut models = Vec::new();
    for batch in &batches {
        let column = datafusion::arrow::compute::cast(batch.column(0), &DataType::Utf8)?;
        let names = column.as_any().downcast_ref::<StringArray>().expect("cast to Utf8");
        models.extend(names.iter().flatten().map(str::to_string));
    }
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models(list: &PriceList) -> Vec<&str> {
        list.batch.column(0).as_string::<i32>().iter().flatten().collect()
    }

    fn price(list: &PriceList, model: &str, column: &str) -> Option<f64> {
        let row = models(list).iter().position(|m| *m == model)?;
        let column = list.batch.column_by_name(column)?;
        let prices = datafusion::arrow::array::as_primitive_array::<Float64Type>(column);
        prices.is_valid(row).then(|| prices.value(row))
    }

    #[test]
    fn the_built_in_list_prices_todays_models_and_every_generated_one() {
        let list = PriceList::embedded().unwrap();
        let names = models(&list);
        for model in [
            "claude-haiku-4-5",
            "claude-opus-5",
            "claude-sonnet-4-6",
            "gpt-5.1",
            "gpt-5.1-codex",
            "gpt-5.1-mini",
            "claude-3-5-sonnet",
            "claude-3-7-sonnet",
            "claude-sonnet-4",
            "claude-opus-4-1",
            "claude-sonnet-4-5",
            "claude-opus-4-5",
            "gpt-4o",
            "gpt-4.1",
            "o3",
            "o4-mini",
            "gpt-5",
            "gemini-1.5-pro",
            "gemini-2.0-flash",
            "gemini-2.5-pro",
            "gemini-2.5-flash",
        ] {
            assert!(names.contains(&model), "{model}");
        }
        assert_eq!(
            list.batch.column_by_name("price_date").unwrap().null_count(),
            0,
            "every row has its date"
        );
        assert_eq!(price(&list, "claude-sonnet-4-5", "long_input"), Some(6.0));
        assert_eq!(price(&list, "gemini-2.5-pro", "long_output"), Some(15.0));
        assert_eq!(price(&list, "gpt-4o", "cache_write"), None);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let header = "model,provider,input,output,cached_input,cache_write,price_date,note\n";
        let parse = |body: &str| match PriceList::parse("p.csv", &format!("{header}{body}")) {
            Err(crate::error::Error::Input { why, .. }) => why,
            other => panic!("not refused as a bad prices file: {other:?}"),
        };
        assert!(parse("m,x,1,2,0.1,,2026-01-01,\nm,x,1,2,0.1,,2026-01-01,\n").contains("m is priced twice"));
        assert!(parse("m,x,-1,2,0.1,,2026-01-01,\n").contains("input of m is negative"));
        assert!(parse(",x,1,2,0.1,,2026-01-01,\n").contains("row 1 names no model"));
        assert!(parse("m,x,one,2,0.1,,2026-01-01,\n").contains("the columns are"));
        let unknown = PriceList::parse("p.csv", "model,inptu\nm,1\n").unwrap_err().to_string();
        assert!(unknown.contains("unknown column \"inptu\""), "{unknown}");
        let no_model = PriceList::parse("p.csv", "input,output\n1,2\n").unwrap_err().to_string();
        assert!(no_model.contains("no model column"), "{no_model}");
        let no_threshold = PriceList::parse("p.csv", "model,long_input\nm,2\n").unwrap_err().to_string();
        assert!(no_threshold.contains("no long_context_above"), "{no_threshold}");
    }

    #[test]
    fn comments_and_empty_prices() {
        let text = "# a comment\nmodel,provider,input,output,cached_input,cache_write,price_date,note\n\
                    # another\nm,x,1.5,2,0.25,,2026-01-02,why\n";
        let list = PriceList::parse("p.csv", text).unwrap();
        assert_eq!(list.batch.num_rows(), 1);
        assert_eq!(price(&list, "m", "cache_write"), None);
        assert_eq!(price(&list, "m", "long_input"), None);
    }

    #[test]
    fn a_file_with_some_columns_overrides_by_model_and_adds_new_models() {
        let built_in = PriceList::embedded().unwrap();
        let over = PriceList::parse("p.csv", "output,model\n99,gpt-4o\n7,my-model\n").unwrap();
        let list = built_in.overlaid(&over).unwrap();
        assert_eq!(list.batch.num_rows(), built_in.batch.num_rows() + 1);
        assert_eq!(price(&list, "gpt-4o", "output"), Some(99.0), "the file's value wins");
        assert_eq!(price(&list, "gpt-4o", "input"), Some(2.5), "a column it does not name stays");
        assert_eq!(price(&list, "my-model", "output"), Some(7.0));
        assert_eq!(price(&list, "my-model", "input"), None, "a new model has null where none is given");
        assert_eq!(price(&list, "claude-haiku-4-5", "input"), Some(1.0), "other models stay");
        assert_eq!(models(&list).last(), Some(&"my-model"));
    }
}
