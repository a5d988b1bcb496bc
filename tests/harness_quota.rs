//! Quota and service tiers on a generated home, through the real binary, against the generator's
//! tally (never the SQL's): every row of `rate_limits`; each call's `service_tier` and its cost
//! at that tier, priced here from the tally's tokens, the price file and the tiers' multipliers;
//! `quota_burn`'s windows worked out here from the tally's limits, calls and tool calls; and the
//! spend reports' count of the calls of unknown tier.

use crate::harness_rows::{relative, rows};
use crate::util::{command, parse_ndjson};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;
use txq::generate::harness::{ExpectedCall, ExpectedRateLimit};
use txq::generate::{HarnessExpected, HarnessOptions, write_harness_home};

/// A generated home of the three harnesses, traps included, and its tally.
pub(crate) fn home() -> &'static (tempfile::TempDir, HarnessExpected) {
    static HOME: OnceLock<(tempfile::TempDir, HarnessExpected)> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let options = HarnessOptions { sessions: 14, keep_rows: true, ..HarnessOptions::default() };
        let expected = write_harness_home(dir.path(), &options).unwrap();
        (dir, expected)
    })
}

fn sql_rows(sql: &str) -> Vec<Map<String, Value>> {
    let dir = home().0.path();
    rows(dir, &[dir.to_path_buf()], &[], sql)
}

fn seconds(ts: &str) -> i64 {
    DateTime::parse_from_rfc3339(ts).unwrap().with_timezone(&Utc).timestamp()
}

/// A model's four prices per million tokens (input, output, cache read, cache write) below and
/// above its long-context threshold, read from the built-in file by hand.
struct Price {
    short: [Option<f64>; 4],
    long: Option<(i64, [Option<f64>; 4])>,
    anthropic: bool,
    tiers: BTreeMap<String, f64>,
}

/// Multipliers by tier, of each provider.
type ProviderTiers = BTreeMap<String, BTreeMap<String, f64>>;

/// The built-in prices, each with its multipliers by tier: its provider's (the file's
/// `service_tiers`), its own over them.
fn prices() -> &'static BTreeMap<String, Price> {
    static PRICES: OnceLock<BTreeMap<String, Price>> = OnceLock::new();
    PRICES.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("prices/model_prices.json");
        let file: Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let tiers_of = |v: &Value| -> BTreeMap<String, f64> {
            v.as_object()
                .map(|o| o.iter().filter_map(|(k, m)| Some((k.clone(), m.as_f64()?))).collect())
                .unwrap_or_default()
        };
        let providers: ProviderTiers = file["service_tiers"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| !k.starts_with('_'))
            .map(|(k, v)| (k.clone(), tiers_of(v)))
            .collect();
        let keys = [
            "input_cost_per_token",
            "output_cost_per_token",
            "cache_read_input_token_cost",
            "cache_creation_input_token_cost",
        ];
        let mut models = BTreeMap::new();
        for (model, entry) in file.iter().filter(|(m, _)| *m != "sample_spec" && *m != "service_tiers") {
            let per_million = |key: &str| entry.get(key).and_then(Value::as_f64).map(|p| p * 1e6);
            let above = entry.as_object().unwrap().keys().find_map(|k| {
                k.strip_prefix("input_cost_per_token_above_")?.strip_suffix("k_tokens")?.parse::<i64>().ok()
            });
            let provider = entry["litellm_provider"].as_str().unwrap_or_default().to_string();
            let mut tiers = providers
                .iter()
                .find(|(p, _)| provider.contains(p.as_str()))
                .map(|(_, t)| t.clone())
                .unwrap_or_default();
            tiers.extend(tiers_of(&entry["service_tiers"]));
            models.insert(
                model.clone(),
                Price {
                    short: keys.map(per_million),
                    long: above
                        .map(|n| (n * 1000, keys.map(|k| per_million(&format!("{k}_above_{n}k_tokens"))))),
                    anthropic: provider.contains("anthropic"),
                    tiers,
                },
            );
        }
        models
    })
}

