//! A price file in LiteLLM's `model_prices_and_context_window.json` format: one JSON object
//! keyed by model id, each entry an object whose keys txq reads when it knows them
//! (`input_cost_per_token`, `output_cost_per_token`, `cache_creation_input_token_cost`,
//! `cache_read_input_token_cost`, each also `*_above_<N>k_tokens`, `litellm_provider`, `mode`,
//! `max_input_tokens`, `source`, txq's `service_tiers`) and passes over otherwise. LiteLLM's own
//! file reads as it is. txq's own top-level entry `service_tiers` (no model) gives each
//! provider's multipliers by service tier: `{"anthropic": {"fast": 6, "batch": 0.5}}`.

use super::Entry;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// LiteLLM's keys for the four prices of a request, per token, in the order of `Entry::prices`.
const PRICE_KEYS: [&str; 4] = [
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
];

/// The entry LiteLLM's file begins with, which describes the keys and is no model.
const SAMPLE_SPEC: &str = "sample_spec";

/// txq's top-level entry of each provider's multipliers by service tier, and an entry's key of
/// its model's own.
const SERVICE_TIERS: &str = "service_tiers";

/// Each provider's multipliers by service tier.
type ProviderTiers = std::collections::BTreeMap<String, std::collections::BTreeMap<String, f64>>;

/// The file's entries in its order, and the models it names twice: such a model is read as its
/// last entry (as LiteLLM reads its own file, which has had such duplicates), in the place of its
/// first.
pub(super) fn parse(text: &str) -> Result<(Vec<Entry>, Vec<String>, ProviderTiers), String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let objects = deserializer
        .deserialize_map(InOrder)
        .and_then(|objects| deserializer.end().map(|()| objects))
        .map_err(|e| format!("not a LiteLLM price file: {e}"))?;
    let (objects, twice) = objects;
    let mut service_tiers = ProviderTiers::new();
    if let Some((_, value)) = objects.iter().find(|(key, _)| key == SERVICE_TIERS) {
        let Value::Object(providers) = value else {
            return Err(format!("{SERVICE_TIERS} is not an object of providers"));
        };
        for (provider, tiers) in providers.iter().filter(|(key, _)| !key.starts_with('_')) {
            service_tiers.insert(provider.to_ascii_lowercase(), multipliers(provider, tiers)?);
        }
    }
    let entries = objects
        .into_iter()
        .filter(|(model, _)| model != SAMPLE_SPEC && model != SERVICE_TIERS)
        .map(|(model, value)| match value {
            Value::Object(keys) => entry(model, &keys),
            _ => Err(format!("the entry of {model} is not an object")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((entries, twice, service_tiers))
}

/// A `{"tier": multiplier}` object of `of` (a provider or a model); keys beginning with `_`
/// are comments.
fn multipliers(of: &str, value: &Value) -> Result<std::collections::BTreeMap<String, f64>, String> {
    let Value::Object(tiers) = value else {
        return Err(format!("{SERVICE_TIERS} of {of} is not an object of tiers"));
    };
    let mut read = std::collections::BTreeMap::new();
    for (tier, multiplier) in tiers.iter().filter(|(key, _)| !key.starts_with('_')) {
        let Some(multiplier) = multiplier.as_f64() else {
            return Err(format!("service tier {tier} of {of} is not a number: {multiplier}"));
        };
        read.insert(tier.to_ascii_lowercase(), multiplier);
    }
    Ok(read)
}

/// One model's entry: the prices it gives, per million tokens, with the lowest long-context
/// tier it names (LiteLLM's entries name one).
fn entry(model: String, keys: &Map<String, Value>) -> Result<Entry, String> {
    let price = |key: &str| -> Result<Option<f64>, String> {
        match keys.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64().map(per_million)),
            Some(other) => Err(format!("{key} of {model} is not a number: {other}")),
        }
    };
    let mut prices = [None; 8];
    for (i, key) in PRICE_KEYS.iter().enumerate() {
        prices[i] = price(key)?;
    }
    let tier = keys
        .iter()
        .filter(|(_, value)| !value.is_null())
        .filter_map(|(key, _)| {
            let (base, rest) = key.split_once("_above_")?;
            let thousands = rest.strip_suffix("k_tokens")?;
            if !PRICE_KEYS.contains(&base)
                || thousands.is_empty()
                || !thousands.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            thousands.parse::<i64>().ok()
        })
        .min();
    if let Some(thousands) = tier {
        for (i, key) in PRICE_KEYS.iter().enumerate() {
            prices[4 + i] = price(&format!("{key}_above_{thousands}k_tokens"))?;
        }
    }
    let text = |key: &str| keys.get(key).and_then(Value::as_str).map(str::to_string);
    let tokens = keys
        .get("max_input_tokens")
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)));
    let service_tiers = match keys.get(SERVICE_TIERS) {
        None | Some(Value::Null) => Default::default(),
        Some(tiers) => multipliers(&model, tiers)?,
    };
    Ok(Entry {
        model,
        provider: text("litellm_provider"),
        prices,
        long_context_above: tier.map(|thousands| thousands.saturating_mul(1000)),
        max_input_tokens: tokens,
        mode: text("mode"),
        source: text("source"),
        service_tiers,
    })
}

/// A price per token as the price per million, the decimal point moved six places: the
/// shortest decimal that reads as the per-token figure (`3e-6`) becomes `3e0`, so that a
/// file's `3e-06` is exactly 3 dollars per million, not 2.9999999999999996.
pub(super) fn per_million(per_token: f64) -> f64 {
    let written = format!("{per_token:e}");
    let Some((digits, exponent)) = written.split_once('e') else { return per_token * 1e6 };
    let Ok(exponent) = exponent.parse::<i32>() else { return per_token * 1e6 };
    format!("{digits}e{}", exponent + 6).parse().unwrap_or(per_token * 1e6)
}

/// The top-level object's entries in the file's order, a repeated key's last value in the
/// place of its first.
struct InOrder;

impl<'de> Visitor<'de> for InOrder {
    type Value = (Vec<(String, Value)>, Vec<String>);

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object keyed by model id")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        let mut twice: Vec<String> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        while let Some(model) = map.next_key::<String>()? {
            let value: Value = map.next_value()?;
            match at.get(&model) {
                Some(&i) => {
                    if !twice.contains(&model) {
                        twice.push(model);
                    }
                    entries[i].1 = value;
                }
                None => {
                    at.insert(model.clone(), entries.len());
                    entries.push((model, value));
                }
            }
        }
        Ok((entries, twice))
    }
}
