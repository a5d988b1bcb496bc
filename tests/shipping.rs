//! txq as a command-line tool people install: every flag in `--help`, in each shell's
//! completions and in the manual pages, all made from one definition; `--version` naming the
//! commit and DataFusion; the config file of docs/cli.md, overridden by the environment and the
//! flags in that order.

use crate::harness_rows::{CALLS, calls_of, expected_calls, only};
use crate::util::{Output, command, parse_ndjson};
use std::path::{Path, PathBuf};
use txq::generate::{Harness, RupuOptions, write_harness_home, write_rupu_corpus};

/// Runs the binary in `cwd` with `args` and `env` laid over the hermetic environment.
fn run(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut run = command(cwd);
    run.args(args).stdin(std::process::Stdio::null());
    for (name, value) in env {
        run.env(name, value);
    }
    let out = run.output().expect("txq runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// Each command of the definition (`[]` for txq itself, `["export"]`), with its flags' long
/// names, help and version included.
fn commands() -> Vec<(Vec<String>, Vec<String>)> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, Vec<String>)>) {
        let flags: Vec<String> = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !a.is_positional())
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect();
        out.push((path.clone(), flags));
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut path = path.clone();
            path.push(sub.get_name().to_string());
            walk(sub, path, out);
        }
    }
    let mut cmd = txq::cli::args::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, Vec::new(), &mut out);
    out
}

