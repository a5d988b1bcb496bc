//! The txq binary: parses the command line and hands it to the library.

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;
use txq::cli::{self, args::Args};

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "txq: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = e.exit_code();
            if code != 0 {
                // A stderr that cannot be written (closed) is no reason to panic.
                let _ = writeln!(std::io::stderr(), "txq: error: {}", txq::escape::message(&e.to_string()));
            }
            ExitCode::from(code)
        }
    }
}
