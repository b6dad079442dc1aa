//! `__complete` (hidden): the candidates a shell offers for one word of a
//! command line, where they come from the state dir: session ids, project
//! ids, branch names of a session, remote names. The scripts `completions`
//! prints call it; everything else (commands, flags, fixed values) they
//! complete from the definitions alone.
//!
//! Reads: `index.json` (with its journal), `projects/projects.json`,
//! `sync/remotes.json`, a session's branch refs. Writes nothing, takes no
//! lock but the index journal's shared one. Prints: one candidate a line
//! (zsh: `value:description`, fish: `value<TAB>description`); exit 0 when
//! the word is one it completes (even with no candidate, or a state dir it
//! cannot read), 1 when it is not (the script completes it), 2 for its own
//! command line it cannot read. Not a command of the tree: `main` runs it
//! when it is the first argument, so it has no help, page or completion.

use std::collections::BTreeMap;

use git_session::layout::StateDir;

mod glue;

pub use glue::with_dynamic;

/// The first argument that makes the binary this helper.
pub const NAME: &str = "__complete";

/// Complete one word of a command line (for the completion scripts).
#[derive(Debug, clap::Parser)]
#[command(name = NAME)]
pub struct CompleteArgs {
    /// The state dir when the line names none [default: the usual one]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<std::path::PathBuf>,
    /// How the candidates are printed: bash, zsh or fish
    #[arg(long, default_value = "bash")]
    pub shell: String,
    /// The index in WORDS of the word being completed
    #[arg(long)]
    pub index: usize,
    /// The command line, program first, as the shell split it
    #[arg(last = true)]
    pub words: Vec<String>,
}

/// What a word of a command line names, when it comes from the state dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Sessions,
    Projects,
    /// A session's branches (the session named on the line, if any).
    Branches(Option<String>),
    /// `checkout`'s and `show --at`'s TARGET: `prev`, `next` and the
    /// session's branches.
    Target(Option<String>),
    /// `push`'s and `fetch`'s words: remote names and session ids.
    RemotesAndSessions,
}

/// The word being completed: what it names, the part of it typed so far,
/// and what goes before each candidate (`--branch=` for fish, which
/// replaces the whole word).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub kind: Kind,
    pub typed: String,
    pub lead: String,
}

/// Run as `git-session __complete ARGS…` (`argv` from `__complete` on):
/// the exit code.
pub fn main(argv: &[std::ffi::OsString]) -> u8 {
    use clap::Parser;
    match CompleteArgs::try_parse_from(argv) {
        Ok(args) => run(args),
        Err(e) => {
            let _ = e.print();
            git_session::error::exit::USAGE
        }
    }
}

fn run(args: CompleteArgs) -> u8 {
    let (words, index) = joined(&args.words, args.index);
    let mut root = crate::cli::full_command();
    root.build();
    let Some((slot, state)) = slot(&root, &words, index) else {
        return 1;
    };
    // The line's state dir (as typed: a `~/` the shell has not expanded
    // yet), else this call's, else the usual one.
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let state = state
        .map(|s| match (s.strip_prefix("~/"), &home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => std::path::PathBuf::from(s),
        })
        .or(args.state_dir.clone());
    let state = StateDir::resolve(state.as_deref());
    let found = match state {
        Ok(state) => candidates(&state, &slot.kind),
        Err(_) => Vec::new(),
    };
    let mut out = String::new();
    for (value, about) in found {
        if args.shell == "bash" && !value.starts_with(&slot.typed) {
            continue;
        }
        let about = one_line(&about);
        out.push_str(&match (args.shell.as_str(), about.is_empty()) {
            ("zsh", false) => format!("{}:{about}", value.replace(':', "\\:")),
            ("zsh", true) => value.replace(':', "\\:"),
            ("fish", false) => format!("{}{value}\t{about}", slot.lead),
            ("fish", true) => format!("{}{value}", slot.lead),
            _ => value,
        });
        out.push('\n');
    }
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    0
}