#[test]
fn every_flag_of_every_command_is_in_its_help_each_shells_completions_and_its_manual_page() {
    let dir = tempfile::tempdir().unwrap();
    let commands = commands();
    assert!(commands.len() >= 8, "txq and its commands: {commands:?}");
    let shells = ["bash", "zsh", "fish", "powershell", "elvish"];
    let scripts: Vec<(&str, String)> = shells
        .iter()
        .map(|shell| {
            let out = run(dir.path(), &["completions", shell], &[]);
            assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
            assert!(out.stdout.len() > 1000, "{shell}: {}", out.stdout);
            (*shell, out.stdout)
        })
        .collect();
    let mut checked = 0;
    for (path, flags) in &commands {
        let name = path.join(" ");
        let mut help_args: Vec<&str> = path.iter().map(String::as_str).collect();
        help_args.push("--help");
        let help = run(dir.path(), &help_args, &[]);
        assert_eq!(help.code, 0, "{name} --help: {}", help.stderr);
        let mut man_args = vec!["man"];
        man_args.extend(path.iter().map(String::as_str));
        let page = run(dir.path(), &man_args, &[]);
        assert_eq!(page.code, 0, "txq man {name}: {}", page.stderr);
        assert!(page.stdout.starts_with(".ie") || page.stdout.contains(".TH"), "roff: {}", page.stdout);
        // `txq scheduler --help` and `txq executor --help` are Ballista's, with its flags and
        // txq's own for them (tests/cluster.rs checks them), not txq's global flags.
        let help_is_ballistas = matches!(path.last().map(String::as_str), Some("scheduler" | "executor"));
        for flag in flags {
            assert!(
                help_is_ballistas || help.stdout.contains(&format!("--{flag}")),
                "--{flag} not in `txq {name} --help`"
            );
            assert!(
                // roff spells every hyphen `\-`.
                page.stdout.contains(&format!("--{flag}").replace('-', "\\-")),
                "--{flag} not in the manual page of `txq {name}`"
            );
            for (shell, script) in &scripts {
                let spelt = match *shell {
                    "fish" => format!("-l {flag}"),
                    _ => format!("--{flag}"),
                };
                assert!(script.contains(&spelt), "--{flag} of `txq {name}` not in the {shell} completions");
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} flags");

    // Every page at once, into a folder: one for txq and one per command.
    let pages = dir.path().join("man1");
    let out = run(dir.path(), &["man", "--out", pages.to_str().unwrap()], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut written: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut want: Vec<String> = commands
        .iter()
        .map(|(path, _)| match path.is_empty() {
            true => "txq.1".to_string(),
            false => format!("txq-{}.1", path.join("-")),
        })
        .collect();
    want.sort();
    assert_eq!(written, want);
    assert_eq!(out.stdout.lines().count(), want.len(), "{}", out.stdout);

    let wrong = run(dir.path(), &["man", "exports"], &[]);
    assert_eq!(wrong.code, 2);
    assert!(wrong.stderr.contains("no command \"exports\" has a manual page"), "{}", wrong.stderr);
    let wrong = run(dir.path(), &["completions", "tcsh"], &[]);
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
}

#[test]
fn version_names_the_commit_it_was_built_from_and_datafusion() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["--version"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out.stdout.trim_end();
    let version = env!("CARGO_PKG_VERSION");
    assert!(line.starts_with(&format!("txq {version}")), "{line}");
    let datafusion = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"))
        .unwrap()
        .split("[[package]]")
        .find(|p| p.contains("\nname = \"datafusion\"\n"))
        .and_then(|p| p.split("version = \"").nth(1).and_then(|v| v.split('"').next()).map(str::to_string))
        .expect("datafusion in Cargo.lock");
    assert!(line.ends_with(&format!("DataFusion {datafusion}")), "{line}");
    // Built from a git checkout (as the tests are): the commit it was built from.
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(head) => assert!(line.contains(&format!("({head}")), "{line} does not name {head}"),
        None => eprintln!("not a git checkout: the commit is not checked"),
    }
}

/// The config file docs/cli.md shows, as written there.
fn documented_config() -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")).unwrap();
    let block =
        doc.split("```toml\n").nth(1).and_then(|rest| rest.split("```").next()).expect("a toml block");
    assert!(block.contains("~/.config/txq/config.toml"), "{block}");
    block.to_string()
}

/// A home for the documented config: rupu runs in `~/work/.rupu/transcripts`, Claude Code's
/// sessions in `~/.claude` and `~/.config/claude`, the prices file, and the config itself in
/// `$XDG_CONFIG_HOME/txq/config.toml`.
struct ConfiguredHome {
    home: tempfile::TempDir,
    runs: txq::generate::Expected,
    claude: txq::generate::HarnessExpected,
}

impl ConfiguredHome {
    fn new(config: &str) -> ConfiguredHome {
        let home = tempfile::tempdir().unwrap();
        let runs = write_rupu_corpus(
            &home.path().join("work"),
            &RupuOptions { runs: 30, damage: false, ..RupuOptions::default() },
        )
        .unwrap();
        let claude = write_harness_home(home.path(), &only(Harness::Claude)).unwrap();
        std::fs::create_dir_all(home.path().join("prices")).unwrap();
        let price = |model: &str| {
            format!(r#"{{"{model}": {{"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}}}"#)
        };
        std::fs::write(home.path().join("prices/negotiated.json"), price("negotiated-model")).unwrap();
        std::fs::write(home.path().join("prices/env.json"), price("env-model")).unwrap();
        std::fs::write(home.path().join("prices/flag.json"), price("flag-model")).unwrap();
        std::fs::create_dir_all(home.path().join("config/txq")).unwrap();
        std::fs::write(home.path().join("config/txq/config.toml"), config).unwrap();
        std::fs::create_dir_all(home.path().join("elsewhere")).unwrap();
        ConfiguredHome { home, runs, claude }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.home.path().join(relative)
    }

    /// txq run in `~/elsewhere` with this home and config, and `env` over them.
    fn txq(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let home = self.home.path();
        let config = home.join("config");
        let mut all: Vec<(&str, &Path)> = vec![("HOME", home), ("XDG_CONFIG_HOME", &config)];
        all.extend_from_slice(env);
        run(&home.join("elsewhere"), args, &all)
    }
}

#[test]
fn the_config_file_of_the_docs_sets_each_setting_and_the_environment_then_the_flags_override_it() {
    let home = ConfiguredHome::new(&documented_config());
    let runs = "select run_id from runs order by run_id";

    // format = "csv"; paths: the rupu runs of ~/work and the sessions of ~/.claude, not the
    // default places (~/.config/claude is one).
    let out = home.txq(&["-e", runs], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut want: Vec<String> = home.runs.runs.iter().map(|r| r.run_id.clone()).collect();
    want.sort();
    assert_eq!(out.stdout, format!("run_id\n{}\n", want.join("\n")));
    let got = {
        let out = home.txq(&["--format", "ndjson", "--no-cache", "-e", CALLS], &[]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        parse_ndjson(&out.stdout)
    };
    let claude: Vec<_> = got.into_iter().filter(|r| r["harness"] == "claude").collect();
    let want: Vec<String> = expected_calls(&home.claude, "claude")
        .into_iter()
        .filter(|call| call.contains(" .claude/"))
        .collect();
    assert!(!want.is_empty() && want.len() < expected_calls(&home.claude, "claude").len());
    assert_eq!(calls_of(home.home.path(), &claude), want);
    // A path on the command line replaces the config's.
    let given = home.path("work/.rupu/transcripts");
    let out = home.txq(&["-e", "select count(*) as n from claude.calls", given.to_str().unwrap()], &[]);
    assert_eq!(out.stdout, "n\n0\n", "{}", out.stderr);

    // maxrows = 20, seen in a table; TXQ_MAXROWS over it; --maxrows over both.
    let shown = |out: &Output| out.stdout.lines().filter(|l| l.starts_with("| run_0")).count();
    let out = home.txq(&["--format", "table", "-e", runs], &[]);
    assert_eq!(shown(&out), 20, "{}", out.stdout);
    let five = PathBuf::from("5");
    let out = home.txq(&["--format", "table", "-e", runs], &[("TXQ_MAXROWS", &five)]);
    assert_eq!(shown(&out), 5, "{}", out.stdout);
    let out = home.txq(&["--format", "table", "--maxrows", "3", "-e", runs], &[("TXQ_MAXROWS", &five)]);
    assert_eq!(shown(&out), 3, "{}", out.stdout);

    // TXQ_FORMAT over the file's csv; --format and --json over it.
    let json = PathBuf::from("ndjson");
    let one = "select 1 as x";
    assert_eq!(home.txq(&["-e", one], &[]).stdout, "x\n1\n");
    assert_eq!(home.txq(&["-e", one], &[("TXQ_FORMAT", &json)]).stdout, "{\"x\":1}\n");
    assert_eq!(home.txq(&["--format", "tsv", "-e", one], &[("TXQ_FORMAT", &json)]).stdout, "x\n1\n");
    assert_eq!(home.txq(&["--json", "-e", one], &[("TXQ_FORMAT", &json)]).stdout, "[{\"x\":1}]\n");

    // prices = "~/prices/negotiated.json"; TXQ_PRICES over it; --prices over both.
    let priced = "select model from prices where model like '%-model' order by model";
    assert_eq!(home.txq(&["-e", priced], &[]).stdout, "model\nnegotiated-model\n");
    let env_prices = home.path("prices/env.json");
    assert_eq!(home.txq(&["-e", priced], &[("TXQ_PRICES", &env_prices)]).stdout, "model\nenv-model\n");
    let flag = home.path("prices/flag.json");
    let out = home.txq(&["--prices", flag.to_str().unwrap(), "-e", priced], &[("TXQ_PRICES", &env_prices)]);
    assert_eq!(out.stdout, "model\nflag-model\n");
}

#[test]
fn a_memory_limit_comes_from_the_config_then_the_environment_then_the_flag() {
    let corpus = crate::trust_limits::wide_corpus();
    let config = documented_config().replace("memory_limit = \"4G\"", "memory_limit = \"1M\"");
    assert!(config.contains("memory_limit = \"1M\""));
    let home = ConfiguredHome::new(&config);
    let join = "select count(*) from events a join events b on a.data = b.data";
    let transcripts = corpus.transcripts();
    let path = transcripts.to_str().unwrap();
    let limit_named = |out: &Output| {
        assert_eq!(out.code, 1, "{}", out.stderr);
        out.stderr
            .split("--memory-limit ")
            .nth(1)
            .and_then(|r| r.split(" allows").next())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(limit_named(&home.txq(&["-e", join, path], &[])), "1 MiB");
    let two = PathBuf::from("2M");
    assert_eq!(limit_named(&home.txq(&["-e", join, path], &[("TXQ_MEMORY_LIMIT", &two)])), "2 MiB");
    let out = home.txq(&["--memory-limit", "3M", "-e", join, path], &[("TXQ_MEMORY_LIMIT", &two)]);
    assert_eq!(limit_named(&out), "3 MiB");
}

#[test]
fn a_wrong_setting_is_refused_naming_the_file_or_the_variable_and_the_key() {
    let home = ConfiguredHome::new("maxrow = 5\n");
    let out = home.txq(&["-e", "select 1"], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("config/txq/config.toml") && out.stderr.contains("maxrow"), "{}", out.stderr);
    let home = ConfiguredHome::new("format = \"xml\"\n");
    let out = home.txq(&["-e", "select 1"], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("format: not an output format: \"xml\""), "{}", out.stderr);
    let home = ConfiguredHome::new("memory_limit = \"lots\"\n");
    assert_eq!(home.txq(&["-e", "select 1"], &[]).code, 2);
    let home = ConfiguredHome::new("");
    let lots = PathBuf::from("lots");
    let out = home.txq(&["-e", "select 1"], &[("TXQ_MAXROWS", &lots)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.starts_with("txq: error: TXQ_MAXROWS: not a number"), "{}", out.stderr);
    // The completions and the manual read no settings, right or wrong.
    let home = ConfiguredHome::new("maxrow = 5\n");
    assert_eq!(home.txq(&["completions", "bash"], &[]).code, 0);
    // TXQ_CONFIG names another file, which must be there; empty, none is read.
    let missing = home.path("none.toml");
    assert_eq!(home.txq(&["-e", "select 1"], &[("TXQ_CONFIG", &missing)]).code, 2);
    let none = PathBuf::from("");
    let out = home.txq(&["-e", "select 1 as x", "--format", "csv", "."], &[("TXQ_CONFIG", &none)]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "x\n1\n"), "{}", out.stderr);
}
