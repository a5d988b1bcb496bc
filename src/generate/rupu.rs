//! The rupu corpus: which runs are written and with what role, each run's events in the
//! documented order, the damage cases, and the same-named files that are not transcripts.

mod run;
mod tools;
mod turn;

use std::{fs, io, path::Path};

use serde_json::json;

#[cfg(feature = "testing")]
use super::expected::Expected;
use super::lines::{FlowMeta, Line, envelope, render, typed_object};
use super::rng::{Rng, rfc3339};
use run::RunWriter;
use tools::flow_record;

/// Where the corpus's transcripts go, relative to the corpus dir.
pub const TRANSCRIPTS_DIR: &str = ".rupu/transcripts";
/// 2026-10-07T09:14:03Z, the first run's start.
const CORPUS_START_MS: u64 = 1_791_364_443_000;

/// What [`write_rupu_corpus`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RupuOptions {
    pub seed: u64,
    /// Agent transcripts to write.
    pub runs: usize,
    /// Write every damage case and the two non-transcripts.
    pub damage: bool,
    /// Inclusive (min, max) byte size of each `tool_result.output`.
    pub tool_output_bytes: (usize, usize),
    /// The share of runs, in percent, written as rupu v0.74's agent loop and netflow sink write
    /// them (`shared/docs/formats.md`, "What rupu v0.74 really writes"): flows before their turn's
    /// lines, streamed calls completed in the run's netflow ledger, audits for MCP tools only,
    /// denials in `tool_result.error`, operator stops and pauses. Which runs is decided by the
    /// seed; the other runs are written as before, byte for byte.
    pub v0_74_percent: u64,
}

impl Default for RupuOptions {
    fn default() -> Self {
        Self { seed: 42, runs: 12, damage: true, tool_output_bytes: (40, 300), v0_74_percent: 0 }
    }
}

/// Where the netflow ledgers of v0.74 runs go, relative to the corpus dir (beside the
/// transcripts).
pub(crate) const NETFLOW_DIR: &str = ".rupu/netflow";

#[cfg(feature = "testing")]
impl Expected {
    /// The ledgers that belong to no run of the corpus (a run's is `.rupu/netflow/<run_id>.jsonl`,
    /// its transcript archived or not): each a unit of an export of its own.
    pub fn ledgers_of_no_run(&self) -> usize {
        let of_run =
            |ledger: &str| self.runs.iter().any(|r| ledger == format!("{NETFLOW_DIR}/{}.jsonl", r.run_id));
        self.ledgers.iter().filter(|l| !of_run(l)).count()
    }
}

/// Run roles by index. The showcase run writes every event type (plus an unknown one and an
/// undocumented field); the version 1 run is a readonly fixer without a schema key; the others
/// pin one edge case each when the corpus has them.
const SHOWCASE_RUN: usize = 0;
const VERSION_1_RUN: usize = 1;
const ABORTED_RUN: usize = 2;
const TURNLESS_RUN: usize = 3;
const SINGLE_TURN_RUN: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Damage {
    EmptyLines,
    MalformedLine,
    NonObjectLines,
    UntypedLines,
    CrlfEndings,
    TruncatedTail,
}

/// Each damage case and its run index, clamped to the last run in a smaller corpus. The truncated
/// tail comes last so it stays the file's final line.
const DAMAGE_PLACES: [(Damage, usize); 6] = [
    (Damage::EmptyLines, 4),
    (Damage::CrlfEndings, 5),
    (Damage::MalformedLine, 6),
    (Damage::NonObjectLines, 7),
    (Damage::UntypedLines, 8),
    (Damage::TruncatedTail, 2),
];

const AGENTS: &[(&str, &[&str])] = &[
    ("code-reviewer", &["read_file", "grep", "glob", "findings.report", "skills.load"]),
    ("planner", &["read_file", "glob", "message.send", "web_fetch", "issues.create"]),
    ("fixer", &["read_file", "write_file", "edit_file", "bash", "grep", "skills.load"]),
    ("researcher", &["web_fetch", "read_file", "message.send", "findings.report"]),
    ("test-writer", &["read_file", "write_file", "bash", "glob"]),
];
/// The showcase run's agent and its granted tools (`web_fetch` is not one of them).
const SHOWCASE_AGENT: (&str, &[&str]) =
    ("fixer", &["read_file", "write_file", "bash", "grep", "skills.load", "message.send", "issues.create"]);