/// bash splits `--branch=ma` into `--branch`, `=`, `ma`: the words joined
/// back, and the index of the word being completed among them.
fn joined(words: &[String], index: usize) -> (Vec<String>, usize) {
    let mut out: Vec<String> = Vec::new();
    let mut at = None;
    let mut glue_next = false;
    for (i, w) in words.iter().enumerate() {
        let last_is_long = out
            .last()
            .is_some_and(|l| l.starts_with("--") && !l.contains('='));
        if w == "=" && last_is_long {
            out.last_mut().expect("checked").push('=');
            glue_next = true;
        } else if glue_next {
            out.last_mut().expect("glued above").push_str(w);
            glue_next = false;
        } else {
            out.push(w.clone());
        }
        if i == index {
            at = Some(out.len() - 1);
        }
    }
    // Past the last word: a word not begun yet.
    let at = at.unwrap_or(out.len());
    (out, at)
}

/// A description on one line, short, and safe for a terminal.
fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    let cut: String = line.chars().take(60).collect();
    let cut = if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    };
    cut.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// What the words before `index` say: the command they reach, the values
/// its positionals and options got, the state dir given, and an option
/// still waiting for its value (the word at `index`).
struct Walk<'a> {
    cmd: &'a clap::Command,
    positionals: usize,
    values: BTreeMap<String, String>,
    pending: Option<&'a clap::Arg>,
}

fn takes_value(a: &clap::Arg) -> bool {
    a.get_action().takes_values()
}

fn long<'a>(cmd: &'a clap::Command, name: &str) -> Option<&'a clap::Arg> {
    cmd.get_arguments().find(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|all| all.contains(&name))
    })
}

fn walk<'a>(root: &'a clap::Command, words: &[String], index: usize) -> Walk<'a> {
    let mut w = Walk {
        cmd: root,
        positionals: 0,
        values: BTreeMap::new(),
        pending: None,
    };
    let mut only_positionals = false;
    let mut i = 1;
    while i < index.min(words.len()) {
        let word = words[i].as_str();
        i += 1;
        if !only_positionals && word == "--" {
            only_positionals = true;
        } else if !only_positionals && word.starts_with("--") {
            let (name, inline) = match word[2..].split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (&word[2..], None),
            };
            let Some(arg) = long(w.cmd, name).filter(|a| takes_value(a)) else {
                continue;
            };
            let value = match inline {
                Some(v) => Some(v.to_string()),
                None if i == index => {
                    w.pending = Some(arg);
                    None
                }
                None => {
                    i += 1;
                    words.get(i - 1).cloned()
                }
            };
            if let Some(v) = value {
                w.values.insert(arg.get_id().to_string(), v);
            }
        } else if !only_positionals && word.len() > 1 && word.starts_with('-') {
            // Short flags, the last perhaps with its value (`-n5`, `-n 5`).
            for (at, c) in word.char_indices().skip(1) {
                let Some(arg) = w.cmd.get_arguments().find(|a| a.get_short() == Some(c)) else {
                    continue;
                };
                if takes_value(arg) {
                    if at + c.len_utf8() == word.len() {
                        if i == index {
                            w.pending = Some(arg);
                        } else {
                            i += 1;
                        }
                    }
                    break;
                }
            }
        } else if let Some(sub) = (w.positionals == 0 && !only_positionals)
            .then(|| w.cmd.find_subcommand(word))
            .flatten()
        {
            w.cmd = sub;
        } else {
            if let Some(arg) = positional(w.cmd, w.positionals) {
                w.values
                    .entry(arg.get_id().to_string())
                    .or_insert_with(|| word.to_string());
            }
            w.positionals += 1;
        }
    }
    w
}

/// The positional argument that the `n`th positional word (from 0) fills.
fn positional(cmd: &clap::Command, n: usize) -> Option<&clap::Arg> {
    let all: Vec<&clap::Arg> = cmd.get_positionals().collect();
    all.get(n).copied().or_else(|| {
        all.last()
            .copied()
            .filter(|a| matches!(a.get_action(), clap::ArgAction::Append))
    })
}

