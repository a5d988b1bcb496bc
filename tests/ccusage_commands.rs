//! `txq daily|weekly|monthly|session|blocks`, ccusage's commands: their JSON in ccusage's shape
//! checked figure by figure against the generator's tally bucketed here (never by SQL), local
//! days, the flags people script with, tables that fit 80 and 120 columns, the block under way;
//! and, where ccusage is installed (`.ci/run` installs it), ccusage's own JSON of every report
//! beside txq's on one home: the same keys at every level, the same figures where the accounting
//! agrees (docs/harnesses.md lists where it deliberately does not).

use crate::util::command;
use chrono::{DateTime, Datelike, Duration, DurationRound, Utc};
use datafusion::arrow::array::timezone::Tz;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;
use txq::generate::harness::ExpectedCall;
use txq::generate::{HarnessOptions, write_harness_home};

/// A generated home of the three harnesses, traps included, and the tally of its calls.
struct Home {
    dir: tempfile::TempDir,
    calls: Vec<ExpectedCall>,
    /// Each session's working directory, by harness, session and parent.
    cwds: BTreeMap<(String, String, Option<String>), Option<String>>,
}

fn home() -> &'static Home {
    static HOME: OnceLock<Home> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let options = HarnessOptions { sessions: 14, keep_rows: true, ..HarnessOptions::default() };
        let expected = write_harness_home(dir.path(), &options).unwrap();
        let cwds = expected
            .sessions
            .iter()
            .map(|s| ((s.harness.clone(), s.session_id.clone(), s.parent_session_id.clone()), s.cwd.clone()))
            .collect();
        Home { dir, calls: expected.calls, cwds }
    })
}

/// `txq ARGS... HOME` with `env` set, its stdout; it must succeed.
fn run(args: &[&str], env: &[(&str, &str)], home: &Path) -> String {
    let mut cmd = command(home);
    cmd.args(args).arg(home).stdin(std::process::Stdio::null());
    for (name, value) in env {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "txq {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn report_json(args: &[&str], env: &[(&str, &str)]) -> Value {
    let text = run(args, env, home().dir.path());
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("txq {args:?}: {e}: {text}"))
}

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

/// The tally's calls summed by `key` in ccusage's split: [uncached input, output, cache write,
/// cache read, calls], and the models.
fn bucketed(key: impl Fn(&ExpectedCall) -> String) -> BTreeMap<String, ([i64; 5], BTreeSet<String>)> {
    let mut sums: BTreeMap<String, ([i64; 5], BTreeSet<String>)> = BTreeMap::new();
    for call in &home().calls {
        let (s, models) = sums.entry(key(call)).or_default();
        s[0] += call.input_tokens - call.cache_read_tokens - call.cache_write_tokens;
        s[1] += call.output_tokens;
        s[2] += call.cache_write_tokens;
        s[3] += call.cache_read_tokens;
        s[4] += 1;
        models.insert(call.model.clone());
    }
    sums
}

/// A row of ccusage's JSON as [uncached input, output, cache write, cache read, calls].
fn figures(row: &Value) -> [i64; 5] {
    let n = |key: &str| row[key].as_i64().unwrap_or_else(|| panic!("{key} in {row}"));
    [n("inputTokens"), n("outputTokens"), n("cacheCreationTokens"), n("cacheReadTokens"), n("calls")]
}

