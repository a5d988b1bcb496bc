//! The canned analyses of `queries/`, run by `txq query` on generated corpora: every figure they
//! print compared with the generator's answers or with an independent reading of the files
//! (`tally`), spend priced by hand from the built-in price file, and the spend semantics pinned on a
//! transcript written here.

pub mod tally;

use crate::util::{Generated, Output, default_corpus, int, parse_ndjson, text, txq};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tally::{RupuTally, percentile_cont, reeval_events};
use txq::generate::{ReevalExpected, ReevalOptions, write_reeval_corpus};

type Row = Map<String, Value>;

/// Runs `txq query NAME` as ndjson in `cwd` on `paths`, and checks it succeeded.
fn query_in(cwd: &Path, name: &str, paths: &[&str]) -> (Vec<Row>, String) {
    let mut args = vec!["query", name, "--format", "ndjson"];
    args.extend(paths);
    let out = txq(&args, cwd);
    assert_eq!(out.code, 0, "txq query {name}: {}", out.stderr);
    (parse_ndjson(&out.stdout), out.stderr)
}

/// The rows of the canned query `name` on a generated corpus, run in this process (the SQL
/// `txq query NAME` runs); `query_in` runs the binary.
fn query(c: &Generated, name: &str) -> Vec<Row> {
    let canned = txq::sql::queries::find(name).unwrap_or_else(|| panic!("no canned query {name}"));
    crate::util::query_rows(&[c.transcripts()], canned.sql)
}

fn float(row: &Row, column: &str) -> Option<f64> {
    row[column].as_f64()
}

fn close(got: Option<f64>, expected: Option<f64>, tolerance: f64) -> bool {
    match (got, expected) {
        (Some(a), Some(b)) => (a - b).abs() <= tolerance,
        (a, b) => a == b,
    }
}