/// The showcase run's tool calls per turn: a skill load, an edit, a command, a refused fetch,
/// a sent message and an emitted action; none on the last turn.
const SHOWCASE_TOOLS: [&[&str]; 4] = [
    &["read_file", "skills.load"],
    &["write_file", "bash", "web_fetch"],
    &["message.send", "issues.create", "grep"],
    &[],
];
/// Providers and their models.
const MODELS: &[(&str, &[&str])] = &[
    ("anthropic", &["claude-sonnet-4-6", "claude-opus-5", "claude-haiku-4-5"]),
    ("openai", &["gpt-5.1", "gpt-5.1-mini", "gpt-5.1-codex"]),
];
const MODES: &[&str] = &["ask", "bypass", "readonly"];

/// Told of each file the rupu writer writes, with its lines as the writer meant them: the
/// answers a correct reader must give are tallied from them ([`Expected`], for the tests), or the
/// files are counted ([`Written`], for `txq generate`).
trait RupuTally {
    fn transcript(&mut self, file: &str, archived: bool, lines: &[Line]);
    fn flows(&mut self, run_id: &str, lines: &[Line], flows: &[FlowMeta], ledger: bool);
    fn ledger(&mut self, file: String);
    fn non_transcript(&mut self, file: String);
}

/// What the rupu writer wrote, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Agent transcripts.
    pub transcripts: usize,
    /// Netflow ledgers.
    pub ledgers: usize,
    /// Files that are not transcripts (a step log).
    pub non_transcripts: usize,
}

impl RupuTally for Written {
    fn transcript(&mut self, _: &str, _: bool, _: &[Line]) {
        self.transcripts += 1;
    }
    fn flows(&mut self, _: &str, _: &[Line], _: &[FlowMeta], _: bool) {}
    fn ledger(&mut self, _: String) {
        self.ledgers += 1;
    }
    fn non_transcript(&mut self, _: String) {
        self.non_transcripts += 1;
    }
}

#[cfg(feature = "testing")]
impl RupuTally for Expected {
    fn transcript(&mut self, file: &str, archived: bool, lines: &[Line]) {
        self.record_transcript(file, archived, lines);
    }
    fn flows(&mut self, run_id: &str, lines: &[Line], flows: &[FlowMeta], ledger: bool) {
        self.record_flows(run_id, lines, flows, ledger);
    }
    fn ledger(&mut self, file: String) {
        self.ledgers.push(file);
    }
    fn non_transcript(&mut self, file: String) {
        self.non_transcripts.push(file);
    }
}

/// Writes a rupu corpus under `dir` ([`write_rupu`]) and returns the answers a correct reader
/// must give, tallied from the lines as they are written.
#[cfg(feature = "testing")]
pub fn write_rupu_corpus(dir: &Path, opts: &RupuOptions) -> io::Result<Expected> {
    let mut expected = Expected { transcripts_dir: TRANSCRIPTS_DIR.to_string(), ..Expected::default() };
    write_rupu(dir, opts, &mut expected)?;
    expected.finish();
    Ok(expected)
}

/// Writes a rupu corpus under `dir` ([`write_rupu`]) and says how many files it wrote.
pub fn write_rupu_files(dir: &Path, opts: &RupuOptions) -> io::Result<Written> {
    let mut written = Written::default();
    write_rupu(dir, opts, &mut written)?;
    Ok(written)
}

/// Writes a rupu corpus under `dir`: transcripts in `dir/.rupu/transcripts/` (some in its
/// `archive/`), plus, with damage on, a step log and a netflow ledger that are not transcripts,
/// telling `tally` of each.
fn write_rupu(dir: &Path, opts: &RupuOptions, tally: &mut impl RupuTally) -> io::Result<()> {
    fs::create_dir_all(dir.join(TRANSCRIPTS_DIR).join("archive"))?;
    let mut corpus_rng = Rng::derive(opts.seed, u64::MAX);
    let workspaces: Vec<String> =
        (0..3).map(|_| format!("ws_{}", corpus_rng.ulid(CORPUS_START_MS - 30 * 86_400_000))).collect();
    let mut started_ms = CORPUS_START_MS;
    for index in 0..opts.runs {
        let mut rng = Rng::derive(opts.seed, index as u64);
        let plan = RunPlan::new(index, started_ms, opts, &workspaces, &mut rng);
        let mut damage_rng = Rng::new(rng.next_u64());
        let (mut lines, flows) = RunWriter::new(&plan, opts, rng).build();
        for damage in &plan.damage {
            apply_damage(&mut lines, *damage, &mut damage_rng);
        }
        tally.transcript(&plan.file, plan.archived, &lines);
        tally.flows(&plan.run_id, &lines, &flows, plan.v0_74);
        fs::write(dir.join(&plan.file), render(&lines, plan.damage.contains(&Damage::CrlfEndings)))?;
        // The sink opens a run's ledger with its first flow.
        if plan.v0_74 && !flows.is_empty() {
            let ledger = format!("{NETFLOW_DIR}/{}.jsonl", plan.run_id);
            fs::create_dir_all(dir.join(NETFLOW_DIR))?;
            let text: String = flows.iter().flat_map(|flow| flow.ledger_lines()).map(|l| l + "\n").collect();
            fs::write(dir.join(&ledger), text)?;
            tally.ledger(ledger);
        }
        started_ms += 90_000 + corpus_rng.below(40 * 60_000);
    }
    if opts.damage {
        write_non_transcripts(dir, &mut corpus_rng, tally)?;
    }
    Ok(())
}