fn check_periods(report: &Value, list: &str, expected: &BTreeMap<String, ([i64; 5], BTreeSet<String>)>) {
    let rows = report[list].as_array().unwrap_or_else(|| panic!("no {list} in {report}"));
    let got: BTreeMap<String, ([i64; 5], BTreeSet<String>)> = rows
        .iter()
        .map(|row| {
            let models =
                row["modelsUsed"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string());
            (row["period"].as_str().unwrap().to_string(), (figures(row), models.collect()))
        })
        .collect();
    assert_eq!(&got, expected, "{list}");
    let mut total = [0i64; 5];
    for (sums, _) in expected.values() {
        (0..5).for_each(|i| total[i] += sums[i]);
    }
    assert_eq!(figures(&report["totals"]), total, "{list} totals");
    assert_eq!(report["totals"]["totalTokens"].as_i64().unwrap(), total[..4].iter().sum::<i64>());
    // Each row's breakdowns add up to it, costliest first.
    for row in rows {
        let breakdowns = row["modelBreakdowns"].as_array().unwrap();
        let mut sum = [0i64; 5];
        for b in breakdowns {
            let f = figures(b);
            (0..5).for_each(|i| sum[i] += f[i]);
        }
        assert_eq!(sum, figures(row), "{row}");
        let costs: Vec<f64> = breakdowns.iter().map(|b| b["cost"].as_f64().unwrap()).collect();
        assert!(costs.windows(2).all(|w| w[0] >= w[1]), "{costs:?}");
    }
}

#[test]
fn daily_weekly_and_monthly_json_split_each_periods_calls_as_ccusage_does() {
    let day = |c: &ExpectedCall| utc(&c.ts).date_naive().to_string();
    check_periods(&report_json(&["daily", "--json"], &[]), "daily", &bucketed(day));
    let week = |c: &ExpectedCall| {
        let d = utc(&c.ts).date_naive();
        (d - Duration::days(i64::from(d.weekday().num_days_from_monday()))).to_string()
    };
    check_periods(&report_json(&["weekly", "-j"], &[]), "weekly", &bucketed(week));
    let month = |c: &ExpectedCall| utc(&c.ts).format("%Y-%m").to_string();
    let monthly = report_json(&["monthly", "--json"], &[]);
    check_periods(&monthly, "monthly", &bucketed(month));
    assert_eq!(monthly["timeZone"], "UTC");
    for row in monthly["monthly"].as_array().unwrap() {
        assert_eq!(row["agent"], "all");
        let harnesses: BTreeSet<&str> = home().calls.iter().map(|c| c.harness.as_str()).collect();
        let agents: BTreeSet<&str> =
            row["metadata"]["agents"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(agents, harnesses);
    }
}

#[test]
fn by_agent_splits_each_day_by_harness() {
    let report = report_json(&["daily", "--json", "--by-agent"], &[]);
    let expected = bucketed(|c| format!("{} {}", utc(&c.ts).date_naive(), c.harness));
    let mut got = BTreeMap::new();
    for row in report["daily"].as_array().unwrap() {
        for agent in row["agents"].as_array().unwrap() {
            let models =
                agent["modelsUsed"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string());
            let key = format!("{} {}", row["period"].as_str().unwrap(), agent["agent"].as_str().unwrap());
            got.insert(key, (figures(agent), models.collect()));
        }
    }
    assert_eq!(got, expected);
}

#[test]
fn days_are_the_machines_local_days_or_the_zone_asked_for() {
    let tokyo: Tz = "Asia/Tokyo".parse().unwrap();
    let in_tokyo = |c: &ExpectedCall| utc(&c.ts).with_timezone(&tokyo).date_naive().to_string();
    // TZ is the machine's zone; --timezone and the config file's `timezone` say otherwise.
    let by_tz = report_json(&["daily", "--json"], &[("TZ", "Asia/Tokyo")]);
    check_periods(&by_tz, "daily", &bucketed(in_tokyo));
    assert_eq!(by_tz["timeZone"], "Asia/Tokyo");
    check_periods(&report_json(&["daily", "--json", "-z", "Asia/Tokyo"], &[]), "daily", &bucketed(in_tokyo));
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("config.toml");
    std::fs::write(&file, "timezone = \"Asia/Tokyo\"\n").unwrap();
    let by_config = report_json(&["daily", "--json"], &[("TXQ_CONFIG", file.to_str().unwrap())]);
    check_periods(&by_config, "daily", &bucketed(in_tokyo));
    // The flag is over the config file.
    let flag = report_json(&["daily", "--json", "-z", "UTC"], &[("TXQ_CONFIG", file.to_str().unwrap())]);
    assert_eq!(flag["timeZone"], "UTC");
    // The table says which zone it used.
    let table = run(&["daily"], &[("TZ", "Asia/Tokyo")], home().dir.path());
    assert!(table.lines().next().unwrap().contains("(time zone Asia/Tokyo)"), "{table}");
}

#[test]
fn since_until_last_order_and_no_cost_narrow_and_shape_the_report() {
    let days: Vec<String> = bucketed(|c| utc(&c.ts).date_naive().to_string()).into_keys().collect();
    assert!(days.len() >= 2, "{days:?}");
    let since = days[1].replace('-', "");
    let narrowed = report_json(&["daily", "-j", "-s", &since, "-u", &days[1]], &[]);
    let periods: Vec<&str> =
        narrowed["daily"].as_array().unwrap().iter().map(|r| r["period"].as_str().unwrap()).collect();
    assert_eq!(periods, [days[1].as_str()]);
    let desc = report_json(&["daily", "-j", "-o", "desc"], &[]);
    let periods: Vec<String> =
        desc["daily"].as_array().unwrap().iter().map(|r| r["period"].as_str().unwrap().to_string()).collect();
    assert_eq!(periods, days.iter().rev().cloned().collect::<Vec<_>>());
    // Blocks newest first: the same blocks (and idle gaps), turned round.
    let ids = |report: &Value| -> Vec<String> {
        report["blocks"].as_array().unwrap().iter().map(|b| format!("{} {}", b["harness"], b["id"])).collect()
    };
    let (asc, desc) =
        (ids(&report_json(&["blocks", "-j"], &[])), ids(&report_json(&["blocks", "-j", "-o", "desc"], &[])));
    assert!(asc.len() >= 2, "{asc:?}");
    assert_eq!(desc, asc.iter().rev().cloned().collect::<Vec<_>>());
    // The generated days are long past: the last period holds none of them.
    let last = report_json(&["daily", "-j", "--last", "1"], &[]);
    assert_eq!(last["daily"], json!([]));
    let no_cost = run(&["daily", "-j", "--no-cost"], &[], home().dir.path());
    assert!(!no_cost.contains("Cost") && !no_cost.contains("\"cost\""), "{no_cost}");
    // ccusage's --mode: calculate is what txq does; display is refused, saying why.
    run(&["daily", "-j", "-m", "calculate"], &[], home().dir.path());
    let display = command(home().dir.path()).args(["daily", "--mode", "display"]).output().unwrap();
    assert_eq!(display.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&display.stderr).contains("txq prices every call from its tokens"));
    // Nothing to report: a title and a line that says so; JSON with no rows and zero totals.
    let empty = tempfile::tempdir().unwrap();
    let table = run(&["daily", "-q"], &[], empty.path());
    assert_eq!(table, "Spend per day (time zone UTC)\nNo calls in this period.\n");
    let json: Value = serde_json::from_str(&run(&["weekly", "-j", "-q"], &[], empty.path())).unwrap();
    assert_eq!((json["weekly"].clone(), json["totals"]["totalTokens"].clone()), (json!([]), json!(0)));
    // The flat rows of the canned query stay: --format.
    let flat = run(&["daily", "--format", "ndjson"], &[], home().dir.path());
    assert!(flat.lines().all(|l| l.contains("\"harness\"") && l.contains("\"day\"")), "{flat}");
}