macro_rules! on_both_corpora {
    ($($name:ident => $check:path;)*) => {
        mod default { $( #[test] fn $name() { $check(crate::util::default_corpus()); } )* }
        mod larger { $( #[test] fn $name() { $check(crate::util::larger_corpus()); } )* }
    };
}

on_both_corpora! {
    spend_by_model_day => super::spend_by_model_day;
    cache_hit_ratio => super::cache_hit_ratio;
    denied_tools => super::denied_tools;
    network_egress => super::network_egress;
    failing_commands => super::failing_commands;
    slowest_tools => super::slowest_tools;
    aborted_runs => super::aborted_runs;
    agent_summary => super::agent_summary;
}

/// A model's prices per million tokens, read from a price file in LiteLLM's format by hand: the
/// short tier, and the long-context tier with the prompt size it applies above.
#[derive(Debug, Clone, Copy)]
pub struct Price {
    input: Option<f64>,
    output: Option<f64>,
    cached_input: Option<f64>,
    cache_write: Option<f64>,
    long_context_above: Option<i64>,
    long: [Option<f64>; 4],
}

/// The entries of a LiteLLM price file (`sample_spec` left out), its per-token prices made
/// per million; the long tier from the `*_above_<N>k_tokens` keys.
pub fn prices_litellm(text: &str) -> BTreeMap<String, Price> {
    let file: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
    let keys = [
        "input_cost_per_token",
        "output_cost_per_token",
        "cache_read_input_token_cost",
        "cache_creation_input_token_cost",
    ];
    file.iter()
        // sample_spec documents the fields; service_tiers holds the tiers' multipliers, no model.
        .filter(|(model, _)| *model != "sample_spec" && *model != "service_tiers")
        .map(|(model, entry)| {
            let number = |key: &str| entry.get(key).and_then(|v| v.as_f64()).map(|p| p * 1e6);
            let above = entry.as_object().unwrap().keys().find_map(|k| {
                let rest = k.strip_prefix("input_cost_per_token_above_")?;
                rest.strip_suffix("k_tokens")?.parse::<i64>().ok()
            });
            let long = keys.map(|k| above.and_then(|n| number(&format!("{k}_above_{n}k_tokens"))));
            let price = Price {
                input: number(keys[0]),
                output: number(keys[1]),
                cached_input: number(keys[2]),
                cache_write: number(keys[3]),
                long_context_above: above.map(|n| n * 1000),
                long,
            };
            (model.clone(), price)
        })
        .collect()
}

pub fn built_in_prices() -> BTreeMap<String, Price> {
    prices_litellm(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("prices/model_prices.json"))
            .unwrap(),
    )
}

/// Whether a call's prompt (input, cached included, plus cache writes) is over its model's
/// long-context threshold.
pub fn long_context(price: Option<&Price>, input: i64, cache_write: i64) -> bool {
    price.and_then(|p| p.long_context_above).is_some_and(|above| input + cache_write > above)
}

/// One call's cost in dollars: cached tokens at the cached rate, the rest of the input at the
/// input rate, output at the output rate, cache writes on top at the cache-write rate, all at
/// the long-context rates (each falling back to its short one) when the prompt is over the
/// threshold; unknown without a price, or with tokens of a kind the model has no price for.
pub fn call_cost(
    price: Option<&Price>,
    input: i64,
    cached: i64,
    output: i64,
    cache_write: i64,
) -> Option<f64> {
    let long = long_context(price, input, cache_write);
    let price = price?;
    let rate = |short: Option<f64>, long_rate: Option<f64>| if long { long_rate.or(short) } else { short };
    let (input_rate, output_rate) = (rate(price.input, price.long[0]), rate(price.output, price.long[1]));
    let cached_rate = rate(price.cached_input, price.long[2]);
    let write_rate = rate(price.cache_write, price.long[3]);
    let reads = if cached == 0 { 0.0 } else { cached as f64 * cached_rate? };
    let writes = if cache_write == 0 { 0.0 } else { cache_write as f64 * write_rate? };
    let tokens = (input - cached) as f64 * input_rate? + output as f64 * output_rate?;
    Some((tokens + reads + writes) / 1e6)
}

pub fn spend_by_model_day(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let mut tokens_by_model: BTreeMap<String, (i64, i64, i64)> = BTreeMap::new();
    for call in &tally.calls {
        let sums = tokens_by_model.entry(call.model.clone()).or_default();
        *sums = (sums.0 + call.input, sums.1 + call.output, sums.2 + call.cached);
    }
    assert_eq!(tokens_by_model, c.expected.tokens_by_model, "the tally reads what the generator wrote");

    let prices = built_in_prices();
    type Sums = (i64, i64, i64, i64, i64, Option<f64>, i64);
    let mut expected: BTreeMap<(String, String), Sums> = BTreeMap::new();
    for call in &tally.calls {
        let write = call.cache_write.unwrap_or(0);
        let price = prices.get(&call.model);
        let cost = call_cost(price, call.input, call.cached, call.output, write);
        let sums =
            expected.entry((call.day.clone(), call.model.clone())).or_insert((0, 0, 0, 0, 0, Some(0.0), 0));
        sums.6 += i64::from(long_context(price, call.input, write));
        sums.0 += 1;
        sums.1 += call.input;
        sums.2 += call.cached;
        sums.3 += write;
        sums.4 += call.output;
        sums.5 = sums.5.zip(cost).map(|(a, b)| a + b);
    }
    let rows = query(c, "spend_by_model_day");
    let keys: Vec<(String, String)> = rows.iter().map(|r| (text(r, "day"), text(r, "model"))).collect();
    assert_eq!(keys, expected.keys().cloned().collect::<Vec<_>>(), "one row per day and model, in order");
    for row in &rows {
        let key = (text(row, "day"), text(row, "model"));
        let (calls, input, cached, writes, output, cost, long) = expected[&key];
        assert_eq!(int(row, "long_context_calls"), Some(long), "{key:?}");
        assert_eq!(int(row, "calls"), Some(calls), "{key:?}");
        assert_eq!(int(row, "input_tokens"), Some(input), "{key:?}");
        assert_eq!(int(row, "cached_tokens"), Some(cached), "{key:?}");
        assert_eq!(int(row, "cache_write_tokens"), Some(writes), "{key:?}");
        assert_eq!(int(row, "output_tokens"), Some(output), "{key:?}");
        assert!(cost.is_some(), "the built-in prices price every generated model");
        assert!(close(float(row, "cost_usd"), cost, 1e-6), "{key:?}: {:?} vs {cost:?}", row["cost_usd"]);
    }
}

fn cache_hit_ratio(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let rows = query(c, "cache_hit_ratio");
    let models: Vec<String> = rows.iter().map(|r| text(r, "model")).collect();
    assert_eq!(models, c.expected.tokens_by_model.keys().cloned().collect::<Vec<_>>());
    for row in &rows {
        let model = text(row, "model");
        let (input, _, cached) = c.expected.tokens_by_model[&model];
        let calls = tally.calls.iter().filter(|call| call.model == model).count() as i64;
        assert_eq!(int(row, "calls"), Some(calls), "{model}");
        assert_eq!(int(row, "input_tokens"), Some(input), "{model}");
        assert_eq!(int(row, "cached_tokens"), Some(cached), "{model}");
        let ratio = cached as f64 / input as f64;
        assert!(close(float(row, "cache_hit_ratio"), Some(ratio), 0.00005 + 1e-12), "{model}: {ratio}");
    }
}

pub fn denied_tools(c: &Generated) {
    let rows = query(c, "denied_tools");
    let got: BTreeMap<(String, Option<String>), (u64, u64)> = rows
        .iter()
        .map(|r| {
            let reason = r["reason"].as_str().map(str::to_string);
            ((text(r, "tool"), reason), (int(r, "denials").unwrap() as u64, int(r, "runs").unwrap() as u64))
        })
        .collect();
    let expected: BTreeMap<(String, Option<String>), (u64, u64)> = c
        .expected
        .denials
        .iter()
        .map(|(key, (calls, runs))| (key.clone(), (*calls, runs.len() as u64)))
        .collect();
    assert_eq!(got, expected);
    let order: Vec<(i64, String, String)> =
        rows.iter().map(|r| (-int(r, "denials").unwrap(), text(r, "tool"), text(r, "reason"))).collect();
    assert!(order.is_sorted(), "most denied first");
}

/// Runs that audit every refused call (the generator's runs before v0.74): the union of audits
/// and denied results is the blocked audits, each call once.
#[test]
fn denied_tools_of_runs_that_audit_every_refusal_are_the_blocked_audits() {
    let c = default_corpus();
    let audits: BTreeMap<(String, Option<String>), u64> = c
        .expected
        .denied_tools
        .iter()
        .map(|((tool, decision), n)| ((tool.clone(), Some(decision.clone())), *n))
        .collect();
    let rows = query(c, "denied_tools");
    let got: BTreeMap<(String, Option<String>), u64> = rows
        .iter()
        .map(|r| {
            ((text(r, "tool"), r["reason"].as_str().map(str::to_string)), int(r, "denials").unwrap() as u64)
        })
        .collect();
    assert_eq!(got, audits);
}

pub fn network_egress(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let mut by_host: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for flow in &tally.flows {
        let (bytes_in, bytes_out) = (flow.bytes_in.unwrap_or(0), flow.bytes_out.unwrap_or(0));
        let host = by_host.entry(flow.host.clone()).or_default();
        *host = (host.0 + bytes_in, host.1 + bytes_out);
    }
    assert_eq!(by_host, c.expected.bytes_by_host, "the tally reads what the generator wrote");
    let rows = query(c, "network_egress");
    let columns = ["flows", "bytes_out", "bytes_in", "unconfirmed_bytes_in", "unconfirmed_flows"];
    type Figures = (i64, i64, i64, i64, i64);
    let got: Vec<((String, String), Figures)> = rows
        .iter()
        .map(|r| {
            let f = columns.map(|k| int(r, k).unwrap());
            ((text(r, "host"), text(r, "outcome")), (f[0], f[1], f[2], f[3], f[4]))
        })
        .collect();
    assert_eq!(got, c.expected.network_egress().into_iter().collect::<Vec<_>>());
}

fn failing_commands(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let mut expected: BTreeMap<(String, i64), (i64, BTreeSet<String>)> = BTreeMap::new();
    for (command, exit_code, run_id) in &tally.commands {
        if let Some(code) = exit_code.filter(|code| *code != 0) {
            let entry = expected.entry((command.clone(), code)).or_default();
            entry.0 += 1;
            entry.1.insert(run_id.clone());
        }
    }
    let rows = query(c, "failing_commands");
    let got: BTreeMap<(String, i64), (i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                (text(r, "command"), int(r, "exit_code").unwrap()),
                (int(r, "failures").unwrap(), int(r, "runs").unwrap()),
            )
        })
        .collect();
    let expected: BTreeMap<(String, i64), (i64, i64)> =
        expected.into_iter().map(|(k, (n, runs))| (k, (n, runs.len() as i64))).collect();
    assert_eq!(got, expected);
    assert_eq!(rows.len(), got.len());
}

fn slowest_tools(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let mut durations: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (tool, took) in &tally.tool_durations {
        durations.entry(tool.clone()).or_default().push(*took);
    }
    let rows = query(c, "slowest_tools");
    assert_eq!(rows.len(), durations.len());
    for row in &rows {
        let tool = text(row, "tool");
        let took = &durations[&tool];
        assert_eq!(int(row, "calls"), Some(took.len() as i64), "{tool}");
        assert_eq!(int(row, "max_ms"), took.iter().max().copied(), "{tool}");
        for (column, p) in [("p50_ms", 0.5), ("p95_ms", 0.95)] {
            let expected = percentile_cont(took, p);
            assert!(close(float(row, column), Some(expected), 0.05 + 1e-9), "{tool} {column}: {expected}");
        }
    }
    let p95: Vec<f64> = rows.iter().map(|r| float(r, "p95_ms").unwrap()).collect();
    assert!(p95.is_sorted_by(|a, b| a >= b), "slowest first");
}

pub fn aborted_runs(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let mut expected: Vec<_> = c.expected.runs.iter().filter(|r| r.status == "aborted").collect();
    expected.sort_by(|a, b| {
        tally.run_starts[&b.run_id].cmp(&tally.run_starts[&a.run_id]).then(a.run_id.cmp(&b.run_id))
    });
    let rows = query(c, "aborted_runs");
    assert!(!expected.is_empty());
    let ids: Vec<String> = rows.iter().map(|r| text(r, "run_id")).collect();
    assert_eq!(ids, expected.iter().map(|r| r.run_id.clone()).collect::<Vec<_>>(), "newest first");
    for (row, run) in rows.iter().zip(&expected) {
        assert_eq!(text(row, "agent"), run.agent);
        assert_eq!(text(row, "model"), run.model);
        assert_eq!(text(row, "started_at"), tally.run_starts[&run.run_id]);
        assert_eq!(int(row, "turns"), Some(run.turns as i64));
        assert_eq!(int(row, "tool_calls"), Some(run.tool_calls as i64));
        assert_eq!(int(row, "input_tokens"), Some(run.input_tokens));
        assert_eq!(int(row, "output_tokens"), Some(run.output_tokens));
        assert_eq!(row["archived"].as_bool(), Some(run.archived));
        assert!(text(row, "file").ends_with(&run.file));
        let cause = if run.completed {
            run.error.clone().unwrap_or("aborted".into())
        } else {
            "no_run_complete".into()
        };
        assert_eq!((text(row, "cause"), row["completed"].as_bool()), (cause, Some(run.completed)));
    }
}

pub fn agent_summary(c: &Generated) {
    let tally = RupuTally::read(&c.transcripts());
    let mut expected: BTreeMap<String, [i64; 10]> = BTreeMap::new();
    let mut starts: BTreeMap<String, Vec<&String>> = BTreeMap::new();
    for run in &c.expected.runs {
        let sums = expected.entry(run.agent.clone()).or_default();
        let status = |s: &str| i64::from(run.status == s);
        let figures = [
            1,
            status("ok"),
            status("error"),
            status("aborted"),
            i64::from(!run.completed),
            run.turns as i64,
            run.tool_calls as i64,
            run.input_tokens,
            run.cached_tokens,
            run.output_tokens,
        ];
        for (sum, figure) in sums.iter_mut().zip(figures) {
            *sum += figure;
        }
        starts.entry(run.agent.clone()).or_default().push(&tally.run_starts[&run.run_id]);
    }
    let rows = query(c, "agent_summary");
    let columns = [
        "runs",
        "ok",
        "error",
        "aborted",
        "unfinished",
        "turns",
        "tool_calls",
        "input_tokens",
        "cached_tokens",
        "output_tokens",
    ];
    let got: BTreeMap<String, [i64; 10]> =
        rows.iter().map(|r| (text(r, "agent"), columns.map(|k| int(r, k).unwrap()))).collect();
    assert_eq!(got, expected);
    for row in &rows {
        let agent = text(row, "agent");
        assert_eq!(&text(row, "first_run"), *starts[&agent].iter().min().unwrap(), "{agent}");
        assert_eq!(&text(row, "last_run"), *starts[&agent].iter().max().unwrap(), "{agent}");
    }
}

/// The reeval corpus of the generator's defaults, written once.
fn reeval_corpus() -> &'static (tempfile::TempDir, ReevalExpected) {
    static CORPUS: std::sync::OnceLock<(tempfile::TempDir, ReevalExpected)> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let expected = write_reeval_corpus(dir.path(), &ReevalOptions::default()).unwrap();
        (dir, expected)
    })
}

