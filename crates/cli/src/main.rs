//! The `mqwatch` binary: parses the stable command line of ARCHITECTURE.md and dispatches to the library.
//!
//! Exit codes (stable, scripts depend on them): 0 healthy, 1 warnings, 2 critical, 3 could not run.

use clap::Parser;
use mqwatch_cli::cli;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mqwatch: {e:#}");
            ExitCode::from(cli::EXIT_COULD_NOT_RUN)
        }
    }
}
