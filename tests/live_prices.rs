//! Prices through the real binary: `call_cost` priced by hand from the per-token figures of
//! prices/model_prices.json (never from SQL), the whole-request long-context tiers, name
//! matching, the unpriced-model warning, `--prices` and `TXQ_PRICES` in LiteLLM's format and in
//! the old CSV, a bad file refused, and `txq prices`.

use crate::queries::tally::RupuTally;
use crate::util::{Output, command, default_corpus, int, parse_ndjson, text, txq};
use serde_json::{Map, Value};
use std::path::Path;

/// The built-in file, as written.
fn built_in() -> Map<String, Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("prices/model_prices.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A model's price per token for `key`, from the file.
fn per_token(file: &Map<String, Value>, model: &str, key: &str) -> f64 {
    file[model][key].as_f64().unwrap_or_else(|| panic!("{model} has no {key}"))
}

/// One call's cost by hand from a LiteLLM entry, as docs/prices.md says: `input` counts the
/// cache reads and writes; a prompt over the entry's `_above_<N>k_tokens` threshold prices the
/// whole call at those keys (each missing one at its key below the threshold); a cache price
/// given at neither tier is, for Claude, 1.25 × the tier's input (a write) and 0.1 × (a read),
/// for any other model the tier's input price (OpenAI and Google charge no cache-write premium).
fn by_hand(file: &Map<String, Value>, model: &str, [input, read, write, output]: [i64; 4]) -> f64 {
    let entry = file[model].as_object().unwrap_or_else(|| panic!("no entry for {model}"));
    let threshold = entry.keys().find_map(|k| {
        k.strip_prefix("input_cost_per_token_above_")?.strip_suffix("k_tokens")?.parse::<i64>().ok()
    });
    let long = threshold.filter(|&thousands| input > thousands * 1000);
    let price = |base: &str| {
        long.and_then(|thousands| entry.get(&format!("{base}_above_{thousands}k_tokens")))
            .or_else(|| entry.get(base))
            .and_then(Value::as_f64)
    };
    let input_price = price("input_cost_per_token").unwrap();
    let claude = model.contains("claude");
    let (write_times, read_times) = if claude { (1.25, 0.1) } else { (1.0, 1.0) };
    let cache_read = price("cache_read_input_token_cost").unwrap_or(input_price * read_times);
    let cache_write = price("cache_creation_input_token_cost").unwrap_or(input_price * write_times);
    (input - read - write) as f64 * input_price
        + read as f64 * cache_read
        + write as f64 * cache_write
        + output as f64 * price("output_cost_per_token").unwrap()
}

fn assert_close(got: Option<f64>, want: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: no cost"));
    assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{what}: {got} vs {want}");
}

/// `txq -e SQL --format ndjson` in an empty folder: no transcripts, the built-in prices.
fn run(args: &[&str], dir: &Path) -> (Vec<Map<String, Value>>, Output) {
    let out = txq(&[args, &["--format", "ndjson"]].concat(), dir);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    (parse_ndjson(&out.stdout), out)
}

#[test]
fn call_cost_prices_the_whole_request_over_the_threshold_at_the_long_tier() {
    let dir = tempfile::tempdir().unwrap();
    let file = built_in();
    let sonnet_tokens = [
        ("a", [300_000, 0, 0, 1_000]),
        ("b", [199_999, 40_000, 9_999, 1_000]),
        ("c", [200_000, 40_000, 10_000, 1_000]),
        ("d", [200_001, 40_000, 10_000, 1_000]),
    ];
    let gpt_tokens = [("e", [272_000, 100_000, 0, 500]), ("f", [272_001, 100_000, 0, 500])];
    let gemini_tokens = [("g", [199_999, 0, 0, 10]), ("h", [250_000, 50_000, 0, 10])];
    let mut columns = Vec::new();
    for (model, calls) in [
        ("claude-sonnet-4-5", &sonnet_tokens[..]),
        ("gpt-5.4", &gpt_tokens[..]),
        ("gemini-3-pro-preview", &gemini_tokens[..]),
    ] {
        for (name, [i, r, w, o]) in calls {
            columns.push(format!("call_cost('{model}', {i}, {r}, {w}, {o}) as {name}"));
        }
    }
    let (rows, out) = run(&["-e", &format!("select {}", columns.join(", "))], dir.path());
    assert!(!out.stderr.contains("warning"), "all priced: no warning: {}", out.stderr);
    let row = &rows[0];
    for (model, calls) in [
        ("claude-sonnet-4-5", &sonnet_tokens[..]),
        ("gpt-5.4", &gpt_tokens[..]),
        ("gemini-3-pro-preview", &gemini_tokens[..]),
    ] {
        for (name, tokens) in calls {
            assert_close(row[*name].as_f64(), by_hand(&file, model, *tokens), name);
        }
    }
    // 300,000 prompt tokens: all at $6, not 200,000 at $3 and 100,000 at $6; at 200,000
    // exactly, all at $3.
    assert_close(
        row["a"].as_f64(),
        (300_000.0 * 6.0 + 1_000.0 * 22.5) / 1e6,
        "a at the per-million list price",
    );
    assert_close(
        row["c"].as_f64(),
        (150_000.0 * 3.0 + 40_000.0 * 0.3 + 10_000.0 * 3.75 + 1_000.0 * 15.0) / 1e6,
        "c",
    );
    // The file's tiers are what this test means to cross.
    assert!(file["claude-sonnet-4-5"].get("input_cost_per_token_above_200k_tokens").is_some());
    assert!(file["gpt-5.4"].get("input_cost_per_token_above_272k_tokens").is_some());
    assert!(file["gemini-3-pro-preview"].get("input_cost_per_token_above_200k_tokens").is_some());
}

#[test]
fn call_cost_finds_a_model_without_its_provider_prefix_or_date_and_prices_cache_tokens_by_provider() {
    let dir = tempfile::tempdir().unwrap();
    let file = built_in();
    let sql = "select call_cost('anthropic/claude-haiku-4-5', 1000000, 0, 0, 0) as prefixed, \
               call_cost('claude-haiku-4-5-20991231', 1000000, 0, 0, 0) as dated, \
               call_cost('vertex_ai/claude-haiku-4-5@20251001', 1000000, 0, 0, 0) as vertex, \
               call_cost('gpt-5.1-codex', 1000000, 0, 1000, 0) as written, \
               call_cost('gpt-5.1-codex', 1000000, 0, 1000000, 0) as all_written, \
               call_cost('gemini-3-pro-preview', 100000, 0, 100000, 0) as gemini_written, \
               call_cost('gpt-5.4', 300000, 0, 100000, 0) as long_written, \
               call_cost('claude-haiku-4-5', 1000000, 0, 1000000, 0) as claude_written, \
               call_cost('gemini-2.0-flash-lite', 1000, 1000, 0, 0) as read";
    let (rows, _) = run(&["-e", sql], dir.path());
    let haiku = by_hand(&file, "claude-haiku-4-5", [1_000_000, 0, 0, 0]);
    for name in ["prefixed", "dated", "vertex"] {
        assert_close(rows[0][name].as_f64(), haiku, name);
    }
    // OpenAI and Google charge no cache-write premium: a write costs an input token, over the
    // threshold the long one. Anthropic's 5-minute write is 1.25 × input. No cache-read price (not
    // Anthropic): the input price.
    let codex = per_token(&file, "gpt-5.1-codex", "input_cost_per_token");
    assert!(file["gpt-5.1-codex"].get("cache_creation_input_token_cost").is_none());
    assert_close(rows[0]["written"].as_f64(), 1_000_000.0 * codex, "written");
    assert_close(rows[0]["all_written"].as_f64(), 1.25, "the issue's call: $1.25, not $1.5625");
    assert!(file["gemini-3-pro-preview"].get("cache_creation_input_token_cost").is_none());
    assert_close(rows[0]["gemini_written"].as_f64(), 100_000.0 * 2.0 / 1e6, "gemini_written");
    assert_close(rows[0]["long_written"].as_f64(), 300_000.0 * 5.0 / 1e6, "long_written");
    assert_close(rows[0]["claude_written"].as_f64(), 1.25, "claude_written");
    let by_hand_written = by_hand(&file, "gpt-5.4", [300_000, 0, 100_000, 0]);
    assert_close(rows[0]["long_written"].as_f64(), by_hand_written, "long_written by hand");
    assert!(file["gemini-2.0-flash-lite"].get("cache_read_input_token_cost").is_none());
    let lite = per_token(&file, "gemini-2.0-flash-lite", "input_cost_per_token");
    assert_close(rows[0]["read"].as_f64(), 1_000.0 * lite, "read");
}

#[test]
fn a_model_call_cost_cannot_price_costs_null_and_is_named_after_the_statement() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "select call_cost(m, 10, 0, 0, 1) as usd from (values ('mystery-2'), ('gpt-5'), ('mystery-1'), \
               ('mystery-2')) t(m); select 1 as one; select call_cost('mystery-3', 1, 0, 0, 0) as usd";
    let out = txq(&["-e", sql, "--format", "csv"], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    // gpt-5: 10 input tokens at $1.25 a million and 1 output token at $10.
    assert_eq!(out.stdout, "usd\n\"\"\n0.0000225\n\"\"\n\"\"\none\n1\nusd\n\"\"\n");
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("no price")).collect();
    assert_eq!(
        warnings,
        [
            "txq: warning: no price for mystery-1, mystery-2: their cost is null; give prices with --prices FILE",
            "txq: warning: no price for mystery-3: their cost is null; give prices with --prices FILE",
        ],
        "once per statement, for the statements that met one"
    );
    let quiet = txq(&["-q", "-e", sql], dir.path());
    assert_eq!((quiet.code, quiet.stderr.as_str()), (0, ""));
    // Inside a view (as a normalized table's cost column is), named when the view is read.
    let view =
        "create view v as select call_cost('mystery-4', 1, 0, 0, 0) as usd; select count(usd) as n from v";
    let out = txq(&["-e", view, "--format", "csv"], dir.path());
    assert_eq!(out.stdout, "n\n0\n");
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("no price")).collect();
    assert_eq!(
        warnings,
        ["txq: warning: no price for mystery-4: their cost is null; give prices with --prices FILE"]
    );
}

