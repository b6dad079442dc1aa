//! Checks of the state dir as a whole (`verify --all`): list rows against
//! meta.json, locations, invalid session directories, leftovers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Finding, KINDS, Severity};
use crate::layout::{StateDir, TEMP_PREFIX, registry};

/// The fix of what `verify --fix` repairs in the state dir.
const FIX: &str = "git-session verify --fix";

/// A problem of the state dir.
fn add(
    out: &mut Vec<Finding>,
    kind: &'static str,
    path: PathBuf,
    message: String,
    fix: String,
    fixable: bool,
) {
    debug_assert!(KINDS.iter().any(|k| k.code == kind), "undocumented {kind}");
    out.push(Finding {
        session: None,
        kind,
        severity: Severity::Problem,
        path,
        message,
        fix,
        fixable,
    });
}

/// Checks of the state dir as a whole: index rows, locations, invalid
/// session directories, leftover staging directories.
pub fn check_state(
    state: &StateDir,
    sessions: &[crate::backfill::Target],
) -> (Vec<Finding>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut temps = Vec::new();
    // The state dir's own directories and files: a link there makes every
    // command that writes the registries refuse.
    if let Err(e) = state.check_links() {
        add(
            &mut out,
            "layout_link",
            state.root.clone(),
            e.to_string(),
            "replace the link with the directory or file it should be (nothing is read or written through it)".into(),
            false,
        );
    }
    let known: BTreeSet<&str> = sessions.iter().map(|t| t.id.as_str()).collect();
    // Index rows exist for valid sessions: a directory with a parsable meta.json.
    let discovered = registry::discover(state).unwrap_or_default();
    check_index_json(state, &discovered, &mut out);
    check_locations_file(state, &mut out);
    check_projects(state, &discovered, &mut out, &mut temps);
    check_locations(state, sessions, &known, &mut out);
    scan_session_dirs(state, &known, &mut out, &mut temps);
    check_settings(state, &mut out);
    for linked in state.linked_project_dirs() {
        add(
            &mut out,
            "layout_link",
            linked,
            "a project's directory of sessions that is a symbolic link: every command refuses its sessions".into(),
            "replace the link with the directory itself (nothing is read or written through it)".into(),
            false,
        );
    }
    check_migration(state, &mut out);
    if !temps.is_empty() {
        add(
            &mut out,
            "stray_temp_file",
            temps[0].clone(),
            format!(
                "{} temporary file(s) or staging director(ies) left by an interrupted command",
                temps.len()
            ),
            FIX.into(),
            true,
        );
    }
    check_hook_log(state, &mut out);
    check_push_queues(state, &mut out);
    (out, temps)
}

/// index.json's rows against the valid sessions (a directory with a
/// parsable meta.json).
fn check_index_json(state: &StateDir, discovered: &[(String, PathBuf)], out: &mut Vec<Finding>) {
    let valid: Vec<String> = discovered.iter().map(|(id, _)| id.clone()).collect();
    let valid: BTreeSet<&str> = valid.iter().map(String::as_str).collect();
    // index.json as a file: the Python store reads it alone, so every
    // command but a bare `append` leaves it current (SPEC §3); a bare
    // append's `updated_at` and preview may wait in the journal for the
    // command that ends its turn.
    match registry::load_index_as_file_and_folded(state) {
        Ok(None) if !valid.is_empty() => add(
            out,
            "index_missing",
            state.index_json(),
            "index.json is missing or does not parse".into(),
            FIX.into(),
            true,
        ),
        Ok(None) => {}
        Ok(Some((index, folded))) => {
            for id in index.keys().filter(|k| !valid.contains(k.as_str())) {
                add(
                    out,
                    "index_row_orphan",
                    state.index_json(),
                    format!("row `{id}` has no valid session directory"),
                    FIX.into(),
                    true,
                );
            }
            if let Ok(fresh) = registry::rebuild(state) {
                let folded_stale: BTreeSet<String> = registry::stale_rows(&folded, &fresh)
                    .into_iter()
                    .map(|(id, _)| id)
                    .collect();
                for (id, fields) in registry::stale_rows(&index, &fresh) {
                    // What a bare append left for its turn's end to fold.
                    let waiting = !folded_stale.contains(&id)
                        && fields
                            .iter()
                            .all(|f| matches!(*f, "updated_at" | "preview"));
                    if waiting {
                        continue;
                    }
                    add(
                        out,
                        "index_row_stale",
                        state.index_json(),
                        format!(
                            "row `{id}` disagrees with its meta.json: {}",
                            fields.join(", ")
                        ),
                        FIX.into(),
                        true,
                    );
                }
            }
            for id in valid.iter().filter(|k| !index.contains_key(**k)) {
                add(
                    out,
                    "index_row_missing",
                    state.index_json(),
                    format!("session `{id}` has no row"),
                    FIX.into(),
                    true,
                );
            }
        }
        Err(e) => add(
            out,
            "index_unreadable",
            state.index_json(),
            e.to_string(),
            "check the permissions of the state dir".into(),
            false,
        ),
    }
}

