//! A problem a scan met as the name of a metric: how the problems of a scan run on a cluster's
//! executor travel back, through the scheduler, to the statement that asked.

use crate::table::corpus::Problem;
use datafusion::physical_plan::metrics::{Count, Metric, MetricValue};
use std::path::PathBuf;

/// What starts the name of a metric that is a problem.
const PROBLEM: &str = "txq.problem ";

/// A problem as a metric: a count of 1 whose name says it whole.
pub(crate) fn problem_metric(problem: &Problem) -> Metric {
    let text = match problem {
        Problem::DamagedLines { file, lines, schema, errors_table: _ } => {
            serde_json::json!({"damaged": text_of(file), "lines": lines, "schema": schema})
        }
        Problem::UnreadableFile { file, why } => serde_json::json!({"unreadable": text_of(file), "why": why}),
        Problem::ReadNote { file, note } => serde_json::json!({"read": text_of(file), "note": note}),
        Problem::NulledValue { file, line, column } => {
            serde_json::json!({"nulled": text_of(file), "line": line, "column": column})
        }
    };
    let count = Count::new();
    count.add(1);
    Metric::new(MetricValue::Count { name: format!("{PROBLEM}{text}").into(), count }, None)
}

/// The problem a metric's name says, if it is one ([`problem_metric`]).
pub(crate) fn problem_of_metric(name: &str) -> Option<Problem> {
    let value: serde_json::Value = serde_json::from_str(name.strip_prefix(PROBLEM)?).ok()?;
    let text = |key: &str| value.get(key).and_then(serde_json::Value::as_str).map(str::to_string);
    let number = |key: &str| value.get(key).and_then(serde_json::Value::as_u64);
    if let Some(file) = text("damaged") {
        let format = crate::format::all().into_iter().find(|f| Some(f.name) == text("schema").as_deref())?;
        let errors_table = format.lines_table.as_ref().map_or("errors", |l| l.errors_name);
        return Some(Problem::DamagedLines {
            file: PathBuf::from(file),
            lines: number("lines")?,
            schema: format.name,
            errors_table,
        });
    }
    if let Some(file) = text("unreadable") {
        return Some(Problem::UnreadableFile { file: PathBuf::from(file), why: text("why")? });
    }
    if let Some(file) = text("read") {
        return Some(Problem::ReadNote { file: PathBuf::from(file), note: text("note")? });
    }
    let file = text("nulled")?;
    Some(Problem::NulledValue { file: PathBuf::from(file), line: number("line")?, column: text("column")? })
}

/// A path as JSON text (a path that is not UTF-8 as its lossy text: the warning names it so).
fn text_of(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_is_the_same_problem_after_it_travels_as_a_metric() {
        let problems = [
            Problem::DamagedLines {
                file: PathBuf::from("s3://b/run \"1\".jsonl"),
                lines: 3,
                schema: "rupu",
                errors_table: "errors",
            },
            Problem::UnreadableFile { file: PathBuf::from("/x/y.jsonl"), why: "gone\nnow".into() },
            Problem::ReadNote { file: PathBuf::from("/x/w.jsonl"), note: "read in part: cut".into() },
            Problem::NulledValue { file: PathBuf::from("/x/z.jsonl"), line: 9, column: "model".into() },
        ];
        for problem in problems {
            let metric = problem_metric(&problem);
            assert_eq!(problem_of_metric(metric.value().name()), Some(problem));
        }
        assert_eq!(problem_of_metric("output_rows"), None);
        assert_eq!(problem_of_metric("txq.problem {not json"), None);
    }
}