/// `call_cost` over every call of a generated corpus (arrays, not literals), in rupu's terms:
/// its `input_tokens` hold the cached tokens but not the cache writes.
#[test]
fn call_cost_over_a_corpus_sums_to_the_calls_priced_by_hand() {
    let c = default_corpus();
    let file = built_in();
    let tally = RupuTally::read(&c.transcripts());
    let mut want = 0.0;
    for call in &tally.calls {
        let write = call.cache_write.unwrap_or(0);
        want += by_hand(&file, &call.model, [call.input + write, call.cached, write, call.output]);
    }
    assert!(tally.calls.len() > 20, "{} calls", tally.calls.len());
    let rows = c.rows_by_binary(
        "select sum(call_cost(model, input_tokens + coalesce(cache_write_tokens, 0), cached_tokens, \
         coalesce(cache_write_tokens, 0), output_tokens)) as usd, count(*) as calls from usage",
    );
    assert_eq!(int(&rows[0], "calls"), Some(tally.calls.len() as i64));
    let got = rows[0]["usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
}

#[test]
fn a_litellm_file_overrides_one_key_of_a_model_and_adds_another() {
    let dir = tempfile::tempdir().unwrap();
    let file = built_in();
    std::fs::write(
        dir.path().join("mine.json"),
        r#"{"claude-sonnet-4-5": {"output_cost_per_token": 2e-05},
            "my-model": {"litellm_provider": "acme", "mode": "chat", "input_cost_per_token": 1e-06,
                         "output_cost_per_token": 4e-06, "cache_read_input_token_cost": 5e-07}}"#,
    )
    .unwrap();
    let sql = "select call_cost('claude-sonnet-4-5', 300000, 0, 0, 1000) as sonnet, \
               call_cost('my-model', 2000, 1000, 0, 100) as mine";
    let (rows, out) = run(&["--prices", "mine.json", "-e", sql], dir.path());
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    // The file's output price, the built-in list's others, its long tier too.
    let want = 300_000.0 * per_token(&file, "claude-sonnet-4-5", "input_cost_per_token_above_200k_tokens")
        + 1_000.0 * per_token(&file, "claude-sonnet-4-5", "output_cost_per_token_above_200k_tokens");
    assert_close(rows[0]["sonnet"].as_f64(), want, "sonnet");
    assert_close(rows[0]["mine"].as_f64(), 1_000.0 * 1e-6 + 1_000.0 * 5e-7 + 100.0 * 4e-6, "mine");

    let (rows, _) = run(&["prices", "--prices", "mine.json"], dir.path());
    assert_eq!(
        rows.len(),
        file.len() - 2 + 1,
        "the built-in models (sample_spec and service_tiers are none) and one more"
    );
    let row = |model: &str| rows.iter().find(|r| text(r, "model") == model).unwrap().clone();
    assert_eq!(
        (row("claude-sonnet-4-5")["output"].as_f64(), row("claude-sonnet-4-5")["input"].as_f64()),
        (Some(20.0), Some(3.0))
    );
    assert_eq!(row("claude-sonnet-4-5")["long_output"].as_f64(), Some(22.5));
    let mine = row("my-model");
    assert_eq!(
        (text(&mine, "provider"), mine["cached_input"].as_f64(), mine["cache_write"].as_f64()),
        ("acme".into(), Some(0.5), None)
    );
    assert_eq!(text(rows.last().unwrap(), "model"), "my-model", "added after the built-in list");

    // The same file named by TXQ_PRICES.
    let by_env = command(dir.path())
        .args(["-e", sql, "--format", "ndjson"])
        .env("TXQ_PRICES", "mine.json")
        .output()
        .unwrap();
    let rows = parse_ndjson(&String::from_utf8(by_env.stdout).unwrap());
    assert_close(rows[0]["sonnet"].as_f64(), want, "sonnet by TXQ_PRICES");
}

