//! The canned analyses on what rupu v0.74 really writes (`shared/docs/formats.md`): a generated
//! corpus whose runs are mostly written as v0.74 writes them, with their netflow ledgers, and
//! hand-written transcripts for spend tiers and prices files.

use crate::queries;
use crate::util::{Generated, int, parse_ndjson, text, txq};
use std::collections::BTreeMap;
use txq::generate::RupuOptions;

/// 40 runs, 60 % of them written as rupu v0.74 writes them, written once.
fn live_corpus() -> &'static Generated {
    static CORPUS: std::sync::OnceLock<Generated> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        Generated::new(&RupuOptions { seed: 5, runs: 40, v0_74_percent: 60, ..RupuOptions::default() })
    })
}

#[test]
fn net_flows_written_before_their_turn_take_that_turn() {
    let c = live_corpus();
    crate::rupu_tables::net_flows_take_the_turn_in_progress(c);
    let rows = c.rows("select count(*) n from net_flow where turn_idx is null");
    assert_eq!(int(&rows[0], "n"), Some(0), "no flow is left without a turn");
}

#[test]
fn denied_tools_unions_blocked_audits_and_denied_results() {
    let c = live_corpus();
    queries::denied_tools(c);
    let rows = parse_ndjson(
        &txq(
            &["query", "denied_tools", "--format", "ndjson", c.transcripts().to_str().unwrap()],
            c.dir.path(),
        )
        .stdout,
    );
    let reasons: std::collections::BTreeSet<String> = rows.iter().map(|r| text(r, "reason")).collect();
    for reason in ["permission_denied", "permission denied", "denied:readonly"] {
        assert!(reasons.contains(reason), "{reason} in {reasons:?}");
    }
    assert!(reasons.iter().any(|r| r.starts_with("unknown tool: ")), "{reasons:?}");
}

#[test]
fn aborted_runs_keep_a_missing_run_complete_apart_from_an_aborted_one() {
    let c = live_corpus();
    queries::aborted_runs(c);
    let rows = parse_ndjson(
        &txq(
            &["query", "aborted_runs", "--format", "ndjson", c.transcripts().to_str().unwrap()],
            c.dir.path(),
        )
        .stdout,
    );
    let causes: std::collections::BTreeSet<String> = rows.iter().map(|r| text(r, "cause")).collect();
    assert_eq!(
        causes,
        ["no_run_complete", "operator_stop", "paused"].map(String::from).into_iter().collect(),
    );
}

#[test]
fn network_egress_takes_streamed_bytes_from_the_ledger_complete_line() {
    let c = live_corpus();
    queries::network_egress(c);
    let egress = c.expected.network_egress();
    let in_ledgers: i64 = egress.values().map(|sums| sums.2).sum();
    let in_transcripts: i64 = c.expected.bytes_by_host.values().map(|sums| sums.0).sum();
    assert!(in_ledgers > in_transcripts, "streamed bodies counted: {in_ledgers} > {in_transcripts}");
    assert!(egress.values().any(|sums| sums.4 > 0), "a body a crash cut short stays unconfirmed");
}

#[test]
fn spend_by_model_day_on_v0_74_runs() {
    queries::spend_by_model_day(live_corpus());
}

