//! The reeval corpus: runs of evals × cells × attempts, which tree keeps each attempt
//! (`.reeval/runs`, `evals/.history`, or both), where the edge cases and the damage go, and the
//! files written in each attempt's folder.
//!
//! The first run holds the edge cases (a showcase attempt with every event type, an aborted
//! turn, retries then an error, an unreported turn, a truncated output, a cut attempt); the
//! second (the first in a one-run corpus) holds the damage. Both use attempt 1 of the first two
//! evals and first three cells, which every run has.

mod artifacts;
mod attempt;
mod content;
#[cfg(feature = "testing")]
mod expected;
mod lines;
#[cfg(all(test, feature = "testing"))]
mod tests;

use std::{fs, io, path::Path};

use artifacts::{raw_parts, side_files};
use attempt::AttemptWriter;
use content::{EVALS, Eval};
#[cfg(feature = "testing")]
pub use expected::{ExpectedAttempt, ReevalExpected};
use lines::{Line, first_half, flat_object, render};
use serde_json::{Value, json};

use super::rng::{Rng, rfc3339};

/// Where reeval keeps each run's attempts, relative to the corpus dir.
pub(crate) const RUNS_DIR: &str = ".reeval/runs";
/// Where reeval keeps recorded runs, relative to the corpus dir.
pub(crate) const HISTORY_DIR: &str = "evals/.history";
/// 2026-09-26T17:40:57.860Z, the first run's start.
const CORPUS_START_MS: u64 = 1_790_444_457_860;

/// What [`write_reeval_corpus`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReevalOptions {
    pub seed: u64,
    /// Reeval runs; each has 2–3 evals × 3–4 cells × 1–3 attempts.
    pub runs: usize,
    /// Write every damage case.
    pub damage: bool,
    /// Write `transcript.raw.jsonl` beside some attempts.
    pub raw: bool,
}

impl Default for ReevalOptions {
    fn default() -> Self {
        Self { seed: 42, runs: 2, damage: true, raw: true }
    }
}

/// The harness behind a cell, which decides ids, tool names, paths and web reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Harness {
    Cursor,
    ClaudeCode,
    Antigravity,
}

struct Cell {
    slug: &'static str,
    harness: Harness,
}

/// Every run has the first three cells; some add the fourth.
const CELLS: [Cell; 4] = [
    Cell { slug: "cursor-composer-2-5", harness: Harness::Cursor },
    Cell { slug: "claude-code-sonnet-4-6", harness: Harness::ClaudeCode },
    Cell { slug: "antigravity-gemini-3-pro", harness: Harness::Antigravity },
    Cell { slug: "claude-code-opus-4-6", harness: Harness::ClaudeCode },
];
const CORE_CELLS: usize = 3;

/// Which trees keep a run's attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// Not recorded: `.reeval/runs` only.
    RunsOnly,
    /// Recorded: both trees; with `history.artifacts: failures`, history has only the attempts
    /// that did not complete.
    RunsAndHistory { failures_only: bool },
    /// Recorded, and `.reeval/runs` since cleaned: history only.
    HistoryOnly,
}

/// The edge case an attempt is written to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    /// Three completed turns with every event type but `retry` and `error`, every file-edit
    /// kind, failed tools, web searches with and without `ok`, failed fetches.
    Showcase,
    /// A turn ended by a `turn-end` with status `aborted`.
    TurnAborted,
    /// Nine `retry` events, then an `error` and a `turn-end` with status `error`.
    RetriesThenError,
    /// The last turn's `turn-end` carries `unreported`.
    Unreported,
    /// A `bash` output over 128 KB, cut with the marker.
    TruncatedOutput,
    /// The last turn stops after some events, with no `turn-end`.
    Cut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Damage {
    /// A half-written `tool` line mid-file.
    MalformedLine,
    /// The attempt is cut mid-turn and its last line is half a `text` event, with no newline.
    TruncatedTail,
    EmptyLine,
    /// The first `tool` event's `durationMs` written as a string of digits.
    WrongTypedDuration,
    /// A half-written stream part mid-way through `transcript.raw.jsonl`.
    MalformedRawLine,
}

/// How the attempt's last turn ends (every earlier turn completes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Completed,
    Aborted,
    Error,
    Cut,
}