#[test]
fn the_old_csv_prices_format_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.csv"),
        "# my prices\nmodel,provider,input,output,cached_input,cache_write,long_context_above,long_input,price_date,note\n\
         mystery-1,acme,2,4,1,,1000,3,2026-01-01,from the old format\n",
    )
    .unwrap();
    let sql = "select call_cost('mystery-1', 900, 100, 0, 10) as short, call_cost('mystery-1', 1001, 1, 0, 10) as long";
    let (rows, _) = run(&["--prices", "mine.csv", "-e", sql], dir.path());
    // 800 at $2, 100 at $1, 10 at $4; over 1,000: 1,000 at $3, 1 at $1 (no long price: the short one), 10 at $4.
    assert_close(rows[0]["short"].as_f64(), (800.0 * 2.0 + 100.0 + 40.0) / 1e6, "short");
    assert_close(rows[0]["long"].as_f64(), (1_000.0 * 3.0 + 1.0 + 40.0) / 1e6, "long");
    let (rows, _) = run(&["prices", "--prices", "mine.csv"], dir.path());
    let mine = rows.iter().find(|r| text(r, "model") == "mystery-1").unwrap();
    assert_eq!(
        (text(mine, "source"), int(mine, "long_context_above")),
        ("from the old format".into(), Some(1000))
    );
}

