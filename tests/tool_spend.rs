//! A tool call's cost, its result's bytes and its MCP server on a generated home of every
//! harness, against the generator's tally: each tool call's `cost_usd` is the cost of the row of
//! `calls` the tally says asked for it over the number of tool calls that row asked for, the
//! shares of each response sum to its cost, and `txq query tool_spend` sums the tally's rows.

use crate::harness_rows::*;
use crate::util::parse_ndjson;
use std::collections::BTreeMap;
use std::path::Path;
use txq::generate::{HarnessExpected, HarnessOptions};

/// Each row of `calls`' cost, by (harness, file relative to the home, line).
fn call_costs(home: &Path) -> BTreeMap<(String, String, u64), Option<f64>> {
    let got = rows(home, &[home.to_path_buf()], &[], "select harness, file, line, cost_usd from calls");
    let costs: BTreeMap<_, _> = got
        .iter()
        .map(|r| {
            let key = (
                r["harness"].as_str().unwrap().to_string(),
                relative(home, &r["file"]),
                r["line"].as_u64().unwrap(),
            );
            (key, r["cost_usd"].as_f64())
        })
        .collect();
    assert_eq!(costs.len(), got.len(), "a call per (harness, file, line)");
    costs
}

/// Each tool call's `cost_usd` as the binary gives it, by (harness, session_id, call_id).
fn tool_costs(home: &Path) -> BTreeMap<(String, String, String), Option<f64>> {
    let sql = "select harness, session_id, call_id, cost_usd from tool_calls";
    let got = rows(home, &[home.to_path_buf()], &[], sql);
    let costs: BTreeMap<_, _> = got
        .iter()
        .map(|r| {
            let key = (
                r["harness"].as_str().unwrap().to_string(),
                r["session_id"].as_str().unwrap().to_string(),
                r["call_id"].as_str().unwrap().to_string(),
            );
            (key, r["cost_usd"].as_f64())
        })
        .collect();
    assert_eq!(costs.len(), got.len(), "a tool call per (harness, session_id, call_id)");
    costs
}

/// The cost the tally gives each tool call: its response's over the tool calls that share it
/// (None when the response is not known or has no price). Every response it names is a call.
fn tallied_costs(
    expected: &HarnessExpected,
    calls: &BTreeMap<(String, String, u64), Option<f64>>,
) -> BTreeMap<(String, String, String), Option<f64>> {
    expected
        .tool_calls
        .iter()
        .map(|t| {
            let cost = t.response.as_ref().and_then(|(file, line)| {
                let call = calls.get(&(t.harness.clone(), file.clone(), *line));
                let call = call.unwrap_or_else(|| {
                    panic!("{} {}: its response {file}:{line} is a call", t.harness, t.call_id)
                });
                call.map(|cost| cost / t.shared_by as f64)
            });
            ((t.harness.clone(), t.session_id.clone(), t.call_id.clone()), cost)
        })
        .collect()
}

fn close(got: Option<f64>, want: Option<f64>, tolerance: f64) -> bool {
    match (got, want) {
        (Some(got), Some(want)) => (got - want).abs() <= tolerance * want.abs().max(1.0),
        (None, None) => true,
        _ => false,
    }
}

#[test]
fn each_tool_calls_cost_is_its_share_of_the_response_that_asked_for_it() {
    let (home, expected) = generated_home(&HarnessOptions::default());
    for harness in ["claude", "codex", "gemini"] {
        let tools: Vec<_> = expected.tool_calls.iter().filter(|t| t.harness == harness).collect();
        assert!(tools.iter().any(|t| t.shared_by > 1), "{harness}: a response of several tool uses");
        let servers: std::collections::BTreeSet<_> =
            tools.iter().filter_map(|t| t.mcp_server.as_deref()).collect();
        assert!(servers.len() >= 2, "{harness}: MCP tools of two servers at least: {servers:?}");
        assert!(
            tools.iter().any(|t| t.result_bytes.is_some_and(|b| b > 0)),
            "{harness}: results of known size"
        );
        if harness == "codex" {
            assert!(tools.iter().any(|t| t.response.is_none()), "codex: a call whose response is not known");
        }
    }
    let calls = call_costs(home.path());
    let want = tallied_costs(&expected, &calls);
    let got = tool_costs(home.path());
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    let priced = want.values().filter(|cost| cost.is_some()).count();
    assert!(priced > 100, "many priced shares: {priced}");
    for (key, want) in &want {
        assert!(close(got[key], *want, 1e-12), "{key:?}: {:?}, want {want:?}", got[key]);
    }
}

