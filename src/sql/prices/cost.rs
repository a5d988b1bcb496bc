//! What one model call costs: a price list as rates looked up by model name (the exact id, else
//! without a provider prefix or a date suffix), each provider's rule for the cache prices a row
//! does not give and the whole-request long-context tier applied once per list; and
//! `call_cost`, the SQL function that prices rows.

use super::{Entry, Prices};
use datafusion::arrow::array::{
    Array, ArrayAccessor, AsArray, Float64Array, Float64Builder, Int64Array, StringArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{ScalarValue, exec_err, plan_err};
use datafusion::error::Result;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The function's name in SQL.
pub(super) const NAME: &str = "call_cost";
/// Its arguments, by name: the first five required, the service tier not.
const ARGUMENTS: [&str; 6] =
    ["model", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "service_tier"];
/// How many of [`ARGUMENTS`] are required.
const REQUIRED: usize = 5;

/// The four prices of a request, US dollars per million tokens, none missing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tier {
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cache_read: f64,
    pub(crate) cache_write: f64,
}

/// What a model's calls cost: its prices, and the tier a request whose prompt is over a
/// threshold is priced at whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rates {
    pub(crate) short: Tier,
    pub(crate) long: Option<(i64, Tier)>,
}

/// What a provider charges for the cache tokens a price row gives no price for, as multiples of
/// the input price of the request's tier.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CacheRule {
    /// A token written to the cache.
    write: f64,
    /// A token read from the cache.
    read: f64,
}

/// Anthropic's price page: a 5-minute cache write is 1.25 × input, a cache read 0.1 × input.
const ANTHROPIC: CacheRule = CacheRule { write: 1.25, read: 0.1 };
/// Every other provider's (OpenAI, Google, ...): no premium for a cache write (OpenAI's and
/// Gemini's caching charge a written token as the input token it is), and a cache read with no
/// listed price gets no discount.
const NO_PREMIUM: CacheRule = CacheRule { write: 1.0, read: 1.0 };

impl CacheRule {
    /// The rule of the provider who sells `entry`'s model: its `provider` (LiteLLM's
    /// `litellm_provider`: `anthropic`, `vertex_ai-anthropic_models`, ...), else the seller of
    /// the model family its id names (Claude on Bedrock).
    fn of(entry: &Entry) -> CacheRule {
        let anthropic = entry.provider.as_deref().is_some_and(is_anthropic)
            || family_seller(&entry.model).is_some_and(is_anthropic);
        if anthropic { ANTHROPIC } else { NO_PREMIUM }
    }
}

/// Anthropic, the one provider whose cache writes cost more than input.
fn is_anthropic(provider: &str) -> bool {
    provider.to_ascii_lowercase().contains("anthropic")
}

/// Who sells the model of id `model`, by the model families the formats' descriptions name: a
/// family's name anywhere in the id (`anthropic.claude-3-haiku` on Bedrock as well).
fn family_seller(model: &str) -> Option<&'static str> {
    static FAMILIES: std::sync::OnceLock<Vec<crate::format::ModelFamily>> = std::sync::OnceLock::new();
    let families =
        FAMILIES.get_or_init(|| crate::format::all().iter().filter_map(|f| f.model_family).collect());
    let model = model.to_ascii_lowercase();
    families.iter().find(|family| model.contains(family.name)).map(|family| family.provider)
}

impl Rates {
    /// The rates of an entry that gives input and output prices (`None` otherwise). A cache
    /// price the entry does not give follows its provider's rule ([`CacheRule::of`]): for
    /// Anthropic a write is 1.25 × input and a read 0.1 × input, for any other provider both
    /// are the input price. Above the threshold, a price the entry does not give is the one
    /// below it when the entry gives that, else (a cache price given at neither tier) the rule
    /// applied to the long input price.
    pub(crate) fn of(entry: &Entry) -> Option<Rates> {
        let [input, output, read, write, long_input, long_output, long_read, long_write] = entry.prices;
        let (input, output) = (input?, output?);
        let rule = CacheRule::of(entry);
        let short = Tier {
            input,
            output,
            cache_read: read.unwrap_or(input * rule.read),
            cache_write: write.unwrap_or(input * rule.write),
        };
        let long = entry.long_context_above.map(|above| {
            let input = long_input.unwrap_or(short.input);
            let tier = Tier {
                input,
                output: long_output.unwrap_or(short.output),
                cache_read: long_read.or(read).unwrap_or(input * rule.read),
                cache_write: long_write.or(write).unwrap_or(input * rule.write),
            };
            (above, tier)
        });
        Some(Rates { short, long })
    }

