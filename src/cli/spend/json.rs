//! A spend report in ccusage's JSON shape and key names (`{"daily": [...], "totals": {...}}`,
//! `modelBreakdowns`, `blocks` with `burnRate` and `projection`), so that a script written for
//! ccusage reads txq's; txq's own keys (`calls`, `harness`, `sessionId`, `timeZone`, ...) are
//! beside ccusage's, never instead of them.

use super::ReportKind;
use super::model::{Block, Period, Spend};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

/// What the JSON leaves out or adds, as the flags ask.
pub(crate) struct Shape {
    /// `--no-cost`: no cost key anywhere.
    pub(crate) no_cost: bool,
    /// `--by-agent`: each period's spend per harness too, under `agents`.
    pub(crate) by_agent: bool,
    /// The time zone of the days.
    pub(crate) time_zone: String,
    /// `--budget`: each period's standing against it (`budget`), and a summary beside the totals.
    pub(crate) budget: Option<super::Budget>,
}

/// The report of `periods` (days, weeks, months or sessions) as ccusage writes it.
pub(crate) fn periods(kind: ReportKind, periods: &[Period], shape: &Shape) -> Value {
    let mut total = Spend::default();
    // A period split by project is measured against the budget whole.
    let whole: std::collections::BTreeMap<String, f64> =
        super::model::period_costs(periods).into_iter().collect();
    let rows: Vec<Value> = periods
        .iter()
        .map(|period| {
            let spend = period.spend();
            total.add(&spend);
            let mut row = sums(&spend, shape);
            row.insert("period".into(), json!(period.key));
            row.insert("modelBreakdowns".into(), breakdowns(period, shape));
            row.insert("modelsUsed".into(), json!(period.model_names()));
            if let Some(budget) = &shape.budget {
                row.insert(
                    "budget".into(),
                    budget.json_of(whole.get(&period.key).copied().unwrap_or(spend.cost)),
                );
            }
            match &period.session {
                Some(session) => {
                    row.insert("agent".into(), json!(session.harness));
                    let last = session.ended_at.as_deref().and_then(super::model::instant);
                    row.insert(
                        "metadata".into(),
                        json!({ "lastActivity": last.map(iso), "reasoningOutputTokens": spend.reasoning }),
                    );
                    row.insert("sessionId".into(), json!(session.session_id));
                    row.insert("parentSessionId".into(), json!(session.parent_session_id));
                    row.insert(
                        "project".into(),
                        json!(session.cwd.as_deref().map(crate::sql::reports::project_of)),
                    );
                    row.insert("cwd".into(), json!(session.cwd));
                    row.insert(
                        "startedAt".into(),
                        json!(session.started_at.as_deref().and_then(super::model::instant).map(iso)),
                    );
                }
                None => {
                    if let Some(project) = &period.project {
                        row.insert("project".into(), json!(project));
                        row.insert(kind.instance_key().into(), json!(period.key));
                    }
                    row.insert("agent".into(), json!("all"));
                    row.insert("metadata".into(), json!({ "agents": period.harnesses() }));
                    if shape.by_agent {
                        let agents: Vec<Value> = period
                            .by_harness()
                            .iter()
                            .map(|harness| {
                                let mut agent = sums(&harness.spend(), shape);
                                agent.insert("agent".into(), json!(harness.key));
                                agent.insert("modelBreakdowns".into(), breakdowns(harness, shape));
                                agent.insert("modelsUsed".into(), json!(harness.model_names()));
                                Value::Object(agent)
                            })
                            .collect();
                        row.insert("agents".into(), Value::Array(agents));
                    }
                }
            }
            Value::Object(row)
        })
        .collect();
    let mut report = Map::new();
    match periods.iter().any(|p| p.project.is_some()) {
        // --instances: ccusage's `{"projects": {"<project>": [rows]}}`.
        true => {
            let mut projects = Map::new();
            for (period, row) in periods.iter().zip(rows) {
                let list =
                    projects.entry(period.project.clone().unwrap_or_default()).or_insert_with(|| json!([]));
                if let Value::Array(list) = list {
                    list.push(row);
                }
            }
            report.insert("projects".into(), Value::Object(projects));
        }
        false => {
            report.insert(kind.json_key().into(), Value::Array(rows));
        }
    }
    report.insert("totals".into(), Value::Object(sums(&total, shape)));
    report.insert("timeZone".into(), json!(shape.time_zone));
    if !total.unpriced.is_empty() {
        report.insert("unpricedModels".into(), json!(total.unpriced));
    }
    if total.unknown_tier > 0 && !shape.no_cost {
        report.insert("unknownTierCalls".into(), json!(total.unknown_tier));
    }
    if let Some(budget) = shape.budget {
        let costs: Vec<(String, f64)> = whole.into_iter().collect();
        report.insert("budget".into(), budget_summary(budget, &costs));
    }
    Value::Object(report)
}

