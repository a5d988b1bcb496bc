//! Claude Code, Codex CLI and Gemini CLI homes: each harness's transcripts in its native layout
//! (or where its environment variable moves it), every trap of `shared/docs/harnesses.md` among
//! them, written together with the normalized `calls`, `tool_calls` and `sessions` a correct
//! reader must give, tallied from the lines as written (never by reading a file back).
//!
//! `write_harness_home(dir, &HarnessOptions::default())` writes, under the fake `$HOME` `dir`:
//! - Claude Code: `.claude/projects/<encoded-cwd>/<sessionId>.jsonl` (and some sessions under
//!   `.config/claude/projects/`), subagents in `<sessionId>/subagents/agent-<agentId>.jsonl`
//!   beside `agent-<agentId>.meta.json`, one older flat `agent-<agentId>.jsonl` ([`claude`]);
//! - Codex CLI: `.codex/sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl` (local-time path),
//!   `.codex/archived_sessions/rollout-….jsonl`, some as `.jsonl.zst` ([`codex`]);
//! - Gemini CLI: `.gemini/tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`, a subagent
//!   in `chats/<parentSessionId>/<sessionId>.jsonl`, `.project_root`, `.gemini/projects.json`
//!   ([`gemini`]).
//!
//! The accounting rules the tally implements are in [`expected`].

mod claude;
mod codex;
#[cfg(feature = "testing")]
mod expected;
mod gemini;
mod git;
#[cfg(all(test, feature = "testing"))]
mod tests;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

#[cfg(feature = "testing")]
pub use expected::ExpectedRateLimit;
#[cfg(feature = "testing")]
pub use expected::{
    CallSums, ExpectedCall, ExpectedSession, ExpectedSessionGit, ExpectedToolCall, HarnessCounts,
    HarnessExpected,
};
pub use git::{ExpectedCommit, GIT_AUTHOR, GIT_PROJECT_DIR};

use super::lines::push_json;
use super::rng::{Rng, rfc3339};

/// The name that stands for every harness (`txq generate --harness all`).
pub const ALL_HARNESSES: &str = "all";

/// The harnesses `names` name (each a harness's name or [`ALL_HARNESSES`]), each once, in the
/// order first named; unknown names are left out.
pub fn harnesses_named(names: &[String]) -> Vec<Harness> {
    let mut chosen = Vec::new();
    for name in names {
        let named: Vec<Harness> = if name == ALL_HARNESSES {
            Harness::ALL.to_vec()
        } else {
            Harness::from_name(name).into_iter().collect()
        };
        for harness in named {
            if !chosen.contains(&harness) {
                chosen.push(harness);
            }
        }
    }
    chosen
}

/// One of the three harnesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Harness {
    Claude,
    Codex,
    Gemini,
}

impl Harness {
    pub const ALL: [Harness; 3] = [Harness::Claude, Harness::Codex, Harness::Gemini];

    /// The `harness` column's value: `claude`, `codex`, `gemini`.
    pub fn name(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
        }
    }

    /// The `provider` column's value for its calls.
    pub fn provider(self) -> &'static str {
        match self {
            Harness::Claude => "anthropic",
            Harness::Codex => "openai",
            Harness::Gemini => "google",
        }
    }

    /// The harness named `name` (`claude`, `codex`, `gemini`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|harness| harness.name() == name)
    }
}

/// What [`write_harness_home`] writes. The directories are relative to the home dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarnessOptions {
    pub seed: u64,
    /// The harnesses to write, each once.
    pub harnesses: Vec<Harness>,
    /// Main sessions per harness (subagents and child threads come on top). The traps sit in the
    /// first sessions (Claude 7, Codex 8, Gemini 3 of them): fewer sessions, fewer traps.
    pub sessions: usize,
    /// Write the damaged lines (a non-JSON line mid-file, a cut-off last line).
    pub damage: bool,
    /// Write the sessions that hold the traps; without them every session is an ordinary one (a
    /// home where txq's accounting and a naive reader's agree, to compare them on).
    pub traps: bool,
    /// Keep every row of `calls`, `tool_calls` and `sessions` in the tally; without it only the
    /// sums and counts are kept (for corpora of gigabytes).
    pub keep_rows: bool,
    /// Claude Code's roots, each holding `projects/` (`CLAUDE_CONFIG_DIR` names one); sessions are
    /// spread over them, most in the first. Default `.claude` and `.config/claude`.
    pub claude_dirs: Vec<PathBuf>,
    /// `CODEX_HOME`, holding `sessions/` and `archived_sessions/`. Default `.codex`.
    pub codex_home: PathBuf,
    /// `GEMINI_CLI_HOME`, holding `.gemini/`. Default the home dir itself (empty path).
    pub gemini_home: PathBuf,
}

