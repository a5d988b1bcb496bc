//! Machines through the real binary: two generated homes under two labels (`--label`, then the
//! config file's `[sources]`), a transcript of each harness of the first copied byte for byte
//! into the second (as a sync would), and one Codex thread of the first in the second cut short
//! after its first call. Each machine's calls are its own home's tally (a copy is read once, on
//! the first machine), the thread cut short is read on both with a warning naming it, the
//! `machine_spend` query sums the same, and with no label every row is this machine's
//! (`TXQ_MACHINE`).

use crate::util::{command, ndjson_rows, parse_ndjson};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use txq::generate::harness::{ExpectedCall, HarnessOptions};
use txq::generate::{HarnessExpected, write_harness_home};

/// Calls, input and output tokens, per (machine, harness).
type Sums = BTreeMap<(String, String), (i64, i64, i64)>;

fn add<'a>(sums: &mut Sums, machine: &str, calls: impl Iterator<Item = &'a ExpectedCall>) {
    for call in calls {
        let entry = sums.entry((machine.to_string(), call.harness.clone())).or_default();
        *entry = (entry.0 + 1, entry.1 + call.input_tokens, entry.2 + call.output_tokens);
    }
}

fn sums_of(rows: &[Map<String, Value>], calls: &str) -> Sums {
    let int = |row: &Map<String, Value>, c: &str| row[c].as_i64().unwrap_or_else(|| panic!("{c}: {row:?}"));
    rows.iter()
        .map(|row| {
            let key =
                (row["machine"].as_str().unwrap().to_string(), row["harness"].as_str().unwrap().to_string());
            (key, (int(row, calls), int(row, "input_tokens"), int(row, "output_tokens")))
        })
        .collect()
}