/// locations.json parses.
fn check_locations_file(state: &StateDir, out: &mut Vec<Finding>) {
    if state.locations_json().exists() {
        let parses = crate::layout::atomic::read(state.locations_json())
            .ok()
            .is_some_and(|b| {
                matches!(
                    serde_json::from_slice::<serde_json::Value>(&b),
                    Ok(serde_json::Value::Object(_))
                )
            });
        if !parses {
            add(
                out,
                "locations_unparsable",
                state.locations_json(),
                "locations.json does not parse".into(),
                FIX.into(),
                true,
            );
        }
    }
}

/// Sessions outside `sessions/<id>/` have their locations.json entry, and
/// every entry exists.
fn check_locations(
    state: &StateDir,
    sessions: &[crate::backfill::Target],
    known: &BTreeSet<&str>,
    out: &mut Vec<Finding>,
) {
    let locations = registry::read_locations(state).unwrap_or_default();
    for (id, dir) in missing_locations(state, sessions) {
        let message = match locations.get(&id) {
            // A state dir copied whole: the entry names the original's copy.
            Some(elsewhere) => format!(
                "`{id}` lives at `{}`, but locations.json points it at `{elsewhere}`: the Python store does not read this one",
                dir.display()
            ),
            None => format!(
                "`{id}` lives at `{}` with no locations.json entry: the Python store does not find it",
                dir.display()
            ),
        };
        add(
            out,
            "location_missing",
            state.locations_json(),
            message,
            FIX.into(),
            true,
        );
    }
    for (id, path, elsewhere) in dangling_locations(state, known) {
        add(
            out,
            "location_dangling",
            state.locations_json(),
            format!(
                "`{id}` → `{path}` does not exist{}",
                if elsewhere {
                    " (the session is in a standard place)"
                } else {
                    ""
                }
            ),
            if elsewhere {
                FIX.into()
            } else {
                format!(
                    "the project moved: run `git-session relocate <project> <new path>`, or remove `{id}` from locations.json"
                )
            },
            elsewhere,
        );
    }
}

/// The locations.json entries whose path holds no session: `(id, path,
/// elsewhere)`, where `elsewhere` says the session was found in a standard
/// place (`known`), so that removing the entry loses nothing (the fixable
/// ones); an entry whose session is nowhere else waits for `relocate`.
pub fn dangling_locations(state: &StateDir, known: &BTreeSet<&str>) -> Vec<(String, String, bool)> {
    registry::read_locations(state)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, path)| {
            let p = Path::new(path);
            !p.join(crate::layout::paths::META).is_file()
                && !p.join(crate::layout::paths::HISTORY).is_dir()
        })
        .map(|(id, path)| {
            let elsewhere = known.contains(id.as_str());
            (id, path, elsewhere)
        })
        .collect()
}

