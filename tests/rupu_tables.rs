//! rupu tables on generated corpora: every figure compared with what the generator wrote.

use crate::util::{Generated, default_corpus, int, larger_corpus, text};
use std::collections::BTreeMap;
use txq::format::rupu;

/// Runs a check on both generated corpora.
macro_rules! on_both_corpora {
    ($($name:ident => $check:path;)*) => {
        mod default { $( #[test] fn $name() { $check(crate::util::default_corpus()); } )* }
        mod larger { $( #[test] fn $name() { $check(crate::util::larger_corpus()); } )* }
    };
}

on_both_corpora! {
    runs_by_status => super::runs_by_status;
    each_run_summary => super::each_run_summary;
    tokens_by_model => super::tokens_by_model;
    denied_tools => super::denied_tools;
    bytes_by_host => super::bytes_by_host;
    events_by_type => super::events_by_type;
    errors_list_every_damaged_line => super::errors_list_every_damaged_line;
    failed_tools_by_call_id_join => super::failed_tools_by_call_id_join;
    turn_attribution => super::turn_attribution;
    net_flows_take_the_turn_in_progress => super::net_flows_take_the_turn_in_progress;
    typed_tables_agree_with_events => super::typed_tables_agree_with_events;
}

fn runs_by_status(c: &Generated) {
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    for run in &c.expected.runs {
        *expected.entry(run.status.clone()).or_default() += 1;
    }
    // End to end, by the real binary; the other tables' tests run in process.
    let got: BTreeMap<String, i64> = c
        .rows_by_binary("select status, count(*) as n from runs group by status")
        .iter()
        .map(|r| (text(r, "status"), int(r, "n").unwrap()))
        .collect();
    assert_eq!(got, expected);
}

fn each_run_summary(c: &Generated) {
    let rows = c.rows(
        "select run_id, agent, provider, model, mode, status, schema_version, customer, archived, turns, \
         tool_calls, input_tokens, output_tokens, cached_tokens, total_tokens, duration_ms, file from runs order by run_id",
    );
    let mut expected = c.expected.runs.clone();
    expected.sort_by(|a, b| a.run_id.cmp(&b.run_id));
    assert_eq!(rows.len(), expected.len());
    for (row, run) in rows.iter().zip(&expected) {
        assert_eq!(text(row, "run_id"), run.run_id);
        let context = format!("run {}", run.run_id);
        assert_eq!(text(row, "agent"), run.agent, "{context}");
        assert_eq!(text(row, "provider"), run.provider, "{context}");
        assert_eq!(text(row, "model"), run.model, "{context}");
        assert_eq!(text(row, "mode"), run.mode, "{context}");
        assert_eq!(text(row, "status"), run.status, "{context}");
        assert_eq!(int(row, "schema_version"), Some(run.schema_version), "{context}");
        assert_eq!(row["customer"].as_str().map(String::from), run.customer, "{context}");
        assert_eq!(row["archived"].as_bool(), Some(run.archived), "{context}");
        assert_eq!(int(row, "turns"), Some(run.turns as i64), "{context}");
        assert_eq!(int(row, "tool_calls"), Some(run.tool_calls as i64), "{context}");
        assert_eq!(int(row, "input_tokens"), Some(run.input_tokens), "{context}");
        assert_eq!(int(row, "output_tokens"), Some(run.output_tokens), "{context}");
        assert_eq!(int(row, "cached_tokens"), Some(run.cached_tokens), "{context}");
        assert_eq!(int(row, "total_tokens"), run.total_tokens, "{context}");
        assert_eq!(int(row, "duration_ms"), run.duration_ms, "{context}");
        assert!(text(row, "file").ends_with(&run.file), "{context}: {} vs {}", text(row, "file"), run.file);
    }
}

fn tokens_by_model(c: &Generated) {
    let got: BTreeMap<String, (i64, i64, i64)> = c
        .rows("select model, sum(input_tokens) i, sum(output_tokens) o, sum(cached_tokens) k from usage group by model")
        .iter()
        .map(|r| (text(r, "model"), (int(r, "i").unwrap(), int(r, "o").unwrap(), int(r, "k").unwrap())))
        .collect();
    assert_eq!(got, c.expected.tokens_by_model);
}

fn denied_tools(c: &Generated) {
    let got: BTreeMap<(String, String), u64> = c
        .rows("select tool, decision, count(*) n from tool_audit where blocked group by tool, decision")
        .iter()
        .map(|r| ((text(r, "tool"), text(r, "decision")), int(r, "n").unwrap() as u64))
        .collect();
    assert_eq!(got, c.expected.denied_tools);
}

fn bytes_by_host(c: &Generated) {
    let got: BTreeMap<String, (i64, i64)> = c
        .rows("select host, coalesce(sum(bytes_in), 0) i, coalesce(sum(bytes_out), 0) o from net_flow group by host")
        .iter()
        .map(|r| (text(r, "host"), (int(r, "i").unwrap(), int(r, "o").unwrap())))
        .collect();
    assert_eq!(got, c.expected.bytes_by_host);
}

fn events_by_type(c: &Generated) {
    let got: BTreeMap<String, u64> = c
        .rows("select type, count(*) n from events group by type")
        .iter()
        .map(|r| (text(r, "type"), int(r, "n").unwrap() as u64))
        .collect();
    assert_eq!(got, c.expected.events_by_type);
}

/// Every documented type and every type in the data is a table, with as many rows as events.
fn typed_tables_agree_with_events(c: &Generated) {
    let mut types: Vec<String> = rupu::format().events.iter().map(|e| e.type_name.to_string()).collect();
    types.extend(c.expected.events_by_type.keys().cloned());
    types.sort();
    types.dedup();
    let sql = types
        .iter()
        .map(|t| format!("select '{t}' as type, count(*) as n from rupu.\"{t}\""))
        .collect::<Vec<_>>()
        .join(" union all ");
    let got: BTreeMap<String, u64> =
        c.rows(&sql).iter().map(|r| (text(r, "type"), int(r, "n").unwrap() as u64)).collect();
    for t in &types {
        assert_eq!(got[t], c.expected.events_by_type.get(t).copied().unwrap_or(0), "table {t}");
    }
}

fn errors_list_every_damaged_line(c: &Generated) {
    let rows = c.rows("select file, line, run_id, reason, excerpt from errors order by file, line");
    let root = c.dir.path().to_str().unwrap().to_string() + "/";
    let mut got: Vec<(String, u64)> =
        rows.iter().map(|r| (text(r, "file").replace(&root, ""), int(r, "line").unwrap() as u64)).collect();
    got.sort();
    let mut expected = c.expected.errors.clone();
    expected.sort();
    assert_eq!(got, expected);
    for row in &rows {
        assert!(!text(row, "reason").is_empty());
        assert!(text(row, "excerpt").chars().count() <= 200);
    }
}

fn failed_tools_by_call_id_join(c: &Generated) {
    let got: BTreeMap<String, u64> = c
        .rows(
            "select c.tool, count(*) n from tool_call c join tool_result r \
             on r.call_id = c.call_id and r.file = c.file where r.error is not null group by c.tool",
        )
        .iter()
        .map(|r| (text(r, "tool"), int(r, "n").unwrap() as u64))
        .collect();
    assert_eq!(got, c.expected.failed_tools);
}

fn turn_attribution(c: &Generated) {
    let got: BTreeMap<(String, Option<i64>), i64> = c
        .rows("select run_id, turn_idx, sum(output_tokens) o from usage group by run_id, turn_idx")
        .iter()
        .map(|r| ((text(r, "run_id"), int(r, "turn_idx")), int(r, "o").unwrap()))
        .collect();
    assert_eq!(got, c.expected.output_tokens_by_turn);
}

/// A flow written before the first turn_start (a preamble call, or a turn's flow written ahead
/// of the turn's own lines) is in the turn about to begin, never in none.
pub(crate) fn net_flows_take_the_turn_in_progress(c: &Generated) {
    let got: BTreeMap<(String, String), Option<i64>> = c
        .rows("select run_id, id, turn_idx from net_flow")
        .iter()
        .map(|r| ((text(r, "run_id"), text(r, "id")), int(r, "turn_idx")))
        .collect();
    assert_eq!(got, c.expected.net_flow_turns);
}

#[test]
fn files_without_run_start_add_nothing() {
    let c = default_corpus();
    assert!(!c.expected.non_transcripts.is_empty(), "the corpus has step logs and ledgers");
    let rows = c.rows("select distinct file from events union select distinct file from errors");
    for row in rows {
        let file = text(&row, "file");
        assert!(
            !c.expected.non_transcripts.iter().any(|n| file.ends_with(n.as_str())),
            "{file} is not a transcript"
        );
    }
}

#[test]
fn absent_flags_and_counts_read_as_their_defaults() {
    let c = larger_corpus();
    let rows = c.rows(
        "select count(*) filter (where blocked is null) nb, count(*) filter (where restricted is null) nr \
         from tool_audit union all select count(*) filter (where cached_tokens is null), 0 from usage",
    );
    for row in rows {
        assert_eq!(int(&row, "nb"), Some(0));
        assert_eq!(int(&row, "nr"), Some(0));
    }
}
