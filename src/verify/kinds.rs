//! Every finding `verify` reports: its stable code, what it means, its fix,
//! and what `verify --fix` does about it (the man page's table).

/// A finding kind as the man page documents it.
pub struct Kind {
    pub code: &'static str,
    pub meaning: &'static str,
    pub fix: &'static str,
    /// What `verify --fix` does about it.
    pub repair: &'static str,
}

const NOTHING: &str = "nothing (it needs a person)";

/// Every finding `verify` reports.
pub const KINDS: &[Kind] = &[
    Kind {
        code: "layout_link",
        meaning: "a directory or file the layout names (.git/, history/, workdir/, .git/HEAD, .git/config, a branch, …) is a symlink or a special file",
        fix: "replace it with the directory or regular file it should be",
        repair: NOTHING,
    },
    Kind {
        code: "repo_redirected",
        meaning: "the session repository sends git to another repository for its refs and objects (.git/commondir) or borrows objects (.git/objects/info/alternates); every command refuses the session",
        fix: "copy what is there into the session repository, then remove the file",
        repair: NOTHING,
    },
    Kind {
        code: "push_queued",
        meaning: "a note: a push did not finish (killed, or a ref was refused); its queue holds refs the remote has not confirmed",
        fix: "git-session push <remote> (after a fetch, when a ref was refused)",
        repair: NOTHING,
    },
    Kind {
        code: "diverged",
        meaning: "a fetch found that this machine and a remote both added turns to the session; the remote's tips are kept as refs/remotes/<remote>/<branch>",
        fix: "git-session fetch <remote> --take local|remote <session>",
        repair: NOTHING,
    },
    Kind {
        code: "meta_missing",
        meaning: "the session has no meta.json",
        fix: "restore it from git",
        repair: "restores the committed copy",
    },
    Kind {
        code: "meta_unparsable",
        meaning: "meta.json is not a JSON object",
        fix: "restore it from git",
        repair: "moves it to the quarantine, restores the committed copy",
    },
    Kind {
        code: "meta_id_mismatch",
        meaning: "meta.json names another session",
        fix: "put the repository where that session belongs",
        repair: NOTHING,
    },
    Kind {
        code: "dangling_head",
        meaning: "meta.json's head_id is not a node",
        fix: "git-session checkout <session> <node>",
        repair: NOTHING,
    },
    Kind {
        code: "history_unreadable",
        meaning: "history/ cannot be listed",
        fix: "check its permissions",
        repair: NOTHING,
    },
    Kind {
        code: "foreign_file",
        meaning: "a file in history/ not named like a node",
        fix: "move it out of history/",
        repair: NOTHING,
    },
    Kind {
        code: "catalog_stale",
        meaning: "the cache of history/'s names misses node files or names gone ones (another program wrote history/ in the instant of an append): commands that trust it do not see those nodes",
        fix: "git-session verify --fix",
        repair: "rebuilds it from the directory, then commits what it missed",
    },
    Kind {
        code: "duplicate_id",
        meaning: "two node files claim one id",
        fix: "move one aside",
        repair: NOTHING,
    },
    Kind {
        code: "duplicate_seq",
        meaning: "two node files share one seq",
        fix: "renumber one",
        repair: NOTHING,
    },
    Kind {
        code: "mixed_node_names",
        meaning: "a session's node files use both namings (the layout's and the Python store's), or a rename to one was cut short",
        fix: "verify --fix, or migrate --node-names python",
        repair: "every node file renamed to the Python store's naming: the same blobs, one commit per branch",
    },
    Kind {
        code: "name_mismatch",
        meaning: "a node's file name and payload disagree",
        fix: "rename the file after its payload",
        repair: NOTHING,
    },
    Kind {
        code: "node_unreadable",
        meaning: "a node file cannot be read (its permissions, or a link or special file in its place)",
        fix: "check its permissions; a link or special file: replace it with the node file, or move it out of history/",
        repair: NOTHING,
    },
    Kind {
        code: "node_unparsable",
        meaning: "a node not yet in git does not parse",
        fix: "repair it or move it aside",
        repair: NOTHING,
    },
    Kind {
        code: "node_damaged",
        meaning: "a committed node no longer parses",
        fix: "restore it from git",
        repair: "moves it to the quarantine, restores the committed copy",
    },
    Kind {
        code: "node_changed",
        meaning: "a committed node's content changed",
        fix: "restore it from git",
        repair: "moves it to the quarantine, restores the committed copy",
    },
    Kind {
        code: "node_restamped",
        meaning: "note: a committed node's metadata changed after its turn (the Python store stamps project commits)",
        fix: "git-session verify --fix <session>",
        repair: "commits it (`session: node metadata stamped after its turn`) when HEAD is on the latest turn",
    },
    Kind {
        code: "dangling_predecessor",
        meaning: "a node's predecessor is not a node",
        fix: "restore the missing node",
        repair: NOTHING,
    },
    Kind {
        code: "dangling_caller",
        meaning: "a node's caller is not a node",
        fix: "restore the missing node",
        repair: NOTHING,
    },
    Kind {
        code: "no_repository",
        meaning: "the session has no git repository",
        fix: "git-session backfill <session>",
        repair: "creates it and commits every turn",
    },
    Kind {
        code: "no_commits",
        meaning: "the repository has no commit",
        fix: "git-session backfill <session>",
        repair: "commits every turn",
    },
    Kind {
        code: "uncommitted_node",
        meaning: "nodes that no commit holds",
        fix: "git-session backfill <session>",
        repair: "commits them, turn by turn",
    },
    Kind {
        code: "record_uncommitted",
        meaning: "note: record nodes (a relocation) not in git yet, written while HEAD was on an older turn",
        fix: "the next commit-turn commits them",
        repair: "nothing (the next turn commits them)",
    },
    Kind {
        code: "turn_in_progress",
        meaning: "note: the session's status is `running` (a turn is open: `begin-turn`, or the Python store at work), and the nodes of that turn are not in git yet",
        fix: "the turn's commit-turn commits them; a session left running by a crash is set `interrupted` by `git-session recover`, and its nodes are then reported",
        repair: "nothing (the turn's own commit commits them; a commit made beside the writer would take git's index from it)",
    },
    Kind {
        code: "turn_unreachable",
        meaning: "turns whose commits no branch reaches (a ref was deleted or moved): nodes no reachable tree holds, or a tip of the conversation that no reachable commit's `Nodes:` trailer names although later commits' trees hold its file",
        fix: "git-session verify --fix <session>",
        repair: "fast-forwards a moved branch, or recreates a deleted one under the name it was made with (a retry branch: `retry-<the reply, or the message, that forked it>`, wherever its tip has moved since; `main` when the session has none)",
    },
    Kind {
        code: "trailer_session_mismatch",
        meaning: "a commit names another session",
        fix: "restore the right repository",
        repair: NOTHING,
    },
    Kind {
        code: "trailer_nodes_missing",
        meaning: "a commit names nodes that have no file",
        fix: "restore the files from git",
        repair: NOTHING,
    },
    Kind {
        code: "trailer_overlap",
        meaning: "two commits claim one node",
        fix: "re-create the repository with backfill",
        repair: NOTHING,
    },
    Kind {
        code: "trailer_turn_mismatch",
        meaning: "a commit's Turn trailer disagrees with the DAG",
        fix: "check the node files",
        repair: NOTHING,
    },
    Kind {
        code: "git_index_stale",
        meaning: "the git index does not mirror the latest commit",
        fix: "git-session verify --fix <session>",
        repair: "rebuilds the index from that commit",
    },
    Kind {
        code: "object_missing",
        meaning: "a git object is missing or corrupt",
        fix: "git-session verify --fix <session> when the session's file still holds a blob's bytes; otherwise restore the repository from a backup",
        repair: "stores a blob again from the session's file that holds its bytes, the damaged copy quarantined; a commit, a tree, or a blob whose file changed needs a backup",
    },
    Kind {
        code: "repo_unreadable",
        meaning: "the repository cannot be opened",
        fix: "inspect it with git fsck",
        repair: NOTHING,
    },
    Kind {
        code: "head_unreadable",
        meaning: "HEAD cannot be read",
        fix: "git symbolic-ref HEAD refs/heads/main",
        repair: NOTHING,
    },
    Kind {
        code: "stale_git_lock",
        meaning: "a git lock file left by a killed process",
        fix: "git-session verify --fix <session>",
        repair: "removes the locks of ours (others need a person)",
    },
    Kind {
        code: "stray_temp_file",
        meaning: "temporary files left by an interrupted command",
        fix: "git-session verify --fix",
        repair: "removes them",
    },
    Kind {
        code: "project_index_lock",
        meaning: "git's index.lock in a project, left by an agent commit that was killed: the user's git refuses to run",
        fix: "git-session verify --all --fix (the next agent commit in the project does it too)",
        repair: "puts the index in place when the agent's commit landed, else removes the lock",
    },
    Kind {
        code: "index_missing",
        meaning: "sessions/index.json is missing or does not parse",
        fix: "git-session verify --all --fix",
        repair: "rebuilds it from every meta.json",
    },
    Kind {
        code: "index_unreadable",
        meaning: "sessions/index.json cannot be read",
        fix: "check its permissions",
        repair: NOTHING,
    },
    Kind {
        code: "index_row_orphan",
        meaning: "a list row without a session",
        fix: "git-session verify --all --fix",
        repair: "rebuilds the index",
    },
    Kind {
        code: "index_row_missing",
        meaning: "a session without a list row",
        fix: "git-session verify --all --fix",
        repair: "rebuilds the index",
    },
    Kind {
        code: "index_row_stale",
        meaning: "a row of index.json (read as a file, as the Python store reads it) disagrees with the session's meta.json, beyond a bare append's updated_at and preview waiting in the journal",
        fix: "git-session verify --all --fix",
        repair: "rebuilds the index",
    },
    Kind {
        code: "hook_failed",
        meaning: "`git-session hook` could not record an agent's event (it never fails the agent; the failures are in git-session-hooks.log in the state directory, and its older part git-session-hooks.log.1), or that log cannot be read (a link or a special file, never followed)",
        fix: "read the log, act on it, then remove it",
        repair: NOTHING,
    },
    Kind {
        code: "locations_unparsable",
        meaning: "sessions/locations.json does not parse",
        fix: "repair it by hand",
        repair: NOTHING,
    },
    Kind {
        code: "project_path_missing",
        meaning: "a project's directory does not exist (it moved)",
        fix: "git-session relocate <project> <new path>",
        repair: NOTHING,
    },
    Kind {
        code: "binding_unknown_project",
        meaning: "a session's meta.json names a project projects.json does not hold",
        fix: "git-session project add <dir>, or restore projects.json",
        repair: NOTHING,
    },
    Kind {
        code: "attachment_missing",
        meaning: "a node too big for one file names an attachment (workdir/attachments/<blob>.txt) that is missing, or holds other bytes than its size and blob id say",
        fix: "restore it from git: git -C <session> checkout -- <path>",
        repair: NOTHING,
    },
    Kind {
        code: "binding_removed_project",
        meaning: "note: a session's meta.json names a project `project remove` unregistered (the session keeps its history and project_id; a fetch does not register the project again)",
        fix: "nothing to do; git-session project add <dir> registers it again",
        repair: NOTHING,
    },
    Kind {
        code: "binding_mismatch",
        meaning: "projects.json lists a session under another project than its meta.json names",
        fix: "git-session verify --all --fix",
        repair: "lists it under the project its meta.json names, and only there",
    },
    Kind {
        code: "location_missing",
        meaning: "a session outside sessions/<id>/ has no locations.json entry, or one that names another directory (the Python store does not find it, or reads another copy)",
        fix: "git-session verify --all --fix",
        repair: "records it",
    },
    Kind {
        code: "location_dangling",
        meaning: "locations.json names a directory that is gone",
        fix: "git-session relocate, or remove the entry",
        repair: "removes the entry when the session is in a standard place",
    },
    Kind {
        code: "invalid_session_dir",
        meaning: "a session under a name kept for the state dir's own files (`index.json`, …): no command reads it",
        fix: "rename it to a valid session id, or move it out of the state dir",
        repair: NOTHING,
    },
    Kind {
        code: "import_turn_open",
        meaning: "note: an imported session's transcript has a turn it has not closed yet (no later message, no turn-end record): its nodes are kept whole in .git/git-session/import.pending, outside history/, until an import finds it closed",
        fix: "nothing to do while the agent works; once the session is over, `git-session import --finish` commits it",
        repair: NOTHING,
    },
    Kind {
        code: "not_a_session_dir",
        meaning: "note: a directory in sessions/ with neither meta.json nor history/ (no session: `list` skips it, as the Python store's documentation says that store does; its release 0.5.0 lists it, with no time)",
        fix: "nothing to do; move it out of the state dir to quiet the note",
        repair: NOTHING,
    },
    Kind {
        code: "commit_malformed",
        meaning: "a commit git's own checks refuse (a NUL byte in its message, written by an older version): `git fsck --strict` fails, and a remote that checks what it receives refuses it",
        fix: "the other sessions and refs still push; only a rewrite of the session's history removes it",
        repair: NOTHING,
    },
    Kind {
        code: "settings_unread",
        meaning: "note: <state>/git-session.json does not parse as a JSON object, or holds a `node_names` that is neither `python` nor `layout`: it is ignored (new sessions take the naming the state dir shows)",
        fix: "write {\"node_names\": \"python\"} (or remove the file)",
        repair: NOTHING,
    },
    Kind {
        code: "migration_in_progress",
        meaning: "sessions are mid-migration, or the migration journal that names them cannot be read (a link or a special file, never followed)",
        fix: "git-session migrate",
        repair: NOTHING,
    },
];

/// The table of finding kinds, for `verify --help` and the man page.
pub fn kinds_help() -> String {
    let mut s = String::from("Findings (code: meaning; the fix; what --fix does):\n");
    for k in KINDS {
        s.push_str(&format!(
            "  {}: {}.\n      fix: {}; --fix: {}.\n",
            k.code, k.meaning, k.fix, k.repair
        ));
    }
    s
}
