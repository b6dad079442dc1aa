//! The root parser: global flags and the command list.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands;
use crate::context::Ctx;
use git_session::error::Result;

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
    /// Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Init(Lazy<commands::init::InitArgs>),
    Append(Lazy<commands::append::AppendArgs>),
    CommitTurn(Lazy<commands::commit_turn::CommitTurnArgs>),
    Log(Lazy<commands::log::LogArgs>),
    Show(Lazy<commands::show::ShowArgs>),
    Diff(Lazy<commands::diff::DiffArgs>),
    Export(Lazy<commands::export::ExportArgs>),
    Checkout(Lazy<commands::checkout::CheckoutArgs>),
    Branch(Lazy<commands::branch::BranchArgs>),
    List(Lazy<commands::list::ListArgs>),
    Update(Lazy<commands::update::UpdateArgs>),
    Archive(Lazy<commands::update::ArchiveArgs>),
    Unarchive(Lazy<commands::update::UnarchiveArgs>),
    Delete(Lazy<commands::delete::DeleteArgs>),
    Title(Lazy<commands::title::TitleArgs>),
    Recover(Lazy<commands::recover::RecoverArgs>),
    GcShells(Lazy<commands::gc_shells::GcShellsArgs>),
    Project(Lazy<commands::project::ProjectArgs>),
    BeginTurn(Lazy<commands::begin_turn::BeginTurnArgs>),
    Relocate(Lazy<commands::relocate::RelocateArgs>),
    Backfill(Lazy<commands::backfill::BackfillArgs>),
    Migrate(Lazy<commands::migrate::MigrateArgs>),
    Verify(Lazy<commands::verify::VerifyArgs>),
    Demo(Lazy<commands::demo::DemoArgs>),
    Man(Lazy<commands::man::ManArgs>),
    Completions(Lazy<commands::man::CompletionsArgs>),
    Batch(Lazy<commands::batch::BatchArgs>),
    Schema(Lazy<commands::schema::SchemaArgs>),
    Nodes(Lazy<commands::nodes::NodesArgs>),
    Cat(Lazy<commands::nodes::CatArgs>),
    Feed(Lazy<commands::feed::FeedArgs>),
    Grep(Lazy<commands::grep::GrepArgs>),
    Secrets(Lazy<commands::secrets::SecretsArgs>),
    Redact(Lazy<commands::redact::RedactArgs>),
    Import(Lazy<commands::import::ImportArgs>),
    Hook(Lazy<commands::hook::HookArgs>),
    Remote(Lazy<commands::remote::RemoteArgs>),
    Push(Lazy<commands::remote::PushArgs>),
    Fetch(Lazy<commands::remote::FetchArgs>),
    Clone(Lazy<commands::remote::CloneArgs>),
}

/// A subcommand's arguments, built only when that subcommand is parsed (or
/// its help, a man page or a completion script is made): hooks start the
/// binary on every message, and building every subcommand's arguments
/// costs more than most commands' own work. The definitions stay one set.
#[derive(Debug)]
pub struct Lazy<T>(pub T);

/// Set while [`full_command`] builds: every subcommand at once.
static EAGER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl<T: clap::Args> clap::Args for Lazy<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        if EAGER.load(std::sync::atomic::Ordering::Relaxed) {
            T::augment_args(cmd)
        } else {
            cmd.defer(T::augment_args)
        }
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        if EAGER.load(std::sync::atomic::Ordering::Relaxed) {
            T::augment_args_for_update(cmd)
        } else {
            cmd.defer(T::augment_args_for_update)
        }
    }
}

impl<T: clap::FromArgMatches> clap::FromArgMatches for Lazy<T> {
    fn from_arg_matches(m: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        T::from_arg_matches(m).map(Lazy)
    }

    fn from_arg_matches_mut(m: &mut clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        T::from_arg_matches_mut(m).map(Lazy)
    }

    fn update_from_arg_matches(
        &mut self,
        m: &clap::ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        self.0.update_from_arg_matches(m)
    }
}

