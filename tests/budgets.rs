//! `--budget` on the spend reports, through the real binary on a generated home: the days,
//! weeks and months over a budget, worked out here from the tally's calls priced by hand
//! (`harness_quota::cost_at_tier`, never the SQL's), marked in the JSON and the table, named on
//! stderr, and exit code 4 (3 stays "results could not be written"); within it, exit 0; a
//! budget of another period, or on a report that has none, refused with exit 2.

use crate::harness_quota::{cost_at_tier, home};
use crate::util::{Output, command};
use chrono::{DateTime, Datelike, Utc};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Each period's cost from the tally: its calls priced at their tiers, those with no price adding
/// nothing (as a report's cost holds the priced calls).
fn tallied(period: impl Fn(DateTime<Utc>) -> String) -> BTreeMap<String, f64> {
    let (_, expected) = home();
    let mut costs = BTreeMap::new();
    for call in &expected.calls {
        let tier = expected.service_tiers.get(&(call.file.clone(), call.line)).map(String::as_str);
        let ts = DateTime::parse_from_rfc3339(&call.ts).unwrap().with_timezone(&Utc);
        *costs.entry(period(ts)).or_insert(0.0) += cost_at_tier(call, tier).unwrap_or(0.0);
    }
    costs
}

fn day(ts: DateTime<Utc>) -> String {
    ts.date_naive().to_string()
}

/// A budget halfway between two periods' costs, so that no rounding moves a period across it,
/// and the periods over it.
fn between(costs: &BTreeMap<String, f64>) -> (f64, BTreeSet<String>) {
    let mut sorted: Vec<f64> = costs.values().copied().collect();
    sorted.sort_by(f64::total_cmp);
    assert!(sorted.len() >= 3, "a home of several periods: {costs:?}");
    let at = sorted.len() / 2;
    let budget = (sorted[at - 1] + sorted[at]) / 2.0;
    assert!(sorted[at] - sorted[at - 1] > 0.01, "two periods a cent apart at least: {sorted:?}");
    (budget, costs.iter().filter(|(_, c)| **c > budget).map(|(k, _)| k.clone()).collect())
}

