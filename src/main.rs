//! parse → context → dispatch → exit code.

use std::process::ExitCode;

use git_session::cli::{self, Cli};
use git_session::error::exit;

/// `pow` for the one caller that needs it (indicatif's rate estimate), so
/// that a dynamic build (see build.rs) does not load `libm.so.6` at every
/// start: each shared library costs about 0.1 ms per process, and hooks
/// start this one on every message.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[unsafe(no_mangle)]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

fn main() -> ExitCode {
    git_session::out::trace("start");
    let cli = match Cli::parse_from(std::env::args_os().collect()) {
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
    git_session::out::trace("parsed");
    // Diagnostics are read by scripts and tests as much as by people: no
    // wrapping; colour only when asked for or on a terminal without NO_COLOR.
    let color = cli.global.color.enabled();
    let _ = miette::set_hook(Box::new(move |_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .wrap_lines(false)
                .color(color)
                .unicode(color)
                .build(),
        )
    }));
    let result = cli::run(cli);
    git_session::out::trace("done");
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            let code = err.exit_code();
            eprintln!("{:?}", miette::Report::new(err));
            ExitCode::from(code)
        }
    }
}
