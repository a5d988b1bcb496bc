//! `txq daily|weekly|monthly|session|blocks`: ccusage's reports under its names and flags,
//! each the rows of a canned spend report (queries/) run as any SQL is, laid out as people read
//! them ([`table`]: totals, money, separators, fitted to the terminal) or in ccusage's JSON
//! ([`json`]); `--format` other than table, and `--follow`, give the query's own rows.

mod budget;
mod json;
pub(crate) mod model;
pub(crate) mod table;

pub(crate) use budget::{Budget, Crossings};

use super::args::{Args, CostMode, Order, SpendFlags, TokenLimit};
use super::print::OutputFormat;
use super::script::Script;
use crate::error::Error;
use crate::sql::reports::ReportOptions;
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use model::{Block, Period};
use std::collections::BTreeMap;
use std::io::Write;

/// The columns a report's table takes where stdout is no terminal and `$COLUMNS` is not set.
const TABLE_WIDTH: usize = 120;

/// The length of a billing block, as the `blocks` query places them.
const BLOCK: Duration = Duration::hours(5);

/// Which report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReportKind {
    Daily,
    Weekly,
    Monthly,
    Session,
    Blocks,
}

impl ReportKind {
    /// The canned query whose rows it lays out: with `by_project`, the days of every period's
    /// query with their working directories.
    fn query(self, by_project: bool) -> &'static str {
        match self {
            ReportKind::Session => "session_models",
            ReportKind::Daily | ReportKind::Weekly | ReportKind::Monthly if by_project => "daily_by_cwd",
            _ => self.flat_query(),
        }
    }

    /// The canned query of the same name, whose rows `--format` and `--follow` give.
    fn flat_query(self) -> &'static str {
        match self {
            ReportKind::Daily => "daily",
            ReportKind::Weekly => "weekly",
            ReportKind::Monthly => "monthly",
            ReportKind::Session => "session",
            ReportKind::Blocks => "blocks",
        }
    }

    /// The key of its rows in ccusage's JSON.
    fn json_key(self) -> &'static str {
        self.flat_query()
    }

    /// The key ccusage names a period by in a project's rows (`--instances`).
    fn instance_key(self) -> &'static str {
        match self {
            ReportKind::Daily => "date",
            ReportKind::Weekly => "week",
            _ => "month",
        }
    }

    /// The column of a period's rows that names it.
    fn period_column(self) -> &'static str {
        match self {
            ReportKind::Daily => "day",
            ReportKind::Weekly => "week",
            _ => "month",
        }
    }
}

/// What a command asks besides the flags every report takes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wanted {
    /// `--last N`: the last N periods.
    pub(crate) last: Option<u32>,
    /// `--by-agent`.
    pub(crate) by_agent: bool,
    /// `--instances`: a row per period and project.
    pub(crate) instances: bool,
    /// `--project`: only this project's calls.
    pub(crate) project: Option<String>,
    /// `session --id`.
    pub(crate) id: Option<String>,
    /// `blocks --active`.
    pub(crate) active: bool,
    /// `blocks --recent`: the last 3 days'.
    pub(crate) recent: bool,
    /// `blocks --token-limit`.
    pub(crate) token_limit: Option<TokenLimit>,
    /// `--budget`: a limit on each period's spend.
    pub(crate) budget: Option<Budget>,
}

/// The report `txq query NAME --budget` measures: `daily`, `weekly`, `monthly` or `blocks`,
/// with a budget of its period.
pub(crate) fn budget_of_query(name: &str, budget: Budget) -> Result<(ReportKind, Budget), Error> {
    let kind = [ReportKind::Daily, ReportKind::Weekly, ReportKind::Monthly, ReportKind::Blocks]
        .into_iter()
        .find(|kind| kind.flat_query() == name)
        .ok_or_else(|| {
            Error::Usage(format!(
                "--budget measures the spend reports daily, weekly, monthly and blocks, not {}",
                crate::text::escape::text(name)
            ))
        })?;
    Ok((kind, budget.for_report(kind)?))
}

