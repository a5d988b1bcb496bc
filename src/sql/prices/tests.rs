//! Tests of the price list: both file formats, the overlay, name matching, each provider's
//! cache prices, the whole-request tier, and `call_cost` in a session.

use super::cost::{PriceMap, Rates};
use super::litellm::per_million;
use super::*;

fn entry<'a>(list: &'a PriceList, model: &str) -> &'a Entry {
    list.entries.iter().find(|e| e.model == model).unwrap_or_else(|| panic!("no entry for {model}"))
}

fn price(list: &PriceList, model: &str, column: &str) -> Option<f64> {
    let i = PRICE_COLUMNS.iter().position(|c| *c == column).unwrap();
    entry(list, model).prices[i]
}

fn json(text: &str) -> PriceList {
    PriceList::parse("p.json", text).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(source: &str, text: &str) -> String {
    match PriceList::parse(source, text) {
        Err(crate::error::Error::Input { why, .. }) => why,
        other => panic!("not refused as a bad prices file: {other:?}"),
    }
}

/// The rates `call_cost` uses for `model` in `list`.
fn rates(list: &PriceList, model: &str) -> Option<Rates> {
    PriceMap::new(&list.entries).lookup(model).copied()
}

#[test]
fn the_built_in_list_prices_todays_models_and_every_generated_one() {
    let list = PriceList::embedded().unwrap();
    let map = PriceMap::new(&list.entries);
    for model in [
        // What the generators write (rupu's usage, Claude Code, Codex, Gemini).
        "claude-haiku-4-5",
        "claude-opus-5",
        "claude-sonnet-4-6",
        "claude-opus-4-6",
        "gpt-5.1",
        "gpt-5.1-codex",
        "gpt-5.1-codex-mini",
        "gpt-5.1-mini",
        "gpt-5.3-codex",
        "gemini-3-pro-preview",
        "gemini-3-flash-preview",
        "gemini-2.5-pro",
        // Today's models, dated ids among them.
        "claude-opus-4-1",
        "claude-opus-4-5-20251101",
        "claude-opus-4-6-20260205",
        "claude-opus-4-7",
        "claude-sonnet-4",
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5-20251001",
        "claude-3-5-sonnet",
        "claude-3-7-sonnet",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-codex",
        "gpt-5.1-codex-max",
        "gpt-5.2",
        "gpt-5.2-codex",
        "gpt-5.4",
        "gpt-5.4-mini",
        "gpt-4.1",
        "gpt-4o",
        "o1",
        "o3",
        "o4-mini",
        "gemini-2.5-flash",
        "gemini-2.5-flash-lite",
        "gemini-2.0-flash",
        "gemini-1.5-pro",
    ] {
        assert!(list.entries.iter().any(|e| e.model == model), "{model} is listed");
        assert!(map.lookup(model).is_some(), "{model} is priced");
    }
    assert!(
        list.entries.iter().all(|e| Rates::of(e).is_some()),
        "every built-in entry has input and output prices"
    );
    assert!(list.entries.iter().all(|e| e.provider.is_some() && e.source.is_some()));
    assert_eq!(price(&list, "claude-sonnet-4-5", "long_input"), Some(6.0));
    assert_eq!(price(&list, "claude-sonnet-4-5", "long_cache_write"), Some(7.5));
    assert_eq!(entry(&list, "claude-sonnet-4-5").long_context_above, Some(200_000));
    assert_eq!(price(&list, "gemini-2.5-pro", "long_output"), Some(15.0));
    assert_eq!(entry(&list, "gpt-5.4").long_context_above, Some(272_000));
    assert_eq!(price(&list, "gpt-5.4", "long_cached_input"), Some(0.5));
    assert_eq!(entry(&list, "gemini-1.5-pro").long_context_above, Some(128_000));
    assert_eq!(price(&list, "gpt-4o", "cache_write"), None);
    assert_eq!(price(&list, "gpt-5.1-codex", "cached_input"), Some(0.125));
}

#[test]
fn the_built_in_file_names_each_model_once() {
    let mut names: Vec<String> = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_str(EMBEDDED);
    // Every top-level key, repeats kept (the parser keeps the last of a repeated key).
    struct Keys<'a>(&'a mut Vec<String>);
    impl<'de> serde::de::Visitor<'de> for Keys<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<serde::de::IgnoredAny>()?;
                self.0.push(key);
            }
            Ok(())
        }
    }
    serde::Deserializer::deserialize_map(&mut deserializer, Keys(&mut names)).unwrap();
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "a model named twice in prices/model_prices.json");
    assert_eq!(names[0], "sample_spec");
    assert_eq!(names[1], "service_tiers");
    assert_eq!(PriceList::embedded().unwrap().entries.len(), names.len() - 2, "sample_spec is no model");
}

#[test]
fn a_price_per_token_is_read_as_the_exact_price_per_million() {
    for (per_token, per_million_tokens) in
        [(3e-06, 3.0), (3.75e-06, 3.75), (1.25e-07, 0.125), (2.5e-05, 25.0), (3.125e-07, 0.3125), (0.0, 0.0)]
    {
        assert_eq!(per_million(per_token), per_million_tokens, "{per_token}");
    }
    assert_eq!(per_million(1.5e-05) * 1000.0, 15_000.0);
}

