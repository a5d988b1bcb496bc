//! Prices: the list built into txq (`prices/model_prices.json`, in LiteLLM's price-file format)
//! with a file the user gives (`--prices FILE`, `TXQ_PRICES`: that format or a prices CSV) laid
//! over it model by model and key by key; the `prices` table and the `call_cost` function that
//! show and apply it in every session; and the models a statement priced without a price.

mod cost;
mod csv;
mod litellm;

use async_trait::async_trait;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{Expr, ScalarUDF, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

/// The table's name, in the default schema.
pub(crate) const TABLE: &str = "prices";
/// The function's name.
pub(crate) const FUNCTION: &str = cost::NAME;
/// The environment variable naming a prices file.
pub(crate) const ENV: &str = "TXQ_PRICES";
/// The built-in list, in LiteLLM's format.
const EMBEDDED: &str = include_str!("../../../prices/model_prices.json");

/// The price columns (US dollars per million tokens), in the order of [`Entry::prices`]: the
/// four prices of a request, then the same four above the long-context threshold.
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

/// The table's columns.
pub(crate) fn schema() -> SchemaRef {
    let price = |name: &str| Field::new(name, DataType::Float64, true);
    let mut fields =
        vec![Field::new("model", DataType::Utf8, false), Field::new("provider", DataType::Utf8, true)];
    fields.extend(PRICE_COLUMNS[..4].iter().map(|name| price(name)));
    fields.push(Field::new("long_context_above", DataType::Int64, true));
    fields.extend(PRICE_COLUMNS[4..].iter().map(|name| price(name)));
    fields.push(Field::new("max_input_tokens", DataType::Int64, true));
    fields.push(Field::new("mode", DataType::Utf8, true));
    fields.push(Field::new("source", DataType::Utf8, true));
    Arc::new(Schema::new(fields))
}

/// One model's prices, each `None` where the file gives none.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Entry {
    pub(crate) model: String,
    /// Who sells it (LiteLLM's `litellm_provider`).
    pub(crate) provider: Option<String>,
    /// US dollars per million tokens, in the order of [`PRICE_COLUMNS`].
    pub(crate) prices: [Option<f64>; 8],
    /// The prompt size (tokens) above which a request is priced whole at the `long_*` prices.
    pub(crate) long_context_above: Option<i64>,
    pub(crate) max_input_tokens: Option<i64>,
    /// LiteLLM's `mode` (chat, responses, embedding, ...).
    pub(crate) mode: Option<String>,
    /// Where the figures come from.
    pub(crate) source: Option<String>,
    /// The model's own multipliers of its standard prices by service tier (`fast`: 6.0), over
    /// those of its provider ([`PriceList::service_tiers`]).
    #[serde(default)]
    pub(crate) service_tiers: BTreeMap<String, f64>,
}

impl Entry {
    /// This entry with each value `over` gives in place of its own.
    fn overlaid(&self, over: &Entry) -> Entry {
        let text = |a: &Option<String>, b: &Option<String>| b.clone().or_else(|| a.clone());
        let mut prices = self.prices;
        for (price, laid) in prices.iter_mut().zip(over.prices) {
            *price = laid.or(*price);
        }
        Entry {
            model: self.model.clone(),
            provider: text(&self.provider, &over.provider),
            prices,
            long_context_above: over.long_context_above.or(self.long_context_above),
            max_input_tokens: over.max_input_tokens.or(self.max_input_tokens),
            mode: text(&self.mode, &over.mode),
            source: text(&self.source, &over.source),
            service_tiers: laid_over(&self.service_tiers, &over.service_tiers),
        }
    }
}

/// `over`'s keys with their values, and `under`'s others.
fn laid_over<V: Clone>(under: &BTreeMap<String, V>, over: &BTreeMap<String, V>) -> BTreeMap<String, V> {
    let mut laid = under.clone();
    laid.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
    laid
}

/// A list of prices and where it came from.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct PriceList {
    pub(crate) source: String,
    pub(crate) entries: Vec<Entry>,
    /// What reading the list noticed and let pass (a model a LiteLLM file names twice).
    pub(crate) warnings: Vec<String>,
    /// Each provider's multipliers of its standard prices by service tier (`anthropic`:
    /// `batch` 0.5, `fast` 6.0): a call at a tier is priced at the standard prices times its
    /// multiplier (docs/prices.md#service-tiers).
    #[serde(default)]
    pub(crate) service_tiers: BTreeMap<String, BTreeMap<String, f64>>,
}