/// A call's cost at its tier, by the rules of docs/prices.md restated: the uncached input at the
/// input price, cache reads and writes at theirs (absent: Anthropic's 0.1 and 1.25 × input,
/// else the input price), output at the output price, the whole call at the long prices when
/// its prompt is over the threshold; times the tier's multiplier (none: 1).
pub(crate) fn cost_at_tier(call: &ExpectedCall, tier: Option<&str>) -> Option<f64> {
    let price = prices().get(&call.model)?;
    let [input, output, read, write] = match price.long {
        Some((above, long)) if call.input_tokens > above => [
            long[0].or(price.short[0]),
            long[1].or(price.short[1]),
            long[2].or(price.short[2]),
            long[3].or(price.short[3]),
        ],
        _ => price.short,
    };
    let (input, output) = (input?, output?);
    let (read_rule, write_rule) = if price.anthropic { (0.1, 1.25) } else { (1.0, 1.0) };
    let read = read.unwrap_or(input * read_rule);
    let write = write.unwrap_or(input * write_rule);
    let uncached = (call.input_tokens - call.cache_read_tokens - call.cache_write_tokens).max(0);
    let standard = (uncached as f64 * input
        + call.cache_read_tokens as f64 * read
        + call.cache_write_tokens as f64 * write
        + call.output_tokens as f64 * output)
        / 1e6;
    let multiplier = tier.and_then(|t| price.tiers.get(t)).copied().unwrap_or(1.0);
    Some(standard * multiplier)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn limit_row(r: &ExpectedRateLimit) -> String {
    format!(
        "{} {} {} {} {:?} {:?} {:?} {:?} {}:{}",
        r.harness,
        r.session_id,
        r.ts,
        r.window,
        r.window_minutes,
        r.used_percent,
        r.resets_at,
        r.plan,
        r.file,
        r.line
    )
}

#[test]
fn rate_limits_are_each_window_a_count_reports_once_as_the_tally_has_them() {
    let (dir, expected) = home();
    let got = sql_rows(
        "select harness, session_id, to_char(ts, '%Y-%m-%dT%H:%M:%S%.3fZ') as ts, \"window\", window_minutes, \
         used_percent, cast(to_unixtime(resets_at) as bigint) as resets_at, plan, file, line from rate_limits",
    );
    let mut got: Vec<String> = got
        .iter()
        .map(|r| {
            limit_row(&ExpectedRateLimit {
                harness: r["harness"].as_str().unwrap().to_string(),
                session_id: r["session_id"].as_str().unwrap().to_string(),
                ts: r["ts"].as_str().unwrap().to_string(),
                window: r["window"].as_str().unwrap().to_string(),
                window_minutes: r["window_minutes"].as_i64(),
                used_percent: r["used_percent"].as_f64(),
                resets_at: r["resets_at"].as_i64(),
                plan: r["plan"].as_str().map(str::to_string),
                file: relative(dir.path(), &r["file"]),
                line: r["line"].as_u64().unwrap(),
            })
        })
        .collect();
    let mut want: Vec<String> = expected.rate_limits.iter().map(limit_row).collect();
    got.sort();
    want.sort();
    assert!(want.len() > 50, "a home with many reported windows: {}", want.len());
    assert_eq!(got, want);
    // The home has what the table is for: windows that reset (several resets, a percent back
    // down after one), a reset a second off its window's, replayed counts left out.
    let primary: Vec<&ExpectedRateLimit> =
        expected.rate_limits.iter().filter(|r| r.window == "primary").collect();
    let resets: BTreeSet<i64> = primary.iter().filter_map(|r| r.resets_at).collect();
    assert!(resets.len() >= 3, "{resets:?}");
    assert!(
        resets.iter().zip(resets.iter().skip(1)).any(|(a, b)| b - a == 1),
        "a jittered reset: {resets:?}"
    );
    assert!(expected.rate_limits.iter().any(|r| r.window == "secondary"));
    assert!(primary.len() > expected.rate_limits.len() - primary.len(), "some counts have no secondary");
}

#[test]
fn each_call_has_the_tier_its_line_writes_and_costs_the_price_of_that_tier() {
    let (dir, expected) = home();
    let got = sql_rows("select file, line, harness, service_tier, cost_usd from calls");
    let calls: BTreeMap<(String, u64), &ExpectedCall> =
        expected.calls.iter().map(|c| ((c.file.clone(), c.line), c)).collect();
    assert_eq!(got.len(), calls.len());
    let mut tiers: BTreeMap<Option<String>, usize> = BTreeMap::new();
    for row in &got {
        let key = (relative(dir.path(), &row["file"]), row["line"].as_u64().unwrap());
        let call = calls.get(&key).unwrap_or_else(|| panic!("no call in the tally at {key:?}"));
        let want_tier = expected.service_tiers.get(&key).cloned();
        let tier = row["service_tier"].as_str().map(str::to_string);
        assert_eq!(tier, want_tier, "{key:?}");
        let want = cost_at_tier(call, want_tier.as_deref());
        match (row["cost_usd"].as_f64(), want) {
            (Some(got), Some(want)) => assert!(close(got, want), "{key:?} at {want_tier:?}: {got} vs {want}"),
            (got, want) => assert_eq!(got, want, "{key:?}"),
        }
        *tiers.entry(want_tier).or_default() += 1;
    }
    // Claude's calls at several tiers, and calls of unknown tier (Codex's, Gemini's, some Claude).
    for tier in [Some("standard"), Some("fast"), Some("priority"), None] {
        assert!(tiers.get(&tier.map(str::to_string)).is_some_and(|n| *n > 2), "{tier:?}: {tiers:?}");
    }
}

#[test]
fn the_spend_reports_count_the_calls_of_unknown_tier() {
    let (dir, expected) = home();
    let unknown = expected
        .calls
        .iter()
        .filter(|c| !expected.service_tiers.contains_key(&(c.file.clone(), c.line)))
        .count();
    let claude_unknown = expected
        .calls
        .iter()
        .filter(|c| c.harness == "claude" && !expected.service_tiers.contains_key(&(c.file.clone(), c.line)))
        .count();
    assert!(claude_unknown > 0 && unknown > claude_unknown, "{claude_unknown} of {unknown}");
    let out = command(dir.path()).args(["daily", "--json"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["unknownTierCalls"].as_u64(), Some(unknown as u64));
    let out = command(dir.path()).env("COLUMNS", "200").arg("daily").arg(dir.path()).output().unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    let note = format!("{unknown} calls of unknown tier priced at the standard rate");
    assert!(table.replace(',', "").contains(&note), "{table}");
    // The report page says it in its one line of notes.
    let page = dir.path().join("quota-report.html");
    let out = command(dir.path()).args(["report", "--out"]).arg(&page).arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html.find("data-figure=\"unknown_tier_calls\"").expect("the page's note");
    assert!(html[at..].replace(',', "").contains(&note), "{}", &html[at..at + 200]);
}

/// An observation of a window: (ts, file, line, resets_at, used_percent, plan).
type Seen = (String, String, u64, i64, Option<f64>, Option<String>);

/// A window of `quota_burn` worked out from the tally.
#[derive(Debug, Default)]
struct Window {
    seen: Vec<Seen>,
}

#[test]
fn quota_burn_gives_each_window_its_growth_and_spend_as_the_tally_has_them() {
    let (dir, expected) = home();
    // Each (window, length)'s observations in reset order, a window a run of resets at most 60
    // seconds apart.
    let mut by_kind: BTreeMap<(String, i64), Vec<&ExpectedRateLimit>> = BTreeMap::new();
    for r in expected.rate_limits.iter().filter(|r| r.resets_at.is_some() && r.window_minutes.is_some()) {
        by_kind.entry((r.window.clone(), r.window_minutes.unwrap())).or_default().push(r);
    }
    let mut windows: Vec<((String, i64), Window)> = Vec::new();
    for (kind, mut seen) in by_kind {
        seen.sort_by(|a, b| {
            (a.resets_at, &a.ts, &a.file, a.line).cmp(&(b.resets_at, &b.ts, &b.file, b.line))
        });
        let mut previous: Option<i64> = None;
        for r in seen {
            let reset = r.resets_at.unwrap();
            if previous.is_none_or(|p| reset - p > 60) {
                windows.push((kind.clone(), Window::default()));
            }
            previous = Some(reset);
            let window = &mut windows.last_mut().unwrap().1;
            window.seen.push((r.ts.clone(), r.file.clone(), r.line, reset, r.used_percent, r.plan.clone()));
        }
    }
    let mut want: Vec<(String, f64)> = Vec::new();
    for ((window, minutes), mut w) in windows {
        w.seen.sort_by(|a, b| (&a.0, &a.1, a.2).cmp(&(&b.0, &b.1, b.2)));
        let resets_at = w.seen.last().unwrap().3;
        let percents: Vec<f64> = w.seen.iter().filter_map(|s| s.4).collect();
        let plan = w.seen.iter().rev().find_map(|s| s.5.clone());
        let span = resets_at - minutes * 60..resets_at;
        let calls: Vec<&ExpectedCall> = expected
            .calls
            .iter()
            .filter(|c| c.harness == "codex" && span.contains(&seconds(&c.ts)))
            .collect();
        let sessions: BTreeSet<&str> = calls.iter().map(|c| c.session_id.as_str()).collect();
        let cost: f64 = calls.iter().map(|c| cost_at_tier(c, None).unwrap()).sum();
        let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
        for t in expected.tool_calls.iter().filter(|t| t.harness == "codex" && span.contains(&seconds(&t.ts)))
        {
            *tools.entry(t.tool.as_str()).or_default() += 1;
        }
        let mut tools: Vec<(&str, usize)> = tools.into_iter().collect();
        tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let top_tools: Vec<String> = tools.iter().take(3).map(|(t, n)| format!("{t} {n}")).collect();
        let row = format!(
            "codex {plan:?} {window} {minutes} {resets_at} {} {} {:?} {:?} {} {} {:?}",
            seconds(&w.seen.first().unwrap().0),
            seconds(w.seen.iter().map(|s| &s.0).max().unwrap()),
            percents.first(),
            percents.last(),
            sessions.len(),
            calls.len(),
            (!top_tools.is_empty()).then(|| top_tools.join(", ")),
        );
        want.push((row, cost));
    }
    let out = command(dir.path())
        .args(["query", "quota_burn", "--format", "ndjson"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<(String, f64)> = parse_ndjson(&String::from_utf8_lossy(&out.stdout))
        .iter()
        .map(|r| {
            let time = |c: &str| seconds(r[c].as_str().unwrap());
            let row = format!(
                "{} {:?} {} {} {} {} {} {:?} {:?} {} {} {:?}",
                r["harness"].as_str().unwrap(),
                r["plan"].as_str(),
                r["window"].as_str().unwrap(),
                r["window_minutes"],
                time("resets_at"),
                time("first_seen"),
                time("last_seen"),
                r["start_percent"].as_f64(),
                r["end_percent"].as_f64(),
                r["sessions"],
                r["calls"],
                r["top_tools"].as_str(),
            );
            (row, r["cost_usd"].as_f64().unwrap_or(f64::NAN))
        })
        .collect();
    let mut got = got;
    got.sort_by(|a, b| a.0.cmp(&b.0));
    want.sort_by(|a, b| a.0.cmp(&b.0));
    let rows = |list: &[(String, f64)]| list.iter().map(|(row, _)| row.clone()).collect::<Vec<_>>();
    assert_eq!(rows(&got), rows(&want));
    for ((row, got), (_, want)) in got.iter().zip(&want) {
        assert!((got - want).abs() < 1e-6, "{row}: {got} vs {want}");
    }
    // Several 5-hour windows, each growing from its first observation to its last; one with
    // calls in it.
    let primary: Vec<&(String, f64)> = want.iter().filter(|(row, _)| row.contains(" primary ")).collect();
    assert!(primary.len() >= 3, "windows that reset: {want:?}");
    assert!(want.iter().any(|(_, cost)| *cost > 0.0));
}