    /// One call's cost in US dollars. `input` is every prompt token, cache reads and writes
    /// included: the uncached rest (never below 0) is priced at the input price. A prompt over
    /// the threshold prices the whole call at the long tier.
    pub(crate) fn cost(&self, input: i64, cache_read: i64, cache_write: i64, output: i64) -> f64 {
        let tier = match self.long {
            Some((above, long)) if input > above => long,
            _ => self.short,
        };
        let uncached = input.saturating_sub(cache_read).saturating_sub(cache_write).max(0);
        (uncached as f64 * tier.input
            + cache_read as f64 * tier.cache_read
            + cache_write as f64 * tier.cache_write
            + output as f64 * tier.output)
            / 1e6
    }
}

/// A model's multipliers of its standard prices by service tier (lower-case names).
pub(crate) type TierMultipliers = BTreeMap<String, f64>;

/// What a model's calls cost: its rates, and its multipliers by service tier.
#[derive(Debug, Clone)]
pub(crate) struct Priced {
    pub(crate) rates: Rates,
    pub(crate) tiers: Arc<TierMultipliers>,
}

impl Priced {
    /// What a call at `tier` pays of the standard prices: the tier's multiplier, 1 for a tier
    /// the list has none for (`standard`, `default`, and a tier of unknown price: priced at the
    /// standard rate) and for no tier (unknown: priced at the standard rate, and counted as
    /// such by the spend reports).
    pub(crate) fn multiplier(&self, tier: Option<&str>) -> f64 {
        match tier {
            Some(tier) => self.tiers.get(&tier.to_ascii_lowercase()).copied().unwrap_or(1.0),
            None => 1.0,
        }
    }
}

/// A price list's rates by model id, made once per list.
#[derive(Debug, Default)]
pub(crate) struct PriceMap {
    by_model: HashMap<Box<str>, Priced, foldhash::fast::FixedState>,
}

impl PriceMap {
    #[cfg(test)]
    pub(crate) fn new(entries: &[Entry]) -> PriceMap {
        PriceMap::with_tiers(entries, &BTreeMap::new())
    }

    /// The rates of `entries`, each with its multipliers by service tier: its provider's in
    /// `providers` (the first whose name its provider, or its family's seller, holds), its own
    /// laid over them.
    pub(crate) fn with_tiers(entries: &[Entry], providers: &BTreeMap<String, TierMultipliers>) -> PriceMap {
        let mut shared: HashMap<Option<&str>, Arc<TierMultipliers>> = HashMap::new();
        let by_model = entries
            .iter()
            .filter_map(|entry| {
                let rates = Rates::of(entry)?;
                let sellers = [entry.provider.as_deref(), family_seller(&entry.model)];
                let provider = providers.keys().find(|name| {
                    sellers.iter().flatten().any(|seller| seller.to_ascii_lowercase().contains(name.as_str()))
                });
                let of_provider = shared
                    .entry(provider.map(String::as_str))
                    .or_insert_with(|| {
                        Arc::new(provider.and_then(|p| providers.get(p)).cloned().unwrap_or_default())
                    })
                    .clone();
                let tiers = if entry.service_tiers.is_empty() {
                    of_provider
                } else {
                    let mut own = (*of_provider).clone();
                    own.extend(entry.service_tiers.iter().map(|(tier, m)| (tier.to_ascii_lowercase(), *m)));
                    Arc::new(own)
                };
                Some((entry.model.as_str().into(), Priced { rates, tiers }))
            })
            .collect();
        PriceMap { by_model }
    }

    /// The rates of `model`, as [`Self::lookup_priced`] finds them.
    #[cfg(test)]
    pub(crate) fn lookup(&self, model: &str) -> Option<&Rates> {
        self.lookup_priced(model).map(|p| &p.rates)
    }