#[test]
fn a_bad_prices_file_is_refused_saying_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |name: &str, body: &str| {
        std::fs::write(dir.path().join(name), body).unwrap();
        let out = txq(&["--prices", name, "-e", "select 1"], dir.path());
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{name}: {}", out.stderr);
        out.stderr
    };
    assert_eq!(
        refused("syntax.json", "{\"m\": {\"input_cost_per_token\": 1e-06,}}\n"),
        "txq: error: --prices: syntax.json: not a LiteLLM price file: trailing comma at line 1 column 38\n"
    );
    assert_eq!(
        refused("text.json", r#"{"m": {"input_cost_per_token": "0.000003"}}"#),
        "txq: error: --prices: text.json: input_cost_per_token of m is not a number: \"0.000003\"\n"
    );
    assert_eq!(
        refused("negative.json", r#"{"m": {"output_cost_per_token": -1e-06}}"#),
        "txq: error: --prices: negative.json: output of m is negative\n"
    );
    assert!(
        refused("bad.csv", "model,inptu\nm,1\n")
            .contains("bad.csv: unknown column \"inptu\" (the columns are model,provider,input,")
    );
    let missing = txq(&["prices", "--prices", "nope.json"], dir.path());
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.starts_with("txq: error: --prices: nope.json: cannot read: "),
        "{}",
        missing.stderr
    );
}

