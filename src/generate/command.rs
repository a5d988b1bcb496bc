//! `txq generate`, the generator's own command: its flags (read by clap) and the run that writes a
//! deterministic sample corpus, of a number of runs or about a size.

use super::harness::harnesses_named;
use super::{
    GIT_PROJECT_DIR, HarnessOptions, ReevalOptions, RupuOptions, TRANSCRIPTS_DIR, write_git_files,
    write_harness_files, write_reeval_files, write_rupu_files,
};
use crate::error::Error;
use std::path::{Path, PathBuf};

/// Runs of a pilot corpus that measures how many bytes a run takes.
const PILOT_RUNS: usize = 60;

/// Sessions of a pilot home that measures how many bytes a session takes.
const PILOT_SESSIONS: usize = 40;

/// `txq generate`: writes the corpus its flags ask for into `--out`, saying on stderr what it
/// wrote.
pub fn run(options: &GenerateFlags) -> Result<(), Error> {
    let out = options.out.as_path();
    if options.git {
        run_git(out)?;
    }
    if !options.harness.is_empty() {
        return run_harnesses(out, options);
    }
    if options.git {
        return Ok(());
    }
    let mut rupu = RupuOptions {
        seed: options.seed,
        runs: options.runs,
        damage: !options.no_damage,
        tool_output_bytes: options.tool_output_bytes,
        v0_74_percent: options.v0_74_percent,
    };
    if let Some(size) = options.size {
        rupu.runs = runs_for_size(size, &rupu)?;
    }
    let written = write_rupu_files(out, &rupu).map_err(Error::write(out))?;
    let dir = out.join(TRANSCRIPTS_DIR);
    eprintln!(
        "txq: wrote {} rupu transcripts ({}) to {}",
        written.transcripts,
        crate::text::size::describe(dir_bytes(&dir)),
        crate::text::escape::path(&dir)
    );
    if options.reeval_runs > 0 {
        let reeval = sample_reeval_options(options);
        let written = write_reeval_files(out, &reeval).map_err(Error::write(out))?;
        eprintln!("txq: wrote {} reeval attempts under {}", written.attempts, crate::text::escape::path(out));
    }
    Ok(())
}

/// Writes the harness homes asked for into `out` (a fake home dir), counting what it writes
/// without tallying it, so that a corpus of gigabytes takes little memory.
fn run_harnesses(out: &Path, options: &GenerateFlags) -> Result<(), Error> {
    let mut harness = HarnessOptions {
        seed: options.seed,
        harnesses: harnesses_named(&options.harness),
        sessions: options.runs,
        damage: !options.no_damage,
        traps: !options.no_traps,
        ..HarnessOptions::default()
    };
    if let Some(size) = options.size {
        let pilot = std::env::temp_dir().join(format!("txq-pilot-home-{}", std::process::id()));
        let written =
            write_harness_files(&pilot, &HarnessOptions { sessions: PILOT_SESSIONS, ..harness.clone() });
        let bytes = dir_bytes(&pilot);
        let _ = std::fs::remove_dir_all(&pilot);
        written.map_err(Error::write(&pilot))?;
        harness.sessions = (size / (bytes / PILOT_SESSIONS as u64).max(1)).max(1) as usize;
    }
    let written = write_harness_files(out, &harness).map_err(Error::write(out))?;
    let bytes: u64 = written
        .paths
        .iter()
        .filter_map(|file| std::fs::metadata(out.join(file)).ok())
        .map(|meta| meta.len())
        .sum();
    for (name, (sessions, files)) in &written.by_harness {
        eprintln!("txq: wrote {sessions} {name} sessions in {files} files");
    }
    eprintln!("txq: {} under {}", crate::text::size::describe(bytes), crate::text::escape::path(out));
    Ok(())
}

/// `--git`: the git repository and the sessions in it, under `out` as a home.
fn run_git(out: &Path) -> Result<(), Error> {
    // The sessions' cwd is the repository's absolute path.
    std::fs::create_dir_all(out).map_err(Error::write(out))?;
    let home = std::path::absolute(out).map_err(Error::write(out))?;
    let (written, commits) = write_git_files(&home).map_err(Error::write(out))?;
    for (name, (sessions, _)) in &written.by_harness {
        eprintln!("txq: wrote {sessions} {name} sessions in the git repository");
    }
    let repository = home.join(GIT_PROJECT_DIR);
    eprintln!("txq: wrote a git repository of {commits} commits: {}", crate::text::escape::path(&repository));
    Ok(())
}

