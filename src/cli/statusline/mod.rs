//! `txq statusline`: Claude Code's status-line hook. In: the hook's JSON on stdin (`session_id`,
//! `transcript_path`, `model`, `context_window`). Out: one line on stdout: the session's cost,
//! today's, the 5-hour block's with its time left, and the share of the context window the
//! session's last call used, from the calls of only the files changed since the block it saw
//! last began (a memo in the cache folder keeps that start, per set of places and time zone).

mod memo;

use super::args::{Args, StatuslineFlags};
use super::budget::{Budget, BudgetPeriod};
use super::script::Script;
use super::spend::model::micro_rounded;
use super::spend::table::{money, separated};
use crate::error::Error;
use chrono::{DateTime, Duration, Offset, TimeZone, Utc};
use datafusion::arrow::array::timezone::Tz;
use memo::Memo;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{IsTerminal, Read as _, Write};
use std::path::{Path, PathBuf};

/// The most of stdin read: a hook's JSON is a few hundred bytes.
const MOST_INPUT: u64 = 1 << 20;

/// A block lasts 5 hours.
const BLOCK_SECONDS: i64 = 5 * 3_600;

/// The context window taken when the hook does not give one.
const DEFAULT_CONTEXT_WINDOW: i64 = 200_000;

/// The calls of the files read: what the line is worked out from.
const CALLS: &str = "select harness, session_id, parent_session_id, to_unixtime(ts) as at, cost_usd, \
                     input_tokens, file, line from calls";

/// What the hook says of the session, each part where it says it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Hook {
    pub(crate) session_id: Option<String>,
    pub(crate) transcript_path: Option<PathBuf>,
    /// The model's display name, else its id.
    pub(crate) model: Option<String>,
    pub(crate) context_window: Option<i64>,
}

/// The hook's JSON read: an object, whose parts are each optional (an older Claude Code gives
/// fewer); anything else is an error that says what was expected.
pub(crate) fn hook_of(text: &str) -> Result<Hook, Error> {
    let wrong = |why: String| {
        Error::Usage(format!(
            "txq statusline reads the JSON a status-line hook writes on stdin ({why}): \
             docs/cli.md#statusline has the settings.json line"
        ))
    };
    let value: Value = serde_json::from_str(text).map_err(|e| wrong(format!("not JSON: {e}")))?;
    let Value::Object(hook) = value else { return Err(wrong("not an object".into())) };
    let text_at = |path: &[&str]| -> Option<String> {
        let mut at = hook.get(path[0])?;
        for key in &path[1..] {
            at = at.get(key)?;
        }
        at.as_str().filter(|s| !s.is_empty()).map(str::to_string)
    };
    let context_window = hook
        .get("context_window")
        .and_then(|w| w.get("context_window_size"))
        .and_then(Value::as_i64)
        .filter(|&n| n > 0);
    Ok(Hook {
        session_id: text_at(&["session_id"]),
        transcript_path: text_at(&["transcript_path"]).map(PathBuf::from),
        model: text_at(&["model", "display_name"]).or_else(|| text_at(&["model", "id"])),
        context_window,
    })
}

/// The time taken for now: `$TXQ_NOW` (RFC 3339) where set, for a replay of a past moment and
/// for tests, else the clock's.
fn now() -> Result<DateTime<Utc>, Error> {
    match std::env::var("TXQ_NOW") {
        Ok(text) if !text.is_empty() => DateTime::parse_from_rfc3339(&text)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| Error::Usage(format!("TXQ_NOW is not an RFC 3339 time ({e}): {text}"))),
        _ => Ok(Utc::now()),
    }
}

/// How far back a line looks for the block under way when the memo knows no start of one (the
/// first line, or the first after a day's rest): a day, unless its calls have no rest of 5 hours
/// (then a block may have begun before it, and every file is read).
const FIRST_LOOK: i64 = 24 * 3_600;

