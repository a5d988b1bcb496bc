//! Subagents on a generated home of every harness (Codex's chain three deep, each thread replaying
//! the one above; Claude's and Gemini's subagents one level under their sessions):
//! `sessions.root_session_id` and the canned query `subagent_spend`, each equal to the generator's
//! tally (its sessions' roots and its calls, each call once), the calls priced by `calls`.

use std::collections::BTreeMap;

use crate::util::Session;
use txq::generate::{HarnessExpected, HarnessOptions, write_harness_home};

/// A home of every harness whose tally keeps its rows, and a session over it.
fn home() -> (tempfile::TempDir, HarnessExpected, Session) {
    let dir = tempfile::tempdir().unwrap();
    let options = HarnessOptions { keep_rows: true, ..HarnessOptions::default() };
    let expected = write_harness_home(dir.path(), &options).unwrap();
    let session = Session::open(&[dir.path().to_path_buf()]);
    (dir, expected, session)
}

fn text(value: &serde_json::Value) -> String {
    value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string())
}

#[test]
fn each_sessions_root_is_the_top_of_its_chain_as_the_tally_has_it() {
    let (_dir, expected, session) = home();
    let mut got: Vec<String> = session
        .rows("select harness, session_id, parent_session_id, root_session_id from sessions")
        .iter()
        .map(|r| {
            let [h, s, p, root] =
                ["harness", "session_id", "parent_session_id", "root_session_id"].map(|c| text(&r[c]));
            format!("{h} {s} {p} {root}")
        })
        .collect();
    got.sort();
    let mut want: Vec<String> = expected
        .sessions
        .iter()
        .map(|s| {
            let parent = s.parent_session_id.clone().unwrap_or_else(|| "null".into());
            format!("{} {} {parent} {}", s.harness, s.session_id, s.root_session_id)
        })
        .collect();
    want.sort();
    assert_eq!(got, want);
    // Chains three deep (Codex), and subagents under Claude and Gemini sessions.
    let parent = |id: &str| expected.sessions.iter().find(|s| s.session_id == id)?.parent_session_id.clone();
    assert!(expected.sessions.iter().any(|s| {
        let grandparent = s.parent_session_id.as_deref().and_then(parent);
        grandparent.as_deref().and_then(parent).is_some_and(|top| top == s.root_session_id)
    }));
    for harness in ["claude", "codex", "gemini"] {
        assert!(
            expected.sessions.iter().any(|s| s.harness == harness && s.root_session_id != s.session_id),
            "{harness}: a session under another"
        );
    }
}

/// What `subagent_spend` answers for a root, from the tally.
#[derive(Debug, Default, PartialEq)]
struct Spend {
    started_at: Option<String>,
    cwd: Option<String>,
    own_cost_usd: Option<f64>,
    subagent_cost_usd: Option<f64>,
    cost_usd: Option<f64>,
    subagents: u64,
    calls: u64,
    subagent_calls: u64,
}

