//! The root parser: global flags and the command list.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::commands;
use crate::error::Result;
use crate::layout::StateDir;
use crate::layout::lock::{self, LockOptions};
use crate::out::Printer;

/// Entity memory on git: every agent session is a git repository with one
/// commit per turn.
///
/// Subcommands compose through files on disk under advisory locks; the
/// on-disk layout is the only contract between them. Installed on PATH, the
/// binary also runs as `git session <command>`.
#[derive(Debug, Parser)]
#[command(
    name = "git-session",
    version,
    propagate_version = true,
    args_override_self = true
)]
#[command(
    after_help = "Exit status: 0 success, 1 the answer is no (or a refused request), \
2 usage error, 75 a lock is busy, 128 fatal error."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Print JSON Lines on stdout: one {"type": …, "data": …} record per line
    #[arg(long, global = true)]
    pub json: bool,
    /// No notes on stderr (warnings and errors still show)
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Seconds to wait for a busy lock
    #[arg(
        long,
        global = true,
        value_name = "SECS",
        default_value_t = 30.0,
        allow_negative_numbers = true
    )]
    pub lock_timeout: f64,
    /// Fail at once (exit 75) when a lock is busy
    #[arg(long, global = true)]
    pub no_wait: bool,
    /// Colour in diagnostics: auto (a terminal, and NO_COLOR unset), always or never
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

impl Color {
    /// Whether diagnostics on stderr use colour.
    pub fn enabled(self) -> bool {
        use std::io::IsTerminal;
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stderr().is_terminal()
            }
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Init(commands::init::InitArgs),
    Append(commands::append::AppendArgs),
    CommitTurn(commands::commit_turn::CommitTurnArgs),
    Log(commands::log::LogArgs),
    Show(commands::show::ShowArgs),
    Checkout(commands::checkout::CheckoutArgs),
    Branch(commands::branch::BranchArgs),
    List(commands::list::ListArgs),
    Update(commands::update::UpdateArgs),
    Archive(commands::update::ArchiveArgs),
    /// Bring an archived session back into `list`.
    Unarchive(commands::update::ArchiveArgs),
    Delete(commands::delete::DeleteArgs),
    Title(commands::title::TitleArgs),
    Recover(commands::recover::RecoverArgs),
    GcShells(commands::gc_shells::GcShellsArgs),
    Project(commands::project::ProjectArgs),
    BeginTurn(commands::begin_turn::BeginTurnArgs),
    Relocate(commands::relocate::RelocateArgs),
    Backfill(commands::backfill::BackfillArgs),
    Migrate(commands::migrate::MigrateArgs),
    Verify(commands::verify::VerifyArgs),
    Demo(commands::demo::DemoArgs),
    Man(commands::man::ManArgs),
    Completions(commands::man::CompletionsArgs),
}

/// What every command gets.
pub struct Ctx {
    pub state: StateDir,
    pub out: Printer,
    pub locks: LockOptions,
}

impl Ctx {
    pub fn new(g: &GlobalArgs) -> Result<Ctx> {
        if !(g.lock_timeout.is_finite() && g.lock_timeout >= 0.0) {
            return Err(crate::error::Error::usage(
                format!("invalid `--lock-timeout` {}", g.lock_timeout),
                Some("give a number of seconds, 0 or more".into()),
            ));
        }
        Ok(Ctx {
            state: StateDir::resolve(g.state_dir.as_deref())?,
            out: Printer {
                json: g.json,
                quiet: g.quiet,
                silent: false,
            },
            locks: LockOptions {
                timeout: Duration::from_secs_f64(g.lock_timeout),
                no_wait: g.no_wait,
                announce: !g.quiet,
            },
        })
    }

    /// The same context with output silenced (for commands run by commands).
    pub fn silent(&self) -> Ctx {
        Ctx {
            state: self.state.clone(),
            out: Printer {
                silent: true,
                ..self.out
            },
            locks: self.locks,
        }
    }

    pub fn lock(&self, path: &std::path::Path, kind: lock::Kind) -> Result<lock::Lock> {
        lock::acquire(path, kind, self.locks)
    }

    /// Take a session's lock; a session without `.git` is reported as such.
    pub fn lock_session(
        &self,
        sd: &crate::layout::SessionDir,
        kind: lock::Kind,
    ) -> Result<lock::Lock> {
        if !sd.git_dir().is_dir() {
            return Err(crate::error::Error::Corrupt {
                path: sd.dir.clone(),
                reason: "the session has no `.git` repository".into(),
                help: Some(
                    "restore the session's `.git` directory; its node files are untouched".into(),
                ),
            });
        }
        self.lock(&sd.lock_file(), kind)
    }
}

pub fn run(cli: Cli) -> Result<u8> {
    let ctx = Ctx::new(&cli.global)?;
    match cli.command {
        Command::Init(a) => commands::init::run(&ctx, a),
        Command::Append(a) => commands::append::run(&ctx, a),
        Command::CommitTurn(a) => commands::commit_turn::run(&ctx, a),
        Command::Log(a) => commands::log::run(&ctx, a),
        Command::Show(a) => commands::show::run(&ctx, a),
        Command::Checkout(a) => commands::checkout::run(&ctx, a),
        Command::Branch(a) => commands::branch::run(&ctx, a),
        Command::List(a) => commands::list::run(&ctx, a),
        Command::Update(a) => commands::update::run(&ctx, a),
        Command::Archive(a) => commands::update::archive(&ctx, a, true),
        Command::Unarchive(a) => commands::update::archive(&ctx, a, false),
        Command::Delete(a) => commands::delete::run(&ctx, a),
        Command::Title(a) => commands::title::run(&ctx, a),
        Command::Recover(a) => commands::recover::run(&ctx, a),
        Command::GcShells(a) => commands::gc_shells::run(&ctx, a),
        Command::Project(a) => commands::project::run(&ctx, a),
        Command::BeginTurn(a) => commands::begin_turn::run(&ctx, a),
        Command::Relocate(a) => commands::relocate::run(&ctx, a),
        Command::Backfill(a) => commands::backfill::run(&ctx, a),
        Command::Migrate(a) => commands::migrate::run(&ctx, a),
        Command::Verify(a) => commands::verify::run(&ctx, a),
        Command::Demo(a) => commands::demo::run(&ctx, a),
        Command::Man(a) => commands::man::run(&ctx, a),
        Command::Completions(a) => commands::man::completions(&ctx, a),
    }
}