    /// The rates of `model`: its exact id, else (the first found) the id without an 8-digit
    /// date suffix (`-20250929`, `@20250929`, or `-2025-09-29`), the id without its provider
    /// prefix (what comes before its last `/`: `anthropic/`, `vertex_ai/`, ...), and that
    /// without a date suffix.
    pub(crate) fn lookup_priced(&self, model: &str) -> Option<&Priced> {
        let found = |name: &str| self.by_model.get(name);
        if let Some(rates) = found(model) {
            return Some(rates);
        }
        if let Some(rates) = undated(model).and_then(found) {
            return Some(rates);
        }
        let (_, bare) = model.rsplit_once('/')?;
        found(bare).or_else(|| undated(bare).and_then(found))
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// `model` without a date suffix, when it ends in one.
fn undated(model: &str) -> Option<&str> {
    let bytes = model.as_bytes();
    let digits = |from: usize, to: usize| bytes[from..to].iter().all(u8::is_ascii_digit);
    let n = bytes.len();
    if n > 9 && matches!(bytes[n - 9], b'-' | b'@') && digits(n - 8, n) {
        return model.get(..n - 9);
    }
    let hyphens = |at: &[usize]| at.iter().all(|&i| bytes[i] == b'-');
    if n > 11
        && hyphens(&[n - 11, n - 6, n - 3])
        && digits(n - 10, n - 6)
        && digits(n - 5, n - 3)
        && digits(n - 2, n)
    {
        return model.get(..n - 11);
    }
    None
}

/// `call_cost(model, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens
/// [, service_tier])`: a call's cost in US dollars at the session's prices, times its service
/// tier's multiplier (none or null: the standard prices); null for a model with no price
/// (noted, for the warning) and for a null model; a null token count is no tokens.
#[derive(Debug)]
pub(crate) struct CallCost {
    signature: Signature,
    pub(super) prices: Arc<Prices>,
}

impl CallCost {
    pub(super) fn new(prices: Arc<Prices>) -> CallCost {
        CallCost { signature: Signature::user_defined(Volatility::Immutable), prices }
    }
}

impl PartialEq for CallCost {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.prices, &other.prices)
    }
}

impl Eq for CallCost {}

impl Hash for CallCost {
    fn hash<H: Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.prices).hash(state);
    }
}