fn run(args: &[&str]) -> Output {
    let dir = home().0.path();
    let out = command(dir).args(args).arg(dir).stdin(std::process::Stdio::null()).output().unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn the_days_over_a_daily_budget_are_marked_named_and_exit_4_as_the_tally_has_them() {
    let costs = tallied(day);
    let (budget, over) = between(&costs);
    let flag = format!("{budget:.4}usd/day");
    let out = run(&["daily", "--json", "--budget", &flag]);
    assert_eq!(out.code, 4, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let listed: BTreeSet<String> = report["budget"]["periodsOver"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().into())
        .collect();
    assert_eq!(listed, over);
    assert_eq!(report["budget"]["periods"].as_u64(), Some(costs.len() as u64));
    assert_eq!(report["budget"]["per"], "day");
    for row in report["daily"].as_array().unwrap() {
        let period = row["period"].as_str().unwrap();
        assert_eq!(row["budget"]["over"].as_bool(), Some(over.contains(period)), "{period}");
        let percent = costs[period] / budget * 100.0;
        assert!((row["budget"]["usedPercent"].as_f64().unwrap() - percent).abs() <= 0.051, "{row}");
    }
    let first = over.iter().next().unwrap();
    let said = format!("txq: over budget: {} of {} days spent more than $", over.len(), costs.len());
    assert!(out.stderr.contains(&said) && out.stderr.contains(first.as_str()), "{}", out.stderr);
    // The table marks the same days, and says what its column is.
    let out = run(&["daily", "--budget", &flag]);
    assert_eq!(out.code, 4);
    let marked: BTreeSet<String> = out
        .stdout
        .lines()
        .filter(|l| l.contains("% over"))
        .map(|l| l.trim_start_matches('│').trim().split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(marked, over, "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!("{} of {} days over it", over.len(), costs.len())),
        "{}",
        out.stdout
    );
    // Within the budget: nothing marked, exit 0.
    let most = costs.values().copied().fold(0.0, f64::max);
    let out = run(&["daily", "--json", "--budget", &format!("${:.2}/day", most + 1.0)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["budget"]["periodsOver"], serde_json::json!([]));
    assert!(!out.stderr.contains("over budget"));
}

#[test]
fn weekly_and_monthly_budgets_measure_whole_weeks_and_months_and_the_flat_rows_too() {
    let week = |ts: DateTime<Utc>| {
        let d = ts.date_naive();
        (d - chrono::Days::new(u64::from(d.weekday().num_days_from_monday()))).to_string()
    };
    let weeks = tallied(week);
    let month = |ts: DateTime<Utc>| ts.format("%Y-%m").to_string();
    let months = tallied(month);
    for (report, costs, per) in [("weekly", &weeks, "week"), ("monthly", &months, "month")] {
        let least = costs.values().copied().fold(f64::INFINITY, f64::min);
        let most = costs.values().copied().fold(0.0, f64::max);
        assert!(least > 0.02, "{costs:?}");
        // Below the cheapest period: every one is over.
        let out = run(&[report, "--json", "--budget", &format!("{:.2}/{per}", least / 2.0)]);
        assert_eq!(out.code, 4, "{report}: {}", out.stderr);
        let json: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(json["budget"]["periodsOver"].as_array().unwrap().len(), costs.len(), "{report}");
        let out = run(&[report, "--budget", &format!("{:.2}/{per}", most + 1.0)]);
        assert_eq!(out.code, 0, "{report}: {}", out.stderr);
    }
    // The canned query's own rows (txq query, --format): printed whole, then measured.
    let costs = tallied(day);
    let (budget, over) = between(&costs);
    let flag = format!("{budget:.4}/day");
    for args in [
        vec!["query", "daily", "--format", "csv", "--budget", &flag],
        vec!["daily", "--format", "csv", "--budget", &flag],
    ] {
        let out = run(&args);
        assert_eq!(out.code, 4, "{args:?}: {}", out.stderr);
        assert!(out.stdout.starts_with("day,harness,model,"), "{}", out.stdout);
        let days: BTreeSet<&str> = out.stdout.lines().skip(1).filter_map(|l| l.split(',').next()).collect();
        assert_eq!(days.len(), costs.len());
        assert!(out.stderr.contains(&format!("{} of {} days", over.len(), costs.len())), "{}", out.stderr);
    }
}

#[test]
fn a_block_budget_marks_the_blocks_that_spent_more() {
    let out = run(&["blocks", "--json", "--budget", "0.5/block"]);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    let blocks: Vec<&Value> =
        report["blocks"].as_array().unwrap().iter().filter(|b| b["isGap"] == false).collect();
    let over = blocks.iter().filter(|b| b["costUSD"].as_f64().unwrap() > 0.5).count();
    assert!(over > 0 && over < blocks.len(), "some blocks over, some not: {over} of {}", blocks.len());
    for block in &blocks {
        assert_eq!(block["budget"]["over"].as_bool(), Some(block["costUSD"].as_f64().unwrap() > 0.5));
    }
    assert_eq!(report["budget"]["periodsOver"].as_array().unwrap().len(), over);
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(out.stderr.contains(&format!("{over} of {} blocks", blocks.len())), "{}", out.stderr);
}

#[test]
fn a_budget_of_another_period_or_for_a_report_without_periods_is_refused() {
    for (args, says) in [
        (vec!["daily", "--budget", "5/week"], "txq weekly"),
        (vec!["blocks", "--budget", "5/day"], "txq daily"),
        (vec!["query", "session", "--budget", "5/day"], "daily, weekly, monthly and blocks"),
        (vec!["query", "weekly", "--budget", "5/month"], "txq monthly"),
        (vec!["daily", "--budget", "5usd"], "not a budget"),
        (vec!["daily", "--budget=-1/day"], "not a budget"),
    ] {
        let out = run(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // The session report has no period: it takes no budget.
    assert_eq!(run(&["session", "--budget", "5/day"]).code, 2);
}