const SHOWCASE_RUN: usize = 0;
const DAMAGE_RUN: usize = 1;
/// (role, eval position, cell position) of attempt 1 in the showcase run.
const ROLE_SLOTS: [(Role, usize, usize); 6] = [
    (Role::Showcase, 0, 0),
    (Role::TurnAborted, 0, 1),
    (Role::RetriesThenError, 0, 2),
    (Role::Unreported, 1, 0),
    (Role::TruncatedOutput, 1, 1),
    (Role::Cut, 1, 2),
];
/// (damage, eval position, cell position) of attempt 1 in the damage run, clamped to the last
/// run. In a one-run corpus they meet the roles above without undoing them. The truncated tail
/// is the only damage at its slot, so it stays the last line.
const DAMAGE_SLOTS: [(Damage, usize, usize); 5] = [
    (Damage::MalformedLine, 0, 0),
    (Damage::MalformedRawLine, 0, 0),
    (Damage::EmptyLine, 0, 2),
    (Damage::WrongTypedDuration, 1, 1),
    (Damage::TruncatedTail, 1, 2),
];

/// Told of each file the reeval writer writes, with its lines as the writer meant them: the
/// answers a correct reader must give are tallied from them ([`ReevalExpected`], for the tests),
/// or the files are counted ([`WrittenAttempts`], for `txq generate`).
trait ReevalTally {
    fn attempt(&mut self, id: AttemptId, lines: &[Line]);
    fn raw(&mut self, file: &str, lines: &[Line]);
    fn side_file(&mut self, file: String);
}

/// Where one transcript sits: its path and what the path says (read by the tally only).
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
struct AttemptId {
    file: String,
    run_id: String,
    eval: &'static str,
    cell: &'static str,
    attempt: i64,
    history: bool,
}

/// What the reeval writer wrote, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrittenAttempts {
    /// `transcript.jsonl` files (an attempt kept in both trees counts twice).
    pub attempts: usize,
}

impl ReevalTally for WrittenAttempts {
    fn attempt(&mut self, _: AttemptId, _: &[Line]) {
        self.attempts += 1;
    }
    fn raw(&mut self, _: &str, _: &[Line]) {}
    fn side_file(&mut self, _: String) {}
}

#[cfg(feature = "testing")]
impl ReevalTally for ReevalExpected {
    fn attempt(&mut self, id: AttemptId, lines: &[Line]) {
        self.record_attempt(id, lines);
    }
    fn raw(&mut self, file: &str, lines: &[Line]) {
        self.record_raw(file, lines);
    }
    fn side_file(&mut self, file: String) {
        self.side_files.push(file);
    }
}

/// Writes a reeval corpus under `dir` ([`write_reeval`]) and returns the answers a correct
/// reader must give, tallied from the lines as they are written.
#[cfg(feature = "testing")]
pub fn write_reeval_corpus(dir: &Path, opts: &ReevalOptions) -> io::Result<ReevalExpected> {
    let mut expected = ReevalExpected::default();
    write_reeval(dir, opts, &mut expected)?;
    expected.finish();
    Ok(expected)
}

/// Writes a reeval corpus under `dir` ([`write_reeval`]) and says how many attempts it wrote.
pub fn write_reeval_files(dir: &Path, opts: &ReevalOptions) -> io::Result<WrittenAttempts> {
    let mut written = WrittenAttempts::default();
    write_reeval(dir, opts, &mut written)?;
    Ok(written)
}

/// Writes a reeval corpus under `dir`: attempts under `dir/.reeval/runs/` and
/// `dir/evals/.history/`, each folder with its `transcript.jsonl` and some with
/// `transcript.raw.jsonl`, `diff.patch` and `judge-input.json`, telling `tally` of each.
fn write_reeval(dir: &Path, opts: &ReevalOptions, tally: &mut impl ReevalTally) -> io::Result<()> {
    let mut corpus_rng = Rng::derive(opts.seed, u64::MAX);
    let mut started_ms = CORPUS_START_MS;
    for index in 0..opts.runs {
        let mut rng = Rng::derive(opts.seed, index as u64);
        let run = RunPlan::new(index, started_ms, &mut rng);
        let attempts_seed = rng.next_u64();
        for (ordinal, slot) in run.attempt_slots().into_iter().enumerate() {
            let mut attempt_rng = Rng::derive(attempts_seed, ordinal as u64);
            let plan = AttemptPlan::new(&run, ordinal, slot, opts, &mut attempt_rng);
            write_attempt(dir, &run, &plan, attempt_rng, tally)?;
        }
        started_ms += 2 * 3_600_000 + corpus_rng.below(3_600_000);
    }
    Ok(())
}

