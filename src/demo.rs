//! The demo's sample sessions (SPEC §5.16), recorded into a fresh state dir
//! on a clock of their own: `refactor` (turns with tool calls, and a retry
//! branch) and `feature` (bound to a scratch project with auto-commit). The
//! `demo` command runs the turn commands between these steps.

use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};
use crate::layout::lock::LockOptions;
use crate::layout::projects::Project;
use crate::layout::schema::Meta;
use crate::layout::{SessionDir, StateDir, atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::out::Printer;
use crate::store::{self, Created, NewNode, NewSession};

/// What `demo` refuses (`git_session::demo::…`, exit 1).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DemoError {
    /// A sample session already in the state dir.
    #[error("session `{id}` already exists in `{}`", state.display())]
    #[diagnostic(
        code(git_session::demo::session_exists),
        help("give `demo` an empty or new directory")
    )]
    SessionExists { id: String, state: PathBuf },

    /// The project's sample session already in the state dir.
    #[error("session `{id}` already exists")]
    #[diagnostic(
        code(git_session::demo::session_exists),
        help("give `demo` an empty or new directory")
    )]
    ProjectSessionExists { id: &'static str },

    /// The recorded sessions do not verify.
    #[error("the demo's sessions do not verify")]
    #[diagnostic(
        code(git_session::demo::unverified),
        help("run `git-session --state-dir {} verify --all`", state.display())
    )]
    Unverified { state: PathBuf },
}

/// The demo being recorded: its state dir and its clock.
pub struct Demo {
    /// The demo's own state dir (`<DIR>/state`).
    pub state: StateDir,
    /// The state dir the command runs with: node files are named as it
    /// names them.
    naming_from: StateDir,
    locks: LockOptions,
    out: Printer,
    clock: f64,
}

impl Demo {
    /// A demo into `state`, its clock starting an hour ago.
    pub fn new(state: StateDir, naming_from: StateDir, locks: LockOptions, out: Printer) -> Demo {
        Demo {
            state,
            naming_from,
            locks,
            out,
            clock: crate::out::now() - 3600.0,
        }
    }

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
        let _l = lock::session(sd, lock::Kind::Exclusive, self.locks)?;
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
                naming: self.naming_from.naming_for(sd),
                ..Default::default()
            },
            now,
        )?;
        atomic::write(&sd.meta(), &meta.to_json())?;
        Ok(node.id)
    }

    pub fn commit(&mut self, sd: &SessionDir, id: &str) -> Result<()> {
        let _l = lock::session(sd, lock::Kind::Exclusive, self.locks)?;
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
        let out = self.out;
        mirror::commit_pending(sd, id, &opts, &mut |_| Ok(()), &mut |w| out.warn(w))?;
        // The list row follows meta.json (title, `updated_at`), as after
        // `append` and `commit-turn`.
        let preview = registry::latest_preview(sd, &catalog);
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
        match store::create(&self.state, &spec, None, now, self.locks)? {
            Created::New(sd) => Ok(sd),
            Created::Existing(_) => Err(DemoError::SessionExists {
                id: id.to_string(),
                state: self.state.root.clone(),
            }
            .into()),
        }
    }

    /// The session `refactor`: three turns with tool calls, the third a
    /// retry from the first.
    pub fn refactor(&mut self) -> Result<SessionDir> {
        let sd = self.session("refactor", "cli")?;
        let a1 = self.turn(
            &sd,
            "refactor",
            "Why does `cargo build` fail on the CI runner?",
            "The runner has an older Rust: `let chains` need 1.88. I checked the toolchain file and the CI config.",
            &["read", "grep", "grep"],
            None,
        )?;
        self.turn(
            &sd,
            "refactor",
            "Pin the toolchain in CI.",
            "Done: the workflow now installs the version from rust-toolchain.toml.",
            &["edit", "run_tests"],
            None,
        )?;
        // Go back to turn 1's answer and ask differently: a retry branch.
        self.turn(
            &sd,
            "refactor",
            "Instead, rewrite the code so it builds on the old toolchain.",
            "Rewrote the two `if let` chains as nested matches; it builds on 1.80.",
            &["edit", "run_tests"],
            Some(&a1),
        )?;
        Ok(sd)
    }

    /// The project `app` at `app`: a scratch repository of the user's,
    /// registered with auto-commit on.
    pub fn app(&mut self, app: &Path) -> Result<Project> {
        std::fs::create_dir_all(app.join("src")).io("create", app)?;
        std::fs::write(
            app.join("src/main.rs"),
            "fn main() {\n    println!(\"hello\");\n}\n",
        )
        .io("write", app)?;
        std::fs::write(app.join("README.md"), "# app\n").io("write", app)?;
        crate::git::project::init_with_baseline(app, self.tick(1.0))?;
        let (project, _) =
            crate::project::add(&self.state, app, Some("app"), Some(true), self.locks)?;
        Ok(project)
    }

    /// The session `feature`, bound to `project` from its creation.
    pub fn feature(&mut self, project: &Project) -> Result<SessionDir> {
        let spec = NewSession {
            id: "feature".into(),
            agent_id: Some("demo".into()),
            source: Some("tui".into()),
            project: Some(project.id.clone()),
            ..Default::default()
        };
        let now = self.tick(1.0);
        match store::create(&self.state, &spec, None, now, self.locks)? {
            Created::New(sd) => Ok(sd),
            Created::Existing(_) => Err(DemoError::ProjectSessionExists { id: "feature" }.into()),
        }
    }

    /// The work of `feature`'s turn (between `begin-turn` and
    /// `commit-turn`): a new file in the project, and the turn's nodes.
    pub fn feature_turn(&mut self, sd: &SessionDir, app: &Path) -> Result<()> {
        std::fs::write(
            app.join("src/greet.rs"),
            "pub fn greet() -> &'static str {\n    \"hello\"\n}\n",
        )
        .io("write", app)?;
        self.node(
            sd,
            "user",
            "Add a greet() helper in its own module.",
            "",
            None,
        )?;
        self.node(
            sd,
            "llm",
            "Added src/greet.rs with greet().",
            "demo-model",
            None,
        )?;
        self.node(sd, "code", "wrote src/greet.rs", "write_file", None)?;
        Ok(())
    }
}