/// The most a prices file may hold: 16 MiB (the built-in list is a few KiB).
const PRICES_LIMIT: u64 = 16 << 20;

impl PriceList {
    /// The list built into txq.
    pub(crate) fn embedded() -> crate::error::Result<Self> {
        Self::parse("built-in prices", EMBEDDED)
    }

    /// The built-in list with a prices file laid over it (see [`Self::overlaid`]).
    pub(crate) fn from_file(path: &Path) -> crate::error::Result<Self> {
        let source = crate::text::escape::path(path);
        let text = crate::text::settings_file::read(path, PRICES_LIMIT).map_err(|e| {
            crate::error::Error::Input { file: source.clone(), why: format!("cannot read: {e}") }
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

    /// Reads a prices file, in LiteLLM's JSON format when its first character (past a
    /// byte-order mark and white space) is `{` or `[`, else as a prices CSV.
    pub(crate) fn parse(source: &str, text: &str) -> crate::error::Result<Self> {
        let invalid = |why: String| crate::error::Error::Input { file: source.to_string(), why };
        let body = text.trim_start_matches('\u{feff}').trim_start();
        let (entries, twice, service_tiers) = if body.starts_with(['{', '[']) {
            litellm::parse(body)
        } else {
            csv::parse(text).map(|entries| (entries, Vec::new(), BTreeMap::new()))
        }
        .map_err(invalid)?;
        check(&entries).map_err(invalid)?;
        check_tiers(&service_tiers).map_err(invalid)?;
        let warnings = twice
            .iter()
            .map(|model| format!("{source}: {model} is priced twice; its last entry is taken"))
            .collect();
        Ok(Self { source: source.to_string(), entries, warnings, service_tiers })
    }

    /// This list with `over`'s entries laid over it by model: a model of `over` this list has
    /// takes each value `over` gives (a key of its entry, a cell of its row) and keeps the
    /// others; a model this list lacks is added as `over` has it. Models keep this list's
    /// order, new ones after it in `over`'s.
    pub(crate) fn overlaid(&self, over: &PriceList) -> crate::error::Result<Self> {
        let laid: HashMap<&str, &Entry> = over.entries.iter().map(|e| (e.model.as_str(), e)).collect();
        let mut entries: Vec<Entry> = self
            .entries
            .iter()
            .map(|entry| match laid.get(entry.model.as_str()) {
                Some(over) => entry.overlaid(over),
                None => entry.clone(),
            })
            .collect();
        let known: BTreeSet<&str> = self.entries.iter().map(|e| e.model.as_str()).collect();
        entries.extend(over.entries.iter().filter(|e| !known.contains(e.model.as_str())).cloned());
        check(&entries).map_err(|why| crate::error::Error::Input { file: over.source.clone(), why })?;
        let warnings = self.warnings.iter().chain(&over.warnings).cloned().collect();
        let mut service_tiers = self.service_tiers.clone();
        for (provider, tiers) in &over.service_tiers {
            let laid = laid_over(service_tiers.get(provider).unwrap_or(&BTreeMap::new()), tiers);
            service_tiers.insert(provider.clone(), laid);
        }
        Ok(Self { source: format!("{} over {}", over.source, self.source), entries, warnings, service_tiers })
    }

    /// The list as the rows of the `prices` table.
    pub(crate) fn batch(&self) -> Result<RecordBatch> {
        let text = |get: &dyn Fn(&Entry) -> Option<&str>| -> ArrayRef {
            Arc::new(self.entries.iter().map(get).collect::<StringArray>())
        };
        let price = |i: usize| -> ArrayRef {
            Arc::new(self.entries.iter().map(|e| e.prices[i]).collect::<Float64Array>())
        };
        let whole = |get: &dyn Fn(&Entry) -> Option<i64>| -> ArrayRef {
            Arc::new(self.entries.iter().map(get).collect::<Int64Array>())
        };
        let mut columns = vec![text(&|e| Some(e.model.as_str())), text(&|e| e.provider.as_deref())];
        columns.extend((0..4).map(price));
        columns.push(whole(&|e| e.long_context_above));
        columns.extend((4..8).map(price));
        columns.push(whole(&|e| e.max_input_tokens));
        columns.push(text(&|e| e.mode.as_deref()));
        columns.push(text(&|e| e.source.as_deref()));
        Ok(RecordBatch::try_new(schema(), columns)?)
    }
}

/// The highest price txq takes, in USD per million tokens: a thousand times the dearest model's
/// (so that a sum over billions of tokens stays a finite number).
pub(crate) const MAX_PRICE: f64 = 1e6;

/// Every entry names a model, each price is a number from 0 to [`MAX_PRICE`], and a long-context
/// price comes with the threshold it applies above.
fn check(entries: &[Entry]) -> Result<(), String> {
    for (row, entry) in entries.iter().enumerate() {
        let model = &entry.model;
        if model.is_empty() {
            return Err(format!("entry {} names no model", row + 1));
        }
        for (name, price) in PRICE_COLUMNS.iter().zip(entry.prices) {
            match price {
                Some(p) if p.is_nan() => return Err(format!("{name} of {model} is not a number")),
                Some(p) if p < 0.0 => return Err(format!("{name} of {model} is negative")),
                Some(p) if p > MAX_PRICE => {
                    return Err(format!(
                        "{name} of {model} is {p:e} USD per million tokens: beyond any price (at most {MAX_PRICE:e})"
                    ));
                }
                _ => {}
            }
        }
        if entry.long_context_above.is_none()
            && let Some(i) = (4..8).find(|&i| entry.prices[i].is_some())
        {
            return Err(format!("{} of {model} has no long_context_above to apply above", PRICE_COLUMNS[i]));
        }
        if entry.long_context_above.is_some_and(|t| t < 0) {
            return Err(format!("long_context_above of {model} is negative"));
        }
        check_multipliers(model, &entry.service_tiers)?;
    }
    Ok(())
}

/// The most a service tier multiplies a price by.
const MAX_MULTIPLIER: f64 = 1000.0;

/// Each provider's tier multipliers are numbers from 0 to [`MAX_MULTIPLIER`].
fn check_tiers(tiers: &BTreeMap<String, BTreeMap<String, f64>>) -> Result<(), String> {
    tiers.iter().try_for_each(|(provider, tiers)| check_multipliers(provider, tiers))
}

fn check_multipliers(of: &str, tiers: &BTreeMap<String, f64>) -> Result<(), String> {
    for (tier, multiplier) in tiers {
        if !(0.0..=MAX_MULTIPLIER).contains(multiplier) {
            return Err(format!(
                "service tier {tier} of {of} multiplies by {multiplier}: not a number from 0 to {MAX_MULTIPLIER}"
            ));
        }
    }
    Ok(())
}

/// What a session prices with now: the list, as rows and as the rates `call_cost` looks up.
#[derive(Debug)]
struct Current {
    batch: RecordBatch,
    rates: cost::PriceMap,
    list: PriceList,
}

/// A session's prices, shared by its `prices` table and its `call_cost` function, so that a
/// list registered later is seen by the views and plans made before it.
#[derive(Debug)]
pub(crate) struct Prices {
    current: RwLock<Arc<Current>>,
    /// The models `call_cost` found no price for since they were last taken.
    unpriced: Mutex<BTreeSet<String>>,
}

impl Prices {
    fn current(&self) -> Arc<Current> {
        self.current.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, current: Current) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(current);
    }

    /// Notes models `call_cost` could not price.
    fn missed<'a>(&self, models: impl IntoIterator<Item = &'a str>) {
        let mut unpriced = self.unpriced.lock().unwrap_or_else(|e| e.into_inner());
        for model in models {
            if !unpriced.contains(model) {
                unpriced.insert(model.to_string());
            }
        }
    }
}

/// The `prices` table: the session's list as it is now.
#[derive(Debug)]
struct PricesTable {
    prices: Arc<Prices>,
}

#[async_trait]
impl TableProvider for PricesTable {
    fn schema(&self) -> SchemaRef {
        schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let batch = self.prices.current().batch.clone();
        let table = MemTable::try_new(batch.schema(), vec![vec![batch]])?;
        table.scan(state, projection, filters, limit).await
    }
}

/// The session's shared prices, once [`register`] has made them.
fn prices_of(ctx: &SessionContext) -> Option<Arc<Prices>> {
    let udf = ctx.udf(FUNCTION).ok()?;
    udf.inner().downcast_ref::<cost::CallCost>().map(|f| f.prices.clone())
}

/// Makes `list` what the session prices with: its `prices` table and its `call_cost`
/// function, in place of any list before it (plans made before see the new one).
pub(crate) fn register(ctx: &SessionContext, list: &PriceList) -> Result<()> {
    let current = current_of(list)?;
    let prices = match prices_of(ctx) {
        Some(prices) => {
            prices.set(current);
            prices
        }
        None => {
            let prices = Arc::new(Prices {
                current: RwLock::new(Arc::new(current)),
                unpriced: Mutex::new(BTreeSet::new()),
            });
            ctx.register_udf(ScalarUDF::from(cost::CallCost::new(prices.clone())));
            prices
        }
    };
    register_table_of(ctx, prices)
}

fn current_of(list: &PriceList) -> Result<Current> {
    let rates = cost::PriceMap::with_tiers(&list.entries, &list.service_tiers);
    Ok(Current { batch: list.batch()?, rates, list: list.clone() })
}

/// Prices of their own, as a plan decoded elsewhere carries them.
fn prices_of_bytes(bytes: &[u8]) -> Result<Arc<Prices>> {
    let list: PriceList = serde_json::from_slice(bytes)
        .map_err(|e| DataFusionError::Internal(format!("prices sent with a plan: {e}")))?;
    Ok(Arc::new(Prices { current: RwLock::new(Arc::new(current_of(&list)?)), unpriced: Mutex::default() }))
}

fn bytes_of_prices(prices: &Prices) -> Vec<u8> {
    serde_json::to_vec(&prices.current().list).unwrap_or_default()
}

/// `call_cost` as bytes (its whole list), for a plan sent to a cluster: it prices there as the
/// session that planned it does, `--prices` included. `None` for another function.
pub(crate) fn bytes_of_udf(udf: &ScalarUDF) -> Option<Vec<u8>> {
    udf.inner().downcast_ref::<cost::CallCost>().map(|f| bytes_of_prices(&f.prices))
}

/// The `call_cost` of [`bytes_of_udf`].
pub(crate) fn udf_of_bytes(bytes: &[u8]) -> Result<Arc<ScalarUDF>> {
    Ok(Arc::new(ScalarUDF::from(cost::CallCost::new(prices_of_bytes(bytes)?))))
}

/// The `prices` table as bytes (its whole list), for a plan sent to a cluster; `None` for
/// another table.
pub(crate) fn bytes_of_table(table: &dyn TableProvider) -> Option<Vec<u8>> {
    table.downcast_ref::<PricesTable>().map(|t| bytes_of_prices(&t.prices))
}

/// The `prices` table of [`bytes_of_table`].
pub(crate) fn table_of_bytes(bytes: &[u8]) -> Result<Arc<dyn TableProvider>> {
    Ok(Arc::new(PricesTable { prices: prices_of_bytes(bytes)? }))
}

/// Registers the `prices` table again over the session's prices (where a default schema made
/// since [`register`] does not have it), without reading the list again.
pub(crate) fn register_table(ctx: &SessionContext) -> Result<()> {
    let prices = prices_of(ctx).ok_or_else(|| DataFusionError::Internal("no prices registered".into()))?;
    register_table_of(ctx, prices)
}

fn register_table_of(ctx: &SessionContext, prices: Arc<Prices>) -> Result<()> {
    ctx.deregister_table(TABLE)?;
    ctx.register_table(TABLE, Arc::new(PricesTable { prices }))?;
    Ok(())
}

/// Makes the built-in list what the session prices with.
pub(crate) fn register_built_in(ctx: &SessionContext) -> Result<()> {
    let list = PriceList::embedded().map_err(|e| DataFusionError::Internal(e.to_string()))?;
    register(ctx, &list)
}

/// The models `call_cost` was asked to price and found no price for since the last call, in
/// name order (it notes them as it runs, in views too, whatever the statement).
pub(crate) fn take_unpriced(ctx: &SessionContext) -> Vec<String> {
    let Some(prices) = prices_of(ctx) else { return Vec::new() };
    let taken = std::mem::take(&mut *prices.unpriced.lock().unwrap_or_else(|e| e.into_inner()));
    taken.into_iter().collect()
}

/// The warning that names models priced without a price (escaped as text from the data is).
pub(crate) fn unpriced_warning(models: &[String]) -> String {
    let models = crate::text::escape::text(&models.join(", ")).into_owned();
    format!("no price for {models}: their cost is null; give prices with --prices FILE")
}

/// The note that `calls` calls of unknown service tier were priced at the standard rate; none
/// for none.
pub(crate) fn unknown_tier_note(calls: i64) -> Option<String> {
    let noun = if calls == 1 { "call" } else { "calls" };
    (calls > 0).then(|| {
        format!(
            "{} {noun} of unknown tier priced at the standard rate",
            crate::text::number::grouped_signed(calls, ',')
        )
    })
}

#[cfg(test)]
mod tests;