/// The step log (a `run_<ULID>.jsonl` name, no `run_start` anywhere: not a transcript) and a
/// netflow ledger in `transcripts/netflow/`. Their ULIDs fall between the first two runs'.
fn write_non_transcripts(dir: &Path, rng: &mut Rng, tally: &mut impl RupuTally) -> io::Result<()> {
    let at_ms = CORPUS_START_MS + 60_000;
    let step_log = format!("{TRANSCRIPTS_DIR}/run_{}.jsonl", rng.ulid(at_ms));
    let steps = [
        json!({"step_id": "review", "kind": "run", "status": "started",
               "at": rfc3339(at_ms, false)}),
        json!({"step_id": "review", "kind": "run", "status": "completed",
               "note": "child wrote run_start; see its transcript"}),
        json!({"step_id": "open-issue", "kind": "action", "action": "issues.create",
               "status": "completed"}),
    ];
    let ledger_run_id = format!("run_{}", rng.ulid(at_ms + 1));
    let ledger = format!("{TRANSCRIPTS_DIR}/netflow/{ledger_run_id}.jsonl");
    let ctx = json!({"run_id": ledger_run_id, "origin": {"kind": "provider", "name": "anthropic"}});
    let records: Vec<serde_json::Value> = (0..3)
        .map(|k| flow_record(rng, at_ms + k * 700, &ctx, "api.anthropic.com", "POST", "/v1/messages"))
        .collect();
    let flows: Vec<String> = records
        .iter()
        .map(|flow| {
            let fields = flow.as_object().expect("a flow record is an object");
            typed_object("flow", fields.iter().map(|(key, value)| (key.as_str(), value)))
        })
        .collect();
    fs::create_dir_all(dir.join(TRANSCRIPTS_DIR).join("netflow"))?;
    let step_lines: Vec<String> = steps.iter().map(|step| envelope("step", step)).collect();
    // A ledger that lies in a netflow/ folder under the transcripts: read as a ledger, of a run
    // whose transcript is not there.
    let metas: Vec<FlowMeta> = records.into_iter().map(|record| FlowMeta::logged(record, None)).collect();
    tally.flows(&ledger_run_id, &[], &metas, true);
    for (file, lines, ledger) in [(step_log, step_lines, false), (ledger, flows, true)] {
        fs::write(dir.join(&file), lines.iter().map(|line| format!("{line}\n")).collect::<String>())?;
        if ledger {
            tally.ledger(file);
        } else {
            tally.non_transcript(file);
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Ok,
    Error,
    /// No `run_complete`: the file ends somewhere in its second half (a crash).
    Aborted,
    /// An operator stop in ask mode: `run_complete` aborted with `operator_stop`, its last
    /// `tool_call` with no `tool_result` (v0.74 runs).
    Stopped,
    /// A cooperative pause: `run_complete` aborted with `paused` (v0.74 runs).
    Paused,
}

/// Everything decided about a run before its events are written.
struct RunPlan {
    index: usize,
    file: String,
    run_id: String,
    workspace_id: String,
    started_ms: u64,
    agent: &'static str,
    tools: &'static [&'static str],
    provider: &'static str,
    model: &'static str,
    mode: &'static str,
    showcase: bool,
    version_1: bool,
    turns: usize,
    ending: Ending,
    archived: bool,
    damage: Vec<Damage>,
    /// Written as rupu v0.74 writes a run ([`RupuOptions::v0_74_percent`]).
    v0_74: bool,
}

impl RunPlan {
    fn new(index: usize, started_ms: u64, opts: &RupuOptions, workspaces: &[String], rng: &mut Rng) -> Self {
        let last_run = opts.runs.saturating_sub(1);
        let damage: Vec<Damage> = DAMAGE_PLACES
            .iter()
            .filter(|(_, at)| opts.damage && (*at).min(last_run) == index)
            .map(|(damage, _)| *damage)
            .collect();
        let showcase = index == SHOWCASE_RUN;
        let (agent, tools) = match index {
            SHOWCASE_RUN => SHOWCASE_AGENT,
            VERSION_1_RUN => AGENTS[2],
            _ => rng.pick(AGENTS),
        };
        let (provider, models) = if showcase { MODELS[0] } else { rng.pick(MODELS) };
        let turns = match index {
            SHOWCASE_RUN => SHOWCASE_TOOLS.len(),
            TURNLESS_RUN => 0,
            SINGLE_TURN_RUN => 1,
            _ => rng.size(2, 6),
        };
        let ending = match (index, rng.below(100)) {
            _ if damage.contains(&Damage::TruncatedTail) => Ending::Aborted,
            (ABORTED_RUN, _) => Ending::Aborted,
            (TURNLESS_RUN, _) => Ending::Error,
            (SHOWCASE_RUN | VERSION_1_RUN | SINGLE_TURN_RUN, _) => Ending::Ok,
            (_, draw) if draw < 15 => Ending::Error,
            (_, draw) if draw < 30 => Ending::Aborted,
            _ => Ending::Ok,
        };
        // Drawn apart from the run's own draws, so that the other runs stay as they were.
        let mut v0_74_rng = Rng::derive(opts.seed ^ 0x0074_0074, index as u64);
        let v0_74 = index != VERSION_1_RUN && v0_74_rng.percent(opts.v0_74_percent);
        let archived = index % 4 == 3;
        let run_id = format!("run_{}", rng.ulid(started_ms));
        let folder = if archived { "archive/" } else { "" };
        let mut plan = Self {
            index,
            file: format!("{TRANSCRIPTS_DIR}/{folder}{run_id}.jsonl"),
            run_id,
            workspace_id: workspaces[rng.below(workspaces.len() as u64) as usize].clone(),
            started_ms,
            agent,
            tools,
            provider,
            model: if showcase { models[0] } else { rng.pick(models) },
            mode: match index {
                SHOWCASE_RUN => "ask",
                VERSION_1_RUN => "readonly",
                _ => rng.pick(MODES),
            },
            showcase,
            version_1: index == VERSION_1_RUN,
            turns,
            ending,
            archived,
            damage,
            v0_74,
        };
        // A v0.74 run that would end well may be stopped by its operator (ask mode) or paused.
        let draw = v0_74_rng.below(100);
        plan.ending = match plan.ending {
            Ending::Ok if v0_74 && draw < 25 && plan.mode == "ask" => Ending::Stopped,
            Ending::Ok if v0_74 && (25..40).contains(&draw) => Ending::Paused,
            ending => ending,
        };
        plan
    }
}

/// Puts one damage case into a run's otherwise valid lines. Mid-file lines go after the second
/// line and before the last, so `run_start` stays first and valid lines follow them.
fn apply_damage(lines: &mut Vec<Line>, damage: Damage, rng: &mut Rng) {
    let corrupt = |text: &str| Line::Corrupt(text.to_string());
    match damage {
        Damage::EmptyLines => {
            let at = insert_mid(lines, rng, Line::Empty);
            lines.insert(at, Line::Empty);
            insert_mid(lines, rng, Line::Empty);
        }
        Damage::MalformedLine => {
            let half_written = json!({"call_id": "toolu_cut", "duration_ms": 12,
                                      "output": "partial output — the disk filled"});
            insert_mid(lines, rng, Line::Corrupt(first_half(&envelope("tool_result", &half_written))));
        }
        Damage::NonObjectLines => {
            for text in ["[1,2,3]", "\"hello\"", "42"] {
                insert_mid(lines, rng, corrupt(text));
            }
        }
        Damage::UntypedLines => {
            let untyped = [
                r#"{"data":{"content":"no type here"}}"#,
                r#"{"type":7,"data":{}}"#,
                r#"{"type":null,"data":{}}"#,
            ];
            for text in untyped {
                insert_mid(lines, rng, corrupt(text));
            }
        }
        Damage::CrlfEndings => {}
        Damage::TruncatedTail => {
            let cut_off = json!({"content": "The fix is to check the \"len\" first — 日本語"});
            lines.push(Line::TruncatedTail(first_half(&envelope("assistant_delta", &cut_off))));
        }
    }
}

/// Inserts `line` between the second and the last line; returns where.
fn insert_mid(lines: &mut Vec<Line>, rng: &mut Rng, line: Line) -> usize {
    let at = if lines.len() > 2 { rng.size(2, lines.len() - 1) } else { lines.len() };
    lines.insert(at, line);
    at
}

/// The first half of `text`, cut at a char boundary: never valid JSON when `text` is an object.
fn first_half(text: &str) -> String {
    let end = (0..=text.len() / 2).rev().find(|end| text.is_char_boundary(*end)).unwrap_or(0);
    text[..end].to_string()
}