/// Directories that look like sessions but are not valid, and our
/// leftovers (`temps`).
fn scan_session_dirs(
    state: &StateDir,
    known: &BTreeSet<&str>,
    out: &mut Vec<Finding>,
    temps: &mut Vec<PathBuf>,
) {
    // Directories that look like sessions but are not valid, and our leftovers.
    let mut scan = |dir: PathBuf| {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(TEMP_PREFIX) {
                temps.push(e.path());
                continue;
            }
            // A session directory that is a link: every command refuses
            // it, so `--all` does not list it; it is no silent gap.
            if e.file_type().is_ok_and(|t| t.is_symlink())
                && name != "projects"
                && crate::layout::ids::session_id(&name).is_ok()
            {
                add(
                    out,
                    "layout_link",
                    e.path(),
                    "a session directory that is a symbolic link: every command refuses it".into(),
                    "replace the link with the session directory itself (nothing is read or written through it)".into(),
                    false,
                );
                continue;
            }
            if !e.file_type().is_ok_and(|t| t.is_dir())
                || name == "projects"
                || name.starts_with('.')
            {
                continue;
            }
            // A session made under a name that is now reserved (an older
            // version allowed `index.json`, `Index.json`, …): no command
            // finds it any more, so it is named here, not passed over.
            if crate::layout::ids::is_reserved_session_id(&name)
                && crate::layout::paths::is_session_dir(&e.path())
            {
                add(
                    out,
                    "invalid_session_dir",
                    e.path(),
                    format!("a session under `{name}`, a name kept for the state dir's own files: no command reads it"),
                    "rename the directory (and the `id` in its meta.json) to a valid session id, or move it out of the state dir".into(),
                    false,
                );
                continue;
            }
            // Neither meta.json nor history/: no session (a test leftover,
            // which `list` skips, as the Python store's docs say it does): a note, so that a
            // CI job over a real state dir does not fail on it.
            if crate::layout::ids::session_id(&name).is_ok() && !known.contains(name.as_str()) {
                out.push(Finding {
                    session: None,
                    kind: "not_a_session_dir",
                    severity: Severity::Note,
                    path: e.path(),
                    message: "neither a meta.json nor a history/ here: no session, skipped".into(),
                    fix: "nothing to do; move the directory out of the state dir to quiet this"
                        .into(),
                    fixable: false,
                });
            }
        }
    };
    state.session_parents().into_iter().for_each(&mut scan);
}

/// The settings file: one that says nothing this tool reads is named.
fn check_settings(state: &StateDir, out: &mut Vec<Finding>) {
    let settings = state.settings_file();
    if std::fs::symlink_metadata(&settings).is_ok() {
        let value = crate::layout::schema::read_bounded(&settings)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        let why = match &value {
            Some(serde_json::Value::Object(o)) => match o.get("node_names") {
                None => None,
                Some(v) if v == "python" || v == "layout" => None,
                Some(v) => Some(format!(
                    "`node_names` is {v}, neither \"python\" nor \"layout\""
                )),
            },
            _ => Some("it does not parse as a JSON object".to_string()),
        };
        if let Some(why) = why {
            out.push(Finding {
                session: None,
                kind: "settings_unread",
                severity: Severity::Note,
                path: settings,
                message: format!("{why}: the settings file is ignored"),
                fix: "write {\"node_names\": \"python\"} (or remove the file)".into(),
                fixable: false,
            });
        }
    }
}

/// Sessions mid-migration, or a migration journal that cannot be read.
fn check_migration(state: &StateDir, out: &mut Vec<Finding>) {
    match crate::migrate::read_journal(state) {
        Ok(j) if !j.sessions.is_empty() => {
            let ids: Vec<&str> = j.sessions.keys().map(String::as_str).collect();
            add(
                out,
                "migration_in_progress",
                state.sessions().join(".migration"),
                format!(
                    "{} session(s) are mid-migration: {}",
                    ids.len(),
                    ids.join(", ")
                ),
                "git-session migrate".into(),
                false,
            );
        }
        Ok(_) => {}
        // A journal that cannot be read hides which sessions are mid-way.
        Err(e) => add(
            out,
            "migration_in_progress",
            crate::migrate::journal_path(state),
            format!("the migration journal cannot be read: {e}"),
            "replace a link with the file it stands for, then `git-session migrate`".into(),
            false,
        ),
    }
}

/// Failures `git-session hook` kept from the agent: the log and its
/// older part. Never through a link, never a special file (`/dev/zero`
/// would be read for ever), and bounded; read lossily: a line torn inside
/// a character (a hook killed as it wrote) must not hide the failures
/// around it.
fn check_hook_log(state: &StateDir, out: &mut Vec<Finding>) {
    let log = state.hook_log();
    let mut failures = 0;
    let mut last = serde_json::Value::Null;
    let mut found = Vec::new();
    for part in [state.hook_log_older(), log.clone()] {
        if std::fs::symlink_metadata(&part).is_err() {
            continue;
        }
        found.push(format!("`{}`", part.display()));
        match crate::layout::schema::read_bounded(&part) {
            Err(e) => add(
                out,
                "hook_failed",
                part.clone(),
                format!("the hook log cannot be read: {e}"),
                format!(
                    "look at `{}`, then remove it (hooks never write through a link)",
                    part.display()
                ),
                false,
            ),
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                failures += lines.len();
                // The last entry that reads whole (the very last may be torn).
                if let Some(v) = lines
                    .iter()
                    .rev()
                    .find_map(|l| serde_json::from_str(l).ok())
                {
                    last = v;
                }
            }
        }
    }
    if failures > 0 {
        let what = last["error"]
            .as_str()
            .and_then(|e| e.lines().next())
            .unwrap_or("(unreadable entry)")
            .trim_start_matches("git-session: error: ")
            .to_string();
        add(
            out,
            "hook_failed",
            log.clone(),
            format!(
                "{failures} hook call(s) failed; the last ({}): {what}",
                last["time"].as_str().unwrap_or("?")
            ),
            format!("read {}, act on it, then remove it", found.join(" and ")),
            false,
        );
    }
}

