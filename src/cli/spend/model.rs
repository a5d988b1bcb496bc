//! A spend report's figures as ccusage splits them: the rows of its canned query read into
//! periods (a day, week, month or session) of harnesses and models, and blocks, with the sums
//! its table and its JSON show.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Tokens and money in ccusage's split: `input` is the uncached part of the input (txq's
/// `input_tokens` less its cache reads and writes).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Spend {
    pub(crate) calls: i64,
    pub(crate) input: i64,
    pub(crate) cache_write: i64,
    pub(crate) cache_read: i64,
    pub(crate) output: i64,
    /// The part of `output` that was reasoning.
    pub(crate) reasoning: i64,
    /// The cost of the priced calls, in US dollars.
    pub(crate) cost: f64,
    /// The models some of whose calls have no price (their cost is not in `cost`).
    pub(crate) unpriced: std::collections::BTreeSet<String>,
    /// The calls whose service tier the transcript does not say: priced at the standard rate.
    pub(crate) unknown_tier: i64,
}

impl Spend {
    /// The spend of a row of a spend report's query (`calls`, `input_tokens`, ...,
    /// `cost_usd`), its model named when it has no price.
    pub(crate) fn of_row(row: &Map<String, Value>, model: &str) -> Spend {
        let int = |column: &str| row.get(column).and_then(Value::as_i64).unwrap_or(0);
        let (cache_read, cache_write) = (int("cache_read_tokens"), int("cache_write_tokens"));
        let cost = row.get("cost_usd").and_then(Value::as_f64);
        let mut unpriced = std::collections::BTreeSet::new();
        if cost.is_none() {
            unpriced.insert(model.to_string());
        }
        Spend {
            calls: int("calls"),
            input: int("input_tokens") - cache_read - cache_write,
            cache_write,
            cache_read,
            output: int("output_tokens"),
            reasoning: int("reasoning_tokens"),
            cost: cost.unwrap_or(0.0),
            unpriced,
            unknown_tier: int("unknown_tier_calls"),
        }
    }

    /// Every token: input, cache writes, cache reads and output.
    pub(crate) fn total_tokens(&self) -> i64 {
        self.input + self.cache_write + self.cache_read + self.output
    }

    pub(crate) fn add(&mut self, other: &Spend) {
        self.calls += other.calls;
        self.input += other.input;
        self.cache_write += other.cache_write;
        self.cache_read += other.cache_read;
        self.output += other.output;
        self.reasoning += other.reasoning;
        self.cost = micro_rounded(self.cost + other.cost);
        self.unpriced.extend(other.unpriced.iter().cloned());
        self.unknown_tier += other.unknown_tier;
    }
}

/// A sum of costs rounded to the micro-dollar the query rounds each to, so that adding does
/// not show float noise (`0.30000000000000004`).
pub(crate) fn micro_rounded(dollars: f64) -> f64 {
    (dollars * 1e6).round() / 1e6
}

/// What each period of a report spent, in the report's order: a period split by project
/// (`--instances`) summed whole.
pub(crate) fn period_costs(periods: &[Period]) -> Vec<(String, f64)> {
    let mut spent: Vec<(String, f64)> = Vec::new();
    let mut at: BTreeMap<String, usize> = BTreeMap::new();
    for period in periods {
        let cost = period.spend().cost;
        match at.get(&period.key) {
            Some(&i) => spent[i].1 = micro_rounded(spent[i].1 + cost),
            None => {
                at.insert(period.key.clone(), spent.len());
                spent.push((period.key.clone(), cost));
            }
        }
    }
    spent
}

/// One model's spend in one harness.
#[derive(Debug, Clone)]
pub(crate) struct ModelSpend {
    pub(crate) harness: String,
    pub(crate) model: String,
    pub(crate) spend: Spend,
}

/// A row of the report: a period or a session, with its models' spend.
#[derive(Debug, Clone, Default)]
pub(crate) struct Period {
    /// The day (`2026-09-02`), the week's Monday, the month (`2026-09`), or the session as its
    /// file names it.
    pub(crate) key: String,
    /// With `--instances`: the project (the working directory's last two parts; empty where the
    /// harness writes none).
    pub(crate) project: Option<String>,
    pub(crate) models: Vec<ModelSpend>,
    /// A session's own facts (none for a period of time).
    pub(crate) session: Option<SessionFacts>,
}

/// What a session row says besides its spend.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionFacts {
    pub(crate) harness: String,
    /// As its lines name it.
    pub(crate) session_id: String,
    pub(crate) parent_session_id: Option<String>,
    pub(crate) cwd: Option<String>,
    pub(crate) started_at: Option<String>,
    pub(crate) ended_at: Option<String>,
}

impl Period {
    /// The sum of its models.
    pub(crate) fn spend(&self) -> Spend {
        let mut sum = Spend::default();
        for m in &self.models {
            sum.add(&m.spend);
        }
        sum
    }

