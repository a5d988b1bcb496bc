//! The build's own facts for `txq --version`: the commit it was built from, when built from a git
//! checkout (`TXQ_COMMIT`, empty otherwise: a crate unpacked by `cargo install txq` has no git).

use std::path::Path;
use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) if !commit.is_empty() => {
            // Changes not committed, tracked files only: the build is not that commit's alone.
            let dirty =
                git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty { format!("{commit}, modified") } else { commit }
        }
        _ => String::new(),
    };
    println!("cargo:rustc-env=TXQ_COMMIT={commit}");
    // Run again when the commit moves (a commit, a checkout) or the index changes (an add).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = Path::new(&dir);
        for path in ["HEAD", "index", "refs/heads", "packed-refs"] {
            if dir.join(path).exists() {
                println!("cargo:rerun-if-changed={}", dir.join(path).display());
            }
        }
    }
    // And when what the binary is built from changes: it may then differ from the commit.
    for path in ["build.rs", "Cargo.toml", "Cargo.lock", "src", "queries", "prices"] {
        println!("cargo:rerun-if-changed={path}");
    }
}