#[test]
fn reeval_tool_failures() {
    let (dir, expected) = reeval_corpus();
    let live: BTreeSet<_> = expected
        .attempts
        .iter()
        .filter(|a| !a.history)
        .map(|a| (&a.run_id, &a.eval, &a.cell, a.attempt))
        .collect();
    assert!(
        expected
            .attempts
            .iter()
            .any(|a| a.history && live.contains(&(&a.run_id, &a.eval, &a.cell, a.attempt))),
        "the corpus keeps some attempts in both trees"
    );
    let mut cells: BTreeMap<(String, String), (i64, i64, i64)> = BTreeMap::new();
    for a in &expected.attempts {
        if a.history && live.contains(&(&a.run_id, &a.eval, &a.cell, a.attempt)) {
            continue;
        }
        let sums = cells.entry((a.eval.clone(), a.cell.clone())).or_default();
        *sums = (sums.0 + 1, sums.1 + a.tool_calls as i64, sums.2 + a.tool_failures as i64);
    }
    let (rows, _) = query_in(dir.path(), "reeval_tool_failures", &[]);
    let keys: Vec<(String, String)> = rows.iter().map(|r| (text(r, "eval"), text(r, "cell"))).collect();
    assert_eq!(keys, cells.keys().cloned().collect::<Vec<_>>());
    for row in &rows {
        let key = (text(row, "eval"), text(row, "cell"));
        let (attempts, calls, failures) = cells[&key];
        assert_eq!(int(row, "attempts"), Some(attempts), "{key:?}");
        assert_eq!(int(row, "tool_calls"), Some(calls), "{key:?}");
        assert_eq!(int(row, "tool_failures"), Some(failures), "{key:?}");
        let rate = (calls > 0).then(|| failures as f64 / calls as f64);
        assert!(close(float(row, "failure_rate"), rate, 0.00005 + 1e-12), "{key:?}");
    }
}

