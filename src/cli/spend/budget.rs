//! `--budget 20usd/day`: a spend limit per day, week, month or 5-hour block; which periods of a
//! report spent more than it (marked in the table and the JSON, said on stderr), the exit code
//! that tells a script so ([`crate::error::Error::OverBudget`]), and under `--follow` a line the
//! moment a period crosses it.

use super::ReportKind;
use super::model::{self, Block, Period, period_costs};
use super::table::money;
pub(crate) use crate::cli::budget::{Budget, BudgetPeriod};
use crate::error::Error;
use serde_json::{Map, Value};

/// A period that spent more than the budget: its name and what it spent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Over {
    /// The day, the week's Monday, the month (`2026-09`), or a block's harness and start.
    pub(crate) period: String,
    pub(crate) cost: f64,
}

/// What a report's periods spent against a budget.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub(crate) budget: Budget,
    /// How many periods the report has.
    pub(crate) periods: usize,
    /// Those over the budget, in the report's order.
    pub(crate) over: Vec<Over>,
}

impl Budget {
    /// The budget, if it is one a report of `kind` can be measured against: a day's for
    /// `daily`, a week's for `weekly`, a month's for `monthly`, a block's for `blocks`.
    pub(crate) fn for_report(self, kind: ReportKind) -> Result<Budget, Error> {
        let fits = matches!(
            (kind, self.per),
            (ReportKind::Daily, BudgetPeriod::Day)
                | (ReportKind::Weekly, BudgetPeriod::Week)
                | (ReportKind::Monthly, BudgetPeriod::Month)
                | (ReportKind::Blocks, BudgetPeriod::Block)
        );
        match (fits, kind) {
            (true, _) => Ok(self),
            (false, ReportKind::Session) => Err(Error::Usage(
                "--budget is a limit per day, week, month or block: the session report has none of them"
                    .into(),
            )),
            (false, _) => Err(Error::Usage(format!(
                "--budget {}/{} is a limit per {}: it is measured by txq {} (this report's periods are {}s)",
                money(self.usd),
                self.per.name(),
                self.per.name(),
                self.per.report(),
                period_name(kind),
            ))),
        }
    }

    /// The periods of a report (days, weeks or months, a period split by project counted whole)
    /// against the budget.
    pub(crate) fn of_periods(self, periods: &[Period]) -> Verdict {
        self.verdict(period_costs(periods))
    }

    /// The blocks of a report against the budget, each named by its harness and start.
    pub(crate) fn of_blocks(self, blocks: &[Block]) -> Verdict {
        self.verdict(blocks.iter().map(|b| (block_name(b), b.spend.cost)).collect())
    }

    /// The flat rows of the canned query of `kind` (`daily`, `weekly`, `monthly` or `blocks`, as
    /// `--format` and `--follow` give them) against the budget.
    pub(crate) fn of_rows(self, kind: ReportKind, rows: &[Map<String, Value>]) -> Verdict {
        match kind {
            ReportKind::Blocks => self.of_blocks(&model::blocks(rows)),
            _ => self.of_periods(&model::periods(
                rows,
                |row| model::period_of(row, kind.period_column(), kind),
                false,
            )),
        }
    }

    fn verdict(self, spent: Vec<(String, f64)>) -> Verdict {
        let periods = spent.len();
        let over = spent
            .into_iter()
            .filter(|(_, cost)| self.is_over(*cost))
            .map(|(period, cost)| Over { period, cost })
            .collect();
        Verdict { budget: self, periods, over }
    }
}

impl Verdict {
    /// `Ok` when no period passed the budget; else the error that says which did, whose exit
    /// code tells a script so.
    pub(crate) fn result(&self) -> Result<(), Error> {
        if self.over.is_empty() {
            return Ok(());
        }
        const LISTED: usize = 5;
        let mut listed: Vec<String> =
            self.over.iter().take(LISTED).map(|o| format!("{} {}", o.period, money(o.cost))).collect();
        if self.over.len() > LISTED {
            listed.push(format!("{} more", self.over.len() - LISTED));
        }
        let per = self.budget.per.name();
        Err(Error::OverBudget(format!(
            "{} of {} {per}s spent more than {} a {per}: {}",
            self.over.len(),
            self.periods,
            money(self.budget.usd),
            listed.join(", ")
        )))
    }
}

/// A block as the budget's messages name it: its harness and start (UTC).
pub(crate) fn block_name(block: &Block) -> String {
    format!("{} block of {}", block.harness, block.start.format("%Y-%m-%d %H:%M UTC"))
}

/// What a report's periods are called.
fn period_name(kind: ReportKind) -> &'static str {
    match kind {
        ReportKind::Daily => "day",
        ReportKind::Weekly => "week",
        ReportKind::Monthly => "month",
        ReportKind::Blocks => "block",
        ReportKind::Session => "session",
    }
}