/// A push that did not finish: refs its remote has not confirmed.
fn check_push_queues(state: &StateDir, out: &mut Vec<Finding>) {
    for name in crate::sync::remotes::read(state)
        .map(|r| r.into_keys().collect::<Vec<_>>())
        .unwrap_or_default()
    {
        let n = match crate::sync::queued(state, &name) {
            Ok(n) => n,
            Err(e) => {
                add(
                    out,
                    "layout_link",
                    state.push_queue(&name),
                    e.to_string(),
                    "remove it: the next push queues its refs again (nothing is read through it)"
                        .into(),
                    false,
                );
                continue;
            }
        };
        if n > 0 {
            out.push(Finding {
                session: None,
                kind: "push_queued",
                severity: Severity::Note,
                path: state.push_queue(&name),
                message: format!("{n} ref(s) not yet confirmed by remote `{name}`"),
                fix: format!("git-session push {name}"),
                fixable: false,
            });
        }
    }
}

/// Sessions not at `sessions/<id>/` whose `locations.json` entry is missing
/// or names another place (SPEC §3: that is how the Python store finds
/// them): `(id, where the session is)`.
pub fn missing_locations(
    state: &StateDir,
    sessions: &[crate::backfill::Target],
) -> Vec<(String, PathBuf)> {
    let locations = registry::read_locations(state).unwrap_or_default();
    sessions
        .iter()
        .filter(|t| t.dir.dir != state.default_session_dir(&t.id))
        .filter(|t| t.dir.dir.starts_with(state.sessions()))
        .filter(|t| locations.get(&t.id).map(PathBuf::from).as_ref() != Some(&t.dir.dir))
        .map(|t| (t.id.clone(), t.dir.dir.clone()))
        .collect()
}

/// A session's binding as the two registries tell it.
struct Binding {
    session: String,
    /// The project its meta.json names (`default` when none).
    bound: String,
    /// Whether projects.json holds that project.
    known: bool,
    /// Whether projects.json lists the session under it, and only there.
    agrees: bool,
    /// The projects that list it.
    listed: Vec<String>,
}

fn bindings(state: &StateDir, discovered: &[(String, PathBuf)]) -> Vec<Binding> {
    use crate::layout::projects::{self, Project};
    let Ok(ps) = projects::read(state) else {
        return Vec::new();
    };
    let all: Vec<Project> = ps.iter().map(|(id, p)| Project::from(id, p)).collect();
    let mut out = Vec::new();
    for (id, dir) in discovered {
        let Ok(meta) = crate::layout::schema::Meta::read(&dir.join(crate::layout::paths::META))
        else {
            continue;
        };
        let id = id.clone();
        let bound = meta.str("project_id").unwrap_or("default").to_string();
        let listed: Vec<String> = all
            .iter()
            .filter(|p| p.session_ids.contains(&id))
            .map(|p| p.id.clone())
            .collect();
        let agrees = match bound.as_str() {
            "default" => listed.iter().all(|p| p == "default"),
            b => listed.len() == 1 && listed[0] == b,
        };
        out.push(Binding {
            known: bound == "default" || all.iter().any(|p| p.id == bound),
            session: id,
            bound,
            agrees,
            listed,
        });
    }
    out
}