/// Runs the report `kind` on the transcripts of `flags.paths`, written to stdout.
pub(crate) async fn command(
    args: &Args,
    kind: ReportKind,
    flags: &SpendFlags,
    wanted: Wanted,
) -> Result<(), Error> {
    if flags.mode == Some(CostMode::Display) {
        return Err(Error::Usage(
            "--mode display (the cost a line carries) is not offered: txq prices every call from its tokens \
             (docs/prices.md), as --mode calculate"
                .into(),
        ));
    }
    let budget = wanted.budget.map(|budget| budget.for_report(kind)).transpose()?;
    let mut report =
        ReportOptions { since: flags.since, until: flags.until, time_zone: flags.timezone.clone() };
    let zone = report.zone();
    let now = Utc::now();
    if let Some(first) = first_day(kind, &wanted, today_in(&zone, now)) {
        report.since = Some(report.since.map_or(first, |since| since.max(first)));
    }
    if args.follow || (!args.json && args.format != OutputFormat::Table) {
        let budget =
            budget.map(|budget| Box::new(Crossings::new(kind, budget)) as Box<dyn super::follow::RowsCheck>);
        return super::query::command(args, kind.flat_query(), report, &flags.paths, budget).await;
    }
    let prices = super::reading::prices(args)?;
    let by_project = wanted.instances || wanted.project.is_some();
    let script = Script::Canned { name: kind.query(by_project), report };
    let mut rows = super::exec::rows_of(args, script, &flags.paths, prices).await?;
    if let Some(project) = &wanted.project {
        rows.retain(|row| model::is_project(row.get("cwd").and_then(|v| v.as_str()), project));
    }
    let shape =
        json::Shape { no_cost: flags.no_cost, by_agent: wanted.by_agent, time_zone: zone.clone(), budget };
    let layout = table::Layout {
        width: super::screen::stdout_width(TABLE_WIDTH),
        compact: flags.compact,
        breakdown: flags.breakdown,
        no_cost: flags.no_cost,
        newest_first: flags.order == Some(Order::Desc),
        time_zone: zone,
        budget,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let verdict;
    match kind {
        ReportKind::Blocks => {
            let mut blocks = model::blocks(&rows);
            let limits = token_limits(&blocks, wanted.token_limit, now);
            if wanted.active {
                blocks.retain(|b| is_active(b, now));
            }
            verdict = budget.map(|budget| budget.of_blocks(&blocks));
            match args.json {
                true => {
                    // Gaps are found oldest first; --order desc turns the list round after.
                    let mut report = json::blocks(&blocks, !wanted.active, now, &limits, &shape);
                    if let (Some(serde_json::Value::Array(list)), true) =
                        (report.get_mut("blocks"), flags.order == Some(Order::Desc))
                    {
                        list.reverse();
                    }
                    write_json(&report, &mut out)?
                }
                false => table::blocks(&blocks, wanted.active, now, &limits, &layout, &mut out)
                    .map_err(Error::Output)?,
            }
        }
        _ => {
            let mut periods = match kind {
                ReportKind::Session => model::sessions(&rows),
                _ => {
                    let column = if by_project { "day" } else { kind.period_column() };
                    model::periods(&rows, |row| model::period_of(row, column, kind), wanted.instances)
                }
            };
            if let Some(id) = &wanted.id {
                periods.retain(|p| &p.key == id || p.session.as_ref().is_some_and(|s| &s.session_id == id));
            }
            order(kind, flags.order, &mut periods);
            verdict = budget.map(|budget| budget.of_periods(&periods));
            match args.json {
                true => write_json(&json::periods(kind, &periods, &shape), &mut out)?,
                false => table::periods(kind, &periods, &layout, &mut out).map_err(Error::Output)?,
            }
        }
    }
    out.flush().map_err(Error::Output)?;
    verdict.map_or(Ok(()), |verdict| verdict.result())
}

/// Puts the rows in the order asked: periods oldest first (`--order desc`: newest first);
/// sessions costliest first, or by their last activity when an order is asked.
fn order(kind: ReportKind, order: Option<Order>, periods: &mut [Period]) {
    match (kind, order) {
        (ReportKind::Session, None) => periods.sort_by(|a, b| {
            let (a_cost, b_cost) = (a.spend().cost, b.spend().cost);
            b_cost.total_cmp(&a_cost).then_with(|| a.key.cmp(&b.key))
        }),
        (ReportKind::Session, Some(order)) => {
            let last =
                |p: &Period| p.session.as_ref().and_then(|s| s.ended_at.as_deref()).and_then(model::instant);
            periods.sort_by(|a, b| last(a).cmp(&last(b)).then_with(|| a.key.cmp(&b.key)));
            if order == Order::Desc {
                periods.reverse();
            }
        }
        (_, Some(Order::Desc)) => periods.reverse(),
        _ => {}
    }
}

/// The first day `--last N` or `--recent` leaves in: the day N-1 days, weeks (from Monday) or
/// months (from the 1st) before `today`'s; 3 days before it for `--recent`.
fn first_day(kind: ReportKind, wanted: &Wanted, today: NaiveDate) -> Option<NaiveDate> {
    if wanted.recent {
        return today.checked_sub_days(chrono::Days::new(3));
    }
    let back = wanted.last?.max(1) - 1;
    match kind {
        ReportKind::Daily => today.checked_sub_days(chrono::Days::new(u64::from(back))),
        ReportKind::Weekly => week_of(today).checked_sub_days(chrono::Days::new(7 * u64::from(back))),
        ReportKind::Monthly => today.with_day(1)?.checked_sub_months(chrono::Months::new(back)),
        ReportKind::Session | ReportKind::Blocks => None,
    }
}

/// The day it is at `now` in the time zone `zone` (UTC when txq cannot read it).
fn today_in(zone: &str, now: DateTime<Utc>) -> NaiveDate {
    match zone.parse::<datafusion::arrow::array::timezone::Tz>() {
        Ok(tz) => now.with_timezone(&tz).date_naive(),
        Err(_) => now.date_naive(),
    }
}

/// A block is under way while its 5 hours last and its last call is less than 5 hours old.
fn is_active(block: &Block, now: DateTime<Utc>) -> bool {
    now < block.end && now - block.last_call < BLOCK
}

/// The idle time between two blocks of a harness that ccusage lists as a gap: from 5 hours
/// after the last call of the one to the first call of the next, when that is more than 5 hours
/// after it.
fn gap_between(before: &Block, after: &Block) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    (after.first_call - before.last_call > BLOCK).then(|| (before.last_call + BLOCK, after.first_call))
}