#[test]
fn reeval_turn_durations() {
    let (dir, expected) = reeval_corpus();
    let events = reeval_events(dir.path());
    let ends = events.iter().filter(|e| e.kind == "turn-end").count() as u64;
    assert_eq!(
        Some(&ends),
        expected.events_by_type.get("turn-end"),
        "the tally reads what the generator wrote"
    );
    let counted = tally::counted_once(&events);
    let mut durations: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
    for event in events.iter().filter(|e| e.kind == "turn-end" && counted(e)) {
        if let Some(took) = event.fields.get("durationMs").and_then(Value::as_i64) {
            durations.entry((event.attempt.1.clone(), event.attempt.2.clone())).or_default().push(took);
        }
    }
    let (rows, _) = query_in(dir.path(), "reeval_turn_durations", &[]);
    let keys: Vec<(String, String)> = rows.iter().map(|r| (text(r, "eval"), text(r, "cell"))).collect();
    assert_eq!(keys, durations.keys().cloned().collect::<Vec<_>>());
    for row in &rows {
        let key = (text(row, "eval"), text(row, "cell"));
        let took = &durations[&key];
        assert_eq!(int(row, "turns"), Some(took.len() as i64), "{key:?}");
        assert_eq!(int(row, "max_ms"), took.iter().max().copied(), "{key:?}");
        for (column, p) in [("p50_ms", 0.5), ("p95_ms", 0.95)] {
            let expected = percentile_cont(took, p);
            assert!(close(float(row, column), Some(expected), 0.05 + 1e-9), "{key:?} {column}: {expected}");
        }
    }
}