/// The reeval part of a generated corpus.
fn sample_reeval_options(options: &GenerateFlags) -> ReevalOptions {
    ReevalOptions { seed: options.seed, runs: options.reeval_runs, damage: !options.no_damage, raw: true }
}

/// How many runs make about `size` bytes, from a pilot corpus with the same options.
fn runs_for_size(size: u64, options: &RupuOptions) -> Result<usize, Error> {
    let pilot = std::env::temp_dir().join(format!("txq-pilot-{}", std::process::id()));
    let written = write_rupu_files(&pilot, &RupuOptions { runs: PILOT_RUNS, ..options.clone() })
        .map_err(Error::write(&pilot));
    let bytes = dir_bytes(&pilot);
    let _ = std::fs::remove_dir_all(&pilot);
    written?;
    let per_run = (bytes / PILOT_RUNS as u64).max(1);
    Ok((size / per_run).max(1) as usize)
}

fn dir_bytes(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The flags of `txq generate`: what the generator writes and where ([`run`]).
#[derive(Debug, Clone, clap::Args)]
pub struct GenerateFlags {
    /// The directory to write into: OUT/.rupu/transcripts, OUT/.reeval/runs, OUT/evals/.history.
    #[arg(long, value_name = "OUT")]
    pub out: PathBuf,
    /// How many agent runs.
    #[arg(long, default_value_t = 12)]
    pub runs: usize,
    /// How many reeval runs to write beside them (each has several evals, cells and attempts).
    #[arg(long, default_value_t = 1)]
    pub reeval_runs: usize,
    /// Write about this many bytes of rupu transcripts instead of --runs runs (`500MB`, `1GB`).
    #[arg(long, value_name = "SIZE", value_parser = crate::text::size::parse)]
    pub size: Option<u64>,
    /// The seed; the same seed writes the same bytes.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Write no damaged lines or files.
    #[arg(long)]
    pub no_damage: bool,
    /// With --harness: write none of the sessions that hold the accounting traps
    /// (docs/harnesses.md), only ordinary ones: a home to compare txq with ccusage on.
    #[arg(long)]
    pub no_traps: bool,
    /// Smallest and largest tool output, in bytes.
    #[arg(long, value_name = "MIN,MAX", value_parser = parse_range, default_value = "40,300")]
    pub tool_output_bytes: (usize, usize),
    /// The share of runs, in percent, written as rupu v0.74 writes them (flows before their
    /// turn, streamed calls completed in .rupu/netflow ledgers, denials in tool results, ...).
    #[arg(long, value_name = "PERCENT", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=100))]
    pub v0_74_percent: u64,
    /// Write a home of Claude Code, Codex CLI or Gemini CLI transcripts instead (claude,
    /// codex, gemini, all; repeatable, or a comma list), --runs sessions of each or about
    /// --size bytes in all: OUT/.claude, OUT/.config/claude, OUT/.codex, OUT/.gemini.
    #[arg(long, value_name = "HARNESS", value_delimiter = ',', value_parser = parse_harness)]
    pub harness: Vec<String>,
    /// Write a git repository too, OUT/src/shop (fixed commits on three branches, written with
    /// gix), and Claude Code and Codex CLI sessions working in it on those branches: for
    /// `sessions.project`, `git_commits`, `branch_spend` and `commit_spend`.
    #[arg(long)]
    pub git: bool,
}

/// A harness `txq generate --harness` writes, or `all`.
fn parse_harness(s: &str) -> Result<String, String> {
    let name = s.trim().to_ascii_lowercase();
    match super::Harness::from_name(&name) {
        Some(_) => Ok(name),
        None if name == super::harness::ALL_HARNESSES => Ok(name),
        None => {
            let names: Vec<&str> = super::Harness::ALL.iter().map(|h| h.name()).collect();
            Err(format!(
                "not a harness: {s:?} (one of {}, or {})",
                names.join(", "),
                super::harness::ALL_HARNESSES
            ))
        }
    }
}

/// `--tool-output-bytes MIN,MAX`.
fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s.split_once(',').ok_or("expected MIN,MAX")?;
    let (a, b) =
        (a.trim().parse().map_err(|e| format!("{e}"))?, b.trim().parse().map_err(|e| format!("{e}"))?);
    if a > b {
        return Err("MIN is larger than MAX".into());
    }
    Ok((a, b))
}