/// The gap ([`gap_between`]) before `blocks[at]`, after the block of its harness listed last
/// before it (the blocks oldest first).
fn gap_before(blocks: &[Block], at: usize) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let block = &blocks[at];
    let before = blocks[..at].iter().rev().find(|b| b.harness == block.harness)?;
    gap_between(before, block)
}

/// The Monday of the week `day` falls in.
fn week_of(day: NaiveDate) -> NaiveDate {
    day - chrono::Days::new(u64::from(day.weekday().num_days_from_monday()))
}

/// How fast a block under way spends, and where it ends if it goes on so.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Burn {
    pub(crate) tokens_per_minute: f64,
    /// Input and output alone, as ccusage's indicator counts them.
    pub(crate) tokens_per_minute_for_indicator: f64,
    pub(crate) cost_per_hour: f64,
    pub(crate) remaining_minutes: i64,
    pub(crate) projected_tokens: i64,
    pub(crate) projected_cost: f64,
}

/// A block's burn rate from its first call to its last, and its projection to its end (none
/// when the calls span no time), as ccusage computes them.
fn burn(block: &Block, now: DateTime<Utc>) -> Option<Burn> {
    let minutes = (block.last_call - block.first_call).num_milliseconds() as f64 / 60_000.0;
    if minutes <= 0.0 {
        return None;
    }
    let spend = &block.spend;
    let tokens_per_minute = spend.total_tokens() as f64 / minutes;
    let cost_per_hour = spend.cost / minutes * 60.0;
    let remaining_minutes = (block.end - now).num_minutes().max(0);
    let projected_tokens =
        (spend.total_tokens() as f64 + tokens_per_minute * remaining_minutes as f64).round();
    let projected_cost =
        ((spend.cost + cost_per_hour / 60.0 * remaining_minutes as f64) * 100.0).round() / 100.0;
    Some(Burn {
        tokens_per_minute,
        tokens_per_minute_for_indicator: (spend.input + spend.output) as f64 / minutes,
        cost_per_hour,
        remaining_minutes,
        projected_tokens: projected_tokens as i64,
        projected_cost,
    })
}

/// Each harness's `--token-limit` in tokens: the number given, or with `max` the most tokens any
/// of its blocks but those under way used (none when it has no other).
fn token_limits(blocks: &[Block], limit: Option<TokenLimit>, now: DateTime<Utc>) -> BTreeMap<String, i64> {
    let mut limits = BTreeMap::new();
    for block in blocks {
        let tokens = match limit {
            None => continue,
            Some(TokenLimit::Tokens(n)) => n,
            Some(TokenLimit::Max) if is_active(block, now) => continue,
            Some(TokenLimit::Max) => block.spend.total_tokens(),
        };
        let entry = limits.entry(block.harness.clone()).or_insert(tokens);
        *entry = (*entry).max(tokens);
    }
    limits
}

/// How a block's projected tokens stand against a limit, as ccusage's `tokenLimitStatus`:
/// `exceeds` past it, `warning` past 80 % of it, else `ok`; and the percent.
fn limit_status(projected: i64, limit: i64) -> (&'static str, f64) {
    let percent = projected as f64 / limit as f64 * 100.0;
    let status = if projected > limit {
        "exceeds"
    } else if percent > 80.0 {
        "warning"
    } else {
        "ok"
    };
    (status, percent)
}