#[test]
fn the_shares_of_each_response_sum_to_its_cost() {
    let (home, expected) = generated_home(&HarnessOptions::default());
    let calls = call_costs(home.path());
    let got = tool_costs(home.path());
    let mut sums: BTreeMap<(String, String, u64), (f64, u64)> = BTreeMap::new();
    for t in &expected.tool_calls {
        let Some((file, line)) = &t.response else { continue };
        let share = got[&(t.harness.clone(), t.session_id.clone(), t.call_id.clone())];
        let sum = sums.entry((t.harness.clone(), file.clone(), *line)).or_default();
        *sum = (sum.0 + share.unwrap_or(0.0), sum.1 + 1);
    }
    assert!(sums.values().any(|(_, shares)| *shares >= 3), "a response of three tool uses");
    for (response, (sum, shares)) in sums {
        let cost = calls[&response].unwrap_or(0.0);
        assert!(
            close(Some(sum), Some(cost), 1e-12),
            "{response:?}: {shares} shares sum to {sum}, the call costs {cost}"
        );
    }
}

/// A row of `tool_spend`: (harness, mcp_server, tool) → (calls, failures, cost_usd, result_bytes).
type SpendRows =
    BTreeMap<(Option<String>, Option<String>, Option<String>), (u64, u64, Option<f64>, Option<i64>)>;

#[test]
fn tool_spend_sums_the_tallys_tool_calls_by_tool_and_by_mcp_server() {
    let (home, expected) = generated_home(&HarnessOptions::default());
    let costs = tallied_costs(&expected, &call_costs(home.path()));
    let mut want = SpendRows::new();
    for t in &expected.tool_calls {
        let cost = costs[&(t.harness.clone(), t.session_id.clone(), t.call_id.clone())];
        let mut keys = vec![(Some(t.harness.clone()), t.mcp_server.clone(), Some(t.tool.clone()))];
        if t.mcp_server.is_some() {
            keys.push((None, t.mcp_server.clone(), None));
        }
        for key in keys {
            let row = want.entry(key).or_insert((0, 0, None, None));
            row.0 += 1;
            row.1 += u64::from(!t.ok);
            row.2 = match (row.2, cost) {
                (Some(sum), Some(cost)) => Some(sum + cost),
                (sum, cost) => sum.or(cost),
            };
            row.3 = match (row.3, t.result_bytes) {
                (Some(sum), Some(bytes)) => Some(sum + bytes),
                (sum, bytes) => sum.or(bytes),
            };
        }
    }
    let out = crate::util::txq(
        &["--no-cache", "--format", "ndjson", "query", "tool_spend", home.path().to_str().unwrap()],
        home.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = parse_ndjson(&out.stdout);
    let text = |value: &serde_json::Value| value.as_str().map(str::to_string);
    let got: SpendRows = rows
        .iter()
        .map(|r| {
            let key = (text(&r["harness"]), text(&r["mcp_server"]), text(&r["tool"]));
            let row = (
                r["calls"].as_u64().unwrap(),
                r["failures"].as_u64().unwrap(),
                r["cost_usd"].as_f64(),
                r["result_bytes"].as_i64(),
            );
            (key, row)
        })
        .collect();
    assert_eq!(got.len(), rows.len(), "a row per (harness, MCP server, tool)");
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    assert!(want.keys().filter(|(harness, _, _)| harness.is_none()).count() >= 2, "subtotals of two servers");
    for (key, want) in &want {
        let got = got[key];
        assert_eq!((got.0, got.1, got.3), (want.0, want.1, want.3), "{key:?}");
        // The query rounds the cost to 9 decimals.
        assert!(close(got.2, want.2, 1e-9), "{key:?}: {:?}, want {:?}", got.2, want.2);
    }
    // Most expensive first, nulls last.
    let order: Vec<Option<f64>> = rows.iter().map(|r| r["cost_usd"].as_f64()).collect();
    assert!(order.windows(2).all(|w| match (w[0], w[1]) {
        (Some(a), Some(b)) => a >= b,
        (None, Some(_)) => false,
        _ => true,
    }));
}