    /// Its harnesses, sorted, each once.
    pub(crate) fn harnesses(&self) -> Vec<String> {
        let mut harnesses: Vec<String> = self.models.iter().map(|m| m.harness.clone()).collect();
        harnesses.sort();
        harnesses.dedup();
        harnesses
    }

    /// Its models, sorted, each once.
    pub(crate) fn model_names(&self) -> Vec<String> {
        let mut models: Vec<String> = self.models.iter().map(|m| m.model.clone()).collect();
        models.sort();
        models.dedup();
        models
    }

    /// Each model's spend over its harnesses, costliest first (then by name).
    pub(crate) fn by_model(&self) -> Vec<(String, Spend)> {
        sum_by(&self.models, |m| m.model.clone())
    }

    /// Each harness's spend with its models', by harness.
    pub(crate) fn by_harness(&self) -> Vec<Period> {
        let mut harnesses: BTreeMap<String, Vec<ModelSpend>> = BTreeMap::new();
        for m in &self.models {
            harnesses.entry(m.harness.clone()).or_default().push(m.clone());
        }
        harnesses
            .into_iter()
            .map(|(harness, models)| Period { key: harness, models, ..Period::default() })
            .collect()
    }
}

/// The spend of `models` summed by `key`, costliest first, then by key.
fn sum_by(models: &[ModelSpend], key: impl Fn(&ModelSpend) -> String) -> Vec<(String, Spend)> {
    let mut sums: BTreeMap<String, Spend> = BTreeMap::new();
    for m in models {
        sums.entry(key(m)).or_default().add(&m.spend);
    }
    let mut sums: Vec<(String, Spend)> = sums.into_iter().collect();
    sums.sort_by(|a, b| b.1.cost.total_cmp(&a.1.cost).then_with(|| a.0.cmp(&b.0)));
    sums
}

/// The periods of the rows of `daily`, `weekly`, `monthly` or `daily_by_cwd` (one per period,
/// harness and model, and working directory), each named by `key` (a day bucketed into its
/// week or month), split by project when `by_project` asks; in the order of their names.
pub(crate) fn periods(
    rows: &[Map<String, Value>],
    key: impl Fn(&Map<String, Value>) -> String,
    by_project: bool,
) -> Vec<Period> {
    let mut periods: BTreeMap<(String, Option<String>), Vec<ModelSpend>> = BTreeMap::new();
    for row in rows {
        let project = by_project
            .then(|| text(row, "cwd").as_deref().map(crate::sql::reports::project_of).unwrap_or_default());
        let model = text(row, "model").unwrap_or_default();
        let harness = text(row, "harness").unwrap_or_default();
        let spend = Spend::of_row(row, &model);
        let models = periods.entry((key(row), project)).or_default();
        match models.iter_mut().find(|m| m.harness == harness && m.model == model) {
            Some(m) => m.spend.add(&spend),
            None => models.push(ModelSpend { harness, model, spend }),
        }
    }
    periods
        .into_iter()
        .map(|((key, project), models)| Period { key, project, models, session: None })
        .collect()
}

/// A row's day (the column `day`, `week` or `month` of its query) as the period `of` names it:
/// the day, its week's Monday, or its month (`2026-09`).
pub(crate) fn period_of(row: &Map<String, Value>, column: &str, of: super::ReportKind) -> String {
    let day = text(row, column).unwrap_or_default();
    let date = chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d").ok();
    match (of, date) {
        (super::ReportKind::Weekly, Some(date)) => super::week_of(date).to_string(),
        (super::ReportKind::Monthly, _) => day.get(..7).unwrap_or(&day).to_string(),
        _ => day,
    }
}

/// Whether a working directory is the project `name`: its last two parts (`work/app`), its
/// folder's name, its whole path, or the name a harness gives its folder of sessions
/// (`-home-me-work-app`: [`crate::format::project_folders`]).
pub(crate) fn is_project(cwd: Option<&str>, name: &str) -> bool {
    let Some(cwd) = cwd else { return false };
    let last = cwd.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next().unwrap_or(cwd);
    [crate::sql::reports::project_of(cwd).as_str(), last, cwd.trim_end_matches('/')].contains(&name)
        || crate::format::project_folders(cwd).iter().any(|folder| folder == name)
}

/// The sessions of the rows of `session_models` (one per session and model, a session's rows
/// together).
pub(crate) fn sessions(rows: &[Map<String, Value>]) -> Vec<Period> {
    let mut sessions: Vec<Period> = Vec::new();
    for row in rows {
        let facts = SessionFacts {
            harness: text(row, "harness").unwrap_or_default(),
            session_id: text(row, "session_id").unwrap_or_default(),
            parent_session_id: text(row, "parent_session_id"),
            cwd: text(row, "cwd"),
            started_at: text(row, "started_at"),
            ended_at: text(row, "ended_at"),
        };
        let model = text(row, "model").unwrap_or_default();
        let spend = ModelSpend { harness: facts.harness.clone(), spend: Spend::of_row(row, &model), model };
        let same = |p: &Period| {
            p.session.as_ref().is_some_and(|s| {
                s.harness == facts.harness
                    && s.session_id == facts.session_id
                    && s.parent_session_id == facts.parent_session_id
            })
        };
        match sessions.last_mut() {
            Some(last) if same(last) => last.models.push(spend),
            _ => sessions.push(Period {
                key: text(row, "file_session_id").unwrap_or_else(|| facts.session_id.clone()),
                project: None,
                models: vec![spend],
                session: Some(facts),
            }),
        }
    }
    sessions
}

