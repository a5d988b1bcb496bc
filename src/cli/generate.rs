//! `txq generate`: writes a deterministic sample corpus, of a number of runs or about a size.

use super::args::GenerateFlags;
use crate::error::Error;
use crate::generate::harness::harnesses_named;
use crate::generate::{
    HarnessOptions, ReevalOptions, RupuOptions, TRANSCRIPTS_DIR, write_harness_files, write_reeval_files,
    write_rupu_files,
};
use std::path::Path;

/// Runs of a pilot corpus that measures how many bytes a run takes.
const PILOT_RUNS: usize = 60;

/// Sessions of a pilot home that measures how many bytes a session takes.
const PILOT_SESSIONS: usize = 40;

/// `txq generate`: writes the corpus its flags ask for into `--out`, saying on stderr what it
/// wrote.
pub(crate) fn run(options: &GenerateFlags) -> Result<(), Error> {
    let out = options.out.as_path();
    if !options.harness.is_empty() {
        return run_harnesses(out, options);
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