/// Under `--follow`: each period as it first passes the budget, said once.
#[derive(Debug)]
pub(crate) struct Crossings {
    pub(crate) kind: ReportKind,
    pub(crate) budget: Budget,
    said: std::collections::HashSet<String>,
}

impl crate::cli::follow::RowsCheck for Crossings {
    fn lines(&mut self, rows: &[Map<String, Value>], first: bool) -> Vec<String> {
        Crossings::lines(self, rows, first)
    }

    fn result(&self, rows: &[Map<String, Value>]) -> Result<(), Error> {
        self.budget.of_rows(self.kind, rows).result()
    }
}

impl Crossings {
    pub(crate) fn new(kind: ReportKind, budget: Budget) -> Crossings {
        Crossings { kind, budget, said: Default::default() }
    }

    /// The lines for stderr of the periods of `rows` (the canned query's, run again) that are
    /// over the budget and were not before; `first` for the rows of the first run, over already.
    pub(crate) fn lines(&mut self, rows: &[Map<String, Value>], first: bool) -> Vec<String> {
        let verdict = self.budget.of_rows(self.kind, rows);
        let per = self.budget.per.name();
        verdict
            .over
            .into_iter()
            .filter(|o| self.said.insert(o.period.clone()))
            .map(|o| {
                let how = if first { "is over" } else { "crossed" };
                format!(
                    "txq: budget: {} {how} {} a {per}: {} spent",
                    o.period,
                    money(self.budget.usd),
                    money(o.cost)
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::budget::parse_budget;

    #[test]
    fn a_budget_is_measured_by_the_report_of_its_period() {
        let day = parse_budget("20/day").unwrap();
        assert!(day.for_report(ReportKind::Daily).is_ok());
        let e = day.for_report(ReportKind::Weekly).unwrap_err().to_string();
        assert!(e.contains("txq daily") && e.contains("weeks"), "{e}");
        assert!(day.for_report(ReportKind::Session).is_err());
        assert!(parse_budget("5/block").unwrap().for_report(ReportKind::Blocks).is_ok());
    }

    fn row(day: &str, cost: Option<f64>) -> Map<String, Value> {
        row_of("day", day, cost)
    }

    /// A row of a report whose period is in `column` (`day`, `week`, `month`).
    fn row_of(column: &str, period: &str, cost: Option<f64>) -> Map<String, Value> {
        let mut row = Map::new();
        row.insert(column.into(), Value::from(period));
        row.insert("harness".into(), Value::from("h"));
        row.insert("model".into(), Value::from("m"));
        row.insert("calls".into(), Value::from(1));
        row.insert("cost_usd".into(), cost.map_or(Value::Null, Value::from));
        row
    }

    #[test]
    fn the_periods_over_are_counted_whole_and_said_once_when_followed() {
        let b = parse_budget("1/day").unwrap();
        let rows =
            vec![row("2026-09-01", Some(0.6)), row("2026-09-01", Some(0.6)), row("2026-09-02", Some(0.5))];
        let verdict = b.of_rows(ReportKind::Daily, &rows);
        assert_eq!(verdict.periods, 2);
        assert_eq!(verdict.over, vec![Over { period: "2026-09-01".into(), cost: 1.2 }]);
        let e = verdict.result().unwrap_err();
        assert_eq!(e.exit_code(), 4);
        assert_eq!(e.to_string(), "1 of 2 days spent more than $1.00 a day: 2026-09-01 $1.20");
        // A week's budget over the weekly report's rows: a week's rows (one per harness and
        // model) add up.
        let weeks = [row_of("week", "2026-08-31", Some(1.2)), row_of("week", "2026-08-31", Some(0.5))];
        let week = parse_budget("1/week").unwrap().of_rows(ReportKind::Weekly, &weeks);
        assert_eq!(week.over, vec![Over { period: "2026-08-31".into(), cost: 1.7 }]);
        let mut crossings = Crossings::new(ReportKind::Daily, b);
        assert_eq!(
            crossings.lines(&rows, true),
            ["txq: budget: 2026-09-01 is over $1.00 a day: $1.20 spent"]
        );
        assert!(crossings.lines(&rows, false).is_empty(), "said once");
        let grown = [rows.clone(), vec![row("2026-09-02", Some(0.7))]].concat();
        assert_eq!(
            crossings.lines(&grown, false),
            ["txq: budget: 2026-09-02 crossed $1.00 a day: $1.20 spent"]
        );
        // A call with no price adds nothing it can be measured by.
        assert!(b.of_rows(ReportKind::Daily, &[row("2026-09-03", None)]).result().is_ok());
    }
}