/// A 5-hour block of one harness, from a row of `blocks`.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) harness: String,
    pub(crate) start: chrono::DateTime<chrono::Utc>,
    pub(crate) end: chrono::DateTime<chrono::Utc>,
    pub(crate) first_call: chrono::DateTime<chrono::Utc>,
    pub(crate) last_call: chrono::DateTime<chrono::Utc>,
    pub(crate) models: Vec<String>,
    pub(crate) spend: Spend,
}

/// The blocks of the rows of `blocks`, in their order; a row whose times cannot be read is left
/// out (the query writes every one).
pub(crate) fn blocks(rows: &[Map<String, Value>]) -> Vec<Block> {
    rows.iter()
        .filter_map(|row| {
            let time = |column: &str| text(row, column).as_deref().and_then(instant);
            let models: Vec<String> = text(row, "models")
                .map(|m| m.split(", ").filter(|m| !m.is_empty()).map(str::to_string).collect())
                .unwrap_or_default();
            let mut spend = Spend::of_row(row, "");
            if !spend.unpriced.is_empty() {
                spend.unpriced = models.iter().cloned().collect();
            }
            Some(Block {
                harness: text(row, "harness").unwrap_or_default(),
                start: time("block_start")?,
                end: time("block_end")?,
                first_call: time("first_call")?,
                last_call: time("last_call")?,
                models,
                spend,
            })
        })
        .collect()
}

/// A time as the JSON writer writes a timestamp with a time zone (`2026-09-02T09:00:00+09:00`,
/// `...Z`), or without one (UTC).
pub(crate) fn instant(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|t| t.and_utc())
}

fn text(row: &Map<String, Value>, column: &str) -> Option<String> {
    match row.get(column)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn input_is_split_as_ccusage_splits_it_and_an_unpriced_model_is_named() {
        let r = row(
            r#"{"calls":2,"input_tokens":1000,"cache_read_tokens":600,"cache_write_tokens":300,"output_tokens":50,"cost_usd":null}"#,
        );
        let spend = Spend::of_row(&r, "m");
        assert_eq!((spend.input, spend.cache_read, spend.cache_write, spend.output), (100, 600, 300, 50));
        assert_eq!(spend.total_tokens(), 1050);
        assert_eq!(spend.unpriced.into_iter().collect::<Vec<_>>(), ["m"]);
    }

    #[test]
    fn rows_of_one_day_are_one_period_and_models_are_costliest_first() {
        let rows: Vec<_> = [
            r#"{"month":"2026-09-01","harness":"a","model":"x","calls":1,"input_tokens":10,"cost_usd":0.1}"#,
            r#"{"month":"2026-09-01","harness":"b","model":"y","calls":1,"input_tokens":10,"cost_usd":0.2}"#,
            r#"{"month":"2026-10-01","harness":"a","model":"x","calls":1,"input_tokens":10,"cost_usd":0.1}"#,
        ]
        .iter()
        .map(|r| row(r))
        .collect();
        let periods =
            periods(&rows, |r| period_of(r, "month", crate::cli::spend::ReportKind::Monthly), false);
        assert_eq!(periods.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(), ["2026-09", "2026-10"]);
        assert_eq!(periods[0].by_model().iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(), ["y", "x"]);
        assert_eq!(periods[0].spend().cost, 0.3);
        assert_eq!(periods[0].harnesses(), ["a", "b"]);
    }

    #[test]
    fn a_day_falls_in_its_week_from_monday_and_its_month() {
        use crate::cli::spend::ReportKind::{Daily, Monthly, Weekly};
        let r = row(r#"{"day":"2026-12-05"}"#);
        assert_eq!(period_of(&r, "day", Daily), "2026-12-05");
        assert_eq!(period_of(&r, "day", Weekly), "2026-11-30");
        assert_eq!(period_of(&r, "day", Monthly), "2026-12");
    }

    #[test]
    fn a_project_is_named_by_its_last_parts_its_folder_its_path_or_its_sessions_folder() {
        for name in ["work/app", "app", "/home/me/work/app", "-home-me-work-app"] {
            assert!(is_project(Some("/home/me/work/app"), name), "{name}");
        }
        assert!(!is_project(Some("/home/me/work/app"), "work"));
        assert!(!is_project(None, "app"));
    }

    #[test]
    fn a_time_is_read_with_or_without_its_zone() {
        let utc = instant("2026-09-02T09:00:00Z").unwrap();
        assert_eq!(instant("2026-09-02T18:00:00+09:00"), Some(utc));
        assert_eq!(instant("2026-09-02T09:00:00"), Some(utc));
        assert_eq!(instant("yesterday"), None);
    }
}
