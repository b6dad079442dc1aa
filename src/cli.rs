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
    Batch(commands::batch::BatchArgs),
    Schema(commands::schema::SchemaArgs),
}

impl Cli {
    /// Parse `args` (the process's arguments, program name first).
    ///
    /// Hooks run `append` and `commit-turn` on every message, so start-up
    /// counts: a command line that names a command is parsed by a parser
    /// holding only the global flags and that one command (building all 24
    /// costs about a millisecond). Help, version, and anything the small
    /// parser refuses go through the full parser, so every message and
    /// error is the full one. Both parsers are built from the same
    /// definitions, and the command is the first word that is not a global
    /// flag, so what the small one accepts, the full one reads the same way.
    pub fn parse_from(args: Vec<std::ffi::OsString>) -> std::result::Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        if let Some(cmd) = Self::one_command(&args)
            && let Ok(m) = cmd.try_get_matches_from(&args)
            && let Ok(cli) = Cli::from_arg_matches(&m)
        {
            return Ok(cli);
        }
        let m = Cli::command().try_get_matches_from(args)?;
        Cli::from_arg_matches(&m)
    }

    /// The root parser with only the command `args` name, or `None` when
    /// the full parser must answer (help, version, no or unknown command).
    fn one_command(args: &[std::ffi::OsString]) -> Option<clap::Command> {
        use clap::Args;
        let mut name = None;
        let mut words = args.iter().skip(1);
        while let Some(w) = words.next() {
            let w = w.to_str()?;
            match w {
                "-h" | "--help" | "-V" | "--version" | "--" => return None,
                "--state-dir" | "--lock-timeout" | "--color" => {
                    words.next()?;
                }
                _ if w.starts_with('-') => {}
                _ => {
                    name = Some(w);
                    break;
                }
            }
        }
        // Help and version asked after the command, too.
        if words.any(|w| matches!(w.to_str(), Some("-h" | "--help" | "-V" | "--version"))) {
            return None;
        }
        let name = name?;
        let sub = clap::Command::new(name.to_string());
        let sub = match name {
            "init" => commands::init::InitArgs::augment_args(sub),
            "append" => commands::append::AppendArgs::augment_args(sub),
            "commit-turn" => commands::commit_turn::CommitTurnArgs::augment_args(sub),
            "log" => commands::log::LogArgs::augment_args(sub),
            "show" => commands::show::ShowArgs::augment_args(sub),
            "checkout" => commands::checkout::CheckoutArgs::augment_args(sub),
            "branch" => commands::branch::BranchArgs::augment_args(sub),
            "list" => commands::list::ListArgs::augment_args(sub),
            "update" => commands::update::UpdateArgs::augment_args(sub),
            "archive" | "unarchive" => commands::update::ArchiveArgs::augment_args(sub),
            "delete" => commands::delete::DeleteArgs::augment_args(sub),
            "title" => commands::title::TitleArgs::augment_args(sub),
            "recover" => commands::recover::RecoverArgs::augment_args(sub),
            "gc-shells" => commands::gc_shells::GcShellsArgs::augment_args(sub),
            "begin-turn" => commands::begin_turn::BeginTurnArgs::augment_args(sub),
            "relocate" => commands::relocate::RelocateArgs::augment_args(sub),
            "backfill" => commands::backfill::BackfillArgs::augment_args(sub),
            "migrate" => commands::migrate::MigrateArgs::augment_args(sub),
            "verify" => commands::verify::VerifyArgs::augment_args(sub),
            "batch" => commands::batch::BatchArgs::augment_args(sub),
            _ => return None,
        };
        let root = clap::Command::new("git-session")
            .args_override_self(true)
            .subcommand_required(true)
            .subcommand(sub);
        Some(GlobalArgs::augment_args(root))
    }
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
        Command::Batch(a) => commands::batch::run(&cli.global, a),
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
        Command::Schema(a) => commands::schema::run(&ctx, a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    fn argv(line: &str) -> Vec<std::ffi::OsString> {
        std::iter::once("git-session")
            .chain(line.split_whitespace())
            .map(Into::into)
            .collect()
    }

    fn full(line: &str) -> std::result::Result<Cli, clap::Error> {
        let m = Cli::command().try_get_matches_from(argv(line))?;
        Cli::from_arg_matches(&m)
    }

    #[test]
    fn the_one_command_parser_reads_what_the_full_one_reads() {
        let lines = [
            "append s1 --role user --text hi",
            "--state-dir /x --json append s1 --role tool --name read --id t1 --text x -q",
            "append s1 --role assistant --text a --text b --predecessor ROOT",
            "append s1 --json-node --create --agent a --lock-timeout 0 --no-wait",
            "append s1 --role tool --input {} --attach f --caller a1 --file x",
            "--lock-timeout 2.5 commit-turn s1 --status done --duration 3 --tokens 9",
            "commit-turn s1 -m subject --project-paths a b --color never",
            "--color=always commit-turn s1",
            "--state-dir=/y list --limit 3 --offset 1 --json",
            "list --archived",
            "log s1 --json",
            "show s1 --at 2",
            "begin-turn s1",
            "update s1 --title t --pin --unread --group g",
            "unarchive s1",
            "archive s1",
            "verify --all --fix -j 2",
            "verify s1 s2 --json",
            "recover",
            "gc-shells --dry-run --older-than 2h",
            "init s2 --title x",
            "append s1 --role user --txet hi",
        ];
        for line in lines {
            let fast = Cli::one_command(&argv(line))
                .unwrap_or_else(|| panic!("`{line}`: no one-command parser"))
                .try_get_matches_from(argv(line))
                .map(|m| Cli::from_arg_matches(&m).map(|c| format!("{c:?}")));
            let slow = full(line).map(|c| format!("{c:?}"));
            match (fast, slow) {
                (Ok(Ok(f)), Ok(s)) => assert_eq!(f, s, "`{line}`"),
                (_, Err(e)) if line.contains("txet") => {
                    // Refused by the full parser: the small one must not accept it.
                    assert!(Cli::parse_from(argv(line)).is_err(), "`{line}`: {e}");
                }
                (f, s) => panic!("`{line}`: fast {f:?}, full {s:?}"),
            }
        }
    }

    #[test]
    fn help_version_and_mistakes_get_the_full_parser() {
        for line in [
            "--help",
            "append --help",
            "commit-turn s1 -h",
            "-V",
            "append -V",
            "",
            "frobnicate",
            "-- append s1",
            "project list",
            "--state-dir",
        ] {
            assert!(Cli::one_command(&argv(line)).is_none(), "`{line}`");
        }
        // A mistake the small parser refuses gets the full parser's message.
        let line = "append s1 --role user --txet hi";
        let err = Cli::parse_from(argv(line)).unwrap_err().to_string();
        assert_eq!(err, full(line).unwrap_err().to_string());
        assert!(err.contains("--txet"), "{err}");
    }
}