/// What an argument of command `cmd` names, when the state dir holds it.
fn kind_of(cmd: &clap::Command, arg: &clap::Arg, session: Option<String>) -> Option<Kind> {
    let id = arg.get_id().as_str();
    let value_name = arg
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.as_str())
        .unwrap_or("");
    match (cmd.get_name(), id) {
        // A new session's id, or a directory.
        ("init", "session") => None,
        (_, "project") if value_name == "DIR" => None,
        ("push" | "fetch", "args") => Some(Kind::RemotesAndSessions),
        (_, "session" | "sessions") => Some(Kind::Sessions),
        (_, "project") => Some(Kind::Projects),
        (_, "branch") => Some(Kind::Branches(session)),
        ("checkout", "target") | ("show", "at") => Some(Kind::Target(session)),
        _ => None,
    }
}

/// The slot the word at `index` fills, when the state dir completes it,
/// and the state dir the line names (`--state-dir`).
fn slot(root: &clap::Command, words: &[String], index: usize) -> Option<(Slot, Option<String>)> {
    let w = walk(root, words, index);
    let state = w.values.get("state_dir").cloned();
    let session = w.values.get("session").cloned();
    let current = words.get(index).map(String::as_str).unwrap_or("");
    let (arg, typed, lead) = if let Some(arg) = w.pending {
        (arg, current.to_string(), String::new())
    } else if let Some((name, typed)) = current
        .strip_prefix("--")
        .and_then(|rest| rest.split_once('='))
    {
        (long(w.cmd, name)?, typed.to_string(), format!("--{name}="))
    } else if current.starts_with('-') {
        return None;
    } else {
        (
            positional(w.cmd, w.positionals)?,
            current.to_string(),
            String::new(),
        )
    };
    let kind = kind_of(w.cmd, arg, session)?;
    Some((Slot { kind, typed, lead }, state))
}