/// Runs `txq statusline`: the hook's JSON from stdin, the line to stdout.
pub(crate) async fn command(args: &Args, flags: &StatuslineFlags) -> Result<(), Error> {
    if let Some(budget) = flags.budget
        && !matches!(budget.per, BudgetPeriod::Day | BudgetPeriod::Block)
    {
        return Err(Error::Usage(format!(
            "txq statusline measures a budget per day or per block (20usd/day, 5usd/block), not per {}",
            budget.per.name()
        )));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(Error::Usage(
            "txq statusline reads the JSON a status-line hook writes on stdin: \
             docs/cli.md#statusline has the settings.json line"
                .into(),
        ));
    }
    let mut text = String::new();
    stdin
        .lock()
        .take(MOST_INPUT)
        .read_to_string(&mut text)
        .map_err(|e| Error::Input { file: "stdin".into(), why: e.to_string() })?;
    let hook = hook_of(&text)?;
    let now = now()?;
    let zone = flags.timezone.clone().unwrap_or_else(crate::sql::reports::machine_time_zone);
    let tz: Tz = zone.parse().map_err(|e| Error::Usage(format!("--timezone {zone}: {e}")))?;
    let places = places(&flags.paths)?;
    let memo_path = memo_path(args, &places, &zone)?;
    let memo = Memo::read(memo_path.as_deref());
    let formats = crate::format::all();
    let harness = hook.transcript_path.as_deref().and_then(|path| harness_of(&formats, path));
    let (at, today) = (now.timestamp(), today_start(&tz, now).timestamp());
    // Calls from the start of the block seen last (of the session's harness) on make the block;
    // with none (or one a day old), those of the last day, if a rest of 5 hours in them shows
    // where the block under way began; else every call.
    let known =
        harness.as_deref().and_then(|h| memo.start_of(h, at)).filter(|&start| at - start < FIRST_LOOK);
    let look = Look { args, formats: &formats, places: &places, hook: &hook, memo: &memo };
    let mut from = known.unwrap_or(at - FIRST_LOOK);
    let mut read = look.calls(from.min(today)).await?;
    if known.is_none() && !rested(&read.calls, harness.as_deref(), from, at, &tz) {
        from = i64::MIN;
        read = look.calls(from).await?;
    }
    let calls: Vec<Call> = read.calls.iter().chain(read.by_file.values().flatten()).cloned().collect();
    let harness = harness.or_else(|| {
        let id = hook.session_id.as_deref()?;
        calls.iter().find(|c| c.session_id.as_deref() == Some(id)).map(|c| c.harness.clone())
    });
    let figures = Figures::of(&calls, &hook, harness.as_deref(), Some(from), &tz, now);
    let mut starts = memo.starts.clone();
    if let (Some(harness), Some(start)) = (&harness, figures.latest_start) {
        starts.insert(harness.clone(), start);
    }
    if let (Some(path), Some(walked)) = (&memo_path, read.walked)
        && let Some(next) = Memo::next(walked, &read.by_file, starts)
    {
        next.write(path);
        // The process ends after the line: the memo's tens of thousands of entries are not freed
        // one by one (1.3 M instructions of every line, by callgrind).
        std::mem::forget(next);
    }
    std::mem::forget(memo);
    let colored = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let line = figures.line(&hook, flags.budget, colored);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).map_err(Error::Output)
}

/// Whether the calls of `harness` at or after `from` rest 5 hours or more somewhere up to `now`
/// (between two of them, or after the last; none at all is a rest): a block under way then began
/// after the rest, at a call in `calls`.
fn rested(calls: &[Call], harness: Option<&str>, from: i64, now: i64, tz: &Tz) -> bool {
    let Some(harness) = harness else { return true };
    let mut hours: Vec<i64> = calls
        .iter()
        .filter(|c| c.harness == harness)
        .filter_map(|c| c.at)
        .filter(|&at| at >= from)
        .map(|at| hour_of(at, tz))
        .collect();
    hours.sort_unstable();
    hours.push(now);
    hours.windows(2).any(|w| w[1] - w[0] >= BLOCK_SECONDS) || hours.len() == 1
}