fn run(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> (Vec<Map<String, Value>>, String) {
    let mut txq = command(cwd);
    txq.arg("--no-cache").envs(env.iter().copied());
    ndjson_rows(txq, args)
}

const BY_MACHINE: &str = "select machine, harness, count(*) as calls, sum(input_tokens) as input_tokens, \
                          sum(output_tokens) as output_tokens from calls group by 1, 2";

struct Homes {
    root: tempfile::TempDir,
    laptop: HarnessExpected,
    desktop: HarnessExpected,
    /// The Codex thread of the laptop cut short on the desktop, and the calls the cut keeps.
    cut: (String, Vec<ExpectedCall>),
    copied: Vec<String>,
}

fn homes() -> Homes {
    let root = tempfile::tempdir().unwrap();
    let options = |seed| HarnessOptions { seed, sessions: 6, keep_rows: true, ..HarnessOptions::default() };
    let (laptop_dir, desktop_dir) = (root.path().join("laptop"), root.path().join("desktop"));
    let laptop = write_harness_home(&laptop_dir, &options(1)).unwrap();
    let desktop = write_harness_home(&desktop_dir, &options(2)).unwrap();
    assert!(laptop.files.iter().all(|f| !desktop.files.contains(f)), "the homes share no file");
    // Per harness, the laptop's first file of calls (not a copy the harness keeps elsewhere),
    // copied as it is; then a second Codex thread (a plain one in sessions/), cut after the line
    // of its first call.
    let mut files: Vec<(&str, &str)> = Vec::new();
    for call in &laptop.calls {
        if !laptop.shadowed.contains(&call.file) && !files.iter().any(|(_, f)| *f == call.file) {
            files.push((&call.harness, &call.file));
        }
    }
    let mut copied = Vec::new();
    for harness in ["claude", "codex", "gemini"] {
        let (_, file) =
            files.iter().find(|(h, _)| *h == harness).unwrap_or_else(|| panic!("no {harness} file"));
        std::fs::create_dir_all(desktop_dir.join(file).parent().unwrap()).unwrap();
        std::fs::copy(laptop_dir.join(file), desktop_dir.join(file)).unwrap();
        copied.push(file.to_string());
    }
    let cut_file = files
        .iter()
        .filter(|(h, f)| *h == "codex" && f.ends_with(".jsonl") && f.contains("/sessions/"))
        .filter(|(_, f)| !copied.contains(&f.to_string()) && !laptop.cut_off.contains(&f.to_string()))
        .map(|(_, f)| f.to_string())
        .find(|f| laptop.calls.iter().filter(|c| &c.file == f).count() >= 2)
        .expect("a Codex thread of two calls");
    let first = laptop.calls.iter().find(|c| c.file == cut_file).unwrap().line;
    let bytes = std::fs::read(laptop_dir.join(&cut_file)).unwrap();
    let kept: Vec<u8> =
        bytes.split_inclusive(|&b| b == b'\n').take(first as usize).flatten().copied().collect();
    std::fs::create_dir_all(desktop_dir.join(&cut_file).parent().unwrap()).unwrap();
    std::fs::write(desktop_dir.join(&cut_file), kept).unwrap();
    let cut_calls = laptop.calls.iter().filter(|c| c.file == cut_file && c.line <= first).cloned().collect();
    Homes { root, laptop, desktop, cut: (cut_file, cut_calls), copied }
}

impl Homes {
    fn expected(&self) -> Sums {
        let mut sums = Sums::new();
        add(&mut sums, "laptop", self.laptop.calls.iter());
        add(&mut sums, "desktop", self.desktop.calls.iter().chain(&self.cut.1));
        sums
    }
}

#[test]
fn each_machines_calls_are_its_homes_a_copy_counts_once_and_a_thread_that_differs_is_read_on_both() {
    let homes = homes();
    let root = homes.root.path();
    let labels = ["--label", "laptop=laptop", "--label", "desktop=desktop"];
    let (rows, stderr) = run(root, &[&labels[..], &["-e", BY_MACHINE]].concat(), &[]);
    assert_eq!(sums_of(&rows, "calls"), homes.expected(), "{stderr}");
    // The thread cut short is named once, with both machines; no copied file is.
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("with different contents")).collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(warned[0].contains(&homes.cut.0) && warned[0].contains("laptop and desktop"), "{stderr}");
    assert!(homes.copied.iter().all(|f| !stderr.contains(f.as_str())), "{stderr}");
    // Its session is one on each machine; a copied file is listed in `files`, not read.
    let thread = &homes.cut.1[0].session_id;
    let sql = format!("select machine from sessions where session_id = '{thread}' order by machine");
    let (rows, _) = run(root, &[&labels[..], &["-e", &sql]].concat(), &[]);
    let machines: Vec<&str> = rows.iter().map(|r| r["machine"].as_str().unwrap()).collect();
    assert_eq!(machines, ["desktop", "laptop"]);
    let sql = "select machine, count(*) as sessions from sessions group by 1 order by 1";
    let (rows, _) = run(root, &[&labels[..], &["-e", sql]].concat(), &[]);
    let counts: Vec<(&str, i64)> =
        rows.iter().map(|r| (r["machine"].as_str().unwrap(), r["sessions"].as_i64().unwrap())).collect();
    let (laptop, desktop) = (homes.laptop.sessions.len() as i64, homes.desktop.sessions.len() as i64);
    assert_eq!(counts, [("desktop", desktop + 1), ("laptop", laptop)]);
    // The canned query sums the same.
    let (rows, _) = run(root, &[&labels[..], &["query", "machine_spend"]].concat(), &[]);
    assert_eq!(sums_of(&rows, "calls"), homes.expected());
    // The config file's [sources] label the same places, read with no path given.
    let config = root.join("config.toml");
    std::fs::write(&config, "[sources]\nlaptop = \"laptop\"\ndesktop = [\"desktop\"]\n").unwrap();
    let (rows, _) = run(root, &["-e", BY_MACHINE], &[("TXQ_CONFIG", &config)]);
    // With no path given the default places are read too: the hermetic home holds none.
    assert_eq!(sums_of(&rows, "calls"), homes.expected());
}

#[test]
fn with_no_label_every_row_is_this_machines() {
    let homes = homes();
    let root = homes.root.path();
    let mut txq = command(root);
    txq.args(["--no-cache", "--format", "ndjson", "-e"])
        .arg(
            "select distinct machine from calls union select distinct machine from tool_calls \
              union select distinct machine from sessions union select distinct machine from rate_limits",
        )
        .args(["laptop", "desktop"])
        .env("TXQ_MACHINE", "build-box");
    let out = txq.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows = parse_ndjson(&String::from_utf8_lossy(&out.stdout));
    let machines: Vec<&str> = rows.iter().map(|r| r["machine"].as_str().unwrap()).collect();
    assert_eq!(machines, ["build-box"]);
    // A label that is not NAME=PATH is a usage error.
    let out = command(root).args(["--label", "laptop", "-e", "select 1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NAME=PATH"));
}