/// The budget beside the totals: its amount and period, and the periods over it.
fn budget_summary(budget: super::Budget, costs: &[(String, f64)]) -> Value {
    let over: Vec<&String> = costs.iter().filter(|(_, cost)| budget.is_over(*cost)).map(|(k, _)| k).collect();
    json!({ "usd": budget.usd, "per": budget.per.name(), "periods": costs.len(), "periodsOver": over })
}

/// The token sums of `spend` under ccusage's keys, its cost as `totalCost` and its calls.
fn sums(spend: &Spend, shape: &Shape) -> Map<String, Value> {
    let mut sums = Map::new();
    sums.insert("inputTokens".into(), json!(spend.input));
    sums.insert("outputTokens".into(), json!(spend.output));
    sums.insert("cacheCreationTokens".into(), json!(spend.cache_write));
    sums.insert("cacheReadTokens".into(), json!(spend.cache_read));
    sums.insert("totalTokens".into(), json!(spend.total_tokens()));
    if !shape.no_cost {
        sums.insert("totalCost".into(), json!(spend.cost));
    }
    sums.insert("calls".into(), json!(spend.calls));
    sums
}

/// A period's `modelBreakdowns`: each model's sums, costliest first.
fn breakdowns(period: &Period, shape: &Shape) -> Value {
    let models: Vec<Value> = period
        .by_model()
        .into_iter()
        .map(|(model, spend)| {
            let mut breakdown = Map::new();
            breakdown.insert("modelName".into(), json!(model));
            breakdown.insert("inputTokens".into(), json!(spend.input));
            breakdown.insert("outputTokens".into(), json!(spend.output));
            breakdown.insert("cacheCreationTokens".into(), json!(spend.cache_write));
            breakdown.insert("cacheReadTokens".into(), json!(spend.cache_read));
            if !shape.no_cost {
                breakdown.insert("cost".into(), json!(spend.cost));
            }
            breakdown.insert("calls".into(), json!(spend.calls));
            Value::Object(breakdown)
        })
        .collect();
    Value::Array(models)
}

/// The blocks report as ccusage writes it: each block, and between two of a harness's an idle
/// gap of more than 5 hours as a block of its own (`isGap`), as ccusage lists them; the block
/// under way with its burn rate and projection.
pub(crate) fn blocks(
    blocks: &[Block],
    gaps: bool,
    now: DateTime<Utc>,
    limits: &std::collections::BTreeMap<String, i64>,
    shape: &Shape,
) -> Value {
    let mut rows = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        if gaps && let Some(gap) = super::gap_before(blocks, i) {
            rows.push(gap_row(&block.harness, gap.0, gap.1, shape));
        }
        let mut row = block_row(block, now, shape);
        if let (Some(budget), Value::Object(row)) = (&shape.budget, &mut row) {
            row.insert("budget".into(), budget.json_of(block.spend.cost));
        }
        let projected = row["projection"]["totalTokens"].as_i64();
        if let (Some(limit), Some(projected), Value::Object(row)) =
            (limits.get(&block.harness), projected, &mut row)
        {
            let (status, percent) = super::limit_status(projected, *limit);
            row.insert(
                "tokenLimitStatus".into(),
                json!({ "limit": limit, "projectedUsage": projected, "percentUsed": percent, "status": status }),
            );
        }
        rows.push(row);
    }
    let mut report = Map::new();
    report.insert("blocks".into(), Value::Array(rows));
    report.insert("timeZone".into(), json!(shape.time_zone));
    let unknown_tier: i64 = blocks.iter().map(|b| b.spend.unknown_tier).sum();
    if unknown_tier > 0 && !shape.no_cost {
        report.insert("unknownTierCalls".into(), json!(unknown_tier));
    }
    if let Some(budget) = shape.budget {
        let costs: Vec<(String, f64)> =
            blocks.iter().map(|b| (super::budget::block_name(b), b.spend.cost)).collect();
        report.insert("budget".into(), budget_summary(budget, &costs));
    }
    Value::Object(report)
}