impl Default for HarnessOptions {
    fn default() -> Self {
        Self {
            seed: 42,
            harnesses: Harness::ALL.to_vec(),
            sessions: 12,
            damage: true,
            traps: true,
            keep_rows: true,
            claude_dirs: vec![PathBuf::from(".claude"), PathBuf::from(".config/claude")],
            codex_home: PathBuf::from(".codex"),
            gemini_home: PathBuf::new(),
        }
    }
}

impl HarnessOptions {
    /// The environment that points each harness (and a reader) at where these options write
    /// under the home `dir`: `CLAUDE_CONFIG_DIR` (when there is one Claude root), `CODEX_HOME`,
    /// `GEMINI_CLI_HOME`.
    pub fn env_vars(&self, dir: &Path) -> Vec<(&'static str, PathBuf)> {
        let mut vars = Vec::new();
        if let [root] = self.claude_dirs.as_slice() {
            vars.push(("CLAUDE_CONFIG_DIR", dir.join(root)));
        }
        vars.push(("CODEX_HOME", dir.join(&self.codex_home)));
        vars.push(("GEMINI_CLI_HOME", dir.join(&self.gemini_home)));
        vars
    }
}

/// One Claude Code file of a session: the main file, or a subagent's (`agent_id` from its name,
/// `agent-<agentId>.jsonl`), with its lines.
pub(super) struct ClaudeFile<'a> {
    pub(super) path: String,
    // Read by the tally (feature testing) only, as are a line's `replayed` mark and its reader.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(super) agent_id: Option<String>,
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(super) lines: &'a [Line],
}

/// Told of each file the harness writers write, with its lines as the writers meant them: the
/// answers a correct reader must give are tallied from them ([`HarnessExpected`], for the
/// tests), or the files are counted ([`HarnessWritten`], for `txq generate`).
pub(super) trait HarnessTally {
    /// A Claude Code session: its main file, then its subagents' (a response's copies may sit in
    /// any of them).
    fn claude_session(&mut self, files: &[ClaudeFile]);
    /// A Codex rollout that counts, a child's replayed lines marked as replayed.
    fn codex_rollout(&mut self, path: &str, lines: &[Line]);
    /// A Gemini chat; `parent` the folder a subagent's chat sits in, `cwd` its project root.
    fn gemini_chat(&mut self, path: &str, parent: Option<&str>, cwd: &str, lines: &[Line]);
    /// A transcript whose lines do not count (an older copy beside the one that does).
    fn shadowed(&mut self, harness: Harness, path: &str);
    /// A file that is not a transcript.
    fn other(&mut self, path: &str);
}

/// What the harness writers wrote, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessWritten {
    /// Harness name → (sessions, transcript files); subagents and child threads are sessions,
    /// shadowed copies files.
    pub by_harness: BTreeMap<&'static str, (u64, u64)>,
    /// Every file written, relative to the home dir.
    pub paths: Vec<String>,
}

impl HarnessWritten {
    fn saw(&mut self, harness: Harness, sessions: u64, paths: impl IntoIterator<Item = String>) {
        let counts = self.by_harness.entry(harness.name()).or_default();
        counts.0 += sessions;
        for path in paths {
            counts.1 += 1;
            self.paths.push(path);
        }
    }
}

impl HarnessTally for HarnessWritten {
    fn claude_session(&mut self, files: &[ClaudeFile]) {
        self.saw(Harness::Claude, files.len() as u64, files.iter().map(|file| file.path.clone()));
    }
    fn codex_rollout(&mut self, path: &str, _: &[Line]) {
        self.saw(Harness::Codex, 1, [path.to_string()]);
    }
    fn gemini_chat(&mut self, path: &str, _: Option<&str>, _: &str, _: &[Line]) {
        self.saw(Harness::Gemini, 1, [path.to_string()]);
    }
    fn shadowed(&mut self, harness: Harness, path: &str) {
        self.saw(harness, 0, [path.to_string()]);
    }
    fn other(&mut self, path: &str) {
        self.paths.push(path.to_string());
    }
}

