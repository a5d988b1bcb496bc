//! A budget as `--budget` writes it (`20usd/day`, `$12.50/week`, `5 USD/block`): an amount of
//! US dollars per day, week, month or 5-hour block, and how a cost stands against it (its share,
//! whether it passes it). What a report's periods spent against one is `spend::budget`'s.

use super::spend::model::micro_rounded;
use serde_json::Value;

/// A limit on what one period may spend, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Budget {
    pub(crate) usd: f64,
    pub(crate) per: BudgetPeriod,
}

/// The period a budget is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BudgetPeriod {
    Day,
    Week,
    Month,
    /// A harness's 5-hour billing block.
    Block,
}

impl BudgetPeriod {
    pub(crate) fn name(self) -> &'static str {
        match self {
            BudgetPeriod::Day => "day",
            BudgetPeriod::Week => "week",
            BudgetPeriod::Month => "month",
            BudgetPeriod::Block => "block",
        }
    }

    /// The report whose rows are periods of this kind.
    pub(crate) fn report(self) -> &'static str {
        match self {
            BudgetPeriod::Day => "daily",
            BudgetPeriod::Week => "weekly",
            BudgetPeriod::Month => "monthly",
            BudgetPeriod::Block => "blocks",
        }
    }
}

/// Reads `20usd/day`, `$12.50/week`, `100/month`, `5 USD/block`: an amount of US dollars above
/// 0 (a `$` before it or `usd` after it, either or neither), a `/`, and the period.
pub(crate) fn parse_budget(s: &str) -> Result<Budget, String> {
    let wrong = |why: &str| {
        format!(
            "not a budget: {s:?} ({why}; give an amount of US dollars per day, week, month or block: 20usd/day)"
        )
    };
    let (amount, period) = s.split_once('/').ok_or_else(|| wrong("no /"))?;
    let per = match period.trim().to_ascii_lowercase().as_str() {
        "day" => BudgetPeriod::Day,
        "week" => BudgetPeriod::Week,
        "month" => BudgetPeriod::Month,
        "block" => BudgetPeriod::Block,
        _ => return Err(wrong("the period is not day, week, month or block")),
    };
    let amount = amount.trim();
    let amount = amount.strip_prefix('$').unwrap_or(amount);
    let lower = amount.to_ascii_lowercase();
    let amount = lower.strip_suffix("usd").unwrap_or(&lower).trim();
    let usd: f64 = amount.parse().map_err(|_| wrong("the amount is not a number"))?;
    if !usd.is_finite() || usd <= 0.0 {
        return Err(wrong("the amount must be more than 0"));
    }
    Ok(Budget { usd, per })
}

impl Budget {
    /// Whether spending `cost` passes the budget (reaching it exactly does not).
    pub(crate) fn is_over(&self, cost: f64) -> bool {
        micro_rounded(cost) > self.usd
    }

    /// The share of the budget that `cost` is, in percent.
    pub(crate) fn used_percent(&self, cost: f64) -> f64 {
        cost / self.usd * 100.0
    }

    /// How `cost` stands against the budget, as the JSON gives it beside a period's figures.
    pub(crate) fn json_of(&self, cost: f64) -> Value {
        serde_json::json!({
            "usd": self.usd,
            "usedPercent": (self.used_percent(cost) * 10.0).round() / 10.0,
            "over": self.is_over(cost),
        })
    }

    /// How `cost` stands against the budget, as a table's cell shows it: `63%`, `126% over`.
    pub(crate) fn cell_of(&self, cost: f64) -> String {
        let percent = format!("{:.0}%", self.used_percent(cost).floor());
        match self.is_over(cost) {
            true => format!("{percent} over"),
            false => percent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_an_amount_of_dollars_per_period() {
        let day = |usd| Ok(Budget { usd, per: BudgetPeriod::Day });
        assert_eq!(parse_budget("20usd/day"), day(20.0));
        assert_eq!(parse_budget("$12.5/day"), day(12.5));
        assert_eq!(parse_budget(" 7 USD / Day "), day(7.0));
        assert_eq!(parse_budget("100/month").unwrap().per, BudgetPeriod::Month);
        assert_eq!(parse_budget("3usd/block").unwrap().per, BudgetPeriod::Block);
        assert_eq!(parse_budget("3usd/week").unwrap().per, BudgetPeriod::Week);
        for wrong in [
            "20usd",
            "20usd/year",
            "0/day",
            "-5/day",
            "inf/day",
            "NaN/day",
            "twenty/day",
            "/day",
            "20eur/day",
        ] {
            let e = parse_budget(wrong).unwrap_err();
            assert!(e.starts_with("not a budget") && e.contains("20usd/day"), "{wrong}: {e}");
        }
    }

    #[test]
    fn reaching_the_budget_is_not_passing_it() {
        let b = parse_budget("20/day").unwrap();
        assert!(!b.is_over(20.0) && !b.is_over(19.9999994) && b.is_over(20.000001));
        assert_eq!(b.used_percent(25.0), 125.0);
        // A cell shows the share reached, rounded down: 99.9 % is not 100 %.
        assert_eq!(
            (b.cell_of(19.98), b.cell_of(20.0), b.cell_of(25.3)),
            ("99%".into(), "100%".into(), "126% over".into())
        );
        assert_eq!(b.json_of(25.3), serde_json::json!({"usd": 20.0, "usedPercent": 126.5, "over": true}));
    }
}
