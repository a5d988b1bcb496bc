//! The docs say what the code does: `docs/tables.md` is rendered from the format descriptions,
//! and every `$ txq ...` example in the docs runs, with the output shown.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Compares `path` with `expected`; with `TXQ_BLESS=1` writes it instead.
fn check_or_bless(path: &Path, expected: &str) {
    if std::env::var_os("TXQ_BLESS").is_some() {
        std::fs::write(path, expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is stale: run TXQ_BLESS=1 cargo test --test integration docs",
        path.display()
    );
}

#[test]
fn tables_reference_is_up_to_date() {
    let rendered = txq::table::reference::tables_markdown(&txq::format::all());
    check_or_bless(&root().join("docs/tables.md"), &rendered);
}

/// One `$ command` of a ```console block, and the output shown under it.
struct Example {
    file: PathBuf,
    command: String,
    output: String,
}

fn examples(path: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = line.trim() == "```console";
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            out.push(Example {
                file: path.to_path_buf(),
                command: command.to_string(),
                output: String::new(),
            });
        } else if let Some(last) = out.last_mut() {
            last.output.push_str(line);
            last.output.push('\n');
        }
    }
    out
}

/// Runs every example of the README and docs/ in the repository root, with `txq` on the PATH,
/// and checks its stdout (stderr is not part of the examples).
#[test]
fn every_example_in_the_docs_runs_as_shown() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_txq")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut docs = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        docs.push(entry.unwrap().path());
    }
    docs.sort();
    let mut ran = 0;
    for doc in docs.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        for example in examples(doc) {
            if example.command.starts_with("cargo ") {
                continue;
            }
            let mut sh = std::process::Command::new("sh");
            for (name, value) in crate::util::hermetic_env() {
                sh.env(name, value);
            }
            sh.env("TZ", crate::util::TIME_ZONE);
            // HOME is the sample, for the examples that read the default places; the cache,
            // history and XDG folders stay in the tests' own (crate::util::hermetic_env).
            let out = sh
                .args(["-c", &example.command])
                .current_dir(root())
                .env("PATH", &path)
                .env("HOME", root().join("examples/sample"))
                .env_remove("TXQ_PRICES")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                stdout.trim_end(),
                example.output.trim_end(),
                "{}: `{}` printed something else (stderr: {})",
                example.file.display(),
                example.command,
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 3, "the docs have examples");
}
