//! The `prices` table: what a model's tokens cost, in US dollars per million tokens, from the CSV
//! embedded in the binary (`prices/prices.csv`) or one the user gives (`--prices FILE`,
//! `TXQ_PRICES`), and the models a query priced without finding a price for.

use datafusion::arrow::array::{Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// The table's name, in the default schema.
pub const TABLE: &str = "prices";
/// The environment variable naming a prices file.
pub const ENV: &str = "TXQ_PRICES";
const EMBEDDED: &str = include_str!("../prices/prices.csv");

/// Why a prices file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {why}")]
pub struct PricesError {
    pub file: String,
    pub why: String,
}

/// The table's columns, in the order a prices CSV has them.
pub fn schema() -> SchemaRef {
    let price = |name: &str| Field::new(name, DataType::Float64, true);
    Arc::new(Schema::new(vec![
        Field::new("model", DataType::Utf8, true),
        Field::new("provider", DataType::Utf8, true),
        price("input"),
        price("output"),
        price("cached_input"),
        price("cache_write"),
        Field::new("price_date", DataType::Date32, true),
        Field::new("note", DataType::Utf8, true),
    ]))
}

/// A list of prices and where it came from.
#[derive(Debug, Clone)]
pub struct PriceList {
    pub source: String,
    pub batch: RecordBatch,
}

impl PriceList {
    /// The list built into txq.
    pub fn embedded() -> Result<Self, PricesError> {
        Self::parse("built-in prices", EMBEDDED)
    }

    pub fn from_file(path: &Path) -> Result<Self, PricesError> {
        let source = crate::escape::path(path);
        let text = std::fs::read_to_string(path)
            .map_err(|e| PricesError { file: source.clone(), why: format!("cannot read: {e}") })?;
        Self::parse(&source, &text)
    }

    /// The list the command line asks for: `flag`, else the file `$TXQ_PRICES` names; `None`
    /// when neither is given (the built-in list stays).
    pub fn chosen(flag: Option<&Path>) -> Result<Option<Self>, PricesError> {
        match (flag, std::env::var_os(ENV).filter(|v| !v.is_empty())) {
            (Some(path), _) => Self::from_file(path).map(Some),
            (None, Some(path)) => Self::from_file(Path::new(&path)).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// Reads a prices CSV: a header naming the columns of [`schema`] in order, `#` comment
    /// lines, one row per model, prices as decimal numbers (empty for none), dates as YYYY-MM-DD.
    pub fn parse(source: &str, text: &str) -> Result<Self, PricesError> {
        let invalid = |why: String| PricesError { file: source.to_string(), why };
        let reader = datafusion::arrow::csv::ReaderBuilder::new(schema())
            .with_header(true)
            .with_header_validation(true)
            .with_comment(b'#')
            .build(std::io::Cursor::new(text.as_bytes()))
            .map_err(|e| invalid(e.to_string()))?;
        let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().map_err(|e| {
            let names: Vec<String> = schema().fields().iter().map(|f| f.name().clone()).collect();
            invalid(format!("{e} (expected the columns {})", names.join(",")))
        })?;
        let batch = datafusion::arrow::compute::concat_batches(&schema(), &batches)
            .map_err(|e| invalid(e.to_string()))?;
        check(&batch).map_err(invalid)?;
        Ok(Self { source: source.to_string(), batch })
    }
}

/// Every row names a model, once, and no price is negative.
fn check(batch: &RecordBatch) -> Result<(), String> {
    let models = batch.column(0).as_any().downcast_ref::<StringArray>().ok_or("model is not text")?;
    let mut seen = BTreeSet::new();
    for (row, model) in models.iter().enumerate() {
        let model = model.filter(|m| !m.is_empty()).ok_or(format!("row {} names no model", row + 1))?;
        if !seen.insert(model) {
            return Err(format!("{model} is priced twice"));
        }
    }
    for column in 2..6 {
        let prices = datafusion::arrow::array::as_primitive_array::<datafusion::arrow::datatypes::Float64Type>(
            batch.column(column),
        );
        if let Some(row) = prices.iter().position(|p| p.is_some_and(|p| p < 0.0 || p.is_nan())) {
            let column = batch.schema().field(column).name().clone();
            return Err(format!("{column} of {} is negative", models.value(row)));
        }
    }
    Ok(())
}

/// Makes `list` the session's `prices` table, in place of any before it.
pub fn register(ctx: &SessionContext, list: &PriceList) -> Result<()> {
    let table = MemTable::try_new(list.batch.schema(), vec![vec![list.batch.clone()]])?;
    ctx.deregister_table(TABLE)?;
    ctx.register_table(TABLE, Arc::new(table))?;
    Ok(())
}

/// Makes the built-in list the session's `prices` table.
pub fn register_built_in(ctx: &SessionContext) -> Result<()> {
    let list =
        PriceList::embedded().map_err(|e| datafusion::error::DataFusionError::Internal(e.to_string()))?;
    register(ctx, &list)
}

/// Whether a plan reads the `prices` table.
pub fn reads_prices(plan: &LogicalPlan) -> bool {
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
pub async fn unpriced_models(ctx: &SessionContext) -> Result<Vec<String>> {
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

    #[test]
    fn the_built_in_list_prices_every_generated_model() {
        let list = PriceList::embedded().unwrap();
        let models = list.batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        let mut names: Vec<&str> = models.iter().flatten().collect();
        names.sort();
        assert_eq!(
            names,
            [
                "claude-haiku-4-5",
                "claude-opus-5",
                "claude-sonnet-4-6",
                "gpt-5.1",
                "gpt-5.1-codex",
                "gpt-5.1-mini"
            ]
        );
        assert_eq!(list.batch.column(6).null_count(), 0, "every row has its date");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let header = "model,provider,input,output,cached_input,cache_write,price_date,note\n";
        let parse = |body: &str| PriceList::parse("p.csv", &format!("{header}{body}")).unwrap_err().why;
        assert!(parse("m,x,1,2,0.1,,2026-01-01,\nm,x,1,2,0.1,,2026-01-01,\n").contains("m is priced twice"));
        assert!(parse("m,x,-1,2,0.1,,2026-01-01,\n").contains("input of m is negative"));
        assert!(parse(",x,1,2,0.1,,2026-01-01,\n").contains("row 1 names no model"));
        assert!(parse("m,x,one,2,0.1,,2026-01-01,\n").contains("expected the columns"));
        let wrong_header = PriceList::parse("p.csv", "model,input\nm,1\n").unwrap_err();
        assert!(!wrong_header.why.is_empty());
    }

    #[test]
    fn comments_and_empty_prices() {
        let text = "# a comment\nmodel,provider,input,output,cached_input,cache_write,price_date,note\n\
                    # another\nm,x,1.5,2,0.25,,2026-01-02,why\n";
        let list = PriceList::parse("p.csv", text).unwrap();
        assert_eq!(list.batch.num_rows(), 1);
        assert!(list.batch.column(5).is_null(0));
    }
}