/// Writes one attempt's folder into each tree that keeps it, and tells `tally` of every copy.
fn write_attempt(
    dir: &Path,
    run: &RunPlan,
    plan: &AttemptPlan,
    mut rng: Rng,
    tally: &mut impl ReevalTally,
) -> io::Result<()> {
    let mut lines = AttemptWriter::new(plan, Rng::new(rng.next_u64())).build();
    let mut raw = plan.raw.then(|| raw_parts(&lines, plan.cell.harness, &mut rng));
    let side = side_files(plan, &lines);
    for damage in &plan.damage {
        apply_damage(&mut lines, raw.as_mut(), *damage, &mut rng);
    }
    let transcript_bytes = render(&lines);
    let raw_bytes = raw.as_deref().map(render);
    for (tree, history) in run.trees(plan.ending != Ending::Completed) {
        let folder = format!("{tree}/{}/{}/{}/{}", run.run_id, plan.eval.slug, plan.cell.slug, plan.number);
        fs::create_dir_all(dir.join(&folder))?;
        let file = format!("{folder}/transcript.jsonl");
        fs::write(dir.join(&file), &transcript_bytes)?;
        let id = AttemptId {
            file,
            run_id: run.run_id.clone(),
            eval: plan.eval.slug,
            cell: plan.cell.slug,
            attempt: plan.number,
            history,
        };
        tally.attempt(id, &lines);
        if let (Some(raw), Some(bytes)) = (&raw, &raw_bytes) {
            let file = format!("{folder}/transcript.raw.jsonl");
            fs::write(dir.join(&file), bytes)?;
            tally.raw(&file, raw);
        }
        for (name, contents) in &side {
            let file = format!("{folder}/{name}");
            fs::write(dir.join(&file), contents)?;
            tally.side_file(file);
        }
    }
    Ok(())
}

/// Everything decided about a run before its attempts are written.
struct RunPlan {
    index: usize,
    run_id: String,
    started_ms: u64,
    kept: Kept,
    evals: Vec<&'static Eval>,
    cells: Vec<&'static Cell>,
    /// Attempts per cell (`attempts` in the run's config).
    attempts: i64,
}

impl RunPlan {
    /// Runs alternate between timestamped and ULID ids and cycle through the ways of keeping
    /// attempts: both trees, `.reeval/runs` only, history only, both with failures only.
    fn new(index: usize, started_ms: u64, rng: &mut Rng) -> Self {
        let run_id = if index.is_multiple_of(2) {
            let stamp = rfc3339(started_ms, true).replace([':', '.'], "-");
            format!("{stamp}_{}", rng.hex(6))
        } else {
            rng.ulid(started_ms)
        };
        let kept = match index % 4 {
            0 => Kept::RunsAndHistory { failures_only: false },
            1 => Kept::RunsOnly,
            2 => Kept::HistoryOnly,
            _ => Kept::RunsAndHistory { failures_only: true },
        };
        let evals = (0..rng.size(2, 3)).map(|k| &EVALS[(index + k) % EVALS.len()]).collect();
        let cell_count = if rng.percent(50) { CELLS.len() } else { CORE_CELLS };
        Self {
            index,
            run_id,
            started_ms,
            kept,
            evals,
            cells: CELLS[..cell_count].iter().collect(),
            attempts: rng.range(1, 3),
        }
    }

    /// (eval position, cell position, attempt number) of every attempt, in writing order.
    fn attempt_slots(&self) -> Vec<(usize, usize, i64)> {
        let mut slots = Vec::new();
        for eval in 0..self.evals.len() {
            for cell in 0..self.cells.len() {
                slots.extend((1..=self.attempts).map(|number| (eval, cell, number)));
            }
        }
        slots
    }

    /// (tree, is history) of every tree that keeps an attempt of this run.
    fn trees(&self, failed: bool) -> Vec<(&'static str, bool)> {
        match self.kept {
            Kept::RunsOnly => vec![(RUNS_DIR, false)],
            Kept::HistoryOnly => vec![(HISTORY_DIR, true)],
            Kept::RunsAndHistory { failures_only } if failures_only && !failed => {
                vec![(RUNS_DIR, false)]
            }
            Kept::RunsAndHistory { .. } => vec![(RUNS_DIR, false), (HISTORY_DIR, true)],
        }
    }
}