/// A call's project as ccusage shows one: its session's working directory's last two parts.
fn project_of(call: &ExpectedCall) -> String {
    let key = (call.harness.clone(), call.session_id.clone(), call.parent_session_id.clone());
    let cwd = home().cwds.get(&key).cloned().flatten().unwrap_or_default();
    let parts: Vec<&str> = cwd.split('/').filter(|p| !p.is_empty()).collect();
    parts[parts.len().saturating_sub(2)..].join("/")
}

#[test]
fn instances_split_each_period_by_project_and_project_keeps_one() {
    let expected = bucketed(|c| format!("{} {}", project_of(c), utc(&c.ts).date_naive()));
    let report = report_json(&["daily", "--json", "--instances"], &[]);
    let mut got = BTreeMap::new();
    for (project, rows) in report["projects"].as_object().unwrap() {
        for row in rows.as_array().unwrap() {
            assert_eq!(row["project"], json!(project));
            assert_eq!(row["date"], row["period"]);
            let models =
                row["modelsUsed"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string());
            got.insert(
                format!("{project} {}", row["period"].as_str().unwrap()),
                (figures(row), models.collect()),
            );
        }
    }
    assert_eq!(got, expected);
    // --project keeps one project's calls, named as ccusage's Claude folders name it too.
    let project = home().calls.iter().map(project_of).find(|p| p.contains('/')).unwrap();
    let mut want = [0i64; 5];
    for ((name, _), (sums, _)) in expected.iter().map(|(k, v)| (k.rsplit_once(' ').unwrap(), v)) {
        if name == project {
            (0..5).for_each(|i| want[i] += sums[i]);
        }
    }
    let one = report_json(&["weekly", "--json", "--project", &project], &[]);
    assert_eq!(figures(&one["totals"]), want, "{project}");
}