/// Project paths exist, and every session's binding (its meta.json
/// `project_id`, frozen after the first turn) agrees with projects.json's
/// `session_ids` (SPEC §5.14).
fn check_projects(
    state: &StateDir,
    discovered: &[(String, PathBuf)],
    out: &mut Vec<Finding>,
    temps: &mut Vec<PathBuf>,
) {
    use crate::layout::projects::{self, Project};
    let mut add = |kind, message: String, fix: String, fixable| {
        debug_assert!(KINDS.iter().any(|k| k.code == kind), "undocumented {kind}");
        out.push(Finding {
            session: None,
            kind,
            severity: Severity::Problem,
            path: state.projects_json(),
            message,
            fix,
            fixable,
        });
    };
    if let Ok(ps) = projects::read(state) {
        for p in ps.iter().map(|(id, p)| Project::from(id, p)) {
            if let Some(path) = p
                .path
                .as_deref()
                .filter(|path| p.id != "default" && !path.is_dir())
            {
                add(
                    "project_path_missing",
                    format!("project `{}`: `{}` does not exist", p.id, path.display()),
                    format!("git-session relocate {} <new path>", p.id),
                    false,
                );
            }
            // An agent commit's leftovers in the project's own `.git/`
            // (never through a link there): its temp files, and git's
            // index.lock when it was killed holding it.
            if let Some(git_dir) = agent_commit_dir(state, &p)
                .map(|path| path.join(".git"))
                .filter(|g| std::fs::symlink_metadata(g).is_ok_and(|m| m.is_dir()))
            {
                temps.extend(crate::git::stale_project_temps(&git_dir));
                for (tmp, what) in project_index_locks(state, &p, true) {
                    use crate::git::index_lock::Recovered;
                    match what {
                        Recovered::TempOnly => temps.push(tmp),
                        Recovered::Finished | Recovered::Undone => add(
                            "project_index_lock",
                            format!(
                                "project `{}`: an agent commit was killed holding `{}`; git refuses to run there until it goes",
                                p.id,
                                git_dir.join("index.lock").display()
                            ),
                            "git-session verify --all --fix (or the next agent commit in the project)"
                                .into(),
                            true,
                        ),
                    }
                }
            }
        }
    }
    // Projects `project remove` took out: their sessions keep the binding.
    let removed = crate::sync::tombstones::local(state, crate::sync::tombstones::Kind::Project)
        .unwrap_or_default();
    let mut notes = Vec::new();
    for b in bindings(state, discovered) {
        if !b.known && removed.contains_key(&b.bound) {
            notes.push(Finding {
                session: None,
                kind: "binding_removed_project",
                severity: Severity::Note,
                path: state.projects_json(),
                message: format!(
                    "session `{}` is bound to project `{}`, which `project remove` unregistered; it keeps its history and project_id",
                    b.session, b.bound
                ),
                fix: "nothing to do; `git-session project add <dir>` registers the project again".into(),
                fixable: false,
            });
        } else if !b.known {
            add(
                "binding_unknown_project",
                format!(
                    "session `{}` is bound to project `{}`, which projects.json does not hold",
                    b.session, b.bound
                ),
                "register the project's directory (`git-session project add <dir>`) or restore projects.json".into(),
                false,
            );
        } else if !b.agrees {
            add(
                "binding_mismatch",
                format!(
                    "session `{}` is bound to `{}` (meta.json); projects.json lists it under {}",
                    b.session,
                    b.bound,
                    if b.listed.is_empty() {
                        "no project".to_string()
                    } else {
                        b.listed
                            .iter()
                            .map(|p| format!("`{p}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
                "git-session verify --all --fix".into(),
                true,
            );
        }
    }
    out.extend(notes);
}

/// The directory of project `p` where agent commits are made: none for the
/// default project, or one the registry points at the state dir or a
/// session (nothing is committed, and nothing touched, there).
fn agent_commit_dir<'a>(
    state: &StateDir,
    p: &'a crate::layout::projects::Project,
) -> Option<&'a std::path::Path> {
    let path = p.path.as_deref().filter(|_| p.id != "default")?;
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    crate::project::refuse_ours(state, &canon)
        .is_ok()
        .then_some(path)
}

/// The index locks an agent commit killed midway left in project `p`'s
/// repository (`crate::git::index_lock`), finished or undone (with
/// `dry_run`, only found). A project the registry points at the state dir
/// or a session has no agent commits: nothing there is touched.
pub fn project_index_locks(
    state: &StateDir,
    p: &crate::layout::projects::Project,
    dry_run: bool,
) -> Vec<(PathBuf, crate::git::index_lock::Recovered)> {
    let Some(path) = agent_commit_dir(state, p) else {
        return Vec::new();
    };
    match crate::git::project::find(path) {
        Ok(crate::git::project::Found::Repo(r)) => r.recover_index_locks(dry_run),
        _ => Vec::new(),
    }
}

/// Sessions whose projects.json binding disagrees with their meta.json (the
/// truth): `(session, its project)`, for `--fix`.
pub fn binding_fixes(state: &StateDir) -> Vec<(String, String)> {
    bindings(state, &registry::discover(state).unwrap_or_default())
        .into_iter()
        .filter(|b| b.known && !b.agrees)
        .map(|b| (b.session, b.bound))
        .collect()
}
