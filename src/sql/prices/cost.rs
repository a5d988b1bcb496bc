//! What one model call costs: a price list as rates looked up by model name (the exact id, else
//! without a provider prefix or a date suffix), the cache fallbacks and the whole-request
//! long-context tier applied once per list; and `call_cost`, the SQL function that prices rows.

use super::{Entry, Prices};
use datafusion::arrow::array::{Array, ArrayAccessor, AsArray, Float64Array, Float64Builder, Int64Array};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{ScalarValue, exec_err, plan_err};
use datafusion::error::Result;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The function's name in SQL.
pub(super) const NAME: &str = "call_cost";
/// Its arguments, by name.
const ARGUMENTS: [&str; 5] =
    ["model", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"];

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

impl Rates {
    /// The rates of an entry that gives input and output prices (`None` otherwise): a missing
    /// cache-write price is 1.25 × input, a missing cache-read price 0.1 × input for an
    /// Anthropic model and the input price for any other; above the threshold, each price the
    /// entry does not give is the one below it.
    pub(crate) fn of(entry: &Entry) -> Option<Rates> {
        let [input, output, read, write, long_input, long_output, long_read, long_write] = entry.prices;
        let (input, output) = (input?, output?);
        let anthropic =
            entry.provider.as_deref().is_some_and(|p| p.to_ascii_lowercase().contains("anthropic"))
                || entry.model.to_ascii_lowercase().contains("claude");
        let short = Tier {
            input,
            output,
            cache_read: read.unwrap_or(if anthropic { input / 10.0 } else { input }),
            cache_write: write.unwrap_or(input * 1.25),
        };
        let long = entry.long_context_above.map(|above| {
            let tier = Tier {
                input: long_input.unwrap_or(short.input),
                output: long_output.unwrap_or(short.output),
                cache_read: long_read.unwrap_or(short.cache_read),
                cache_write: long_write.unwrap_or(short.cache_write),
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

/// A price list's rates by model id, made once per list.
#[derive(Debug, Default)]
pub(crate) struct PriceMap {
    by_model: HashMap<Box<str>, Rates, foldhash::fast::FixedState>,
}

impl PriceMap {
    pub(crate) fn new(entries: &[Entry]) -> PriceMap {
        let by_model = entries
            .iter()
            .filter_map(|entry| Some((entry.model.as_str().into(), Rates::of(entry)?)))
            .collect();
        PriceMap { by_model }
    }

    /// The rates of `model`: its exact id, else (the first found) the id without an 8-digit
    /// date suffix (`-20250929`, `@20250929`, or `-2025-09-29`), the id without its provider
    /// prefix (what comes before its last `/`: `anthropic/`, `vertex_ai/`, ...), and that
    /// without a date suffix.
    pub(crate) fn lookup(&self, model: &str) -> Option<&Rates> {
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

/// `call_cost(model, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens)`: a
/// call's cost in US dollars at the session's prices, null for a model with no price (noted,
/// for the warning) and for a null model; a null token count is no tokens.
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

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        if types.len() != ARGUMENTS.len() {
            return plan_err!("{NAME} takes 5 arguments ({}); {} given", ARGUMENTS.join(", "), types.len());
        }
        let text = |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
        let model = match &types[0] {
            t if text(t) => t.clone(),
            DataType::Null => DataType::Utf8,
            DataType::Dictionary(_, value) if text(value) => value.as_ref().clone(),
            other => return plan_err!("{NAME}: model is {other}, not text"),
        };
        let mut coerced = vec![model];
        for (name, t) in ARGUMENTS[1..].iter().zip(&types[1..]) {
            if !(t.is_integer() || *t == DataType::Null) {
                return plan_err!("{NAME}: {name} is {t}, not a whole number of tokens");
            }
            coerced.push(DataType::Int64);
        }
        Ok(coerced)
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args.args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let count = |i: usize| arrays.get(i).and_then(|a| a.as_primitive_opt::<Int64Type>());
        let (Some(input), Some(read), Some(write), Some(output)) = (count(1), count(2), count(3), count(4))
        else {
            return exec_err!("{NAME}: the token counts are not bigint");
        };
        let counts = [input, read, write, output];
        let current = self.prices.current();
        let mut missed: Vec<&str> = Vec::new();
        let model = &arrays[0];
        let costs = match model.data_type() {
            DataType::Utf8 => price_rows(model.as_string::<i32>(), counts, &current.rates, &mut missed),
            DataType::LargeUtf8 => price_rows(model.as_string::<i64>(), counts, &current.rates, &mut missed),
            DataType::Utf8View => price_rows(model.as_string_view(), counts, &current.rates, &mut missed),
            DataType::Null => Float64Array::new_null(model.len()),
            other => return exec_err!("{NAME}: model is {other}, not text"),
        };
        if !missed.is_empty() {
            self.prices.missed(missed.iter().copied());
        }
        if scalar {
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&costs, 0)?));
        }
        Ok(ColumnarValue::Array(Arc::new(costs)))
    }
}

/// Each row's cost; the models with no price pushed on `missed` once. A model is looked up
/// again only when it differs from the row before's.
fn price_rows<'a, A: ArrayAccessor<Item = &'a str>>(
    models: A,
    [input, read, write, output]: [&Int64Array; 4],
    rates: &PriceMap,
    missed: &mut Vec<&'a str>,
) -> Float64Array {
    let mut costs = Float64Builder::with_capacity(models.len());
    let mut last: Option<(&'a str, Option<&Rates>)> = None;
    let count = |column: &Int64Array, row: usize| if column.is_null(row) { 0 } else { column.value(row) };
    for row in 0..models.len() {
        if models.is_null(row) {
            costs.append_null();
            continue;
        }
        let model = models.value(row);
        let found = match last {
            Some((name, found)) if name == model => found,
            _ => {
                let found = rates.lookup(model);
                if found.is_none() && !missed.contains(&model) {
                    missed.push(model);
                }
                last = Some((model, found));
                found
            }
        };
        match found {
            Some(rates) => costs.append_value(rates.cost(
                count(input, row),
                count(read, row),
                count(write, row),
                count(output, row),
            )),
            None => costs.append_null(),
        }
    }
    costs.finish()
}