#[test]
fn the_session_report_names_each_session_as_its_file_does_with_its_project() {
    let report = report_json(&["session", "--json"], &[]);
    let rows = report["session"].as_array().unwrap();
    let mut renamed = 0;
    for row in rows {
        let period = row["period"].as_str().unwrap();
        let file =
            home().calls.iter().find(|c| c.harness == row["agent"] && c.session_id == row["sessionId"]);
        let file = file.unwrap_or_else(|| panic!("no call of {row}")).file.clone();
        // The file's name without .jsonl, or (Codex) its path under sessions/.
        let stem = file.trim_end_matches(".zst").trim_end_matches(".jsonl");
        assert!(stem.ends_with(period) || row["agent"] == "gemini", "{period} is not named by {file}");
        renamed += usize::from(
            period != row["sessionId"] && row["agent"] == "claude" && !period.starts_with("agent-"),
        );
        let cwd = row["cwd"].as_str().unwrap_or("");
        let parts: Vec<&str> = cwd.split('/').filter(|p| !p.is_empty()).collect();
        assert_eq!(row["project"].as_str().unwrap_or(""), parts[parts.len().saturating_sub(2)..].join("/"));
    }
    assert_eq!(renamed, 1, "the session whose file names it otherwise than its lines");
    // The sessions cover every call, each once.
    let expected = bucketed(|_| "all".into());
    let total: [i64; 5] = figures(&report["totals"]);
    assert_eq!(total, expected["all"].0);
    // --id finds a session by its file's name or its lines' id.
    let first = &rows[0];
    for id in [first["period"].as_str().unwrap(), first["sessionId"].as_str().unwrap()] {
        let one = report_json(&["session", "-j", "--id", id], &[]);
        assert_eq!(one["session"].as_array().unwrap().len(), 1, "{id}");
    }
    // Costliest first.
    let costs: Vec<f64> = rows.iter().map(|r| r["totalCost"].as_f64().unwrap()).collect();
    assert!(costs.windows(2).all(|w| w[0] >= w[1]), "{costs:?}");
}

/// Each line's width on a terminal (the tables hold no wide characters but what the data has).
fn width(line: &str) -> usize {
    line.chars().count()
}

#[test]
fn every_report_table_fits_80_and_120_columns_and_ends_with_its_total() {
    for columns in ["80", "120"] {
        for args in [
            &["daily"][..],
            &["daily", "--breakdown"],
            &["weekly", "-b"],
            &["monthly"],
            &["session"],
            &["session", "-b"],
            &["blocks"],
            &["daily", "--compact"],
        ] {
            let table = run(args, &[("COLUMNS", columns)], home().dir.path());
            let limit: usize = columns.parse().unwrap();
            for line in table.lines() {
                assert!(width(line) <= limit, "{args:?} at {columns}: {line:?} is {} wide", width(line));
            }
            let json_args: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| a.starts_with(char::is_alphabetic))
                .chain(["--json"])
                .collect();
            let report = report_json(&json_args, &[]);
            let cost = match args[0] {
                "blocks" => {
                    report["blocks"].as_array().unwrap().iter().map(|b| b["costUSD"].as_f64().unwrap()).sum()
                }
                _ => report["totals"]["totalCost"].as_f64().unwrap(),
            };
            let total = table
                .lines()
                .find(|l| l.starts_with("│ Total"))
                .unwrap_or_else(|| panic!("{args:?}: {table}"));
            assert!(total.contains(&format!("${cost:.2}")), "{args:?}: {total} has not {cost}");
            if args[0] != "blocks" {
                assert!(total.contains(&thousands(figures(&report["totals"])[0])), "{total}");
            }
        }
    }
}

