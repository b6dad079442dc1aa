//! parse → context → dispatch → exit code.

use std::process::ExitCode;

use clap::Parser;

use git_session::cli::{self, Cli};
use git_session::error::exit;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let code = err.exit_code();
            eprintln!("{:?}", miette::Report::new(err));
            ExitCode::from(code)
        }
    }
}
