//! The spend reports of `txq query` (daily, weekly, monthly, session, blocks) with `--since`,
//! `--until` and `--timezone`, through the real binary on a generated Claude Code home and a
//! session of calls placed on the edges (a block's very end, an idle gap, a week's and a
//! month's last night), each figure checked against the tally's calls bucketed here in Rust,
//! never by SQL.

use crate::util::{parse_ndjson, txq};
use chrono::{DateTime, Datelike, Duration, NaiveDate, Offset, SecondsFormat, TimeZone, Utc};
use datafusion::arrow::array::timezone::Tz;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;
use txq::generate::{Harness, HarnessOptions, write_harness_home};

/// One call of the corpus, as the tally (or the edge session) has it.
#[derive(Debug, Clone)]
struct Call {
    ts: DateTime<Utc>,
    model: String,
    input: i64,
    read: i64,
    write: i64,
    output: i64,
}

/// One session: its id and when its last line was written.
#[derive(Debug, Clone)]
struct Session {
    session_id: String,
    ended_at: Option<DateTime<Utc>>,
}

struct Corpus {
    home: tempfile::TempDir,
    calls: Vec<Call>,
    sessions: Vec<Session>,
}

fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap_or_else(|e| panic!("{text}: {e}")).with_timezone(&Utc)
}

const EDGE_SESSION: &str = "5e55e55e-0000-4000-8000-000000000001";
const EDGE_MODEL: &str = "claude-sonnet-4-6";

/// The edge session's calls (UTC): a call at a UTC block's very end (13:00 + 5 h); an idle gap of
/// more than 5 hours; a Sunday night that is Monday in Tokyo; September's last night, which is
/// October in Tokyo, its block running on past midnight.
const EDGE_TIMES: &[&str] = &[
    "2026-09-06T13:40:00.000Z",
    "2026-09-06T18:00:00.000Z",
    "2026-09-06T20:30:00.000Z",
    "2026-09-07T03:10:00.000Z",
    "2026-09-30T23:30:00.000Z",
    "2026-10-01T02:00:00.000Z",
];

/// A Claude Code assistant line of one response, as the harness writes it.
fn assistant_line(n: usize, ts: &str, (input, read, write, output): (i64, i64, i64, i64)) -> String {
    json!({
        "parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": "/home/ana/src/edges", "sessionId": EDGE_SESSION, "version": "2.1.210",
        "gitBranch": "main", "type": "assistant", "requestId": format!("req_edge{n:04}"),
        "message": {
            "content": [{"type": "text", "text": "done"}], "id": format!("msg_edge{n:04}"),
            "model": EDGE_MODEL, "role": "assistant", "stop_reason": "end_turn",
            "stop_sequence": null, "type": "message",
            "usage": {"cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                      "input_tokens": input, "output_tokens": output, "service_tier": "standard"}
        },
        "uuid": format!("00000000-0000-4000-8000-{n:012}"), "timestamp": ts
    })
    .to_string()
}

/// A generated Claude Code home of 40 sessions (two UTC days of calls) and the edge session,
/// with every call and session; written once per test process.
fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let home = tempfile::tempdir().unwrap();
        let options = HarnessOptions {
            harnesses: vec![Harness::Claude],
            sessions: 40,
            keep_rows: true,
            ..HarnessOptions::default()
        };
        let expected = write_harness_home(home.path(), &options).unwrap();
        let mut calls: Vec<Call> = expected
            .calls
            .iter()
            .filter(|c| c.harness == "claude")
            .map(|c| Call {
                ts: utc(&c.ts),
                model: c.model.clone(),
                input: c.input_tokens,
                read: c.cache_read_tokens,
                write: c.cache_write_tokens,
                output: c.output_tokens,
            })
            .collect();
        let mut sessions: Vec<Session> = expected
            .sessions
            .iter()
            .filter(|s| s.harness == "claude")
            .map(|s| Session { session_id: s.session_id.clone(), ended_at: s.ended_at.as_deref().map(utc) })
            .collect();
        let mut lines = Vec::new();
        for (n, ts) in EDGE_TIMES.iter().enumerate() {
            let tokens = (3 + n as i64, 1000 * n as i64, 200 + n as i64, 40 + 7 * n as i64);
            lines.push(assistant_line(n, ts, tokens));
            calls.push(Call {
                ts: utc(ts),
                model: EDGE_MODEL.into(),
                input: tokens.0 + tokens.1 + tokens.2,
                read: tokens.1,
                write: tokens.2,
                output: tokens.3,
            });
        }
        let folder = home.path().join(".claude/projects/-home-ana-src-edges");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("{EDGE_SESSION}.jsonl")), lines.join("\n") + "\n").unwrap();
        sessions
            .push(Session { session_id: EDGE_SESSION.into(), ended_at: EDGE_TIMES.last().map(|t| utc(t)) });
        Corpus { home, calls, sessions }
    })
}