/// `n` with a comma every three digits.
fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A Claude Code assistant line of one response.
fn claude_line(n: usize, ts: DateTime<Utc>, input: i64, output: i64) -> String {
    json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/ana/src/now",
        "sessionId": "a11ce000-0000-4000-8000-000000000001", "version": "2.1.210", "type": "assistant",
        "requestId": format!("req_now{n}"),
        "message": {"id": format!("msg_now{n}"), "model": "claude-sonnet-4-6", "role": "assistant",
                    "type": "message", "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": input, "output_tokens": output,
                              "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}},
        "uuid": format!("00000000-0000-4000-8000-{n:012}"),
        "timestamp": ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    })
    .to_string()
}

#[test]
fn blocks_active_shows_the_block_under_way_with_its_burn_rate_and_projection() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(".claude/projects/-home-ana-src-now");
    std::fs::create_dir_all(&folder).unwrap();
    let now = Utc::now();
    // Two calls 40 minutes apart, the last 10 minutes ago; an old one days before.
    let (first, last) = (now - Duration::minutes(50), now - Duration::minutes(10));
    let lines = [
        claude_line(0, now - Duration::days(3), 100, 10),
        claude_line(1, first, 3000, 200),
        claude_line(2, last, 1000, 600),
    ];
    std::fs::write(folder.join("a11ce000-0000-4000-8000-000000000001.jsonl"), lines.join("\n") + "\n")
        .unwrap();
    let text = run(&["blocks", "--active", "--json"], &[], dir.path());
    let report: Value = serde_json::from_str(&text).unwrap();
    let blocks = report["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{report}");
    let block = &blocks[0];
    assert_eq!(block["isActive"], true);
    assert_eq!(block["entries"], 2);
    assert_eq!(block["totalTokens"], 4800);
    let start = utc(block["startTime"].as_str().unwrap());
    assert_eq!(start, first.duration_trunc(Duration::hours(1)).unwrap());
    let end = utc(block["endTime"].as_str().unwrap());
    assert_eq!(end - start, Duration::hours(5));
    // 4800 tokens over 40 minutes; the indicator's input and output alone are the same here.
    assert!((block["burnRate"]["tokensPerMinute"].as_f64().unwrap() - 120.0).abs() < 1e-9, "{block}");
    let cost = block["costUSD"].as_f64().unwrap();
    assert!((block["burnRate"]["costPerHour"].as_f64().unwrap() - cost * 1.5).abs() < 1e-9, "{block}");
    let remaining = block["projection"]["remainingMinutes"].as_i64().unwrap();
    let left = (end - Utc::now()).num_minutes();
    assert!((remaining - left).abs() <= 1, "{remaining} against {left}");
    assert_eq!(block["projection"]["totalTokens"], json!((4800.0 + 120.0 * remaining as f64).round() as i64));
    // A token limit: where the projection stands against it.
    let text = run(&["blocks", "-a", "-j", "-t", "5000"], &[], dir.path());
    let limited: Value = serde_json::from_str(&text).unwrap();
    let status = &limited["blocks"][0]["tokenLimitStatus"];
    let projected = limited["blocks"][0]["projection"]["totalTokens"].as_i64().unwrap();
    assert_eq!(status["limit"], 5000);
    assert_eq!(status["projectedUsage"], projected);
    assert_eq!(
        status["status"],
        if projected > 5000 {
            "exceeds"
        } else if projected > 4000 {
            "warning"
        } else {
            "ok"
        }
    );
    // `max`: the most an earlier block used, the old call's 110 tokens.
    let text = run(&["blocks", "-a", "-j", "--token-limit", "max"], &[], dir.path());
    let limited: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(limited["blocks"][0]["tokenLimitStatus"]["limit"], 110);
    // The table says the time left, the burn rate and the projection.
    let table = run(&["blocks", "--active"], &[], dir.path());
    for said in ["left", "burn rate", "/hour", "projected"] {
        assert!(table.contains(said), "{said}: {table}");
    }
    // With no block under way, a line says so.
    let old = tempfile::tempdir().unwrap();
    let folder = old.path().join(".claude/projects/-x");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("b.jsonl"), claude_line(0, now - Duration::days(2), 1, 1) + "\n").unwrap();
    assert!(run(&["blocks", "-a"], &[], old.path()).contains("No block under way."));
}