impl Cli {
    /// Parse `args` (the process's arguments, program name first).
    ///
    /// Only the named subcommand's arguments are built ([`Lazy`]); help,
    /// version and mistakes are answered by the command with every
    /// subcommand built, so their messages are the whole ones.
    pub fn parse_from(args: Vec<std::ffi::OsString>) -> std::result::Result<Cli, clap::Error> {
        use clap::CommandFactory;
        Self::parse_with(&mut Cli::command(), args)
    }

    /// [`Cli::parse_from`] with a parser kept by the caller: `batch` builds
    /// it once (each subcommand when first used) rather than per request.
    pub fn parse_with(
        cmd: &mut clap::Command,
        args: Vec<std::ffi::OsString>,
    ) -> std::result::Result<Cli, clap::Error> {
        use clap::FromArgMatches;
        // `_mut`: the matches are ours to take apart; `from_arg_matches`
        // would copy them first (a tenth of a batch request's parse).
        if let Ok(mut m) = cmd.try_get_matches_from_mut(&args) {
            return Cli::from_arg_matches_mut(&mut m);
        }
        Cli::from_arg_matches_mut(&mut full_command().try_get_matches_from(args)?)
    }
}

/// The command with every subcommand's arguments built: for help, mistakes,
/// man pages and completion scripts.
pub fn full_command() -> clap::Command {
    use clap::CommandFactory;
    use std::sync::atomic::Ordering;
    EAGER.store(true, Ordering::Relaxed);
    let root = Cli::command();
    EAGER.store(false, Ordering::Relaxed);
    root
}

pub fn run(cli: Cli) -> Result<u8> {
    let ctx = match Ctx::new(&cli.global) {
        Ok(ctx) => ctx,
        // An agent's hook exits 0 whatever happens: Claude Code takes exit
        // 2 for "block", and would stop the agent on our usage error.
        Err(e) if matches!(&cli.command, Command::Hook(Lazy(a)) if a.is_agent_event()) => {
            eprint!("{}", git_session::out::render_error(&e));
            return Ok(git_session::error::exit::OK);
        }
        Err(e) => return Err(e),
    };
    let result = match cli.command {
        Command::Batch(Lazy(a)) => return commands::batch::run(&cli.global, a),
        Command::Init(Lazy(a)) => commands::init::run(&ctx, a),
        Command::Append(Lazy(a)) => commands::append::run(&ctx, a),
        Command::CommitTurn(Lazy(a)) => commands::commit_turn::run(&ctx, a),
        Command::Log(Lazy(a)) => commands::log::run(&ctx, a),
        Command::Show(Lazy(a)) => commands::show::run(&ctx, a),
        Command::Diff(Lazy(a)) => commands::diff::run(&ctx, a),
        Command::Export(Lazy(a)) => commands::export::run(&ctx, a),
        Command::Checkout(Lazy(a)) => commands::checkout::run(&ctx, a),
        Command::Branch(Lazy(a)) => commands::branch::run(&ctx, a),
        Command::List(Lazy(a)) => commands::list::run(&ctx, a),
        Command::Update(Lazy(a)) => commands::update::run(&ctx, a),
        Command::Archive(Lazy(a)) => commands::update::archive(&ctx, &a.session, true),
        Command::Unarchive(Lazy(a)) => commands::update::archive(&ctx, &a.session, false),
        Command::Delete(Lazy(a)) => commands::delete::run(&ctx, a),
        Command::Title(Lazy(a)) => commands::title::run(&ctx, a),
        Command::Recover(Lazy(a)) => commands::recover::run(&ctx, a),
        Command::GcShells(Lazy(a)) => commands::gc_shells::run(&ctx, a),
        Command::Project(Lazy(a)) => commands::project::run(&ctx, a),
        Command::BeginTurn(Lazy(a)) => commands::begin_turn::run(&ctx, a),
        Command::Relocate(Lazy(a)) => commands::relocate::run(&ctx, a),
        Command::Backfill(Lazy(a)) => commands::backfill::run(&ctx, a),
        Command::Migrate(Lazy(a)) => commands::migrate::run(&ctx, a),
        Command::Verify(Lazy(a)) => commands::verify::run(&ctx, a),
        Command::Demo(Lazy(a)) => commands::demo::run(&ctx, a, cli.global.state_dir.is_some()),
        Command::Man(Lazy(a)) => commands::man::run(&ctx, a),
        Command::Completions(Lazy(a)) => commands::man::completions(&ctx, a),
        Command::Schema(Lazy(a)) => commands::schema::run(&ctx, a),
        Command::Nodes(Lazy(a)) => commands::nodes::run(&ctx, a),
        Command::Cat(Lazy(a)) => commands::nodes::cat(&ctx, a),
        Command::Feed(Lazy(a)) => commands::feed::run(&ctx, a),
        Command::Grep(Lazy(a)) => commands::grep::run(&ctx, a),
        Command::Secrets(Lazy(a)) => commands::secrets::run(&ctx, a),
        Command::Redact(Lazy(a)) => commands::redact::run(&ctx, a),
        Command::Import(Lazy(a)) => commands::import::run(&ctx, a),
        Command::Hook(Lazy(a)) => commands::hook::run(&ctx, a),
        Command::Remote(Lazy(a)) => commands::remote::remote(&ctx, a),
        Command::Push(Lazy(a)) => commands::remote::push(&ctx, a),
        Command::Fetch(Lazy(a)) => commands::remote::fetch(&ctx, a),
        Command::Clone(Lazy(a)) => commands::remote::clone(&ctx, a),
    };
    if !commands::batch::answering() {
        settle_index(ctx.locks);
    }
    result
}