/// Where the memo of `places` in `zone` is kept; none with `--no-cache`.
fn memo_path(args: &Args, places: &[PathBuf], zone: &str) -> Result<Option<PathBuf>, Error> {
    let dir = match args.no_cache {
        true => None,
        false => crate::infer::cache::InferenceCache::default_dir()?,
    };
    let Some(dir) = dir else { return Ok(None) };
    let mut hash = xxhash_rust::xxh3::Xxh3Default::new();
    hash.update(zone.as_bytes());
    for place in places {
        hash.update(&[0]);
        hash.update(place.as_os_str().as_encoded_bytes());
    }
    Ok(Some(dir.join("statusline").join(format!("{:016x}.memo", hash.digest()))))
}

/// What a line reads from.
struct Look<'a> {
    args: &'a Args,
    formats: &'a [crate::format::Format],
    places: &'a [PathBuf],
    hook: &'a Hook,
    memo: &'a Memo,
}

/// The calls a line is worked out from: by file, where the memo can keep them, else as read.
struct Read {
    by_file: HashMap<PathBuf, Vec<Call>>,
    calls: Vec<Call>,
    /// What the walk found (none when a place is not a local one: nothing is kept).
    walked: Option<memo::Walked>,
}

impl Look<'_> {
    /// The calls of the files changed at or after `from` (seconds; a minute's slack for clocks)
    /// and of the session's own files: those of a file as it was when the memo kept it, the rest
    /// read.
    async fn calls(&self, from: i64) -> Result<Read, Error> {
        let horizon = u64::try_from(from.saturating_sub(60)).unwrap_or(0).saturating_mul(1_000_000_000);
        if self.places.iter().any(|p| crate::source::remote::is_remote(p)) {
            // An object store is listed whole each time, and nothing of it is kept.
            let mut paths = changed_since(self.places, horizon, self.hook.session_id.as_deref()).await?;
            self.with_transcript(&mut paths);
            let calls = self.read(&paths).await?;
            return Ok(Read { by_file: HashMap::new(), calls, walked: None });
        }
        let places = self.places.to_vec();
        let (formats, memo, session) = (self.formats, self.memo, self.hook.session_id.as_deref());
        let walked = memo::walk(formats, &places, memo, horizon, session);
        let mut paths: Vec<PathBuf> = walked.files.iter().map(|f| f.path.clone()).collect();
        self.with_transcript(&mut paths);
        // A file read again is read with every file that held calls of its sessions (a response
        // copied into a subagent's file is one call: the copies are counted once only when read
        // together), the session's own files with each other.
        let mut by_file: HashMap<PathBuf, Vec<Call>> = HashMap::new();
        let mut to_read: Vec<PathBuf> = Vec::new();
        for found in &walked.files {
            match memo.calls_of(found) {
                Some(calls) => drop(by_file.insert(found.path.clone(), calls.to_vec())),
                None => to_read.push(found.path.clone()),
            }
        }
        for path in &paths {
            if !walked.files.iter().any(|f| &f.path == path) {
                to_read.push(path.clone());
            }
        }
        let mut calls = Vec::new();
        for _ in 0..2 {
            let sessions: BTreeSet<String> = to_read
                .iter()
                .flat_map(|p| memo.sessions_of(p))
                .chain(
                    by_file
                        .iter()
                        .filter(|(p, _)| to_read.contains(p))
                        .flat_map(|(_, c)| c.iter().filter_map(Call::group)),
                )
                .collect();
            let with: Vec<PathBuf> = by_file
                .iter()
                .filter(|(p, c)| {
                    !to_read.contains(p) && c.iter().filter_map(Call::group).any(|g| sessions.contains(&g))
                })
                .map(|(p, _)| p.clone())
                .collect();
            to_read.extend(with);
            if to_read.is_empty() {
                break;
            }
            to_read.sort();
            to_read.dedup();
            calls = self.read(&to_read).await?;
            for path in &to_read {
                by_file.insert(path.clone(), Vec::new());
            }
            let mut placed = Vec::new();
            for call in std::mem::take(&mut calls) {
                match by_file.get_mut(Path::new(&call.file)) {
                    Some(kept) => kept.push(call),
                    None => placed.push(call),
                }
            }
            calls = placed;
            // Sessions found in what was read that a file not read also holds: read again, with
            // it.
            let read_sessions: BTreeSet<String> =
                to_read.iter().flat_map(|p| by_file[p].iter().filter_map(Call::group)).collect();
            let more = by_file.iter().any(|(p, c)| {
                !to_read.contains(p) && c.iter().filter_map(Call::group).any(|g| read_sessions.contains(&g))
            });
            if !more {
                break;
            }
        }
        let walked = match calls.is_empty() {
            true => Some(walked),
            // A call whose file was not among those read (its path written otherwise) cannot be
            // kept by file: counted now, and nothing kept.
            false => None,
        };
        Ok(Read { by_file, calls, walked })
    }

    /// `paths` and the hook's transcript, if a format claims it and it is a file.
    fn with_transcript(&self, paths: &mut Vec<PathBuf>) {
        if let Some(path) = &self.hook.transcript_path
            && harness_of(self.formats, path).is_some()
            && path.is_file()
            && !paths.contains(path)
        {
            paths.push(path.clone());
        }
    }

    /// The calls of `paths`, read.
    async fn read(&self, paths: &[PathBuf]) -> Result<Vec<Call>, Error> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let statements = [CALLS.to_string()];
        let script = Script::Given { statements: &statements, files: &[] };
        let prices = super::reading::prices(self.args)?;
        let rows = super::exec::rows_of(self.args, script, paths, prices).await?;
        Ok(rows.iter().map(Call::of).collect())
    }
}