#[test]
fn a_hostile_name_in_the_data_is_escaped_and_breaks_no_table() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(".claude/projects/-evil");
    std::fs::create_dir_all(&folder).unwrap();
    let line = json!({
        "type": "assistant", "sessionId": "e0000000-0000-4000-8000-000000000001",
        "cwd": "/home/ana/evil\n\u{1b}[31mred", "requestId": "req_evil",
        "timestamp": "2026-09-02T10:00:00.000Z", "uuid": "00000000-0000-4000-8000-00000000e001",
        "message": {"id": "msg_evil", "model": "model\u{1b}]0;title\u{7}", "role": "assistant",
                    "content": [{"type": "text", "text": "ok"}],
                    "usage": {"input_tokens": 10, "output_tokens": 5}}
    });
    std::fs::write(folder.join("e0000000-0000-4000-8000-000000000001.jsonl"), format!("{line}\n")).unwrap();
    for args in [&["daily", "-q", "--instances"][..], &["session", "-q"], &["blocks", "-q"]] {
        let table = run(args, &[("COLUMNS", "80")], dir.path());
        assert!(!table.contains('\u{1b}') && !table.contains('\u{7}'), "{args:?}: {table:?}");
        assert!(table.contains("\\x1b"), "{args:?}: {table}");
        assert!(table.lines().all(|l| width(l) <= 80), "{args:?}: {table}");
        // Every line from the box's top to its bottom is a line of the box: no name broke one.
        let lines: Vec<&str> = table.lines().collect();
        let top = lines.iter().position(|l| l.starts_with('┌')).unwrap();
        let bottom = lines.iter().rposition(|l| l.starts_with('└')).unwrap();
        assert!(lines[top..=bottom].iter().all(|l| l.starts_with(['│', '├', '┌', '└'])), "{args:?}: {table}");
    }
}

/// ccusage, where it is installed: its path; else the test is skipped, saying so, unless
/// `TXQ_REQUIRE_CCUSAGE=1` (CI), where it fails.
fn ccusage() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("ccusage")).find(|p| p.is_file()));
    if found.is_none() {
        assert!(
            std::env::var_os("TXQ_REQUIRE_CCUSAGE").is_none_or(|v| v != "1"),
            "TXQ_REQUIRE_CCUSAGE=1 and ccusage is not on PATH (npm install -g ccusage@20.0.24 @ccusage/ccusage-linux-x64@20.0.24)"
        );
        eprintln!("SKIPPED: ccusage is not on PATH");
    }
    found
}

/// Every key path of `value` (`.daily[].modelBreakdowns[].cost`).
fn key_paths(value: &Value, at: String, into: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let path = format!("{at}.{key}");
                into.insert(path.clone());
                key_paths(v, path, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| key_paths(v, format!("{at}[]"), into)),
        _ => {}
    }
}