#[test]
fn ledgers_are_read_beside_the_transcripts_and_are_no_transcripts() {
    let c = live_corpus();
    let rows = c.rows("select count(*) n, count(distinct file) files from rupu_netflow.flow");
    let flows = c.expected.flows.values().filter(|f| f.in_ledger).count() as i64;
    assert_eq!(
        (int(&rows[0], "n"), int(&rows[0], "files")),
        (Some(flows), Some(c.expected.ledgers.len() as i64))
    );
    let completes = c.rows("select count(*) n from rupu_netflow.complete");
    assert!(int(&completes[0], "n").unwrap() > 0);
    let out = txq(&["-e", "select count(*) from runs", c.transcripts().to_str().unwrap()], c.dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("/netflow/"),
        "a ledger is not warned of as a non-transcript: {}",
        out.stderr
    );
    // Unqualified, the ledger's tables and view resolve too; given the .rupu folder, the same.
    let rupu_dir = c.dir.path().join(".rupu");
    let out = txq(
        &["--format", "ndjson", "-e", "select count(*) n from flows", rupu_dir.to_str().unwrap()],
        c.dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(int(&parse_ndjson(&out.stdout)[0], "n"), Some(flows));
}

/// A transcript with one call over the long-context threshold and one under it, priced by hand
/// from the built-in price file.
#[test]
fn spend_prices_a_call_over_the_threshold_at_the_long_context_tier() {
    let dir = tempfile::tempdir().unwrap();
    let transcripts = dir.path().join(".rupu/transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let usage = |model: &str, input: i64, cached: i64, write: i64, output: i64| {
        format!(
            r#"{{"type":"usage","data":{{"provider":"p","model":"{model}","input_tokens":{input},"cached_tokens":{cached},"cache_write_tokens":{write},"output_tokens":{output}}}}}"#
        )
    };
    let calls = [
        ("claude-sonnet-4-5", 250_000, 200_000, 1_000, 2_000),
        ("claude-sonnet-4-5", 150_000, 100_000, 0, 2_000),
        ("gemini-2.5-pro", 300_000, 0, 0, 10_000),
        ("gemini-2.5-pro", 1_000, 500, 0, 10),
    ];
    let mut lines = vec![r#"{"type":"run_start","data":{"run_id":"run_T","workspace_id":"w","agent":"a","provider":"p","model":"m","started_at":"2026-10-07T09:00:00Z","mode":"ask"}}"#.to_string()];
    lines.extend(calls.iter().map(|(m, i, c, w, o)| usage(m, *i, *c, *w, *o)));
    std::fs::write(transcripts.join("run_T.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = txq(&["query", "spend_by_model_day", "--format", "ndjson", ".rupu/transcripts"], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = parse_ndjson(&out.stdout);
    let prices = queries::built_in_prices();
    for model in ["claude-sonnet-4-5", "gemini-2.5-pro"] {
        let row = rows.iter().find(|r| text(r, "model") == model).unwrap();
        let mut cost = 0.0;
        for (m, i, c, w, o) in calls.iter().filter(|call| call.0 == model) {
            cost += queries::call_cost(prices.get(*m), *i, *c, *o, *w).unwrap();
        }
        assert!((row["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-6, "{model}: {row:?} vs {cost}");
        assert_eq!(int(row, "long_context_calls"), Some(1), "{model}");
    }
    // By hand: 50k uncached at $6, 200k cached at $0.60, 1k written at $7.50, 2k out at $22.50;
    // then 50k at $3, 100k at $0.30, 2k at $15.
    let sonnet = rows.iter().find(|r| text(r, "model") == "claude-sonnet-4-5").unwrap();
    let by_hand = (50_000.0 * 6.0
        + 200_000.0 * 0.6
        + 1_000.0 * 7.5
        + 2_000.0 * 22.5
        + 50_000.0 * 3.0
        + 100_000.0 * 0.3
        + 2_000.0 * 15.0)
        / 1e6;
    assert!((sonnet["cost_usd"].as_f64().unwrap() - by_hand).abs() < 1e-6, "{sonnet:?} vs {by_hand}");
}

#[test]
fn txq_prices_prints_the_table_with_no_transcripts_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = txq(&["prices", "--format", "ndjson"], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = parse_ndjson(&out.stdout);
    assert_eq!(rows.len(), queries::built_in_prices().len());
    let sonnet = rows.iter().find(|r| text(r, "model") == "claude-sonnet-4-5").unwrap();
    assert_eq!(int(sonnet, "long_context_above"), Some(200_000));
}

#[test]
fn a_prices_file_with_some_columns_overrides_the_built_in_table_by_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.csv"), "# mine\nmodel,output\ngpt-4o,99\nmy-model,7\n").unwrap();
    let out = txq(&["prices", "--prices", "mine.csv", "--format", "ndjson"], dir.path());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = parse_ndjson(&out.stdout);
    assert_eq!(rows.len(), queries::built_in_prices().len() + 1);
    let row = |model: &str| rows.iter().find(|r| text(r, "model") == model).unwrap().clone();
    assert_eq!((row("gpt-4o")["output"].as_f64(), row("gpt-4o")["input"].as_f64()), (Some(99.0), Some(2.5)));
    assert_eq!((row("my-model")["output"].as_f64(), row("my-model")["input"].as_f64()), (Some(7.0), None));
    assert_eq!(row("claude-haiku-4-5")["input"].as_f64(), Some(1.0));
}

#[test]
fn a_prices_file_naming_an_unknown_column_is_refused_with_the_columns_it_may_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.csv"), "model,inptu\nm,1\n").unwrap();
    let out = txq(&["prices", "--prices", "bad.csv"], dir.path());
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("bad.csv: unknown column \"inptu\" (the columns are model,provider,input"),
        "{}",
        out.stderr
    );
}

#[test]
fn agent_summary_counts_unfinished_runs_apart() {
    let c = live_corpus();
    assert!(c.expected.runs.iter().any(|r| r.status == "aborted" && r.completed));
    queries::agent_summary(c);
}

/// `--prices` with only `model,output`: spend takes the file's output price and the built-in
/// list's others.
#[test]
fn a_prices_file_with_some_columns_changes_only_those_prices_in_spend() {
    let dir = tempfile::tempdir().unwrap();
    let transcripts = dir.path().join(".rupu/transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    let lines = [
        r#"{"type":"run_start","data":{"run_id":"run_P","workspace_id":"w","agent":"a","provider":"anthropic","model":"m","started_at":"2026-10-07T09:00:00Z","mode":"ask"}}"#,
        r#"{"type":"usage","data":{"provider":"anthropic","model":"claude-haiku-4-5","input_tokens":1000000,"cached_tokens":500000,"output_tokens":100000}}"#,
    ];
    std::fs::write(transcripts.join("run_P.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::write(dir.path().join("mine.csv"), "model,output\nclaude-haiku-4-5,50\n").unwrap();
    let out = txq(
        &["--prices", "mine.csv", "query", "spend_by_model_day", "--format", "ndjson", ".rupu/transcripts"],
        dir.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = parse_ndjson(&out.stdout);
    // 500k uncached at the built-in $1, 500k cached at $0.10, 100k output at the file's $50.
    let by_hand = (500_000.0 * 1.0 + 500_000.0 * 0.1 + 100_000.0 * 50.0) / 1e6;
    assert!((rows[0]["cost_usd"].as_f64().unwrap() - by_hand).abs() < 1e-9, "{rows:?}");
}

#[test]
fn runs_say_whether_the_file_has_a_run_complete() {
    let c = live_corpus();
    let got: BTreeMap<String, (String, Option<bool>, Option<String>)> = c
        .rows("select run_id, status, completed, error from runs")
        .iter()
        .map(|r| {
            (
                text(r, "run_id"),
                (text(r, "status"), r["completed"].as_bool(), r["error"].as_str().map(String::from)),
            )
        })
        .collect();
    let expected: BTreeMap<String, (String, Option<bool>, Option<String>)> = c
        .expected
        .runs
        .iter()
        .map(|r| (r.run_id.clone(), (r.status.clone(), Some(r.completed), r.error.clone())))
        .collect();
    assert_eq!(got, expected);
}