/// The places to read: those given, else the default places that exist (none: nothing).
fn places(given: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    if !given.is_empty() {
        return Ok(given.to_vec());
    }
    let cwd = std::env::current_dir().map_err(|e| Error::Usage(format!("no working directory: {e}")))?;
    match crate::source::discover::default_paths(&crate::format::all(), &cwd, dirs::home_dir().as_deref()) {
        Ok(paths) => Ok(paths),
        Err(Error::NoDefaultPlace(_)) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The harness whose format claims the file at `path` (a harness is named as its format).
fn harness_of(formats: &[crate::format::Format], path: &Path) -> Option<String> {
    crate::source::discover::claim(formats, path).map(|at| formats[at].id.to_string())
}

/// The transcripts in `places` changed at or after `after` (nanoseconds); a file whose time is
/// not known is read, and so is every file in a folder named as the session (`session`: a
/// subagent's file that ended long ago still counts in its session's cost).
async fn changed_since(places: &[PathBuf], after: u64, session: Option<&str>) -> Result<Vec<PathBuf>, Error> {
    if places.is_empty() {
        return Ok(Vec::new());
    }
    let found = crate::source::discover::discover_all(&crate::format::all(), places).await?;
    let mut paths = Vec::new();
    for files in &found.files {
        for i in 0..files.len() {
            let modified = files.found_stamps(i).modified();
            let path = files.path(i);
            let old = modified.is_some_and(|m| m < after);
            let sessions = session.is_some_and(|id| {
                path.parent().is_some_and(|dir| dir.components().any(|c| c.as_os_str() == id))
            });
            if !old || sessions {
                paths.push(path);
            }
        }
    }
    Ok(paths)
}

/// The start of today in `tz`, as an instant.
fn today_start(tz: &Tz, now: DateTime<Utc>) -> DateTime<Utc> {
    let day = now.with_timezone(tz).date_naive();
    let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default();
    tz.from_local_datetime(&midnight).earliest().map_or(now, |t| t.with_timezone(&Utc))
}

/// The hour an instant (seconds) falls in, in `tz`: as `date_trunc('hour', ...)` in a session
/// of that zone, so a half-hour zone's hours start at :30 UTC.
fn hour_of(at: i64, tz: &Tz) -> i64 {
    let Some(t) = Utc.timestamp_opt(at, 0).single() else { return at.div_euclid(3_600) * 3_600 };
    let offset = i64::from(t.with_timezone(tz).offset().fix().local_minus_utc());
    (at + offset).div_euclid(3_600) * 3_600 - offset
}

/// One call, as the line needs it (and the memo keeps it).
#[derive(Clone, PartialEq, prost::Message)]
struct Call {
    #[prost(string, tag = "1")]
    harness: String,
    #[prost(string, optional, tag = "2")]
    session_id: Option<String>,
    #[prost(string, optional, tag = "3")]
    parent_session_id: Option<String>,
    /// Seconds since 1970; `None` for a call with no time.
    #[prost(int64, optional, tag = "4")]
    at: Option<i64>,
    #[prost(double, optional, tag = "5")]
    cost: Option<f64>,
    #[prost(int64, tag = "6")]
    input_tokens: i64,
    #[prost(string, tag = "7")]
    file: String,
    #[prost(int64, tag = "8")]
    line: i64,
}

impl Call {
    /// The session whose calls are read together with this one's (its parent's, else its own),
    /// of its harness.
    fn group(&self) -> Option<String> {
        let id = self.parent_session_id.as_deref().or(self.session_id.as_deref())?;
        Some(format!("{}\u{0}{id}", self.harness))
    }

    fn of(row: &Map<String, Value>) -> Call {
        let text = |c: &str| row.get(c).and_then(Value::as_str).map(str::to_string);
        Call {
            harness: text("harness").unwrap_or_default(),
            session_id: text("session_id"),
            parent_session_id: text("parent_session_id"),
            at: row.get("at").and_then(Value::as_i64),
            cost: row.get("cost_usd").and_then(Value::as_f64),
            input_tokens: row.get("input_tokens").and_then(Value::as_i64).unwrap_or(0),
            file: text("file").unwrap_or_default(),
            line: row.get("line").and_then(Value::as_i64).unwrap_or(0),
        }
    }
}

/// A sum of costs, and whether a call in it had no price.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Cost {
    pub(crate) usd: f64,
    pub(crate) unpriced: bool,
}

impl Cost {
    fn add(&mut self, call: &Call) {
        match call.cost {
            Some(usd) => self.usd = micro_rounded(self.usd + usd),
            None => self.unpriced = true,
        }
    }

    /// `$1.23`, with a `?` after it when a call in it had no price.
    fn shown(self) -> String {
        format!("{}{}", money(self.usd), if self.unpriced { "?" } else { "" })
    }
}

/// What the line says.
#[derive(Debug, Default, PartialEq)]
struct Figures {
    /// The session's calls and its subagents'.
    session: Cost,
    /// Today's calls, of every harness read.
    today: Cost,
    /// The block `now` is in, of the session's harness: its start (seconds) and calls.
    block_start: Option<i64>,
    block: Cost,
    /// The seconds left of that block.
    block_left: Option<i64>,
    /// The latest start of a block at or before now, under way or not: what the memo keeps.
    latest_start: Option<i64>,
    /// The input tokens (cache included) of the session's last call.
    context_tokens: Option<i64>,
}

impl Figures {
    /// The figures of `calls` at `now`; blocks are found from `known_start` (a block's start
    /// seen before) on, or from the first call with none.
    fn of(
        calls: &[Call],
        hook: &Hook,
        harness: Option<&str>,
        known_start: Option<i64>,
        tz: &Tz,
        now: DateTime<Utc>,
    ) -> Figures {
        let mut figures = Figures::default();
        let id = hook.session_id.as_deref();
        let (today, tomorrow) = {
            let start = today_start(tz, now);
            (start.timestamp(), today_start(tz, start + Duration::hours(30)).timestamp())
        };
        let mut last: Option<&Call> = None;
        for call in calls {
            if id.is_some() && (call.session_id.as_deref() == id || call.parent_session_id.as_deref() == id) {
                figures.session.add(call);
            }
            if call.at.is_some_and(|at| at >= today && at < tomorrow) {
                figures.today.add(call);
            }
            if id.is_some() && call.session_id.as_deref() == id {
                let later = |l: &Call| (call.at, &call.file, call.line) > (l.at, &l.file, l.line);
                if last.is_none_or(later) {
                    last = Some(call);
                }
            }
        }
        figures.context_tokens = last.map(|c| c.input_tokens);
        if let Some(harness) = harness {
            let from = known_start.unwrap_or(i64::MIN);
            let mut by_hour: BTreeMap<i64, Vec<&Call>> = BTreeMap::new();
            for call in calls.iter().filter(|c| c.harness == harness) {
                if let Some(at) = call.at.filter(|&at| at >= from) {
                    by_hour.entry(hour_of(at, tz)).or_default().push(call);
                }
            }
            let hours: Vec<i64> = by_hour.keys().copied().collect();
            let starts = crate::sql::blocks::start_rows(hours.iter().map(|&h| Some(h)), 3_600);
            let now = now.timestamp();
            let latest = starts.iter().flatten().map(|&row| hours[row as usize]).filter(|&s| s <= now).max();
            let current = latest.filter(|&start| now < start + BLOCK_SECONDS);
            figures.latest_start = latest;
            if let Some(start) = current {
                for (hour, row) in hours.iter().zip(&starts) {
                    if row.map(|r| hours[r as usize]) == Some(start) {
                        by_hour[hour].iter().for_each(|call| figures.block.add(call));
                    }
                }
            }
            figures.block_start = current;
            figures.block_left = current.map(|start| start + BLOCK_SECONDS - now);
        }
        figures
    }

    /// The line: `Opus 4.6 | $0.42 session / $3.10 today / $1.20 block (2h 15m left) | 51,200
    /// context (25%)`, the figure a budget measures colored when `colored`.
    fn line(&self, hook: &Hook, budget: Option<Budget>, colored: bool) -> String {
        let model = crate::text::escape::text(hook.model.as_deref().unwrap_or("?"));
        let measured = |cost: Cost, per: BudgetPeriod| -> String {
            match budget.filter(|b| b.per == per) {
                Some(budget) => against(cost, budget, colored),
                None => cost.shown(),
            }
        };
        let today = measured(self.today, BudgetPeriod::Day);
        let block = match self.block_left {
            Some(left) => format!(
                "{} block ({}h {:02}m left)",
                measured(self.block, BudgetPeriod::Block),
                left / 3_600,
                left % 3_600 / 60
            ),
            None => "no block under way".to_string(),
        };
        let mut line = format!("{model} | {} session / {today} today / {block}", self.session.shown());
        if let Some(tokens) = self.context_tokens {
            let window = hook.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW);
            let share = tokens.saturating_mul(100) / window;
            line.push_str(&format!(" | {} context ({share}%)", separated(tokens)));
        }
        line
    }
}