/// The candidates for `kind` in the state dir, with a description each
/// (a session's title, a project's name): what cannot be read gives none.
fn candidates(state: &StateDir, kind: &Kind) -> Vec<(String, String)> {
    match kind {
        Kind::Sessions => sessions(state),
        Kind::Projects => git_session::layout::projects::read(state)
            .map(|p| {
                p.into_iter()
                    .filter(|(id, _)| id != "default")
                    .map(|(id, row)| {
                        let name = row.get("name").and_then(|n| n.as_str()).unwrap_or("");
                        (id, name.to_string())
                    })
                    .collect()
            })
            .unwrap_or_default(),
        Kind::Branches(session) => branches(state, session.as_deref()),
        Kind::Target(session) => {
            let mut out = vec![
                ("prev".to_string(), "the turn before".to_string()),
                ("next".to_string(), "the turn after".to_string()),
            ];
            out.extend(branches(state, session.as_deref()));
            out
        }
        Kind::RemotesAndSessions => {
            let mut out: Vec<(String, String)> = git_session::sync::remotes::read(state)
                .map(|r| {
                    r.into_iter()
                        .map(|(name, row)| {
                            let url = git_session::sync::remotes::url(&row).unwrap_or("");
                            (name, format!("remote {url}"))
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.extend(sessions(state));
            out
        }
    }
}

/// The sessions of `index.json`, most recently updated first.
fn sessions(state: &StateDir) -> Vec<(String, String)> {
    let Ok(Some(index)) = git_session::layout::registry::load_index(state) else {
        return Vec::new();
    };
    let mut rows: Vec<(f64, String, String)> = index
        .into_iter()
        .map(|(id, row)| {
            let updated = row
                .get("updated_at")
                .and_then(|t| t.as_f64())
                .unwrap_or(0.0);
            let title = row.get("title").and_then(|t| t.as_str()).unwrap_or("");
            (updated, id, title.to_string())
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    rows.into_iter().map(|(_, id, title)| (id, title)).collect()
}

/// The branches of session `id`, read from its repository's refs.
fn branches(state: &StateDir, id: Option<&str>) -> Vec<(String, String)> {
    let Some(Ok(Some(sd))) = id.map(|id| state.find_session_if_any(id)) else {
        return Vec::new();
    };
    git_session::git::SessionRepo::open_for_reading(&sd.dir)
        .and_then(|repo| repo.branches())
        .map(|b| {
            b.into_iter()
                .map(|(name, _)| (name, String::new()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    fn slot_of(line: &str) -> Option<(Slot, Option<String>)> {
        let mut root = crate::cli::full_command();
        root.build();
        let w = words(line);
        let (w, i) = joined(&w, w.len() - 1);
        slot(&root, &w, i)
    }

    fn kind(line: &str) -> Option<Kind> {
        slot_of(line).map(|(s, _)| s.kind)
    }

    /// Which words the state dir completes: the last word of each line.
    #[test]
    fn the_words_that_name_sessions_projects_and_branches() {
        let s1 = Some("s1".to_string());
        for (line, want) in [
            ("git-session log ", Some(Kind::Sessions)),
            ("git-session log cl", Some(Kind::Sessions)),
            ("git-session --state-dir /x -q show s", Some(Kind::Sessions)),
            ("git-session log -n 5 s", Some(Kind::Sessions)),
            ("git-session log -n5 s", Some(Kind::Sessions)),
            ("git-session verify s1 s", Some(Kind::Sessions)),
            ("git-session grep x --session ", Some(Kind::Sessions)),
            ("git-session init ", None),
            ("git-session init s1 --project ", Some(Kind::Projects)),
            ("git-session project show ", Some(Kind::Projects)),
            ("git-session project bind ", Some(Kind::Sessions)),
            ("git-session project bind s1 ", Some(Kind::Projects)),
            ("git-session list --project=pr", Some(Kind::Projects)),
            ("git-session hook install claude-code --project ", None),
            ("git-session checkout s1 ", Some(Kind::Target(s1.clone()))),
            ("git-session show s1 --at ", Some(Kind::Target(s1.clone()))),
            (
                "git-session export s1 --branch ",
                Some(Kind::Branches(s1.clone())),
            ),
            ("git-session export --branch m", Some(Kind::Branches(None))),
            (
                "git-session export s1 --branch = ma",
                Some(Kind::Branches(s1.clone())),
            ),
            ("git-session push ", Some(Kind::RemotesAndSessions)),
            ("git-session fetch origin s", Some(Kind::RemotesAndSessions)),
            ("git-session ", None),
            ("git-session lo", None),
            ("git-session log --", None),
            ("git-session log s1 -", None),
            ("git-session checkout s1 main ", None),
            ("git-session --state-dir ", None),
            ("git-session project ", None),
        ] {
            assert_eq!(kind(line), want, "{line:?}");
        }
        let (s, state) = slot_of("git-session --state-dir=/st export s1 --branch=ma").unwrap();
        assert_eq!((s.typed.as_str(), s.lead.as_str()), ("ma", "--branch="));
        assert_eq!(state.as_deref(), Some("/st"));
        // bash's words, split at `=`: the same slot (bash replaces only
        // what follows the `=`, so the lead is printed for fish alone).
        let (s, state) = slot_of("git-session --state-dir /st export s1 --branch = ma").unwrap();
        assert_eq!((s.typed.as_str(), s.lead.as_str()), ("ma", "--branch="));
        assert_eq!(state.as_deref(), Some("/st"));
    }

    #[test]
    fn bash_words_split_at_equals_are_joined_back() {
        let (w, i) = joined(&words("gs log --state-dir = /x s"), 5);
        assert_eq!((w, i), (words("gs log --state-dir=/x s"), 3));
        let (w, i) = joined(&words("gs export --branch ="), 3);
        assert_eq!((w, i), (words("gs export --branch="), 2));
        let (w, i) = joined(&words("gs log"), 2);
        assert_eq!((w, i), (words("gs log"), 2));
    }
}