#[test]
fn subagent_spend_sums_each_roots_calls_once_as_the_tally_has_them() {
    let (dir, expected, session) = home();
    // Each call's price, as `calls` gives it (call_cost is tested on its own): (file, line) →
    // cost.
    let home = format!("{}/", dir.path().display());
    let price: BTreeMap<(String, u64), Option<f64>> = session
        .rows("select file, line, cost_usd from calls")
        .iter()
        .map(|r| {
            let file = text(&r["file"]).trim_start_matches(&home).to_string();
            ((file, r["line"].as_u64().unwrap()), r["cost_usd"].as_f64())
        })
        .collect();
    // The tally's sessions by key, with their roots; the earliest first, so that a root's time
    // and place are its own, else its earliest session's.
    let mut sessions: Vec<_> = expected.sessions.iter().collect();
    sessions.sort_by_key(|s| (s.session_id != s.root_session_id, s.started_at.clone()));
    let mut want: BTreeMap<(String, String), Spend> = BTreeMap::new();
    let add = |sum: Option<f64>, cost: Option<f64>| Some(sum? + cost?);
    for s in &sessions {
        let own = s.session_id == s.root_session_id;
        let spend = want.entry((s.harness.clone(), s.root_session_id.clone())).or_insert_with(|| Spend {
            started_at: s.started_at.clone(),
            cwd: s.cwd.clone(),
            own_cost_usd: Some(0.0),
            subagent_cost_usd: Some(0.0),
            ..Spend::default()
        });
        if !own {
            spend.subagents += 1;
        }
        let calls = expected.calls.iter().filter(|c| {
            c.harness == s.harness
                && c.session_id == s.session_id
                && c.parent_session_id == s.parent_session_id
        });
        for call in calls {
            let cost = price[&(call.file.clone(), call.line)];
            if own {
                spend.calls += 1;
                spend.own_cost_usd = add(spend.own_cost_usd, cost);
            } else {
                spend.subagent_calls += 1;
                spend.subagent_cost_usd = add(spend.subagent_cost_usd, cost);
            }
        }
    }
    for spend in want.values_mut() {
        spend.cost_usd = add(spend.own_cost_usd, spend.subagent_cost_usd);
    }
    let sql = txq::sql::queries::find("subagent_spend").unwrap().sql;
    let wrapped = format!(
        "select *, to_char(arrow_cast(started_at, 'Timestamp(Millisecond, Some(\"UTC\"))'), \
         '%Y-%m-%dT%H:%M:%S%.3fZ') as started from ({sql}\n) q"
    );
    let cost = |r: &serde_json::Map<String, serde_json::Value>, c: &str| r[c].as_f64();
    let costs: Vec<f64> =
        session.rows(sql).iter().map(|r| cost(r, "cost_usd").unwrap_or(f64::NEG_INFINITY)).collect();
    assert!(costs.windows(2).all(|w| w[0] >= w[1]), "costliest first, no price last: {costs:?}");
    let rows = session.rows(&wrapped);
    let got: BTreeMap<(String, String), Spend> = rows
        .iter()
        .map(|r| {
            let spend = Spend {
                started_at: r["started"].as_str().map(str::to_string),
                cwd: r["cwd"].as_str().map(str::to_string),
                own_cost_usd: cost(r, "own_cost_usd"),
                subagent_cost_usd: cost(r, "subagent_cost_usd"),
                cost_usd: cost(r, "cost_usd"),
                subagents: r["subagents"].as_u64().unwrap(),
                calls: r["calls"].as_u64().unwrap(),
                subagent_calls: r["subagent_calls"].as_u64().unwrap(),
            };
            ((text(&r["harness"]), text(&r["session_id"])), spend)
        })
        .collect();
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "one row per root");
    let near = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
        (a, b) => a.is_none() && b.is_none(),
    };
    for (key, want) in &want {
        let got = &got[key];
        let figures =
            |s: &Spend| (s.started_at.clone(), s.cwd.clone(), s.subagents, s.calls, s.subagent_calls);
        assert_eq!(figures(got), figures(want), "{key:?}");
        for (column, g, w) in [
            ("own_cost_usd", got.own_cost_usd, want.own_cost_usd),
            ("subagent_cost_usd", got.subagent_cost_usd, want.subagent_cost_usd),
            ("cost_usd", got.cost_usd, want.cost_usd),
        ] {
            assert!(near(g, w), "{key:?} {column}: {g:?}, the tally's {w:?}");
        }
    }
    // Every call once: the rows hold all of the tally's calls, replayed copies none.
    let counted: u64 = got.values().map(|s| s.calls + s.subagent_calls).sum();
    assert_eq!(counted, expected.calls.len() as u64);
    assert!(got.values().any(|s| s.subagents >= 4 && s.subagent_calls > 0), "Codex's chain under thread 0");
}