#[test]
fn reeval_failed_searches() {
    let (dir, expected) = reeval_corpus();
    let events = reeval_events(dir.path());
    let failed =
        |e: &&tally::ReevalEvent| e.kind == "web-search" && e.fields.get("ok") == Some(&Value::Bool(false));
    assert_eq!(events.iter().filter(failed).count() as u64, expected.web_search_failures);
    let counted = tally::counted_once(&events);
    let mut expected_rows: Vec<(String, String, String, i64, String)> = events
        .iter()
        .filter(failed)
        .filter(|e| counted(e))
        .map(|e| {
            let (run, eval, cell, attempt) = e.attempt.clone();
            (run, eval, cell, attempt, e.fields["query"].as_str().unwrap().to_string())
        })
        .collect();
    expected_rows.sort();
    assert!(!expected_rows.is_empty(), "the corpus has failed searches");
    let (rows, _) = query_in(dir.path(), "reeval_failed_searches", &[]);
    let mut got: Vec<(String, String, String, i64, String)> = rows
        .iter()
        .map(|r| {
            (
                text(r, "run_id"),
                text(r, "eval"),
                text(r, "cell"),
                int(r, "attempt").unwrap(),
                text(r, "query"),
            )
        })
        .collect();
    let times: Vec<String> = rows.iter().map(|r| text(r, "ts")).collect();
    assert!(times.is_sorted_by(|a, b| a >= b), "newest first");
    got.sort();
    assert_eq!(got, expected_rows);
}

