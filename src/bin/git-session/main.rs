//! parse → context → dispatch → exit code.

use std::io::Write;
use std::process::ExitCode;

use git_session::error::exit;

use crate::cli::Cli;

mod cli;
mod commands;
mod context;

fn main() -> ExitCode {
    git_session::out::trace("start");
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The completion scripts' helper, outside the command tree (no help,
    // page or completion of its own).
    if argv.get(1).is_some_and(|a| a == commands::complete::NAME) {
        return ExitCode::from(commands::complete::main(&argv[1..]));
    }
    // `--json` anywhere before `--`: errors are records too.
    let json = argv
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json");
    let hook = commands::hook::is_agent_hook_line(&argv);
    let cli = match Cli::parse_from(argv) {
        Ok(c) => c,
        // An agent's hook exits 0 whatever happens (`hook` says why).
        Err(e) if hook && e.use_stderr() => {
            let _ = parse_error(e, json);
            return ExitCode::from(exit::OK);
        }
        Err(e) => return parse_error(e, json),
    };
    git_session::out::trace("parsed");
    let result = cli::run(cli);
    git_session::out::trace("done");
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let code = err.exit_code();
            if json {
                // Not println!: a reader that went away is no reason to panic.
                let _ = writeln!(
                    std::io::stdout(),
                    "{}",
                    git_session::out::error_record(&err, code)
                );
            }
            eprint!("{}", git_session::out::render_error(&err));
            ExitCode::from(code)
        }
    }
}

/// A command line the parser refused (or `--help`, `--version`): clap's
/// message, then a `help:` line; under `--json`, an error record as well.
fn parse_error(e: clap::Error, json: bool) -> ExitCode {
    if !e.use_stderr() {
        let _ = e.print();
        return ExitCode::from(exit::OK);
    }
    let text = e.render().to_string();
    if json {
        let _ = writeln!(
            std::io::stdout(),
            "{}",
            git_session::out::parse_error_record(&text)
        );
    }
    eprint!("{}", text.trim_end_matches('\n'));
    eprintln!(
        "\nhelp: {}\ncode: git_session::usage::parse",
        git_session::out::PARSE_HELP
    );
    ExitCode::from(exit::USAGE)
}