#[test]
fn txq_prices_prints_the_built_in_list_per_million_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let file = built_in();
    let (rows, _) = run(&["prices"], dir.path());
    let models: Vec<String> = rows.iter().map(|r| text(r, "model")).collect();
    let listed: Vec<&String> = file.keys().filter(|k| *k != "sample_spec" && *k != "service_tiers").collect();
    assert_eq!(models.len(), listed.len());
    for row in &rows {
        let model = text(row, "model");
        let entry = &file[&model];
        for (column, key) in [("input", "input_cost_per_token"), ("output", "output_cost_per_token")] {
            let per_million = row[column].as_f64().unwrap();
            assert!((per_million - entry[key].as_f64().unwrap() * 1e6).abs() < 1e-9, "{model} {column}");
        }
        assert_eq!(text(row, "provider"), entry["litellm_provider"].as_str().unwrap(), "{model}");
    }
    let sonnet = rows.iter().find(|r| text(r, "model") == "claude-sonnet-4-5").unwrap();
    assert_eq!(
        (int(sonnet, "long_context_above"), sonnet["long_input"].as_f64()),
        (Some(200_000), Some(6.0))
    );
    let gpt = rows.iter().find(|r| text(r, "model") == "gpt-5.4").unwrap();
    assert_eq!((int(gpt, "long_context_above"), gpt["long_output"].as_f64()), (Some(272_000), Some(22.5)));
    let out = txq(&["prices", "--format", "csv"], dir.path());
    assert_eq!(
        out.stdout.lines().next(),
        Some(
            "model,provider,input,output,cached_input,cache_write,long_context_above,long_input,long_output,\
             long_cached_input,long_cache_write,max_input_tokens,mode,source"
        )
    );
}

/// A price of 1e303 a token was refused as "negative" and one of 1e300 read as `inf`; a model a
/// LiteLLM file names twice took its last entry in silence.
#[test]
fn a_price_beyond_any_price_is_refused_as_such_and_a_model_priced_twice_is_said() {
    let dir = tempfile::tempdir().unwrap();
    for (name, price) in [("huge.json", "1e303"), ("large.json", "1e300")] {
        std::fs::write(dir.path().join(name), format!(r#"{{"m": {{"input_cost_per_token": {price}}}}}"#))
            .unwrap();
        let out = txq(&["--prices", name, "-e", "select 1"], dir.path());
        assert_eq!((out.code, out.stdout.as_str()), (2, ""), "{name}: {}", out.stderr);
        assert!(
            out.stderr.starts_with(&format!("txq: error: --prices: {name}: input of m is "))
                && out.stderr.contains("USD per million tokens: beyond any price (at most 1e6)"),
            "{name}: {}",
            out.stderr
        );
    }
    let twice = r#"{"m": {"input_cost_per_token": 1e-06, "output_cost_per_token": 0}, "m": {"input_cost_per_token": 2e-06, "output_cost_per_token": 0}}"#;
    std::fs::write(dir.path().join("twice.json"), twice).unwrap();
    let out = txq(
        &[
            "--prices",
            "twice.json",
            "--format",
            "csv",
            "-e",
            "select call_cost('m', 1000000, 0, 0, 0) as usd",
        ],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "usd\n2.0\n", "the last entry taken");
    assert_eq!(
        out.stderr.lines().next(),
        Some("txq: warning: twice.json: m is priced twice; its last entry is taken")
    );
    assert_eq!(out.stderr.matches("priced twice").count(), 1, "{}", out.stderr);
}
