//! The txq binary: parses the command line, runs it in a runtime of its own, and ends with the
//! exit code of how it went (130 after Ctrl-C, with `txq: query cancelled`).

use std::io::Write;
use std::process::ExitCode;
use txq::cli::{self, args::Args, interrupt};
use txq::error::Error;

fn main() -> ExitCode {
    // The flags, over the environment, over the config file.
    let args = match Args::parse_from_command(std::env::args_os()) {
        Ok((mut args, matches)) => match cli::config::apply(&mut args, &matches) {
            Ok(()) => args,
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "txq: error: {}",
                    txq::text::escape::message(&cli::message(&e))
                );
                return ExitCode::from(e.exit_code());
            }
        },
        // --help and --version, on stdout, and usage errors, on stderr (exit 2), as clap says.
        Err(e) => e.exit(),
    };
    // A scheduler or an executor of a cluster runs in a runtime of its own.
    if let Some(result) = cli::serve(&args) {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "txq: error: {}",
                    txq::text::escape::message(&cli::message(&e))
                );
                ExitCode::from(e.exit_code())
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "txq: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(cli::run(args));
    // A cancelled statement's tasks may still be busy: they are not waited for.
    runtime.shutdown_background();
    if let Some(interrupts) = interrupt::watched()
        && !interrupts.end_stall_exit()
    {
        // A stalled statement is ending the process already, with the exit code of Ctrl-C.
        loop {
            std::thread::park();
        }
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A stderr that cannot be written (closed) is no reason to panic.
            let mut stderr = std::io::stderr();
            match (&e, e.exit_code()) {
                (Error::Cancelled, _) => drop(writeln!(stderr, "{}", interrupt::MESSAGE)),
                // Not a failure of txq's: what the report found, said as such.
                (Error::OverBudget(why), _) => {
                    drop(writeln!(stderr, "txq: over budget: {}", txq::text::escape::message(why)))
                }
                // The reader of the results went away: nothing is wrong.
                (_, 0) => {}
                _ => drop(writeln!(stderr, "txq: error: {}", txq::text::escape::message(&cli::message(&e)))),
            }
            ExitCode::from(e.exit_code())
        }
    }
}