/// Everything decided about an attempt before its events are written.
struct AttemptPlan {
    eval: &'static Eval,
    cell: &'static Cell,
    number: i64,
    started_ms: u64,
    role: Role,
    ending: Ending,
    /// The turn the attempt stops after, 0-based: the eval's last unless it fails earlier.
    last_turn: usize,
    raw: bool,
    damage: Vec<Damage>,
}

impl AttemptPlan {
    fn new(
        run: &RunPlan,
        ordinal: usize,
        (eval, cell, number): (usize, usize, i64),
        opts: &ReevalOptions,
        rng: &mut Rng,
    ) -> Self {
        let at_slot = |slot_eval, slot_cell| (eval, cell, number) == (slot_eval, slot_cell, 1);
        let showcase_run = run.index == SHOWCASE_RUN;
        let role = ROLE_SLOTS
            .iter()
            .find(|(_, slot_eval, slot_cell)| showcase_run && at_slot(*slot_eval, *slot_cell))
            .map_or(Role::Plain, |(role, _, _)| *role);
        let damage_run = opts.damage && run.index == DAMAGE_RUN.min(opts.runs - 1);
        let damage: Vec<Damage> = DAMAGE_SLOTS
            .iter()
            .filter(|(_, slot_eval, slot_cell)| damage_run && at_slot(*slot_eval, *slot_cell))
            .map(|(damage, _, _)| *damage)
            .collect();
        let cut = role == Role::Cut || damage.contains(&Damage::TruncatedTail);
        let must_complete = damage.contains(&Damage::WrongTypedDuration);
        let eval = run.evals[eval];
        let eval_last_turn = eval.prompts.len() - 1;
        let failing_turn = rng.below(eval.prompts.len() as u64) as usize;
        let (ending, last_turn) = match role {
            _ if cut => (Ending::Cut, eval_last_turn),
            Role::TurnAborted => (Ending::Aborted, failing_turn),
            Role::RetriesThenError => (Ending::Error, failing_turn),
            Role::Plain if !must_complete => match rng.below(100) {
                draw if draw < 8 => (Ending::Error, failing_turn),
                draw if draw < 13 => (Ending::Aborted, failing_turn),
                _ => (Ending::Completed, eval_last_turn),
            },
            _ => (Ending::Completed, eval_last_turn),
        };
        let raw = opts.raw && (damage.contains(&Damage::MalformedRawLine) || rng.percent(30));
        Self {
            eval,
            cell: run.cells[cell],
            number,
            started_ms: run.started_ms + ordinal as u64 * 20_000 + rng.below(15_000),
            role,
            ending,
            last_turn,
            raw,
            damage,
        }
    }
}

/// Puts one damage case into an attempt's valid lines, or into its raw parts when it has them.
fn apply_damage(lines: &mut Vec<Line>, raw: Option<&mut Vec<Line>>, damage: Damage, rng: &mut Rng) {
    match damage {
        Damage::MalformedLine => {
            let cut = [
                ("turn", json!(0)),
                ("type", json!("tool")),
                ("tool", json!("bash")),
                ("output", json!("partial output — the disk filled")),
            ];
            insert_mid(lines, rng, Line::Corrupt(first_half(&flat_object(&cut))));
        }
        Damage::TruncatedTail => {
            let turn = lines.last().and_then(|line| line.get("turn")).cloned().unwrap_or(Value::Null);
            let reply = [
                ("turn", turn),
                ("type", json!("text")),
                ("text", json!("The fix is to check the \"len\" first — 日本語")),
            ];
            lines.push(Line::TruncatedTail(first_half(&flat_object(&reply))));
        }
        Damage::EmptyLine => insert_mid(lines, rng, Line::Empty),
        Damage::WrongTypedDuration => {
            let tool = lines
                .iter_mut()
                .find(|line| line.kind() == Some("tool"))
                .expect("an attempt that completes calls a tool");
            tool.set("durationMs", Value::from(rng.range(5, 900).to_string()));
        }
        Damage::MalformedRawLine => {
            if let Some(raw) = raw {
                let cut = [
                    ("turn", json!(0)),
                    ("type", json!("tool-result")),
                    ("output", json!("partial — the stream closed")),
                ];
                insert_mid(raw, rng, Line::Corrupt(first_half(&flat_object(&cut))));
            }
        }
    }
}

/// Inserts `line` after the first line and before the last.
fn insert_mid(lines: &mut Vec<Line>, rng: &mut Rng, line: Line) {
    let at = rng.size(1, (lines.len() - 1).max(1));
    lines.insert(at, line);
}