/// A cost measured against a budget: `$4.56 today (23% of $20.00)`'s figure part, green under
/// 80 % of it, yellow to 100 %, red and marked over past it.
fn against(cost: Cost, budget: Budget, colored: bool) -> String {
    let percent = budget.used_percent(cost.usd).floor();
    let over = budget.is_over(cost.usd);
    let text =
        format!("{} ({percent}% of {}{})", cost.shown(), money(budget.usd), if over { ", over" } else { "" });
    if !colored {
        return text;
    }
    let color = match (over, percent >= 80.0) {
        (true, _) => "31",
        (false, true) => "33",
        (false, false) => "32",
    };
    format!("\x1b[{color}m{text}\x1b[0m")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(session: &str, at: i64, cost: Option<f64>, input: i64) -> Call {
        Call {
            harness: "h".into(),
            session_id: Some(session.into()),
            parent_session_id: None,
            at: Some(at),
            cost,
            input_tokens: input,
            file: "f".into(),
            line: at,
        }
    }

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_hook_is_read_part_by_part_and_anything_else_is_refused_with_the_way_to_set_it_up() {
        let hook = hook_of(
            r#"{"session_id":"s1","transcript_path":"/h/projects/-a/s1.jsonl",
                "model":{"id":"m-4-6","display_name":"Opus 4.6"},
                "workspace":{"current_dir":"/a"},"cost":{"total_cost_usd":0.5},
                "context_window":{"context_window_size":1000000,"used_percentage":3}}"#,
        )
        .unwrap();
        assert_eq!(hook.session_id.as_deref(), Some("s1"));
        assert_eq!(hook.model.as_deref(), Some("Opus 4.6"));
        assert_eq!(hook.context_window, Some(1_000_000));
        assert_eq!(hook_of(r#"{"model":{"id":"m"}}"#).unwrap().model.as_deref(), Some("m"));
        assert_eq!(hook_of("{}").unwrap(), Hook::default());
        for wrong in ["", "[1]", "{\"session_id\":", "not json"] {
            let e = hook_of(wrong).unwrap_err().to_string();
            assert!(e.contains("docs/cli.md#statusline"), "{wrong}: {e}");
        }
    }

    #[test]
    fn hours_are_the_zones_and_today_starts_at_its_midnight() {
        let kolkata: Tz = "Asia/Kolkata".parse().unwrap();
        let at = utc("2026-09-01T10:50:00Z").timestamp();
        // 16:20 in Kolkata: its hour began at 16:00 there, 10:30 UTC.
        assert_eq!(hour_of(at, &kolkata), utc("2026-09-01T10:30:00Z").timestamp());
        assert_eq!(hour_of(at, &"UTC".parse().unwrap()), utc("2026-09-01T10:00:00Z").timestamp());
        let tokyo: Tz = "+09:00".parse().unwrap();
        assert_eq!(today_start(&tokyo, utc("2026-09-01T16:00:00Z")), utc("2026-09-01T15:00:00Z"));
    }

    #[test]
    fn the_block_is_the_one_now_is_in_and_is_found_from_the_start_last_seen() {
        let h = |t: &str| utc(t).timestamp();
        let calls = [
            call("a", h("2026-09-01T00:10:00Z"), Some(1.0), 10),
            call("a", h("2026-09-01T04:10:00Z"), Some(2.0), 20),
            // 05:00 is the first hour after the block of 00:00: a block of its own.
            call("b", h("2026-09-01T05:30:00Z"), Some(4.0), 40),
            call("b", h("2026-09-01T06:00:00Z"), None, 50),
        ];
        let hook = Hook { session_id: Some("b".into()), ..Hook::default() };
        let utc_zone: Tz = "UTC".parse().unwrap();
        let now = utc("2026-09-01T07:00:00Z");
        let f = Figures::of(&calls, &hook, Some("h"), None, &utc_zone, now);
        assert_eq!(f.block_start, Some(h("2026-09-01T05:00:00Z")));
        assert_eq!(f.block, Cost { usd: 4.0, unpriced: true });
        assert_eq!(f.session, Cost { usd: 4.0, unpriced: true });
        assert_eq!(f.today, Cost { usd: 7.0, unpriced: true });
        assert_eq!(f.context_tokens, Some(50));
        // From a start seen before, the same block; from a later one than any call, none.
        assert_eq!(Figures::of(&calls, &hook, Some("h"), Some(h("2026-09-01T05:00:00Z")), &utc_zone, now), f);
        let later = Figures::of(&calls, &hook, Some("h"), Some(h("2026-09-01T06:30:00Z")), &utc_zone, now);
        assert_eq!(later.block_start, None);
        // Five hours after the last call's block began, no block is under way; the memo keeps
        // its start still.
        let idle = Figures::of(&calls, &hook, Some("h"), None, &utc_zone, utc("2026-09-01T10:00:00Z"));
        assert_eq!((idle.block_start, idle.block), (None, Cost::default()));
        assert_eq!(idle.latest_start, Some(h("2026-09-01T05:00:00Z")));
    }

    #[test]
    fn a_budget_colors_its_figure_and_says_over() {
        let day = crate::cli::budget::parse_budget("10/day").unwrap();
        let cost = |usd| Cost { usd, unpriced: false };
        assert_eq!(against(cost(2.0), day, false), "$2.00 (20% of $10.00)");
        assert_eq!(against(cost(12.5), day, false), "$12.50 (125% of $10.00, over)");
        assert!(against(cost(2.0), day, true).starts_with("\x1b[32m"));
        assert!(against(cost(8.0), day, true).starts_with("\x1b[33m"));
        assert!(against(cost(10.01), day, true).starts_with("\x1b[31m"));
    }
}