/// Writes the chosen harnesses' transcripts under `dir` ([`write_harness`]) and returns what a
/// correct reader of them must answer, tallied from the lines as they are written.
#[cfg(feature = "testing")]
pub fn write_harness_home(dir: &Path, opts: &HarnessOptions) -> io::Result<HarnessExpected> {
    let mut expected = HarnessExpected::new(opts.keep_rows);
    write_harness(dir, opts, &mut expected)?;
    expected.finish();
    Ok(expected)
}

/// Writes a git repository under the home `dir` (absolute) and Claude Code and Codex CLI
/// sessions on its branches ([`git`]), and returns what a correct reader must answer of them:
/// the sessions, their git columns, and the repository's commits (sorted by hash).
#[cfg(feature = "testing")]
pub fn write_git_home(dir: &Path) -> io::Result<(HarnessExpected, Vec<ExpectedCommit>)> {
    let mut expected = HarnessExpected::new(true);
    let root = dir.join(GIT_PROJECT_DIR);
    expected.git_roots.push(root.to_string_lossy().into_owned());
    let commits = git::write(dir, &mut expected)?;
    expected.finish();
    Ok((expected, commits))
}

/// Writes the git repository and its sessions under the home `dir` ([`write_git_home`]) and
/// says what it wrote: the transcripts, and how many commits.
pub fn write_git_files(dir: &Path) -> io::Result<(HarnessWritten, usize)> {
    let mut written = HarnessWritten::default();
    let commits = git::write(dir, &mut written)?;
    Ok((written, commits.len()))
}

/// Writes the chosen harnesses' transcripts under `dir` ([`write_harness`]) and says what it
/// wrote.
pub fn write_harness_files(dir: &Path, opts: &HarnessOptions) -> io::Result<HarnessWritten> {
    let mut written = HarnessWritten::default();
    write_harness(dir, opts, &mut written)?;
    Ok(written)
}

/// Writes each chosen harness's transcripts under `dir`, once, telling `tally` of each file.
fn write_harness(dir: &Path, opts: &HarnessOptions, tally: &mut impl HarnessTally) -> io::Result<()> {
    let mut written = Vec::new();
    for harness in &opts.harnesses {
        if written.contains(harness) {
            continue;
        }
        written.push(*harness);
        match harness {
            Harness::Claude => claude::write(dir, opts, tally)?,
            Harness::Codex => codex::write(dir, opts, tally)?,
            Harness::Gemini => gemini::write(dir, opts, tally)?,
        }
    }
    Ok(())
}

/// One physical line of a generated transcript, as the generator means it.
#[derive(Debug, Clone)]
pub(super) enum Line {
    /// A valid JSON object: its top-level keys in written order (nested objects are written
    /// with sorted keys). `replayed` marks a Codex child's copy of its parent's history.
    Object {
        fields: Vec<(Cow<'static, str>, Value)>,
        #[cfg_attr(not(feature = "testing"), allow(dead_code))]
        replayed: bool,
    },
    /// A newline-terminated line that is not JSON: an error at its line.
    Corrupt(String),
    /// The file's last line, cut off mid-write with no newline: an error at its line too.
    CutOff(String),
}

impl Line {
    /// A valid object with `fields` in this order.
    pub(super) fn object(fields: Vec<(&'static str, Value)>) -> Self {
        let fields = fields.into_iter().map(|(key, value)| (Cow::Borrowed(key), value)).collect();
        Line::Object { fields, replayed: false }
    }

    /// One line of text as a reader meets it: an object, or else a corrupt line.
    #[cfg(test)]
    pub(super) fn parse(text: &str) -> Self {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Line::Object {
                fields: map.into_iter().map(|(key, value)| (Cow::Owned(key), value)).collect(),
                replayed: false,
            },
            _ => Line::Corrupt(text.to_string()),
        }
    }

    /// The value of a top-level key of a valid object.
    pub(super) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Line::Object { fields, .. } => fields.iter().find(|(name, _)| name == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A top-level string.
    pub(super) fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// Whether the line is a replayed copy of a parent's line.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(super) fn is_replayed(&self) -> bool {
        matches!(self, Line::Object { replayed: true, .. })
    }

    /// The same line marked as replayed.
    pub(super) fn replayed(&self) -> Self {
        match self {
            Line::Object { fields, .. } => Line::Object { fields: fields.clone(), replayed: true },
            other => other.clone(),
        }
    }

    /// Sets a top-level key where it stands, or appends it.
    pub(super) fn set(&mut self, key: &'static str, value: Value) {
        if let Line::Object { fields, .. } = self {
            match fields.iter_mut().find(|(name, _)| name == key) {
                Some((_, slot)) => *slot = value,
                None => fields.push((Cow::Borrowed(key), value)),
            }
        }
    }