fn zone(name: &str) -> Tz {
    name.parse().unwrap()
}

/// The rows of `txq query ARGS...` over the corpus, as NDJSON.
fn report(args: &[&str]) -> Vec<Map<String, Value>> {
    let corpus = corpus();
    let home = corpus.home.path().to_str().unwrap();
    let mut all = vec!["--no-cache", "--format", "ndjson", "query"];
    all.extend_from_slice(args);
    all.push(home);
    let out = txq(&all, corpus.home.path());
    assert_eq!(out.code, 0, "txq query {args:?}: {}", out.stderr);
    parse_ndjson(&out.stdout)
}

/// A time as the reports write it, re-written one way (milliseconds; `Z` for UTC).
fn shown(value: &Value) -> String {
    let text = value.as_str().unwrap_or_else(|| panic!("a time, not {value}"));
    let time = DateTime::parse_from_rfc3339(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `ts` in `zone`, written as [`shown`] writes a report's times.
fn in_zone(ts: DateTime<Utc>, zone: &Tz) -> String {
    ts.with_timezone(zone).fixed_offset().to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn local_day(ts: DateTime<Utc>, zone: &Tz) -> NaiveDate {
    ts.with_timezone(zone).date_naive()
}

/// The start of the hour of `zone` that `ts` falls in: its local time with minutes and seconds
/// cut, as an instant.
fn hour_of(ts: DateTime<Utc>, zone: &Tz) -> DateTime<Utc> {
    let offset = i64::from(zone.offset_from_utc_datetime(&ts.naive_utc()).fix().local_minus_utc());
    let local_seconds = ts.timestamp() + offset;
    DateTime::from_timestamp(local_seconds - local_seconds.rem_euclid(3600) - offset, 0).unwrap()
}

/// Sums over calls: calls, input, cache read, cache write, output.
#[derive(Debug, Default, Clone, Copy)]
struct Sums(u64, i64, i64, i64, i64);

impl Sums {
    fn add(&mut self, call: &Call) {
        *self = Sums(
            self.0 + 1,
            self.1 + call.input,
            self.2 + call.read,
            self.3 + call.write,
            self.4 + call.output,
        );
    }
}

impl std::fmt::Display for Sums {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "calls={} in={} read={} write={} out={}", self.0, self.1, self.2, self.3, self.4)
    }
}

/// A report row's sums, written as [`Sums`] writes them.
fn sums_of(row: &Map<String, Value>) -> String {
    format!(
        "calls={} in={} read={} write={} out={}",
        row["calls"],
        row["input_tokens"],
        row["cache_read_tokens"],
        row["cache_write_tokens"],
        row["output_tokens"]
    )
}

/// Each row of a per-period report (`daily`, `weekly`, `monthly`): its period, model and sums.
fn period_rows(rows: &[Map<String, Value>], period: &str) -> Vec<String> {
    rows.iter()
        .map(|r| {
            assert_eq!(r["harness"], "claude");
            format!("{} {} {}", r[period].as_str().unwrap(), r["model"].as_str().unwrap(), sums_of(r))
        })
        .collect()
}

/// What a per-period report holds: each call of the days from `since` to `until` (in `zone`)
/// summed under the period `bucket` gives its local day, by model; in period and model order.
fn expected_periods(
    zone: &Tz,
    since: Option<NaiveDate>,
    until: Option<NaiveDate>,
    bucket: impl Fn(NaiveDate) -> NaiveDate,
) -> Vec<String> {
    let mut periods: BTreeMap<(NaiveDate, String), Sums> = BTreeMap::new();
    for call in &corpus().calls {
        let day = local_day(call.ts, zone);
        if since.is_some_and(|s| day < s) || until.is_some_and(|u| day > u) {
            continue;
        }
        periods.entry((bucket(day), call.model.clone())).or_default().add(call);
    }
    periods.iter().map(|((period, model), sums)| format!("{period} {model} {sums}")).collect()
}

fn same_day(day: NaiveDate) -> NaiveDate {
    day
}

fn monday_of(day: NaiveDate) -> NaiveDate {
    day - Duration::days(i64::from(day.weekday().num_days_from_monday()))
}

fn first_of_month(day: NaiveDate) -> NaiveDate {
    day.with_day(1).unwrap()
}

fn date(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

#[test]
fn daily_counts_each_call_on_its_day_in_the_zone_asked_for_and_in_utc_without() {
    let utc_zone = zone("UTC");
    let utc_days = expected_periods(&utc_zone, None, None, same_day);
    assert_eq!(period_rows(&report(&["daily"]), "day"), utc_days);
    assert_eq!(period_rows(&report(&["daily", "--timezone", "UTC"]), "day"), utc_days);

    // Tokyo is 9 hours ahead: the generated evenings (UTC) are the next day there.
    let tokyo = zone("Asia/Tokyo");
    let tokyo_days = expected_periods(&tokyo, None, None, same_day);
    assert_ne!(tokyo_days, utc_days, "the zone moves calls to other days");
    assert_eq!(period_rows(&report(&["daily", "--timezone", "Asia/Tokyo"]), "day"), tokyo_days);

    // Los Angeles is behind UTC, and its offset comes from the zone's rules (summer time).
    let los_angeles = zone("America/Los_Angeles");
    let la_days = expected_periods(&los_angeles, None, None, same_day);
    assert_ne!(la_days, utc_days);
    assert_eq!(period_rows(&report(&["daily", "--timezone", "America/Los_Angeles"]), "day"), la_days);
}

#[test]
fn weekly_and_monthly_bucket_the_days_of_the_zone() {
    let tokyo = zone("Asia/Tokyo");
    // A Sunday evening in UTC is Monday morning in Tokyo; September's last evening, October 1.
    let weeks = expected_periods(&tokyo, None, None, monday_of);
    assert!(weeks.iter().any(|w| w.starts_with("2026-09-07 ")), "{weeks:?}");
    assert_eq!(period_rows(&report(&["weekly", "--timezone", "Asia/Tokyo"]), "week"), weeks);
    let utc_weeks = expected_periods(&zone("UTC"), None, None, monday_of);
    assert_ne!(weeks, utc_weeks);
    assert_eq!(period_rows(&report(&["weekly"]), "week"), utc_weeks);

    let months = expected_periods(&tokyo, None, None, first_of_month);
    assert!(months.iter().any(|m| m.starts_with("2026-10-01 ")), "{months:?}");
    assert_eq!(period_rows(&report(&["monthly", "--timezone", "Asia/Tokyo"]), "month"), months);
    let utc_months = expected_periods(&zone("UTC"), None, None, first_of_month);
    assert_ne!(months, utc_months);
    assert_eq!(period_rows(&report(&["monthly"]), "month"), utc_months);
}

#[test]
fn since_and_until_keep_the_calls_of_the_days_between_in_the_zone() {
    let tokyo = zone("Asia/Tokyo");
    let (since, until) = (date("2026-09-03"), date("2026-09-07"));
    let want = expected_periods(&tokyo, Some(since), Some(until), same_day);
    let all = expected_periods(&tokyo, None, None, same_day);
    assert!(!want.is_empty() && want.len() < all.len(), "the days cut the corpus: {want:?}");
    // YYYY-MM-DD and YYYYMMDD alike.
    let args = ["daily", "--since", "2026-09-03", "--until", "20260907", "--timezone", "Asia/Tokyo"];
    assert_eq!(period_rows(&report(&args), "day"), want);

    // One bound alone.
    let want = expected_periods(&tokyo, Some(date("2026-09-04")), None, same_day);
    assert_eq!(
        period_rows(&report(&["daily", "--since", "20260904", "--timezone", "Asia/Tokyo"]), "day"),
        want
    );
    let want = expected_periods(&zone("UTC"), None, Some(date("2026-09-02")), same_day);
    assert_eq!(period_rows(&report(&["daily", "--until", "2026-09-02"]), "day"), want);

    // A week cut by the days sums the calls of its days within.
    let want = expected_periods(&tokyo, Some(date("2026-09-03")), None, monday_of);
    assert_eq!(
        period_rows(&report(&["weekly", "--since", "2026-09-03", "--timezone", "Asia/Tokyo"]), "week"),
        want
    );
}

#[test]
fn the_session_report_keeps_the_sessions_whose_last_line_is_on_the_days() {
    let tokyo = zone("Asia/Tokyo");
    let (since, until) = (date("2026-09-03"), date("2026-09-03"));
    let mut want: Vec<String> = corpus()
        .sessions
        .iter()
        .filter(|s| s.ended_at.is_some_and(|t| (since..=until).contains(&local_day(t, &tokyo))))
        .map(|s| s.session_id.clone())
        .collect();
    want.sort();
    assert!(!want.is_empty() && want.len() < corpus().sessions.len(), "{want:?}");
    let rows =
        report(&["session", "--since", "2026-09-03", "--until", "2026-09-03", "--timezone", "Asia/Tokyo"]);
    let mut got: Vec<String> = rows.iter().map(|r| r["session_id"].as_str().unwrap().to_string()).collect();
    got.sort();
    assert_eq!(got, want);
    // Its times are shown in the zone.
    let edge = report(&["session", "--timezone", "Asia/Tokyo"])
        .into_iter()
        .find(|r| r["session_id"] == EDGE_SESSION)
        .expect("the edge session");
    assert_eq!(edge["ended_at"], "2026-10-01T11:00:00+09:00");
    assert_eq!(report(&["session"]).len(), corpus().sessions.len());
}

/// One block: its harness, start, first and last call, sums and models.
struct Block {
    start: DateTime<Utc>,
    first: DateTime<Utc>,
    last: DateTime<Utc>,
    sums: Sums,
    models: BTreeSet<String>,
}

/// ccusage's blocks over the calls, as docs/export.md states the rule: a block starts at the
/// hour (of `zone`) of the first call no earlier block holds, and holds the calls of the 5
/// hours from there.
fn expected_blocks(zone: &Tz, since: Option<NaiveDate>) -> Vec<String> {
    let mut calls: Vec<&Call> = corpus().calls.iter().collect();
    calls.sort_by_key(|c| c.ts);
    let mut blocks: Vec<Block> = Vec::new();
    for call in calls {
        match blocks.last_mut() {
            Some(block) if call.ts < block.start + Duration::hours(5) => {
                block.last = call.ts;
                block.sums.add(call);
                block.models.insert(call.model.clone());
            }
            _ => {
                let mut sums = Sums::default();
                sums.add(call);
                let models = BTreeSet::from([call.model.clone()]);
                blocks.push(Block {
                    start: hour_of(call.ts, zone),
                    first: call.ts,
                    last: call.ts,
                    sums,
                    models,
                });
            }
        }
    }
    blocks
        .iter()
        .filter(|b| since.is_none_or(|s| local_day(b.start, zone) >= s))
        .map(|b| {
            let models: Vec<&str> = b.models.iter().map(String::as_str).collect();
            format!(
                "claude {} {} first={} last={} {} models={}",
                in_zone(b.start, zone),
                in_zone(b.start + Duration::hours(5), zone),
                in_zone(b.first, zone),
                in_zone(b.last, zone),
                b.sums,
                models.join(", ")
            )
        })
        .collect()
}

fn block_rows(rows: &[Map<String, Value>]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            assert!(r["cost_usd"].is_number(), "every model here is priced: {r:?}");
            format!(
                "{} {} {} first={} last={} {} models={}",
                r["harness"].as_str().unwrap(),
                shown(&r["block_start"]),
                shown(&r["block_end"]),
                shown(&r["first_call"]),
                shown(&r["last_call"]),
                sums_of(r),
                r["models"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn blocks_are_five_hours_from_the_hour_of_the_first_call_no_earlier_block_holds() {
    let utc_zone = zone("UTC");
    let want = expected_blocks(&utc_zone, None);
    assert!(want.len() > 8, "many blocks: {want:#?}");
    // The call at 18:00 is at the end of the block from 13:00: it starts the next.
    assert!(want.iter().any(|b| b.starts_with("claude 2026-09-06T18:00:00.000Z ")), "{want:#?}");
    // After 6 h 40 min without calls, the next block starts at its call's hour.
    assert!(want.iter().any(|b| b.starts_with("claude 2026-09-07T03:00:00.000Z ")), "{want:#?}");
    assert_eq!(block_rows(&report(&["blocks"])), want);

    // India is 5 h 30 min ahead of UTC: its hours start at half past, and so do its blocks.
    let kolkata = zone("Asia/Kolkata");
    let want_kolkata = expected_blocks(&kolkata, None);
    assert_ne!(want_kolkata, want);
    assert!(want_kolkata[0].contains(":00:00.000+05:30 "), "{}", want_kolkata[0]);
    assert_eq!(block_rows(&report(&["blocks", "--timezone", "Asia/Kolkata"])), want_kolkata);
}

#[test]
fn blocks_since_a_day_are_those_that_start_on_it_or_after_whole() {
    // The block from September 30, 23:00 UTC holds the call of October 1, 02:00: it is not
    // shown from October 1, and the call starts no block of its own.
    let want = expected_blocks(&zone("UTC"), Some(date("2026-10-01")));
    assert!(want.is_empty(), "{want:?}");
    assert_eq!(block_rows(&report(&["blocks", "--since", "2026-10-01"])), want);
    let want = expected_blocks(&zone("UTC"), Some(date("2026-09-30")));
    assert_eq!(want.len(), 1);
    assert!(want[0].contains("calls=2 "), "{want:?}");
    assert_eq!(block_rows(&report(&["blocks", "--since", "2026-09-30", "--until", "2026-09-30"])), want);
    // In Tokyo the same block starts on October 1.
    let tokyo = zone("Asia/Tokyo");
    let want = expected_blocks(&tokyo, Some(date("2026-10-01")));
    assert_eq!(want.len(), 1);
    assert_eq!(block_rows(&report(&["blocks", "--since", "2026-10-01", "--timezone", "Asia/Tokyo"])), want);
}

#[test]
fn a_report_file_run_by_hand_in_a_zone_answers_as_txq_query_does() {
    let corpus = corpus();
    let home = corpus.home.path().to_str().unwrap();
    for name in ["daily", "blocks", "session"] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("queries/{name}.sql"));
        let args = [
            "--no-cache",
            "--format",
            "ndjson",
            "-e",
            "set timezone = 'Asia/Kolkata'",
            "-f",
            file.to_str().unwrap(),
            home,
        ];
        let by_hand = txq(&args, corpus.home.path());
        assert_eq!(by_hand.code, 0, "{}", by_hand.stderr);
        assert_eq!(parse_ndjson(&by_hand.stdout), report(&[name, "--timezone", "Asia/Kolkata"]), "{name}");
    }
}

#[test]
fn json_is_format_json_and_csv_writes_times_with_their_zone() {
    let corpus = corpus();
    let home = corpus.home.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let out = txq(args, corpus.home.path());
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out.stdout
    };
    let json = run(&["--no-cache", "query", "blocks", "--json", "--timezone", "Asia/Kolkata", home]);
    let format_json =
        run(&["--no-cache", "--format", "json", "query", "blocks", "--timezone", "Asia/Kolkata", home]);
    assert_eq!(json, format_json);
    assert!(json.starts_with("[{\"harness\":\"claude\""), "{json}");
    let conflict =
        txq(&["--no-cache", "--json", "--format", "csv", "query", "daily", home], corpus.home.path());
    assert_eq!(conflict.code, 2, "{}", conflict.stderr);

    let csv = run(&["--no-cache", "--format", "csv", "query", "blocks", "--timezone", "Asia/Kolkata", home]);
    let starts: Vec<&str> = csv.lines().skip(1).map(|line| line.split(',').nth(1).unwrap()).collect();
    let want: Vec<String> = report(&["blocks", "--timezone", "Asia/Kolkata"])
        .iter()
        .map(|r| r["block_start"].as_str().unwrap().into())
        .collect();
    assert_eq!(starts, want);
    assert!(starts.iter().all(|s| s.ends_with(":00:00+05:30")), "{starts:?}");
}

#[test]
fn a_bad_day_or_zone_is_a_usage_error_naming_its_flag() {
    let corpus = corpus();
    let home = corpus.home.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["daily", "--timezone", "Mars/Olympus_Mons"], "--timezone"),
        (&["daily", "--timezone", "utc+2"], "--timezone"),
        (&["blocks", "--since", "2026-02-30"], "--since"),
        (&["daily", "--until", "1 September"], "--until"),
        (
            &["daily", "--since", "2026-09-07", "--until", "2026-09-03"],
            "--since 2026-09-07 is after --until 2026-09-03",
        ),
        (&["denied_tools", "--since", "2026-09-01"], "--since: \"denied_tools\" is not a spend report"),
    ];
    for (args, named) in cases {
        let mut all = vec!["--no-cache", "query"];
        all.extend_from_slice(args);
        all.push(home);
        let out = txq(&all, corpus.home.path());
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(named), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}
