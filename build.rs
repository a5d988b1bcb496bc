//! The build's own facts for `txq --version`: the commit it was built from, when built from a git
//! checkout (`TXQ_COMMIT`, empty otherwise: a crate unpacked by `cargo install txq` has no git),
//! and how the binary is linked where the linker allows a smaller start.

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
    link_for_a_quick_start();
    // And when what the binary is built from changes: it may then differ from the commit.
    for path in ["build.rs", "Cargo.toml", "Cargo.lock", "src", "queries", "prices"] {
        println!("cargo:rerun-if-changed={path}");
    }
}

/// Links the binary at a fixed address (`-no-pie`) where the linker and the C library take it,
/// else with its relative relocations packed (`-z pack-relative-relocs`, DT_RELR). A
/// position-independent executable has one relocation for every pointer in its tables (280 000
/// of them, 6.7 MB, in txq), which the loader applies at every start, writing 1 200 pages of
/// them: 4 ms of every run (`txq --version` took 5.6 ms as a PIE, 1.8 ms at a fixed address;
/// benchmarks/BUILD.md). The libraries, the heap and the stacks keep their random addresses;
/// only the program's own code does not move. Tried on a C program of one line first: a
/// toolchain that cannot builds as before.
fn link_for_a_quick_start() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("HOST") != var("TARGET")
    {
        return;
    }
    let out = Path::new(&std::env::var_os("OUT_DIR").unwrap_or_default()).to_path_buf();
    let (source, program) = (out.join("relr.c"), out.join("relr"));
    if std::fs::write(&source, "int main(void) { return 0; }\n").is_err() {
        return;
    }
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_string());
    // Linked with the flag, and the program runs: the C library it was linked against loads it.
    let takes = |flag: &str| {
        let linked = Command::new(&linker)
            .arg(flag)
            .arg(&source)
            .arg("-o")
            .arg(&program)
            .output()
            .is_ok_and(|out| out.status.success());
        linked && Command::new(&program).status().is_ok_and(|status| status.success())
    };
    for flag in ["-no-pie", "-Wl,-z,pack-relative-relocs"] {
        if takes(flag) {
            println!("cargo:rustc-link-arg-bins={flag}");
            return;
        }
    }
}