fn write_json(value: &serde_json::Value, out: &mut dyn Write) -> Result<(), Error> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(|e| Error::Output(e.into()))?;
    writeln!(out).map_err(Error::Output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn last_n_periods_start_n_minus_one_periods_back_from_the_current_one() {
        let last = |n| Wanted { last: Some(n), ..Wanted::default() };
        let today = day(2026, 12, 5); // a Saturday
        assert_eq!(first_day(ReportKind::Daily, &last(1), today), Some(today));
        assert_eq!(first_day(ReportKind::Daily, &last(7), today), Some(day(2026, 11, 29)));
        assert_eq!(first_day(ReportKind::Weekly, &last(1), today), Some(day(2026, 11, 30)));
        assert_eq!(first_day(ReportKind::Weekly, &last(2), today), Some(day(2026, 11, 23)));
        assert_eq!(first_day(ReportKind::Monthly, &last(3), today), Some(day(2026, 10, 1)));
        let recent = Wanted { recent: true, ..Wanted::default() };
        assert_eq!(first_day(ReportKind::Blocks, &recent, today), Some(day(2026, 12, 2)));
        assert_eq!(first_day(ReportKind::Daily, &Wanted::default(), today), None);
    }

    fn block(first: &str, last: &str, tokens: i64, cost: f64) -> Block {
        let t = |s: &str| model::instant(s).unwrap();
        let start = t(first).duration_trunc(Duration::hours(1)).unwrap();
        Block {
            harness: "h".into(),
            start,
            end: start + BLOCK,
            first_call: t(first),
            last_call: t(last),
            models: vec![],
            spend: model::Spend { calls: 2, input: tokens, cost, ..Default::default() },
        }
    }
    use chrono::DurationRound;

    #[test]
    fn a_block_under_way_burns_from_its_first_call_to_its_last_and_projects_to_its_end() {
        let b = block("2026-12-05T10:10:00Z", "2026-12-05T11:10:00Z", 6000, 3.0);
        let now = model::instant("2026-12-05T12:00:00Z").unwrap();
        assert!(is_active(&b, now));
        let burn = burn(&b, now).unwrap();
        assert_eq!(burn.tokens_per_minute, 100.0);
        assert_eq!(burn.cost_per_hour, 3.0);
        assert_eq!(burn.remaining_minutes, 180); // the block ends at 15:00
        assert_eq!(burn.projected_tokens, 6000 + 18000);
        assert_eq!(burn.projected_cost, 12.0);
        // 5 hours after its last call, or past its end, a block is over.
        assert!(!is_active(&b, model::instant("2026-12-05T15:00:00Z").unwrap()));
        let one_call = block("2026-12-05T10:10:00Z", "2026-12-05T10:10:00Z", 10, 0.1);
        assert_eq!(super::burn(&one_call, now), None);
    }

    #[test]
    fn a_token_limit_warns_past_80_percent_and_is_exceeded_past_itself() {
        assert_eq!(limit_status(500, 1000), ("ok", 50.0));
        assert_eq!(limit_status(900, 1000), ("warning", 90.0));
        assert_eq!(limit_status(1001, 1000).0, "exceeds");
        let old = block("2026-12-01T10:10:00Z", "2026-12-01T11:10:00Z", 7000, 1.0);
        let other = block("2026-12-02T10:10:00Z", "2026-12-02T11:10:00Z", 9000, 1.0);
        let now = model::instant("2026-12-05T12:00:00Z").unwrap();
        let limits = token_limits(&[old.clone(), other], Some(TokenLimit::Max), now);
        assert_eq!(limits.get("h"), Some(&9000));
        assert_eq!(token_limits(&[old], Some(TokenLimit::Tokens(50)), now).get("h"), Some(&50));
    }

    #[test]
    fn a_gap_is_listed_when_a_harness_was_idle_more_than_five_hours() {
        let a = block("2026-12-05T01:10:00Z", "2026-12-05T02:00:00Z", 1, 0.0);
        let near = block("2026-12-05T06:30:00Z", "2026-12-05T06:40:00Z", 1, 0.0);
        let far = block("2026-12-05T09:00:00Z", "2026-12-05T09:10:00Z", 1, 0.0);
        assert_eq!(gap_between(&a, &near), None);
        assert_eq!(
            gap_between(&a, &far),
            Some((model::instant("2026-12-05T07:00:00Z").unwrap(), far.first_call))
        );
    }
}
