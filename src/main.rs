//! The txq binary: parses the command line, runs it in a runtime of its own, and ends with the
//! exit code of how it went (130 after Ctrl-C, with `txq: query cancelled`).

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use txq::cli::{self, CliError, args::Args, interrupt};

fn main() -> ExitCode {
    let args = Args::parse();
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
        Err(CliError::Cancelled) => {
            let _ = writeln!(std::io::stderr(), "{}", interrupt::MESSAGE);
            ExitCode::from(interrupt::EXIT_CODE)
        }
        Err(e) => {
            let code = e.exit_code();
            if code != 0 {
                // A stderr that cannot be written (closed) is no reason to panic.
                let _ =
                    writeln!(std::io::stderr(), "txq: error: {}", txq::text::escape::message(&e.to_string()));
            }
            ExitCode::from(code)
        }
    }
}
