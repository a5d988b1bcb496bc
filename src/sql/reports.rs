//! The spend reports' days and time zone (`txq query daily --since D --until D --timezone TZ`):
//! a report is a canned query whose SQL begins with a `period`, the first and last day it
//! covers; its days, weeks, months and hours are those of the session's time zone.

use chrono::NaiveDate;
use datafusion::sql::parser::{DFParser, Statement};
use datafusion::sql::sqlparser::ast;
use datafusion::sql::sqlparser::dialect::GenericDialect;

/// The common table expression of a report's days: `first_day` and `last_day`, dates, both
/// included; null is no bound.
pub const PERIOD: &str = "period";

/// What `--since`, `--until` and `--timezone` ask of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportOptions {
    pub since: Option<NaiveDate>,
    pub until: Option<NaiveDate>,
    /// As [`parse_time_zone`] accepted it.
    pub time_zone: Option<String>,
}

impl ReportOptions {
    /// Makes `ctx` ready for reports over these days: --since not after --until, and the
    /// session's time zone the one asked for (the machine's when none is: [`machine_time_zone`]).
    pub fn set_up(&self, ctx: &datafusion::prelude::SessionContext) -> crate::error::Result<()> {
        if let (Some(since), Some(until)) = (self.since, self.until)
            && since > until
        {
            return Err(crate::error::Error::Usage(format!(
                "--since {since} is after --until {until}: the days from --since to --until (both included) are reported"
            )));
        }
        ctx.state_ref().write().config_mut().options_mut().execution.time_zone = Some(self.zone());
        Ok(())
    }

    /// The time zone of the report's days: the one asked for, else the machine's.
    pub fn zone(&self) -> String {
        self.time_zone.clone().unwrap_or_else(machine_time_zone)
    }

    /// A report's SQL with its `period` set to these days.
    pub fn period_of(&self, sql: &str) -> crate::error::Result<String> {
        with_period(sql, self.since, self.until)
            .map_err(|e| crate::error::Error::Usage(format!("the report's period cannot be set: {e}")))
    }

    /// The flags given, by name, for a message that names them.
    pub fn flags_given(&self) -> Vec<&'static str> {
        let mut flags = Vec::new();
        if self.since.is_some() {
            flags.push("--since");
        }
        if self.until.is_some() {
            flags.push("--until");
        }
        if self.time_zone.is_some() {
            flags.push("--timezone");
        }
        flags
    }
}

/// The time zone a report uses when the machine's cannot be told.
pub const DEFAULT_TIME_ZONE: &str = "UTC";

/// The machine's time zone, as a person there reads their days: `TZ` when it names one
/// (`Europe/Berlin`, `:Europe/Berlin`, `UTC`, `+09:00`), else the system's (`/etc/localtime`),
/// else UTC. A `TZ` that names no zone txq knows (a POSIX rule such as `CET-1CEST`) is passed
/// over for the system's.
pub fn machine_time_zone() -> String {
    let from_env = std::env::var("TZ").ok().map(|tz| tz.trim().trim_start_matches(':').to_string());
    from_env
        .filter(|tz| parse_time_zone(tz).is_ok())
        .or_else(|| iana_time_zone::get_timezone().ok().filter(|tz| parse_time_zone(tz).is_ok()))
        .unwrap_or_else(|| DEFAULT_TIME_ZONE.to_string())
}

/// A working directory as ccusage names its project: its last two parts, `/` between them
/// (`/home/ana/src/my_app` is `src/my_app`; a path of `\` parts alike).
pub fn project_of(cwd: &str) -> String {
    let parts: Vec<&str> = cwd.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    parts[parts.len().saturating_sub(2)..].join("/")
}

/// A day of `--since`/`--until`: `YYYY-MM-DD`, or `YYYYMMDD` as ccusage takes it.
pub fn parse_day(s: &str) -> Result<NaiveDate, String> {
    let digits: String = match s.as_bytes() {
        [_, _, _, _, b'-', _, _, b'-', _, _] => s.split('-').collect(),
        _ => s.to_string(),
    };
    let date = (digits.len() == 8 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| {
            let number = |range: std::ops::Range<usize>| digits[range].parse::<u32>().ok();
            NaiveDate::from_ymd_opt(number(0..4)? as i32, number(4..6)?, number(6..8)?)
        })
        .flatten();
    date.ok_or_else(|| format!("not a day: {s:?} (give YYYY-MM-DD or YYYYMMDD, e.g. 2026-09-01)"))
}

/// A time zone of `--timezone`, as the session's time zone takes it: an IANA name
/// (`Europe/Berlin`), `UTC`, or an offset (`+09:00`).
pub fn parse_time_zone(s: &str) -> Result<String, String> {
    match s.parse::<datafusion::arrow::array::timezone::Tz>() {
        Ok(_) => Ok(s.to_string()),
        Err(_) => Err(format!(
            "not a time zone: {s:?} (give an IANA name such as Europe/Berlin or America/New_York, UTC, or an offset such as +09:00)"
        )),
    }
}

