//! `demo`: record sample sessions into a fresh state dir and say what to look
//! at next (SPEC §5.16).
//!
//! Reads: nothing. Writes: `<DIR>/state/` (a new state dir). Locks: the
//! sessions it writes. Prints: the state dir, then the commands to try.

use std::path::PathBuf;

use crate::context::Ctx;
use crate::error::{Error, IoContext, Result, exit};
use crate::layout::schema::Meta;
use crate::layout::{SessionDir, StateDir, atomic, ids, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::store::{self, Created, NewNode, NewSession};

/// Record two sample sessions (turns with tool calls, a retry branch) into
/// DIR and print what to try next.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Where to write the demo [default: a new directory under the system temp dir]
    pub dir: Option<PathBuf>,
}

struct Demo<'a> {
    ctx: &'a Ctx,
    state: StateDir,
    clock: f64,
}

impl Demo<'_> {
    fn tick(&mut self, secs: f64) -> f64 {
        self.clock += secs;
        self.clock
    }

    fn node(
        &mut self,
        sd: &SessionDir,
        role: &str,
        text: &str,
        name: &str,
        pred: Option<&str>,
    ) -> Result<String> {
        let _l = self.ctx.lock_session(sd, lock::Kind::Exclusive)?;
        let mut meta = Meta::read(&sd.meta())?;
        let now = self.tick(1.7);
        let node = store::append(
            sd,
            &mut meta,
            NewNode {
                role: role.into(),
                name: (!name.is_empty()).then(|| name.to_string()),
                output: text.into(),
                predecessor: pred.map(|p| Some(p.to_string())),
                naming: self.ctx.state.naming_for(sd),
                ..Default::default()
            },
            now,
        )?;
        atomic::write(&sd.meta(), &meta.to_json())?;
        Ok(node.id)
    }

    fn commit(&mut self, sd: &SessionDir, id: &str) -> Result<()> {
        let _l = self.ctx.lock_session(sd, lock::Kind::Exclusive)?;
        let mut meta = Meta::read(&sd.meta())?;
        let catalog = crate::layout::history::Catalog::load(sd)?;
        if meta.title().is_empty()
            && let Some(t) = store::first_user_text(sd, &catalog)
        {
            meta.set("title", crate::session::title_from_text(&t));
            meta.set("_auto_titled", true);
            atomic::write(&sd.meta(), &meta.to_json())?;
        }
        let opts = CommitOptions {
            now: self.clock,
            ..Default::default()
        };
        let out = self.ctx.out;
        mirror::commit_pending(sd, id, &opts, &mut |_| Ok(()), &mut |w| out.warn(w))?;
        // The list row follows meta.json (title, `updated_at`), as after
        // `append` and `commit-turn`.
        let preview = catalog
            .rev_entries()
            .filter(|e| e.letter == 'u')
            .filter_map(|e| crate::layout::history::read_node(&sd.history(), &e).ok())
            .find(|n| n.starts_turn())
            .map(|n| crate::layout::schema::preview(&n.text()));
        registry::journal_append(
            &self.state,
            &crate::layout::schema::index_row(&meta, id, preview.as_deref()),
        )?;
        Ok(())
    }

    fn turn(
        &mut self,
        sd: &SessionDir,
        id: &str,
        user: &str,
        reply: &str,
        tools: &[&str],
        pred: Option<&str>,
    ) -> Result<String> {
        self.node(sd, "user", user, "", pred)?;
        // A turn as agents have it: a reply that only calls tools, then
        // the answer (the one chain user → reply → reply).
        if !tools.is_empty() {
            self.node(sd, "llm", "", "demo-model", None)?;
            for t in tools {
                self.node(sd, "code", &format!("{t}: ok"), t, None)?;
            }
        }
        let a = self.node(sd, "llm", reply, "demo-model", None)?;
        self.commit(sd, id)?;
        Ok(a)
    }

    fn session(&mut self, id: &str, source: &str) -> Result<SessionDir> {
        let spec = NewSession {
            id: id.into(),
            agent_id: Some("demo".into()),
            source: Some(source.into()),
            ..Default::default()
        };
        let now = self.tick(0.5);
        match store::create(&self.state, &spec, None, now, self.ctx.locks)? {
            Created::New(sd) => Ok(sd),
            Created::Existing(_) => Err(Error::refused(
                "demo::session_exists",
                format!(
                    "session `{id}` already exists in `{}`",
                    self.state.root.display()
                ),
                Some("give `demo` an empty or new directory".into()),
            )),
        }
    }
}