impl ScalarUDFImpl for CallCost {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// Integers become bigint and a dictionary of text its text; whether the arguments fit is
    /// said by [`Self::return_type`] (DataFusion's message for a failed coercion names only the
    /// signature).
    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let coerced = types.iter().enumerate().map(|(i, t)| match t {
            DataType::Null if i == 0 => DataType::Utf8,
            DataType::Null if i == REQUIRED => DataType::Utf8,
            DataType::Dictionary(_, value) if (i == 0 || i == REQUIRED) && is_text(value) => {
                value.as_ref().clone()
            }
            t if i > 0 && i < REQUIRED && (t.is_integer() || *t == DataType::Null) => DataType::Int64,
            t => t.clone(),
        });
        Ok(coerced.collect())
    }

    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        if types.len() != REQUIRED && types.len() != ARGUMENTS.len() {
            return plan_err!(
                "{NAME} takes 5 arguments ({}) and optionally a 6th ({}); {} given",
                ARGUMENTS[..REQUIRED].join(", "),
                ARGUMENTS[REQUIRED],
                types.len()
            );
        }
        if !is_text(&types[0]) {
            return plan_err!("{NAME}: model is {}, not text", types[0]);
        }
        if let Some((name, t)) =
            ARGUMENTS[1..REQUIRED].iter().zip(&types[1..REQUIRED]).find(|(_, t)| **t != DataType::Int64)
        {
            return plan_err!("{NAME}: {name} is {t}, not a whole number of tokens");
        }
        if let Some(t) = types.get(REQUIRED).filter(|t| !is_text(t)) {
            return plan_err!("{NAME}: service_tier is {t}, not text");
        }
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args.args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        if args.args.len() != REQUIRED && args.args.len() != ARGUMENTS.len() {
            return exec_err!("{NAME} takes 5 or 6 arguments");
        }
        // The token counts as columns; the model stays one value when it is one.
        let rows = if scalar { 1 } else { args.number_rows };
        let arrays = args.args[1..REQUIRED].iter().map(|a| a.to_array(rows)).collect::<Result<Vec<_>>>()?;
        let count = |i: usize| arrays.get(i).and_then(|a| a.as_primitive_opt::<Int64Type>());
        let (Some(input), Some(read), Some(write), Some(output)) = (count(0), count(1), count(2), count(3))
        else {
            return exec_err!("{NAME}: the token counts are not bigint");
        };
        let counts = [input, read, write, output];
        // The tiers as text, one per row (none: every row at the standard prices).
        let tiers = match args.args.get(REQUIRED) {
            Some(tier) => Some(cast(&tier.to_array(rows)?, &DataType::Utf8)?),
            None => None,
        };
        let tiers = tiers.as_ref().map(|t| t.as_string::<i32>());
        let current = self.prices.current();
        let rates = &current.rates;
        let mut missed: Vec<String> = Vec::new();
        let costs = match &args.args[0] {
            // One model for every row (a literal): looked up once, not made a column.
            ColumnarValue::Scalar(model) => {
                let name = match model {
                    ScalarValue::Utf8(m) | ScalarValue::LargeUtf8(m) | ScalarValue::Utf8View(m) => {
                        m.as_deref()
                    }
                    ScalarValue::Null => None,
                    other => return exec_err!("{NAME}: model is {}, not text", other.data_type()),
                };
                let found = name.map(|name| rates.lookup_priced(name));
                if let (Some(name), Some(None)) = (name, found) {
                    missed.push(name.to_string());
                }
                price_rows(counts, tiers, |_| found)
            }
            ColumnarValue::Array(model) => match model.data_type() {
                DataType::Utf8 => by_name(model.as_string::<i32>(), counts, tiers, rates, &mut missed),
                DataType::LargeUtf8 => by_name(model.as_string::<i64>(), counts, tiers, rates, &mut missed),
                DataType::Utf8View => by_name(model.as_string_view(), counts, tiers, rates, &mut missed),
                DataType::Null => Float64Array::new_null(model.len()),
                other => return exec_err!("{NAME}: model is {other}, not text"),
            },
        };
        if !missed.is_empty() {
            self.prices.missed(missed.iter().map(String::as_str));
        }
        if scalar {
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&costs, 0)?));
        }
        Ok(ColumnarValue::Array(Arc::new(costs)))
    }
}

/// Each row's cost, its model's rates looked up by name; the models with no price pushed on
/// `missed` once. A model is looked up again only when it differs from the row before's.
fn by_name<'a, A: ArrayAccessor<Item = &'a str>>(
    models: A,
    counts: [&Int64Array; 4],
    tiers: Option<&StringArray>,
    rates: &PriceMap,
    missed: &mut Vec<String>,
) -> Float64Array {
    let mut last: Option<(&'a str, Option<&Priced>)> = None;
    price_rows(counts, tiers, |row| {
        if models.is_null(row) {
            return None;
        }
        let model = models.value(row);
        match last {
            Some((name, found)) if name == model => Some(found),
            _ => {
                let found = rates.lookup_priced(model);
                if found.is_none() && !missed.iter().any(|m| m == model) {
                    missed.push(model.to_string());
                }
                last = Some((model, found));
                Some(found)
            }
        }
    })
}

/// Each row's cost at the rates `rates_of` gives for it, times its tier's multiplier: `None`
/// for a row with no model, `Some(None)` for a model with no price (both null).
fn price_rows<'r>(
    [input, read, write, output]: [&Int64Array; 4],
    tiers: Option<&StringArray>,
    mut rates_of: impl FnMut(usize) -> Option<Option<&'r Priced>>,
) -> Float64Array {
    let rows = input.len();
    let mut costs = Float64Builder::with_capacity(rows);
    let count = |column: &Int64Array, row: usize| if column.is_null(row) { 0 } else { column.value(row) };
    for row in 0..rows {
        match rates_of(row) {
            Some(Some(priced)) => {
                let tier = tiers.filter(|t| t.is_valid(row)).map(|t| t.value(row));
                let cost = priced.rates.cost(
                    count(input, row),
                    count(read, row),
                    count(write, row),
                    count(output, row),
                );
                costs.append_value(cost * priced.multiplier(tier))
            }
            _ => costs.append_null(),
        }
    }
    costs.finish()
}