/// The query of `sql` when it is one statement that is a query.
fn query_of(sql: &str) -> Option<Statement> {
    let mut statements = DFParser::parse_sql_with_dialect(sql, &GenericDialect {}).ok()?;
    if statements.len() != 1 {
        return None;
    }
    let statement = statements.pop_front()?;
    matches!(&statement, Statement::Statement(s) if matches!(**s, ast::Statement::Query(_)))
        .then_some(statement)
}

/// The `period` of a query's `WITH`, if it has one.
fn period_of(statement: &mut Statement) -> Option<&mut ast::Cte> {
    let Statement::Statement(statement) = statement else { return None };
    let ast::Statement::Query(query) = statement.as_mut() else { return None };
    let with = query.with.as_mut()?;
    with.cte_tables.iter_mut().find(|cte| cte.alias.name.value.eq_ignore_ascii_case(PERIOD))
}

/// Whether `sql` is a report: one query whose `WITH` has a `period`.
pub fn is_report(sql: &str) -> bool {
    query_of(sql).is_some_and(|mut statement| period_of(&mut statement).is_some())
}

/// `sql` (a report) with its `period` from `since` to `until`, both included; none is no bound.
pub fn with_period(sql: &str, since: Option<NaiveDate>, until: Option<NaiveDate>) -> Result<String, String> {
    let mut statement = query_of(sql).ok_or("not one query")?;
    let cte = period_of(&mut statement).ok_or("no period")?;
    let bound = |day: Option<NaiveDate>| match day {
        Some(day) => format!("date '{}'", day.format("%Y-%m-%d")),
        None => "cast(null as date)".to_string(),
    };
    let period = format!("select {} as first_day, {} as last_day", bound(since), bound(until));
    let Some(Statement::Statement(parsed)) = query_of(&period) else { return Err("no period".into()) };
    let ast::Statement::Query(query) = *parsed else { return Err("no period".into()) };
    cte.query = query;
    Ok(statement.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn a_project_is_the_last_two_parts_of_the_working_directory() {
        assert_eq!(project_of("/home/ana/src/my_app"), "src/my_app");
        assert_eq!(project_of("/home/ana/src/my_app/"), "src/my_app");
        assert_eq!(project_of("C:\\Users\\ana\\proj"), "ana/proj");
        assert_eq!(project_of("C:\\Users\\me\\app\\"), "me/app");
        assert_eq!(project_of("/home/me/work/billing-api"), "work/billing-api");
        assert_eq!(project_of("/srv"), "srv");
        assert_eq!(project_of(""), "");
    }

    #[test]
    fn a_day_is_written_with_dashes_or_without() {
        assert_eq!(parse_day("2026-09-01"), Ok(day(2026, 9, 1)));
        assert_eq!(parse_day("20260901"), Ok(day(2026, 9, 1)));
        for bad in ["2026-9-1", "2026-02-30", "202609011", "yesterday", "", "2026/09/01", "+2026-09-1"] {
            let message = parse_day(bad).unwrap_err();
            assert!(message.contains("YYYY-MM-DD or YYYYMMDD"), "{bad}: {message}");
        }
    }

    #[test]
    fn a_time_zone_is_an_iana_name_utc_or_an_offset() {
        for good in ["UTC", "Europe/Berlin", "Asia/Kolkata", "+09:00"] {
            assert_eq!(parse_time_zone(good).as_deref(), Ok(good));
        }
        for bad in ["Mars/Olympus", "Europe/Berln", "", "CEST+"] {
            assert!(parse_time_zone(bad).unwrap_err().contains("IANA name"), "{bad}");
        }
    }

    #[test]
    fn the_reports_are_the_canned_queries_with_a_period() {
        let reports: Vec<&str> =
            crate::sql::queries::all().iter().filter(|q| is_report(q.sql)).map(|q| q.name).collect();
        assert_eq!(
            reports,
            [
                "agent_spend",
                "blocks",
                "cache_hit_by_model",
                "daily",
                "daily_by_cwd",
                "monthly",
                "run_outcomes",
                "session",
                "session_models",
                "spend_over_time",
                "weekly"
            ]
        );
    }

    #[test]
    fn the_period_is_set_and_the_rest_of_the_query_kept() {
        for query in crate::sql::queries::all().iter().filter(|q| is_report(q.sql)) {
            let sql = with_period(query.sql, Some(day(2026, 9, 1)), None).unwrap();
            assert!(
                sql.contains(
                    "period AS (SELECT DATE '2026-09-01' AS first_day, CAST(NULL AS DATE) AS last_day)"
                ),
                "{}: {sql}",
                query.name
            );
            // The same query but for its period: the file's own period is unbounded.
            let unbounded = with_period(query.sql, None, None).unwrap();
            let original = query_of(query.sql).unwrap();
            assert_eq!(unbounded, original.to_string(), "{}", query.name);
            assert!(is_report(&sql));
        }
        assert!(with_period("select 1", None, None).is_err());
    }
}