pub fn run(ctx: &Ctx, args: DemoArgs) -> Result<u8> {
    let dir = match args.dir {
        Some(d) => d,
        None => std::env::temp_dir().join(format!("git-session-demo-{}", ids::generate(""))),
    };
    std::fs::create_dir_all(&dir).io("create", &dir)?;
    let dir = dir.canonicalize().io("resolve", &dir)?;
    let state = StateDir {
        root: dir.join("state"),
    };
    let mut demo = Demo {
        ctx,
        state: state.clone(),
        clock: crate::out::now() - 3600.0,
    };

    let sd = demo.session("refactor", "cli")?;
    let a1 = demo.turn(
        &sd,
        "refactor",
        "Why does `cargo build` fail on the CI runner?",
        "The runner has an older Rust: `let chains` need 1.88. I checked the toolchain file and the CI config.",
        &["read", "grep", "grep"],
        None,
    )?;
    demo.turn(
        &sd,
        "refactor",
        "Pin the toolchain in CI.",
        "Done: the workflow now installs the version from rust-toolchain.toml.",
        &["edit", "run_tests"],
        None,
    )?;
    // Go back to turn 1's answer and ask differently: a retry branch.
    demo.turn(
        &sd,
        "refactor",
        "Instead, rewrite the code so it builds on the old toolchain.",
        "Rewrote the two `if let` chains as nested matches; it builds on 1.80.",
        &["edit", "run_tests"],
        Some(&a1),
    )?;
    // A project: a scratch repository of the user's, with auto-commit on.
    let app = dir.join("app");
    std::fs::create_dir_all(app.join("src")).io("create", &app)?;
    std::fs::write(
        app.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .io("write", &app)?;
    std::fs::write(app.join("README.md"), "# app\n").io("write", &app)?;
    crate::git::project::init_with_baseline(&app, demo.tick(1.0))?;
    let (project, _) = crate::project::add(&state, &app, Some("app"), Some(true), ctx.locks)?;
    let spec = NewSession {
        id: "feature".into(),
        agent_id: Some("demo".into()),
        source: Some("tui".into()),
        project: Some(project.id.clone()),
        ..Default::default()
    };
    let now = demo.tick(1.0);
    let sd2 = match store::create(&state, &spec, None, now, ctx.locks)? {
        Created::New(sd) => sd,
        Created::Existing(_) => {
            return Err(Error::refused(
                "demo::session_exists",
                "session `feature` already exists",
                Some("give `demo` an empty or new directory".into()),
            ));
        }
    };
    let quiet = Ctx {
        state: state.clone(),
        ..ctx.silent()
    };
    super::begin_turn::run(
        &quiet,
        super::begin_turn::BeginTurnArgs {
            session: "feature".into(),
        },
    )?;
    std::fs::write(
        app.join("src/greet.rs"),
        "pub fn greet() -> &'static str {\n    \"hello\"\n}\n",
    )
    .io("write", &app)?;
    demo.node(
        &sd2,
        "user",
        "Add a greet() helper in its own module.",
        "",
        None,
    )?;
    demo.node(
        &sd2,
        "llm",
        "Added src/greet.rs with greet().",
        "demo-model",
        None,
    )?;
    demo.node(&sd2, "code", "wrote src/greet.rs", "write_file", None)?;
    super::commit_turn::run(
        &quiet,
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
    // The project moves: same id, new path, a record node in the session.
    let moved = dir.join("app-moved");
    std::fs::rename(&app, &moved).io("move", &app)?;
    super::relocate::run(
        &quiet,
        super::relocate::RelocateArgs {
            project: project.id.clone(),
            new_path: moved.clone(),
            session: None,
            from: None,
        },
    )?;
    let sd2 = state.find_session("feature")?;
    demo.commit(&sd2, "feature")?;
    // And the proof: every node in git, git agreeing with the files.
    let verified = super::verify::run(
        &quiet,
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
        return Err(Error::refused(
            "demo::unverified",
            "the demo's sessions do not verify",
            Some(format!(
                "run `git-session --state-dir {} verify --all`",
                state.root.display()
            )),
        ));
    }

    let sdir = state.root.display();
    ctx.out.record(&crate::out::records::Demo {
        dir: dir.to_path_buf(),
        state_dir: state.root.clone(),
        sessions: vec!["refactor".into(), "feature".into()],
        project: project.id.clone(),
        project_repo: moved.clone(),
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
        format!("git-session --state-dir {sdir} verify --all"),
    ] {
        ctx.out.line(format!("  {cmd}"));
    }
    Ok(exit::OK)
}