/// LiteLLM's own file in its real shape: the `sample_spec` entry (strings where prices go),
/// entries that are not chat models, keys txq does not read, a float context size, a repeated
/// key (the last wins, in the first's place), and the 200k and 272k tiers.
#[test]
fn a_litellm_file_reads_as_litellm_reads_it() {
    let list = json(
        r#"{
        "sample_spec": {"input_cost_per_token": "set to 0", "max_input_tokens": "max input tokens", "mode": "one of chat, embedding"},
        "claude-sonnet-4-5": {
            "litellm_provider": "anthropic", "mode": "chat", "max_input_tokens": 200000,
            "input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
            "cache_creation_input_token_cost": 3.75e-06, "cache_read_input_token_cost": 3e-07,
            "cache_creation_input_token_cost_above_1hr": 6e-06,
            "cache_creation_input_token_cost_above_1hr_above_200k_tokens": 1.2e-05,
            "input_cost_per_token_above_200k_tokens": 6e-06, "output_cost_per_token_above_200k_tokens": 2.25e-05,
            "cache_creation_input_token_cost_above_200k_tokens": 7.5e-06,
            "cache_read_input_token_cost_above_200k_tokens": 6e-07,
            "input_cost_per_token_above_200k_tokens_priority": 1e-05,
            "search_context_cost_per_query": {"search_context_size_low": 0.01},
            "supports_vision": true, "tool_use_system_prompt_tokens": 346
        },
        "gpt-5.4": {
            "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 1050000,
            "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1.5e-05, "cache_read_input_token_cost": 2.5e-07,
            "input_cost_per_token_above_272k_tokens": 5e-06, "output_cost_per_token_above_272k_tokens": 2.25e-05,
            "cache_read_input_token_cost_above_272k_tokens": 5e-07, "input_cost_per_token_batches": 1.25e-06
        },
        "text-embedding-3-small": {"litellm_provider": "openai", "mode": "embedding", "input_cost_per_token": 2e-08, "output_cost_per_token": 0.0},
        "dall-e-3": {"litellm_provider": "openai", "mode": "image_generation", "input_cost_per_pixel": 4e-08},
        "xai/grok-4": {"litellm_provider": "xai", "max_input_tokens": 2000000.0, "input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05},
        "gpt-5.4": {
            "litellm_provider": "openai", "mode": "chat",
            "input_cost_per_token": 2.5e-06, "output_cost_per_token": 1.5e-05, "cache_read_input_token_cost": 2.5e-07,
            "input_cost_per_token_above_272k_tokens": 5e-06, "output_cost_per_token_above_272k_tokens": 2.25e-05,
            "cache_read_input_token_cost_above_272k_tokens": 5e-07, "source": "the later copy"
        }
    }"#,
    );
    let models: Vec<&str> = list.entries.iter().map(|e| e.model.as_str()).collect();
    assert_eq!(models, ["claude-sonnet-4-5", "gpt-5.4", "text-embedding-3-small", "dall-e-3", "xai/grok-4"]);
    let sonnet = entry(&list, "claude-sonnet-4-5");
    assert_eq!(sonnet.prices, [3.0, 15.0, 0.3, 3.75, 6.0, 22.5, 0.6, 7.5].map(Some));
    assert_eq!(
        (
            sonnet.long_context_above,
            sonnet.max_input_tokens,
            sonnet.provider.as_deref(),
            sonnet.mode.as_deref()
        ),
        (Some(200_000), Some(200_000), Some("anthropic"), Some("chat"))
    );
    let gpt = entry(&list, "gpt-5.4");
    assert_eq!(gpt.prices, [Some(2.5), Some(15.0), Some(0.25), None, Some(5.0), Some(22.5), Some(0.5), None]);
    assert_eq!(gpt.long_context_above, Some(272_000));
    assert_eq!(gpt.source.as_deref(), Some("the later copy"), "a repeated key: the last entry, whole");
    assert_eq!(gpt.max_input_tokens, None);
    assert_eq!(entry(&list, "dall-e-3").prices, [None; 8]);
    assert_eq!(rates(&list, "dall-e-3"), None, "no token prices: unpriced");
    assert_eq!(rates(&list, "text-embedding-3-small").map(|r| r.short.output), Some(0.0));
    assert_eq!(entry(&list, "xai/grok-4").max_input_tokens, Some(2_000_000));
}