/// Leave `index.json` itself current when a command ends (SPEC §3): the
/// rows the command journaled are folded in. The command's work is done
/// whatever becomes of this; a failure (the registry held past the lock
/// wait) is said as a warning, the rows stay in the journal for the next
/// writer, and `verify` names the row until then. The registry is waited
/// for two seconds at most.
pub fn settle_index(locks: git_session::layout::lock::LockOptions) {
    if !git_session::layout::registry::folds_owed() {
        return;
    }
    // A short wait: the registry is held for milliseconds, but a `delete`
    // waiting on a busy session holds it for as long as it waits, and a
    // turn's end is not held up for that.
    let locks = git_session::layout::lock::LockOptions {
        timeout: locks
            .timeout
            .min(git_session::layout::lock::REGISTRY_FOLD_WAIT),
        ..locks
    };
    if let Err(e) = git_session::layout::registry::fold_owed(locks) {
        eprintln!(
            "git-session: warning: index.json was not brought up to date ({e}); its rows wait in index.journal for the next command that writes the registry"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    fn argv(line: &str) -> Vec<std::ffi::OsString> {
        std::iter::once("git-session")
            .chain(line.split_whitespace())
            .map(Into::into)
            .collect()
    }

    /// The lazily built parser reads every command line as the fully built
    /// one does, and refuses what it refuses with the same message.
    #[test]
    fn the_lazy_parser_reads_what_the_full_one_reads() {
        let lines = [
            "append s1 --role user --text hi",
            "--state-dir /x --json append s1 --role tool --name read --id t1 --text x -q",
            "append s1 --role llm --text a --text b --predecessor ROOT",
            "append s1 --json-node --create --agent a --lock-timeout 0 --no-wait",
            "--lock-timeout 2.5 commit-turn s1 --status done --duration 3 --tokens 9",
            "commit-turn s1 -m subject --project-paths a b --color never",
            "--state-dir=/y list --limit 3 --offset 1 --json",
            "update s1 --title t --pin --unread --group g",
            "unarchive s1",
            "verify --all --fix -j 2",
            "project add /tmp/p --name p",
            "batch",
            "append s1 --role user --txet hi",
            "frobnicate",
            "append",
            "--help",
            "append --help",
            "-V",
        ];
        for line in lines {
            let lazy = Cli::parse_from(argv(line)).map(|c| format!("{c:?}"));
            let full = full_command()
                .try_get_matches_from(argv(line))
                .and_then(|m| Cli::from_arg_matches(&m))
                .map(|c| format!("{c:?}"));
            match (lazy, full) {
                (Ok(l), Ok(f)) => assert_eq!(l, f, "`{line}`"),
                (Err(l), Err(f)) => assert_eq!(l.to_string(), f.to_string(), "`{line}`"),
                (l, f) => panic!("`{line}`: lazy {l:?}, full {f:?}"),
            }
        }
    }
}