fn block_row(block: &Block, now: DateTime<Utc>, shape: &Shape) -> Value {
    let spend = &block.spend;
    let active = super::is_active(block, now);
    let mut row = Map::new();
    row.insert("id".into(), json!(iso(block.start)));
    row.insert("startTime".into(), json!(iso(block.start)));
    row.insert("endTime".into(), json!(iso(block.end)));
    row.insert("actualEndTime".into(), json!(iso(block.last_call)));
    row.insert("isActive".into(), json!(active));
    row.insert("isGap".into(), json!(false));
    row.insert("entries".into(), json!(spend.calls));
    row.insert("tokenCounts".into(), token_counts(spend));
    row.insert("totalTokens".into(), json!(spend.total_tokens()));
    if !shape.no_cost {
        row.insert("costUSD".into(), json!(spend.cost));
    }
    row.insert("models".into(), json!(block.models));
    let (burn_rate, projection) = match active.then(|| super::burn(block, now)).flatten() {
        Some(burn) => (
            json!({
                "tokensPerMinute": burn.tokens_per_minute,
                "tokensPerMinuteForIndicator": burn.tokens_per_minute_for_indicator,
                "costPerHour": burn.cost_per_hour,
            }),
            json!({
                "totalTokens": burn.projected_tokens,
                "totalCost": burn.projected_cost,
                "remainingMinutes": burn.remaining_minutes,
            }),
        ),
        None => (Value::Null, Value::Null),
    };
    row.insert("burnRate".into(), burn_rate);
    row.insert("projection".into(), projection);
    row.insert("harness".into(), json!(block.harness));
    row.insert("firstCall".into(), json!(iso(block.first_call)));
    row.insert("calls".into(), json!(spend.calls));
    Value::Object(row)
}

fn gap_row(harness: &str, start: DateTime<Utc>, end: DateTime<Utc>, shape: &Shape) -> Value {
    let none = Spend::default();
    let mut row = Map::new();
    row.insert("id".into(), json!(format!("gap-{}", iso(start))));
    row.insert("startTime".into(), json!(iso(start)));
    row.insert("endTime".into(), json!(iso(end)));
    row.insert("isActive".into(), json!(false));
    row.insert("isGap".into(), json!(true));
    row.insert("entries".into(), json!(0));
    row.insert("tokenCounts".into(), token_counts(&none));
    row.insert("totalTokens".into(), json!(0));
    if !shape.no_cost {
        row.insert("costUSD".into(), json!(0.0));
    }
    row.insert("models".into(), json!([]));
    row.insert("burnRate".into(), Value::Null);
    row.insert("projection".into(), Value::Null);
    row.insert("harness".into(), json!(harness));
    Value::Object(row)
}

fn token_counts(spend: &Spend) -> Value {
    json!({
        "inputTokens": spend.input,
        "outputTokens": spend.output,
        "cacheCreationInputTokens": spend.cache_write,
        "cacheReadInputTokens": spend.cache_read,
    })
}

/// A time as ccusage writes one: UTC, to the millisecond, with a `Z`.
pub(crate) fn iso(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