#[test]
fn bad_litellm_files_say_what_is_wrong() {
    assert!(
        refused("p.json", "{\"m\": {\"input_cost_per_token\": 1e-06,}}")
            .starts_with("not a LiteLLM price file: ")
    );
    assert!(refused("p.json", "{\"m\": {}} trailing").contains("trailing characters"));
    assert!(refused("p.json", "{\"m\": 3}").contains("the entry of m is not an object"));
    assert!(
        refused("p.json", r#"{"m": {"input_cost_per_token": "3e-06"}}"#)
            .contains(r#"input_cost_per_token of m is not a number: "3e-06""#)
    );
    assert!(
        refused("p.json", r#"{"m": {"output_cost_per_token_above_200k_tokens": "x"}}"#)
            .contains("output_cost_per_token_above_200k_tokens of m is not a number")
    );
    assert!(
        refused("p.json", r#"{"m": {"input_cost_per_token": -1e-06}}"#).contains("input of m is negative")
    );
    assert!(refused("p.json", r#"{"": {"input_cost_per_token": 1e-06}}"#).contains("entry 1 names no model"));
    assert!(refused("p.json", "[1, 2]").starts_with("not a LiteLLM price file: invalid type: sequence"));
}

/// A price too high for any sum to stay finite is refused as such, not called negative, and one
/// past f64's range (1e303 a token) is refused too, never read as infinite.
#[test]
fn prices_beyond_any_price_are_refused_as_such() {
    for price in ["1e303", "1e300", "1.5"] {
        let why = refused("p.json", &format!(r#"{{"m": {{"input_cost_per_token": {price}}}}}"#));
        assert!(why.contains("input of m is") && why.contains("beyond any price"), "{price}: {why}");
        assert!(!why.contains("negative"), "{why}");
    }
    let header = "model,provider,input,output,cached_input,cache_write,price_date,note\n";
    for price in ["inf", "1e307"] {
        let why = refused("p.csv", &format!("{header}m,x,{price},2,0.1,,2026-01-01,\n"));
        assert!(why.contains("input of m is") && why.contains("beyond any price"), "{price}: {why}");
    }
    let why = refused("p.csv", &format!("{header}m,x,NaN,2,0.1,,2026-01-01,\n"));
    assert!(why.contains("input of m is not a number"), "{why}");
    assert_eq!(
        json(r#"{"m": {"input_cost_per_token": 1}}"#).entries[0].prices[0],
        Some(1e6),
        "the highest taken"
    );
}

/// A model a LiteLLM file names twice takes its last entry, and is said once.
#[test]
fn a_model_priced_twice_in_a_litellm_file_is_said() {
    let list = PriceList::parse(
        "p.json",
        r#"{"m": {"input_cost_per_token": 1e-06}, "n": {}, "m": {"input_cost_per_token": 2e-06}, "m": {"input_cost_per_token": 3e-06}}"#,
    )
    .unwrap();
    assert_eq!(list.entries.len(), 2);
    assert_eq!(list.entries[0].prices[0], Some(3.0));
    assert_eq!(list.warnings, ["p.json: m is priced twice; its last entry is taken"]);
}

#[test]
fn bad_csv_files_say_what_is_wrong() {
    let header = "model,provider,input,output,cached_input,cache_write,price_date,note\n";
    let parse = |body: &str| refused("p.csv", &format!("{header}{body}"));
    assert!(parse("m,x,1,2,0.1,,2026-01-01,\nm,x,1,2,0.1,,2026-01-01,\n").contains("m is priced twice"));
    assert!(parse("m,x,-1,2,0.1,,2026-01-01,\n").contains("input of m is negative"));
    assert!(parse(",x,1,2,0.1,,2026-01-01,\n").contains("row 1 names no model"));
    assert!(parse("m,x,one,2,0.1,,2026-01-01,\n").contains("the columns are"));
    let unknown = refused("p.csv", "model,inptu\nm,1\n");
    assert!(unknown.contains("unknown column \"inptu\" (the columns are model,provider,input,"), "{unknown}");
    assert!(refused("p.csv", "input,output\n1,2\n").contains("no model column"));
    assert!(
        refused("p.csv", "model,long_input\nm,2\n").contains("long_input of m has no long_context_above")
    );
    assert!(refused("p.csv", "model,note,source\nm,a,b\n").contains("note is its old name"));
    assert!(refused("p.csv", "# only a comment\n").contains("no header line"));
}

/// Today's CSV still reads: its `price_date` is passed over and its `note` is the source.
#[test]
fn the_old_csv_format_still_reads() {
    let text = "# a comment\nmodel,provider,input,output,cached_input,cache_write,long_context_above,long_input,price_date,note\n\
                # another\nm,x,1.5,2,0.25,,1000,3,2026-01-02,why\n";
    let list = PriceList::parse("p.csv", text).unwrap();
    let m = entry(&list, "m");
    assert_eq!(m.prices, [Some(1.5), Some(2.0), Some(0.25), None, Some(3.0), None, None, None]);
    assert_eq!(
        (m.long_context_above, m.source.as_deref(), m.provider.as_deref()),
        (Some(1000), Some("why"), Some("x"))
    );
    // A file that starts with a byte-order mark or spaces is still told apart by its content.
    assert_eq!(
        PriceList::parse("p.csv", "\u{feff}model,output\nm,2\n").unwrap().entries[0].prices[1],
        Some(2.0)
    );
    assert_eq!(
        json("\u{feff} \n{\"m\": {\"output_cost_per_token\": 2e-06}}").entries[0].prices[1],
        Some(2.0)
    );
}

#[test]
fn a_file_overrides_the_built_in_list_key_by_key_and_adds_models() {
    let built_in = PriceList::embedded().unwrap();
    let over = json(
        r#"{"claude-sonnet-4-5": {"output_cost_per_token": 2e-05},
            "my-model": {"litellm_provider": "acme", "input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06}}"#,
    );
    let list = built_in.overlaid(&over).unwrap();
    assert_eq!(list.entries.len(), built_in.entries.len() + 1);
    assert_eq!(price(&list, "claude-sonnet-4-5", "output"), Some(20.0), "the file's key wins");
    assert_eq!(price(&list, "claude-sonnet-4-5", "input"), Some(3.0), "a key it does not give stays");
    assert_eq!(price(&list, "claude-sonnet-4-5", "long_output"), Some(22.5));
    assert_eq!(entry(&list, "claude-sonnet-4-5").source, entry(&built_in, "claude-sonnet-4-5").source);
    assert_eq!(price(&list, "my-model", "input"), Some(1.0));
    assert_eq!(price(&list, "my-model", "cached_input"), None, "a new model has none where none is given");
    assert_eq!(list.entries.last().map(|e| e.model.as_str()), Some("my-model"));
    assert_eq!(price(&list, "claude-haiku-4-5", "input"), Some(1.0), "other models stay");

    let csv = PriceList::parse("p.csv", "output,model\n99,gpt-4o\n7,my-model\n").unwrap();
    let list = built_in.overlaid(&csv).unwrap();
    assert_eq!((price(&list, "gpt-4o", "output"), price(&list, "gpt-4o", "input")), (Some(99.0), Some(2.5)));
    assert_eq!((price(&list, "my-model", "output"), price(&list, "my-model", "input")), (Some(7.0), None));
    assert_eq!(rates(&list, "my-model"), None, "no input price: unpriced");
    // A long price laid over a model with no threshold is refused, naming the file.
    let bad = PriceList::parse("p.csv", "model,long_input,long_context_above\nx,1,\n");
    assert!(bad.is_err());
    let no_threshold = PriceList::parse("p.csv", "model,long_output\ngpt-4o,1\n");
    assert!(no_threshold.is_err(), "checked in the file alone");
}

#[test]
fn a_model_is_found_without_its_provider_prefix_or_date_suffix() {
    let list = json(
        r#"{"claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05},
            "claude-sonnet-4-5-20250929": {"input_cost_per_token": 4e-06, "output_cost_per_token": 1.5e-05},
            "gemini/gemini-2.5-pro": {"input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05},
            "gemini-2.5-pro": {"input_cost_per_token": 1.25e-06, "output_cost_per_token": 1e-05},
            "gpt-5": {"input_cost_per_token": 1.25e-06, "output_cost_per_token": 1e-05}}"#,
    );
    let input = |model: &str| rates(&list, model).map(|r| r.short.input);
    assert_eq!(input("claude-sonnet-4-5"), Some(3.0));
    assert_eq!(input("claude-sonnet-4-5-20250929"), Some(4.0), "the exact id first");
    assert_eq!(input("claude-sonnet-4-5-20251231"), Some(3.0), "an 8-digit date suffix");
    assert_eq!(input("anthropic/claude-sonnet-4-5"), Some(3.0), "a provider prefix");
    assert_eq!(input("vertex_ai/claude-sonnet-4-5@20250929"), Some(3.0), "a prefix and a Vertex date");
    assert_eq!(input("bedrock/us/claude-sonnet-4-5-20250101"), Some(3.0), "all before the last /");
    assert_eq!(input("gemini/gemini-2.5-pro"), Some(2.0), "a prefixed id the file has");
    assert_eq!(input("vertex_ai/gemini-2.5-pro"), Some(1.25));
    assert_eq!(input("gpt-5-2025-08-07"), Some(1.25), "OpenAI's dated ids");
    assert_eq!(input("openai/gpt-5-2025-08-07"), Some(1.25));
    assert_eq!(input("claude-sonnet"), None, "no partial match");
    assert_eq!(input("claude-sonnet-4-5-2025092"), None, "seven digits are no date");
    assert_eq!(input("claude-sonnet-4-5x20250929"), None);
    assert_eq!(input("gpt-5-2025-0807"), None);
    assert_eq!(input("20250929"), None);
    assert_eq!(input("/"), None);
    assert_eq!(input("modèle-é20250929"), None, "text that is not ASCII is no trouble");
    assert_eq!(input("日本語-2025-08-07"), None);
}

/// A price list of one provider's models: `claude-x` sold by `provider`, giving only input and
/// output prices (2 and 10 dollars a million) and, over 200,000 tokens, 4 and 15.
fn bare_list(provider: &str) -> PriceList {
    json(&format!(
        r#"{{"m": {{"litellm_provider": "{provider}", "input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05,
                 "input_cost_per_token_above_200k_tokens": 4e-06, "output_cost_per_token_above_200k_tokens": 1.5e-05}}}}"#
    ))
}

/// Anthropic's rule (its price page): a 5-minute cache write costs 1.25 × input and a cache read
/// 0.1 × input. Every Claude entry of the built-in list says so (Claude 3 Haiku's page lists
/// the figures rounded to the cent: $0.30 and $0.03 for $0.25 input), and a Claude row that
/// gives no cache prices is priced by it, at each tier's input price, whoever resells it.
#[test]
fn anthropic_cache_writes_cost_a_quarter_more_than_input_and_reads_a_tenth() {
    let list = PriceList::embedded().unwrap();
    let claude: Vec<&Entry> =
        list.entries.iter().filter(|e| e.provider.as_deref() == Some("anthropic")).collect();
    assert!(claude.len() > 20, "the built-in list prices Claude");
    let near = |price: Option<f64>, want: f64| price.is_some_and(|p| (p - want).abs() < 1e-9);
    for e in claude {
        let [input, _, read, write, long_input, _, long_read, long_write] = e.prices;
        let input = input.unwrap();
        if e.model.starts_with("claude-3-haiku") {
            assert_eq!((write, read), (Some(0.3), Some(0.03)), "{}", e.model);
            continue;
        }
        assert!(near(write, input * 1.25) && near(read, input / 10.0), "{}: {:?}", e.model, e.prices);
        if let Some(long) = long_input {
            assert!(near(long_write, long * 1.25) && near(long_read, long / 10.0), "{}", e.model);
        }
    }
    for provider in ["anthropic", "vertex_ai-anthropic_models", "Anthropic"] {
        let rates = rates(&bare_list(provider), "m").unwrap();
        assert_eq!((rates.short.cache_write, rates.short.cache_read), (2.5, 0.2), "{provider}");
        let long = rates.long.unwrap().1;
        assert_eq!((long.cache_write, long.cache_read), (5.0, 0.4), "{provider}: the long input's");
    }
    // Claude resold on Bedrock: its seller by the model family its id names.
    let bedrock = json(
        r#"{"anthropic.claude-x": {"litellm_provider": "bedrock", "input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05}}"#,
    );
    let short = rates(&bedrock, "anthropic.claude-x").unwrap().short;
    assert_eq!((short.cache_write, short.cache_read), (2.5, 0.2));
    // 1M uncached at $5, 1M read at $0.50, 1M written at $6.25, 1M out at $25.
    let opus = rates(&list, "claude-opus-4-5").unwrap();
    assert_eq!(opus.cost(3_000_000, 1_000_000, 1_000_000, 1_000_000), 5.0 + 0.5 + 6.25 + 25.0);
}

/// OpenAI's rule (its price page lists input, cached input and output; prompt caching is
/// automatic and costs nothing to write): a cache read at the listed cached price, a cache write
/// at the input price. No OpenAI entry gives a cache-write price.
#[test]
fn openai_cache_reads_cost_the_listed_cached_price_and_writes_cost_input() {
    let list = PriceList::embedded().unwrap();
    let openai: Vec<&Entry> =
        list.entries.iter().filter(|e| e.provider.as_deref() == Some("openai")).collect();
    assert!(openai.len() > 20, "the built-in list prices OpenAI's models");
    for e in openai {
        assert_eq!((e.prices[3], e.prices[7]), (None, None), "{}: no cache-write price", e.model);
        let short = Rates::of(e).unwrap().short;
        assert_eq!(short.cache_write, short.input, "{}: a write is an input token", e.model);
        assert_eq!(short.cache_read, e.prices[2].unwrap_or(short.input), "{}", e.model);
    }
    // The issue's call: 1M prompt tokens, all of them written to the cache, cost 1M input tokens.
    let codex = rates(&list, "gpt-5.1-codex").unwrap();
    assert_eq!(codex.cost(1_000_000, 0, 1_000_000, 0), 1.25);
    assert_eq!(codex.cost(1_000_000, 0, 0, 0), 1.25);
    // 1M uncached at $1.25, 1M read at the listed $0.125, 1M written at $1.25, 1M out at $10.
    assert_eq!(codex.cost(3_000_000, 1_000_000, 1_000_000, 1_000_000), 1.25 + 0.125 + 1.25 + 10.0);
    // A model with no cached price (gpt-5-pro): a read at the input price.
    let pro = rates(&list, "gpt-5-pro").unwrap();
    assert_eq!(pro.cost(1_000_000, 1_000_000, 0, 0), 15.0);
    let bare = rates(&bare_list("openai"), "m").unwrap();
    assert_eq!((bare.short.cache_write, bare.short.cache_read), (2.0, 2.0));
    assert_eq!(bare.long.map(|(_, t)| (t.cache_write, t.cache_read)), Some((4.0, 4.0)));
}

/// Google's rule (the Gemini API's price page lists input, context-caching and output prices;
/// cache storage is billed by the hour, not per token written): a cache read at the listed
/// cached price, a write at the input price.
#[test]
fn google_cache_reads_cost_the_listed_cached_price_and_writes_cost_input() {
    let list = PriceList::embedded().unwrap();
    let gemini: Vec<&Entry> =
        list.entries.iter().filter(|e| e.provider.as_deref() == Some("gemini")).collect();
    assert!(gemini.len() > 10, "the built-in list prices Gemini");
    for e in gemini {
        assert_eq!((e.prices[3], e.prices[7]), (None, None), "{}: no cache-write price", e.model);
        let short = Rates::of(e).unwrap().short;
        assert_eq!(short.cache_write, short.input, "{}", e.model);
        assert_eq!(short.cache_read, e.prices[2].unwrap_or(short.input), "{}", e.model);
    }
    // 1M uncached at $0.50, 1M read at the listed $0.05, 1M written at $0.50, 1M out at $3.
    let flash = rates(&list, "gemini-3-flash-preview").unwrap();
    assert_eq!(flash.cost(3_000_000, 1_000_000, 1_000_000, 1_000_000), 0.5 + 0.05 + 0.5 + 3.0);
    // Under 200,000 tokens Gemini 3 Pro's: 100k uncached at $2, 50k read at $0.20, 50k written
    // at $2, 1k out at $12.
    let pro = rates(&list, "gemini-3-pro-preview").unwrap();
    assert_eq!(
        pro.cost(200_000, 50_000, 50_000, 1_000),
        (100_000.0 * 2.0 + 50_000.0 * 0.2 + 50_000.0 * 2.0 + 1_000.0 * 12.0) / 1e6
    );
    // No context caching (gemini-2.0-flash-lite): a read at the input price.
    let lite = rates(&list, "gemini-2.0-flash-lite").unwrap();
    assert_eq!(lite.cost(1_000_000, 1_000_000, 0, 0), 0.075);
    let bare = rates(&bare_list("gemini"), "m").unwrap();
    assert_eq!((bare.short.cache_write, bare.short.cache_read), (2.0, 2.0));
}

/// The plain ids some harnesses write for Gemini 3 are priced as the preview ids they stand
/// for.
#[test]
fn gemini_3_ids_without_preview_are_priced_as_the_previews() {
    let list = PriceList::embedded().unwrap();
    for (plain, preview) in [
        ("gemini-3-pro", "gemini-3-pro-preview"),
        ("gemini-3.1-pro", "gemini-3.1-pro-preview"),
        ("gemini-3-flash", "gemini-3-flash-preview"),
        ("gemini-3.1-flash-lite", "gemini-3.1-flash-lite-preview"),
    ] {
        assert_eq!(entry(&list, plain).prices, entry(&list, preview).prices, "{plain}");
        assert_eq!(entry(&list, plain).long_context_above, entry(&list, preview).long_context_above);
        assert_eq!(rates(&list, plain), rates(&list, preview), "{plain}");
    }
    assert_eq!(rates(&list, "gemini/gemini-3-pro").map(|r| r.short.input), Some(2.0));
}

#[test]
fn given_cache_prices_stay_and_a_row_without_output_is_unpriced() {
    let list = json(
        r#"{"gpt-y": {"litellm_provider": "openai", "input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05,
                      "cache_read_input_token_cost": 2e-07, "cache_creation_input_token_cost": 0.0},
            "claude-z": {"litellm_provider": "anthropic", "input_cost_per_token": 2e-06, "output_cost_per_token": 1e-05,
                      "cache_creation_input_token_cost": 3e-06},
            "half": {"input_cost_per_token": 2e-06}}"#,
    );
    let short = |model: &str| rates(&list, model).unwrap().short;
    assert_eq!((short("gpt-y").cache_write, short("gpt-y").cache_read), (0.0, 0.2), "given, 0 too");
    assert_eq!((short("claude-z").cache_write, short("claude-z").cache_read), (3.0, 0.2));
    assert_eq!(rates(&list, "half"), None, "no output price: unpriced");
}

/// Over the threshold the whole request is priced at the long tier, not only its tokens above
/// it; at the threshold exactly it is not over.
#[test]
fn a_prompt_over_the_threshold_prices_the_whole_request_at_the_long_tier() {
    let list = PriceList::embedded().unwrap();
    let sonnet = rates(&list, "claude-sonnet-4-5").unwrap();
    // 199,999: 189,999 uncached at $3, 8,000 read at $0.30, 2,000 written at $3.75, 1,000 out at $15.
    let under = sonnet.cost(199_999, 8_000, 2_000, 1_000);
    assert_eq!(under, (189_999.0 * 3.0 + 8_000.0 * 0.3 + 2_000.0 * 3.75 + 1_000.0 * 15.0) / 1e6);
    // 200,001: all of it at $6, $0.60, $7.50 and $22.50.
    let over = sonnet.cost(200_001, 8_000, 2_000, 1_000);
    assert_eq!(over, (190_001.0 * 6.0 + 8_000.0 * 0.6 + 2_000.0 * 7.5 + 1_000.0 * 22.5) / 1e6);
    assert_eq!(sonnet.cost(200_000, 0, 0, 0), 0.6, "200,000 is not over 200,000");
    assert!(over > 2.0 * under * 0.99, "the whole request doubles, not 2 tokens");

    let gpt = rates(&list, "gpt-5.4").unwrap();
    assert_eq!(gpt.cost(272_000, 72_000, 0, 100), (200_000.0 * 2.5 + 72_000.0 * 0.25 + 100.0 * 15.0) / 1e6);
    assert_eq!(gpt.cost(272_001, 72_000, 0, 100), (200_001.0 * 5.0 + 72_000.0 * 0.5 + 100.0 * 22.5) / 1e6);
    // OpenAI has no cache-write price: a write is an input token, at the long tier the long one.
    assert_eq!(gpt.cost(300_000, 0, 1_000, 0), 300_000.0 * 5.0 / 1e6);
    // Gemini 3 Pro over 200,000: all at $4, the cache read at the listed $0.40, a write at $4.
    let gemini = rates(&list, "gemini-3-pro-preview").unwrap();
    assert_eq!(gemini.cost(200_000, 50_000, 0, 10), (150_000.0 * 2.0 + 50_000.0 * 0.2 + 10.0 * 12.0) / 1e6);
    assert_eq!(
        gemini.cost(250_000, 50_000, 10_000, 10),
        (190_000.0 * 4.0 + 50_000.0 * 0.4 + 10_000.0 * 4.0 + 10.0 * 18.0) / 1e6
    );
    let gpt5 = rates(&list, "gpt-5").unwrap();
    assert_eq!(gpt5.long, None, "gpt-5 has one price at every length");
    assert_eq!(gpt5.cost(400_000, 0, 0, 0), 0.5);
}

#[test]
fn cache_counts_beyond_the_prompt_leave_no_negative_uncached_input() {
    let list = PriceList::embedded().unwrap();
    let haiku = rates(&list, "claude-haiku-4-5").unwrap();
    assert_eq!(haiku.cost(100, 80, 50, 0), (80.0 * 0.1 + 50.0 * 1.25) / 1e6);
    assert!(haiku.cost(i64::MIN, i64::MAX, i64::MAX, 0).is_finite(), "no overflow");
}

async fn session_rows(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string();
    text.lines().map(str::to_string).collect()
}

#[tokio::test]
async fn call_cost_prices_rows_and_notes_the_models_it_cannot() {
    let ctx = SessionContext::new();
    register_built_in(&ctx).unwrap();
    let sql = "select m, call_cost(m, i, r, w, o) as usd from (values \
               ('claude-sonnet-4-5', 300000, 0, 0, 1000), ('claude-sonnet-4-5', 1000, null, null, null), \
               ('mystery-1', 10, 0, 0, 1), (null, 1, 1, 1, 1), ('gpt-5.4', 1000000, 0, 0, 0), \
               ('mystery-1', 10, 0, 0, 1), ('anthropic/claude-haiku-4-5-20251001', 1000000, 0, 0, 0), \
               ('mystery-0', 1, 0, 0, 0)) as t(m, i, r, w, o)";
    assert_eq!(
        session_rows(&ctx, sql).await[3..11],
        [
            "| claude-sonnet-4-5                   | 1.8225 |",
            "| claude-sonnet-4-5                   | 0.003  |",
            "| mystery-1                           |        |",
            "|                                     |        |",
            "| gpt-5.4                             | 5.0    |",
            "| mystery-1                           |        |",
            "| anthropic/claude-haiku-4-5-20251001 | 1.0    |",
            "| mystery-0                           |        |",
        ]
    );
    assert_eq!(take_unpriced(&ctx), ["mystery-0", "mystery-1"]);
    assert_eq!(take_unpriced(&ctx), Vec::<String>::new(), "taken");
    // Other string and integer types: a view of the text, a small integer.
    let cast = "select call_cost(arrow_cast('claude-sonnet-4-5', 'Utf8View'), arrow_cast(1000, 'Int16'), \
                0, 0, arrow_cast(10, 'UInt8')) as usd";
    assert_eq!(session_rows(&ctx, cast).await[3], "| 0.00315 |");
    let large = "select call_cost(arrow_cast('gpt-5', 'LargeUtf8'), 1000000, 0, 0, 0) as usd";
    assert_eq!(session_rows(&ctx, large).await[3], "| 1.25 |");
    let dictionary =
        "select call_cost(arrow_cast('gpt-5', 'Dictionary(Int32, Utf8)'), 1000000, 0, 0, 0) as usd";
    assert_eq!(session_rows(&ctx, dictionary).await[3], "| 1.25 |");
}

#[tokio::test]
async fn call_cost_refuses_arguments_it_cannot_price() {
    let ctx = SessionContext::new();
    register_built_in(&ctx).unwrap();
    let error = |sql: &'static str| {
        let ctx = &ctx;
        async move { ctx.sql(sql).await.err().map(|e| e.to_string()).unwrap_or_default() }
    };
    assert!(error("select call_cost('gpt-5', 1, 2)").await.contains(
        "call_cost takes 5 arguments (model, input_tokens, cache_read_tokens, cache_write_tokens, \
             output_tokens) and optionally a 6th (service_tier); 3 given"
    ));
    assert!(
        error("select call_cost('gpt-5', 1, 0, 0, 0, 2)").await.contains("service_tier is Int64, not text")
    );
    assert!(
        error("select call_cost('gpt-5', 1.5, 0, 0, 0)")
            .await
            .contains("input_tokens is Float64, not a whole number of tokens")
    );
    assert!(error("select call_cost(1, 1, 0, 0, 0)").await.contains("model is Int64, not text"));
}

/// A view (or a format's view, planned when the session opens) made before `--prices` is
/// registered prices with the list registered after.
#[tokio::test]
async fn plans_made_before_a_list_is_registered_see_it() {
    let ctx = SessionContext::new();
    register_built_in(&ctx).unwrap();
    ctx.sql(
        "create view v as select call_cost('claude-haiku-4-5', 1000000, 0, 0, 0) as usd, \
             (select input from prices where model = 'claude-haiku-4-5') as input",
    )
    .await
    .unwrap();
    let over = json(r#"{"claude-haiku-4-5": {"input_cost_per_token": 2e-06}}"#);
    register(&ctx, &PriceList::embedded().unwrap().overlaid(&over).unwrap()).unwrap();
    assert_eq!(session_rows(&ctx, "select * from v").await[3], "| 2.0 | 2.0   |");
    assert_eq!(ctx.state().scalar_functions().keys().filter(|f| *f == FUNCTION).count(), 1);
}

#[tokio::test]
async fn the_table_holds_the_list_in_the_files_order() {
    let ctx = SessionContext::new();
    register_built_in(&ctx).unwrap();
    let rows = session_rows(&ctx, "select count(*) as n, count(distinct model) as models from prices").await;
    let n = PriceList::embedded().unwrap().entries.len();
    assert_eq!(rows[3], format!("| {n:<2} | {n:<6} |"));
    let first = session_rows(&ctx, "select model from prices limit 1").await;
    assert_eq!(first[3], "| claude-opus-4-5 |");
}

/// A call at a service tier costs its standard price times the tier's multiplier: the
/// provider's (the built-in list's `service_tiers`), a model's own over it, and 1 for no tier,
/// `standard`, `default` and a tier the list names no multiplier for.
#[tokio::test]
async fn call_cost_prices_a_call_at_its_service_tier() {
    let ctx = SessionContext::new();
    register_built_in(&ctx).unwrap();
    // claude-opus-4-6: $5 in, $25 out: 1M in and 100k out is 7.5 at the standard rate; gpt-5.1:
    // $1.25 in, $10 out: 2.25; gpt-5-mini: $0.25 in, $2 out: 0.45.
    let sql = "select m, t, call_cost(m, 1000000, 0, 0, 100000, t) as usd from (values \
               ('claude-opus-4-6', null), ('claude-opus-4-6', 'standard'), ('claude-opus-4-6', 'fast'), \
               ('claude-opus-4-6', 'batch'), ('claude-opus-4-6', 'priority'), ('claude-opus-4-8', 'fast'), \
               ('gpt-5.1', 'priority'), ('gpt-5.1', 'FLEX'), ('gpt-5.1', 'default'), ('gpt-5-mini', 'priority'), \
               ('mystery-2', 'fast')) as v(m, t)";
    assert_eq!(
        session_rows(&ctx, sql).await[3..14],
        [
            "| claude-opus-4-6 |          | 7.5   |",
            "| claude-opus-4-6 | standard | 7.5   |",
            "| claude-opus-4-6 | fast     | 45.0  |",
            "| claude-opus-4-6 | batch    | 3.75  |",
            "| claude-opus-4-6 | priority | 7.5   |",
            "| claude-opus-4-8 | fast     | 15.0  |",
            "| gpt-5.1         | priority | 4.5   |",
            "| gpt-5.1         | FLEX     | 1.125 |",
            "| gpt-5.1         | default  | 2.25  |",
            "| gpt-5-mini      | priority | 0.81  |",
            "| mystery-2       | fast     |       |",
        ]
    );
    // Five arguments: the standard rate.
    assert_eq!(
        session_rows(&ctx, "select call_cost('claude-opus-4-6', 1000000, 0, 0, 0) as usd").await[3],
        "| 5.0 |"
    );
    // A file's multipliers lay over the built-in ones, by provider and tier and by model.
    let over = json(
        r#"{"service_tiers": {"anthropic": {"priority": 1.5}},
            "claude-opus-4-6": {"service_tiers": {"fast": 2}}}"#,
    );
    let list = PriceList::embedded().unwrap().overlaid(&over).unwrap();
    assert_eq!(list.service_tiers["anthropic"]["priority"], 1.5);
    assert_eq!(list.service_tiers["anthropic"]["batch"], 0.5, "the built-in multiplier stays");
    register(&ctx, &list).unwrap();
    let sql = "select call_cost('claude-opus-4-6', 1000000, 0, 0, 100000, t) as usd \
               from (values ('priority'), ('fast'), ('batch')) as v(t)";
    assert_eq!(session_rows(&ctx, sql).await[3..6], ["| 11.25 |", "| 15.0  |", "| 3.75  |"]);
}

#[test]
fn a_service_tier_multiplier_must_be_a_number_from_0_to_1000() {
    assert!(
        refused("p.json", r#"{"service_tiers": {"openai": {"priority": "2x"}}}"#).contains("not a number")
    );
    assert!(
        refused("p.json", r#"{"service_tiers": {"openai": {"priority": -1}}}"#).contains("from 0 to 1000")
    );
    assert!(refused("p.json", r#"{"service_tiers": ["openai"]}"#).contains("not an object of providers"));
    assert!(
        refused("p.json", r#"{"m": {"input_cost_per_token": 1e-6, "service_tiers": {"fast": 1e9}}}"#)
            .contains("from 0 to 1000")
    );
}

#[test]
fn the_tier_multipliers_travel_with_the_list() {
    let list = PriceList::embedded().unwrap();
    let bytes = serde_json::to_vec(&list).unwrap();
    let back: PriceList = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(back.service_tiers, list.service_tiers);
    assert_eq!(back.service_tiers["anthropic"]["fast"], 6.0);
    assert_eq!(entry(&back, "claude-opus-4-8").service_tiers["fast"], 2.0);
}

#[test]
fn the_note_counts_the_calls_of_unknown_tier() {
    assert_eq!(unknown_tier_note(0), None);
    assert_eq!(unknown_tier_note(1).unwrap(), "1 call of unknown tier priced at the standard rate");
    assert_eq!(unknown_tier_note(1234).unwrap(), "1,234 calls of unknown tier priced at the standard rate");
}
