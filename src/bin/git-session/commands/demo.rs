//! `demo`: record sample sessions into a fresh state dir and say what to look
//! at next (SPEC §5.16).
//!
//! Reads: nothing. Writes: the sessions into `--state-dir` when one is
//! given, else into `<DIR>/state/` (a new state dir); the project's
//! repository into `<DIR>/`. Locks: the sessions it writes. Prints: the
//! state dir, then the commands to try.

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use git_session::demo::Demo;
use git_session::error::{IoContext, Result, exit};
use git_session::layout::projects::Project;
use git_session::layout::{SessionDir, StateDir, ids};

/// Record two sample sessions (turns with tool calls, a retry branch) into
/// the `--state-dir` given, or a new one in DIR, and print what to try next.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Where to write the demo: the project's repository, and the state dir
    /// (`DIR/state`) unless `--state-dir` names one [default: a new
    /// directory under the system temp dir]
    pub dir: Option<PathBuf>,
}

/// `state_given`: `--state-dir` was on the command line, so the sessions
/// go there (a default state dir, or `$OPENPROGRAM_HOME`, is never used).
pub fn run(ctx: &Ctx, args: DemoArgs, state_given: bool) -> Result<u8> {
    let dir = match args.dir {
        Some(d) => d,
        None => std::env::temp_dir().join(format!("git-session-demo-{}", ids::generate(""))),
    };
    std::fs::create_dir_all(&dir).io("create", &dir)?;
    let dir = dir.canonicalize().io("resolve", &dir)?;
    let state = if state_given {
        ctx.state.clone()
    } else {
        StateDir {
            root: dir.join("state"),
        }
    };
    let mut demo = Demo::new(state.clone(), ctx.state.clone(), ctx.locks, ctx.out);

    let sd = demo.refactor()?;
    // A project: a scratch repository of the user's, with auto-commit on.
    let app = dir.join("app");
    let project = demo.app(&app)?;
    let sd2 = demo.feature(&project)?;
    let quiet = Ctx {
        state: state.clone(),
        ..ctx.silent()
    };
    feature_turn(&quiet, &mut demo, &sd2, &app)?;
    // The project moves: same id, new path, a record node in the session.
    let moved = dir.join("app-moved");
    relocate(&quiet, &project, &app, &moved)?;
    let sd2 = state.find_session("feature")?;
    demo.commit(&sd2, "feature")?;
    verify(&quiet, &state)?;
    report(
        ctx,
        &Recorded {
            dir: &dir,
            state: &state,
            project: &project,
            refactor: &sd,
            moved: &moved,
        },
    );
    Ok(exit::OK)
}

/// `feature`'s turn, as an agent's hooks run it: `begin-turn`, the work,
/// `commit-turn` (which makes the agent commit in the project).
fn feature_turn(quiet: &Ctx, demo: &mut Demo, sd: &SessionDir, app: &Path) -> Result<()> {
    super::begin_turn::run(
        quiet,
        super::begin_turn::BeginTurnArgs {
            session: "feature".into(),
        },
    )?;
    demo.feature_turn(sd, app)?;
    super::commit_turn::run(
        quiet,
        super::commit_turn::CommitTurnArgs {
            session: "feature".into(),
            message: None,
            duration: None,
            tokens: None,
            status: super::commit_turn::TurnStatus::Idle,
            project_paths: Vec::new(),
            dry_run: false,
        },
    )?;
    Ok(())
}

/// Move the project's directory from `app` to `moved` and `relocate` it.
fn relocate(quiet: &Ctx, project: &Project, app: &Path, moved: &Path) -> Result<()> {
    std::fs::rename(app, moved).io("move", app)?;
    super::relocate::run(
        quiet,
        super::relocate::RelocateArgs {
            project: project.id.clone(),
            new_path: moved.to_path_buf(),
            session: None,
            from: None,
        },
    )?;
    Ok(())
}

/// And the proof: every node in git, git agreeing with the files.
fn verify(quiet: &Ctx, state: &StateDir) -> Result<()> {
    let verified = super::verify::run(
        quiet,
        super::verify::VerifyArgs {
            sessions: Vec::new(),
            all: true,
            fix: false,
            jobs: Some(1),
            stats: false,
            // Every stored object read back and hashed too.
            objects: true,
        },
    )?;
    if verified != exit::OK {
        return Err(git_session::demo::DemoError::Unverified {
            state: state.root.clone(),
        }
        .into());
    }
    Ok(())
}

/// What the demo recorded, for the report.
struct Recorded<'a> {
    dir: &'a Path,
    state: &'a StateDir,
    project: &'a Project,
    refactor: &'a SessionDir,
    moved: &'a Path,
}

fn report(ctx: &Ctx, r: &Recorded) {
    let Recorded {
        dir,
        state,
        project,
        refactor: sd,
        moved,
    } = *r;
    let sdir = state.root.display();
    ctx.out.record(&git_session::out::records::Demo {
        dir: dir.to_path_buf(),
        state_dir: state.root.clone(),
        sessions: vec!["refactor".into(), "feature".into()],
        project: project.id.clone(),
        project_repo: moved.to_path_buf(),
    });
    ctx.out.line(format!("Recorded two sessions into {sdir}:"));
    ctx.out
        .line("  refactor  three turns; the third retries from the first (a retry branch)");
    ctx.out.line(format!(
        "  feature   bound to project `{}`: an agent commit in {}, then a relocation",
        project.id,
        moved.display()
    ));
    ctx.out.line("Both verify clean.");
    ctx.out.line("");
    ctx.out.line("Try:");
    for cmd in [
        format!("git-session --state-dir {sdir} log refactor --all"),
        format!("git-session --state-dir {sdir} show refactor"),
        format!(
            "git -C {} log --graph --all --format='%h %s %d'",
            sd.dir.display()
        ),
        format!("git -C {} show --stat HEAD", sd.dir.display()),
        format!("git -C {} log --format='%h %an: %s'", moved.display()),
        format!("git-session --state-dir {sdir} project log app"),
        format!("git-session --state-dir {sdir} checkout refactor 1"),
        format!("git-session --state-dir {sdir} list"),
        format!(
            "git-session --state-dir {sdir} export --all --format html -o {}",
            dir.join("site").display()
        ),
        format!("git-session --state-dir {sdir} verify --all"),
    ] {
        ctx.out.line(format!("  {cmd}"));
    }
}