#[test]
fn ccusages_json_and_txqs_have_the_same_keys_and_agree_where_the_accounting_does() {
    let Some(ccusage) = ccusage() else { return };
    let dir = tempfile::tempdir().unwrap();
    let options = HarnessOptions { sessions: 10, damage: false, traps: false, ..HarnessOptions::default() };
    write_harness_home(dir.path(), &options).unwrap();
    let peer = |args: &[&str]| -> Value {
        let out = std::process::Command::new(&ccusage)
            .args(args)
            .args(["--json", "--offline"])
            .env("HOME", dir.path())
            .env("TZ", "UTC")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "ccusage {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let ours = |args: &[&str]| -> Value {
        let mut all = args.to_vec();
        all.extend(["--json", "-q"]);
        serde_json::from_str(&run(&all, &[], dir.path())).unwrap()
    };
    for report in ["daily", "weekly", "monthly", "session", "blocks"] {
        let (theirs, mine) = (peer(&[report]), ours(&[report]));
        let (mut their_keys, mut my_keys) = (BTreeSet::new(), BTreeSet::new());
        key_paths(&theirs, String::new(), &mut their_keys);
        key_paths(&mine, String::new(), &mut my_keys);
        let missing: Vec<&String> = their_keys.difference(&my_keys).collect();
        assert!(missing.is_empty(), "{report}: keys ccusage writes and txq does not: {missing:?}");
    }
    // Per session: Codex's figures agree in full but for the cost of cache writes, Gemini's but
    // for the output (txq counts thoughts in it); Claude Code's do not (ccusage counts a subagent's calls in its parent's
    // session, and more than its own blocks report does): docs/harnesses.md#ccusage.
    let (theirs, mine) = (peer(&["session"]), ours(&["session"]));
    let by_name = |report: &Value| -> BTreeMap<String, Value> {
        let rows = report["session"].as_array().unwrap().iter();
        rows.map(|s| {
            (format!("{} {}", s["agent"].as_str().unwrap(), s["period"].as_str().unwrap()), s.clone())
        })
        .collect()
    };
    let (theirs, mine) = (by_name(&theirs), by_name(&mine));
    let mut compared = BTreeMap::new();
    for (key, row) in &mine {
        let agent = row["agent"].as_str().unwrap();
        let Some(their) = theirs.get(key).filter(|_| agent != "claude") else { continue };
        let mut fields = vec!["inputTokens", "cacheReadTokens", "cacheCreationTokens"];
        if agent == "codex" {
            fields.extend(["outputTokens", "totalTokens"]);
        }
        // ccusage prices some OpenAI models' cache writes above input, which OpenAI does not.
        if agent == "gemini" || row["cacheCreationTokens"] == 0 {
            fields.push("totalCost");
            *compared.entry(format!("{agent} cost")).or_insert(0) += 1;
        }
        for field in fields {
            let (a, b) = (row[field].as_f64().unwrap(), their[field].as_f64().unwrap());
            assert!((a - b).abs() < 1e-5, "{key} {field}: txq {a}, ccusage {b}");
        }
        *compared.entry(agent.to_string()).or_insert(0) += 1;
    }
    for what in ["codex", "gemini", "codex cost", "gemini cost"] {
        assert!(compared.get(what) >= Some(&3), "compared {compared:?}");
    }
    // Claude Code's blocks agree with ccusage's: the same starts, tokens and cost.
    let (theirs, mine) = (peer(&["blocks"]), ours(&["blocks"]));
    let their_blocks: BTreeMap<&str, &Value> = theirs["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["isGap"] == false)
        .map(|b| (b["id"].as_str().unwrap(), b))
        .collect();
    let my_blocks: BTreeMap<&str, &Value> = mine["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["isGap"] == false && b["harness"] == "claude")
        .map(|b| (b["id"].as_str().unwrap(), b))
        .collect();
    assert_eq!(my_blocks.keys().collect::<Vec<_>>(), their_blocks.keys().collect::<Vec<_>>());
    for (id, block) in &my_blocks {
        let their = their_blocks[id];
        assert_eq!(block["tokenCounts"], their["tokenCounts"], "{id}");
        let (a, b) = (block["costUSD"].as_f64().unwrap(), their["costUSD"].as_f64().unwrap());
        assert!((a - b).abs() < 1e-5, "{id}: txq {a}, ccusage {b}");
    }
}