    /// The line's text, without its newline.
    pub(super) fn text(&self) -> String {
        match self {
            Line::Object { fields, .. } => {
                let mut out = String::from("{");
                for (position, (key, value)) in fields.iter().enumerate() {
                    if position > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::from(key.as_ref()).to_string());
                    out.push(':');
                    push_json(&mut out, value);
                }
                out.push('}');
                out
            }
            Line::Corrupt(text) | Line::CutOff(text) => text.clone(),
        }
    }
}

/// Compact JSON text of `value`, object keys sorted (Codex's `arguments` strings).
pub(super) fn json_text(value: &Value) -> String {
    let mut out = String::new();
    push_json(&mut out, value);
    out
}

/// The first half of `text`, cut at a char boundary: never valid JSON when `text` is an object.
pub(super) fn first_half(text: &str) -> String {
    let end = (0..=text.len() / 2).rev().find(|end| text.is_char_boundary(*end)).unwrap_or(0);
    text[..end].to_string()
}

/// Writes `lines` to `path` (its folders made), each ended by `\n` except a cut-off last line,
/// zstd-compressed at level 3 (as Codex compresses rollouts) when `zstd`.
pub(super) fn write_lines(path: &Path, lines: &[Line], zstd: bool) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let file = BufWriter::with_capacity(1 << 16, File::create(path)?);
    if zstd {
        let mut encoder = zstd::stream::Encoder::new(file, 3)?;
        put_lines(&mut encoder, lines)?;
        encoder.finish()?.flush()
    } else {
        let mut file = file;
        put_lines(&mut file, lines)?;
        file.flush()
    }
}

fn put_lines(out: &mut impl Write, lines: &[Line]) -> io::Result<()> {
    for line in lines {
        out.write_all(line.text().as_bytes())?;
        if !matches!(line, Line::CutOff(_)) {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Writes a small file that is not a transcript (a marker, an index, a subagent's meta).
pub(super) fn write_text(path: &Path, text: &str) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// `root/tail` relative to the home dir, `/`-separated (`root` may be empty).
pub(super) fn relative(root: &Path, tail: &str) -> String {
    let mut parts: Vec<String> = root
        .components()
        .filter_map(|part| match part {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.push(tail.to_string());
    parts.join("/")
}

/// `unix_ms` as the harnesses write it: RFC 3339 UTC with milliseconds.
pub(super) fn ts(unix_ms: u64) -> String {
    rfc3339(unix_ms, true)
}

/// A random (version 4) UUID.
pub(super) fn uuid_v4(rng: &mut Rng) -> String {
    let variant = ["8", "9", "a", "b"][rng.below(4) as usize];
    format!("{}-{}-4{}-{variant}{}-{}", rng.hex(8), rng.hex(4), rng.hex(3), rng.hex(3), rng.hex(12))
}

/// A time-ordered (version 7) UUID, as Codex names threads.
pub(super) fn uuid_v7(rng: &mut Rng, unix_ms: u64) -> String {
    let time = format!("{:012x}", unix_ms & 0xFFFF_FFFF_FFFF);
    let variant = ["8", "9", "a", "b"][rng.below(4) as usize];
    format!("{}-{}-7{}-{variant}{}-{}", &time[..8], &time[8..], rng.hex(3), rng.hex(3), rng.hex(12))
}

const WORDS: &[&str] = &[
    "invoice",
    "total",
    "rounding",
    "test",
    "fixture",
    "parser",
    "config",
    "retry",
    "cache",
    "token",
    "handler",
    "schema",
    "migration",
    "timeout",
    "request",
    "client",
    "branch",
    "build",
    "lint",
    "module",
    "export",
    "report",
    "decimal",
    "currency",
    "ledger",
    "query",
    "index",
    "session",
];

/// `count` words of filler text, the first capitalised, ending with a full stop.
pub(super) fn sentence(rng: &mut Rng, count: usize) -> String {
    let mut text: String = (0..count.max(1)).map(|_| rng.pick(WORDS)).collect::<Vec<_>>().join(" ");
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text.push('.');
    text
}

/// About `bytes` bytes of tool output: numbered source-like lines.
pub(super) fn output_text(rng: &mut Rng, bytes: usize) -> String {
    let mut out = String::new();
    let mut number = 1;
    while out.len() < bytes {
        let words = rng.size(3, 9);
        out.push_str(&format!("{number:>4}\t{}\n", sentence(rng, words)));
        number += 1;
    }
    out
}