/// A transcript with round figures, to pin how spend is priced.
fn priced_corpus(usage: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let transcripts = dir.path().join(".rupu/transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let mut lines = vec![
        r#"{"type":"run_start","data":{"run_id":"run_01K00000000000000000000001","workspace_id":"ws_1","agent":"a","provider":"anthropic","model":"claude-sonnet-4-6","started_at":"2026-01-02T03:04:05Z","mode":"ask","schema":2}}"#.to_string(),
    ];
    lines.extend(usage.iter().map(|data| format!(r#"{{"type":"usage","data":{data}}}"#)));
    std::fs::write(transcripts.join("run_01K00000000000000000000001.jsonl"), lines.join("\n") + "\n")
        .unwrap();
    dir
}

fn cost_of(rows: &[Row], model: &str) -> Option<f64> {
    let row = rows.iter().find(|r| text(r, "model") == model).unwrap_or_else(|| panic!("no row for {model}"));
    assert_eq!(text(row, "day"), "2026-01-02");
    float(row, "cost_usd")
}

#[test]
fn spend_prices_cached_tokens_as_part_of_input_and_cache_writes_on_top() {
    // 600k uncached input at $3, 400k cached at $0.30, 100k output at $15, 200k cache writes at
    // $3.75: 1.80 + 0.12 + 1.50 + 0.75.
    let dir = priced_corpus(&[
        r#"{"provider":"anthropic","model":"claude-sonnet-4-6","input_tokens":1000000,"cached_tokens":400000,"output_tokens":100000,"cache_write_tokens":200000}"#,
    ]);
    let (rows, stderr) = query_in(dir.path(), "spend_by_model_day", &[]);
    assert!(close(cost_of(&rows, "claude-sonnet-4-6"), Some(4.17), 1e-9), "{rows:?}");
    assert!(!stderr.contains("no price"), "{stderr}");
}

#[test]
fn a_model_with_no_price_costs_null_and_is_named() {
    let dir = priced_corpus(&[
        r#"{"provider":"anthropic","model":"claude-sonnet-4-6","input_tokens":1000000,"output_tokens":0}"#,
        r#"{"provider":"acme","model":"mystery-1","input_tokens":10,"output_tokens":1}"#,
        r#"{"provider":"acme","model":"mystery-1","input_tokens":10,"output_tokens":1}"#,
    ]);
    let (rows, stderr) = query_in(dir.path(), "spend_by_model_day", &[]);
    assert_eq!(cost_of(&rows, "mystery-1"), None, "never priced as 0");
    assert!(close(cost_of(&rows, "claude-sonnet-4-6"), Some(3.0), 1e-9));
    assert!(
        stderr.contains("txq: warning: no price for mystery-1: their cost is null"),
        "the warning names the model: {stderr}"
    );
}

#[test]
fn prices_come_from_the_flag_or_the_environment() {
    let dir = priced_corpus(&[
        r#"{"provider":"acme","model":"mystery-1","input_tokens":1000000,"cached_tokens":500000,"output_tokens":1000000}"#,
        r#"{"provider":"acme","model":"writer-1","input_tokens":10,"output_tokens":0,"cache_write_tokens":5}"#,
    ]);
    let prices = dir.path().join("mine.csv");
    std::fs::write(
        &prices,
        "# my prices\nmodel,provider,input,output,cached_input,cache_write,price_date,note\n\
         mystery-1,acme,2,4,1,,2026-01-01,test\nwriter-1,acme,2,4,1,,2026-01-01,no cache-write price\n",
    )
    .unwrap();
    // 500k uncached at $2, 500k cached at $1, 1M output at $4.
    let by_flag = txq(
        &["--prices", prices.to_str().unwrap(), "query", "spend_by_model_day", "--format", "ndjson"],
        dir.path(),
    );
    let by_env = crate::util::command(dir.path())
        .args(["query", "spend_by_model_day", "--format", "ndjson"])
        .env("HOME", dir.path())
        .env("TXQ_PRICES", &prices)
        .output()
        .unwrap();
    let by_env = Output {
        code: by_env.status.code().unwrap(),
        stdout: String::from_utf8(by_env.stdout).unwrap(),
        stderr: String::from_utf8(by_env.stderr).unwrap(),
    };
    for out in [by_flag, by_env] {
        assert_eq!(out.code, 0, "{}", out.stderr);
        let rows = parse_ndjson(&out.stdout);
        assert!(close(cost_of(&rows, "mystery-1"), Some(5.5), 1e-9), "{rows:?}");
        assert_eq!(cost_of(&rows, "writer-1"), None, "cache writes with no cache-write price");
        assert!(!out.stderr.contains("no price for"), "{}", out.stderr);
    }
    let bad = txq(&["--prices", "nope.csv", "query", "spend_by_model_day"], dir.path());
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("nope.csv: cannot read"), "{}", bad.stderr);
}

#[test]
fn the_list_names_every_query_and_what_it_answers() {
    let out = txq(&["query", "--list", "--format", "ndjson"], Path::new(env!("CARGO_MANIFEST_DIR")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = parse_ndjson(&out.stdout);
    let names: Vec<String> = rows.iter().map(|r| text(r, "name")).collect();
    assert_eq!(names, txq::sql::queries::all().iter().map(|q| q.name.to_string()).collect::<Vec<_>>());
    let spend = rows.iter().find(|r| text(r, "name") == "spend_by_model_day").unwrap();
    assert!(text(spend, "answers").starts_with("Spend by model and day:"), "{spend:?}");
    // As a table, off a terminal, it fits 100 columns, every query named in it.
    let table = txq(&["query", "--list"], Path::new(env!("CARGO_MANIFEST_DIR")));
    let widest = table.stdout.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100 && widest > 60, "{widest}: {}", table.stdout);
    assert!(names.iter().all(|n| table.stdout.lines().any(|l| l == n)), "{}", table.stdout);
}

#[test]
fn an_unknown_query_is_bad_usage() {
    let c = default_corpus();
    let out = txq(&["query", "spend", c.transcripts().to_str().unwrap()], c.dir.path());
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no canned query \"spend\"") && out.stderr.contains("spend_by_model_day"),
        "{}",
        out.stderr
    );
}
