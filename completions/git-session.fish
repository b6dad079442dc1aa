# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_git_session_global_optspecs
    string join \n state-dir= json q/quiet lock-timeout= no-wait color= h/help V/version
end

function __fish_git_session_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_git_session_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_git_session_using_subcommand
    set -l cmd (__fish_git_session_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c git-session -n "__fish_git_session_needs_command" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_needs_command" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_needs_command" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_needs_command" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_needs_command" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_needs_command" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_needs_command" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "init" -d 'Create a session: its repository, meta.json and index row'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "append" -d 'Append one node to a session\'s DAG'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "commit-turn" -d 'Commit the turn: one git commit per turn not yet in git'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "log" -d 'Show the turn commits of a session, newest first'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "show" -d 'Print the conversation of a session as a person reads it: the branch that ends at the head (or at `--at`), turn by turn, each turn headed by its number, time, the session commit that holds it (`log` lists it) and the seqs of its nodes; each reply followed by its tool calls (a line each and the first lines of their result, or whole with `--full`) and the agent\'s commit in the project (or why none was made), with records (a relocation, a compaction) where they happened. On a terminal, in colour (see `--color`)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "diff" -d 'Show what a range of turns added: the conversation\'s nodes, as `show` prints them, and, for a session bound to a project, the agent\'s commits those turns recorded, each as `git show` prints it (read from the project\'s repository; another session\'s commits in the same project never are)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "export" -d 'Export a session, or every session, as pages a person reads'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "checkout" -d 'Move the session\'s head to an earlier turn (or back to a branch tip)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "branch" -d 'List the conversation\'s branches: every DAG tip with its git branch, turn count and last activity; `*` marks the one being viewed'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "list" -d 'List sessions, most recently active first (archived ones hidden)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "update" -d 'Change a session\'s title, pin, status, read state or group'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "archive" -d 'Archive a session: hidden from `list`, fully readable, reversible'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "unarchive" -d 'Bring an archived session back into `list`'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "delete" -d 'Delete a session: its repository with every turn, its index row, its location and project bindings. There is no undo'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "title" -d 'Name a session: phase 1 (the first user message, 50 chars) and phase 2 (the first line CMD prints, given the conversation on stdin)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "recover" -d 'Start-up repair: rebuild a missing, corrupt or stale index, mark sessions left `running` by a crash as `interrupted`, finish deletes a crash cut short, then collect empty shells'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "gc-shells" -d 'Delete unarchived sessions older than `--older-than` that have no node'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "project" -d 'Projects: working directories whose repositories receive the agent\'s commits'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "begin-turn" -d 'Mark a turn as running and, for a bound project, record the baseline of its working tree (HEAD and the dirty paths, .gitignore honoured), so that `commit-turn` can tell the agent\'s changes from the user\'s'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "relocate" -d 'Point a project at its new directory: the id stays, the path changes, and each bound session (or `--session`) gets a `project/relocate` record node (the head does not move). The default project is refused'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "backfill" -d 'Commit every node not yet in git, turn by turn, with the nodes\' own times'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "migrate" -d 'Move legacy `<project>/.openprogram/sessions/<id>/` repositories into `sessions/projects/<project>/<id>/`, crash-safe'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "verify" -d 'Check that the DAG files and their git mirror agree'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "demo" -d 'Record two sample sessions (turns with tool calls, a retry branch) into the `--state-dir` given, or a new one in DIR, and print what to try next'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "man" -d 'Show a man page, or write them all: git-session(1), one git-session-<command>(1) per subcommand (and git-session-<command>-<sub>(1) per subcommand of one), git-session-layout(5), git-session-json(7), git-session-guide(7) and git-session-performance(7)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "completions" -d 'Print a shell completion script, or write them all'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "batch" -d 'Run many requests in one process: one JSON request per line on stdin, the answer\'s records and a closing `exit` record per request on stdout'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "schema" -d 'Print the JSON Schema (draft 2020-12) of one `--json` output line'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "nodes" -d 'Print a session\'s nodes with seq above N, in seq order, every branch, each with its provenance: project, session, node id, seq, the turn commit that holds it (null while uncommitted) and its time'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "cat" -d 'Print one node as stored: the node file\'s JSON, byte for byte (with `--json`, a `session_node` record with its provenance)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "feed" -d 'Print every node past the cursor, across every session (archived ones included), with its provenance; then move the cursor'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "grep" -d 'Search the text of every node (its `output`, and a tool\'s `input`) across sessions, newest sessions first; print each match with its session, node, seq, role, turn and the line that matches'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "secrets" -d 'Secrets in sessions: find them before a push does, and let known false positives through'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "redact" -d 'Replace a session\'s secrets with `[REDACTED:<rule>:<fingerprint>]`, in its files and in every commit from the first one that held them'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "import" -d 'Import an agent\'s transcripts: each becomes a session (`claude-<sessionId>`, `codex-<id>`), one commit per turn dated by the transcript, so that importing it again, or on another machine, gives the same commits'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "hook" -d 'Run as an agent\'s hook, or add the hooks to an agent\'s settings'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "remote" -d 'Remotes: git repositories that hold every session, for several machines'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "push" -d 'Send sessions to a remote: each branch a fast-forward, never forced'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "fetch" -d 'Bring sessions from a remote to this machine'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "clone" -d 'Set up this machine from a remote: add it as `origin`, fetch every session'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand init" -l agent -d 'Agent id stored in meta.json' -r
complete -c git-session -n "__fish_git_session_using_subcommand init" -l title -d 'Title (a title given here counts as typed by the user)' -r
complete -c git-session -n "__fish_git_session_using_subcommand init" -l source -d 'Where the session comes from: cli, web, tui, a channel name…' -r
complete -c git-session -n "__fish_git_session_using_subcommand init" -l workdir -d 'Working directory of the agent, stored as `work_dir` (UTF-8: meta.json holds it as text)' -r -f -a "(__fish_complete_directories)"
complete -c git-session -n "__fish_git_session_using_subcommand init" -l project -d 'Bind to a project: its id, name, or a directory (registered on the fly)' -r
complete -c git-session -n "__fish_git_session_using_subcommand init" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand init" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand init" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand init" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand init" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand init" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand init" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand append" -l role -d 'Role of the node' -r -f -a "user\t''
assistant\t'An assistant reply (stored as `llm`, which is accepted too)'
tool\t'A tool call and its result (stored as `code`, which is accepted too)'"
complete -c git-session -n "__fish_git_session_using_subcommand append" -l id -d 'Node id [default: generated]' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l predecessor -d 'Previous node of the conversation [default: the head]; an earlier node starts a retry; `ROOT` for a first turn' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l caller -d 'Node that invoked this one (for tool calls)' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l name -d 'Model id (assistant) or tool name (tool)' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l text -d 'The node\'s text' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l file -d 'Read the node\'s text from a file (`-` for stdin)' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand append" -l input -d 'Tool arguments as JSON' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l attach -d 'Copy a file into workdir/attachments/ and record it in the node' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand append" -l agent -d 'With --create: agent id' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l title -d 'With --create: title' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l source -d 'With --create: source' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand append" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand append" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand append" -l regenerate -d 'An assistant reply that answers the turn\'s user message again: a sibling of the turn\'s first reply, committed on a retry branch'
complete -c git-session -n "__fish_git_session_using_subcommand append" -l json-node -d 'Read a whole node as JSON from stdin (id, role, name, input, output, caller, predecessor, reads, metadata)'
complete -c git-session -n "__fish_git_session_using_subcommand append" -l create -d 'Create the session when missing, atomically with this first node'
complete -c git-session -n "__fish_git_session_using_subcommand append" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand append" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand append" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand append" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand append" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -s m -l message -d 'Subject text instead of the user message\'s first line (more lines become the body)' -r
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l duration -d 'How long the turn took, in seconds [default: from the nodes\' times]' -r
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l tokens -d 'Tokens the turn used [default: each reply\'s input + output tokens from its metadata (`usage` as Claude Code writes it; Codex\'s running totals as the turn\'s share), summed; see git-session-layout(5)]' -r
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l status -d 'Session status after the turn (`done` also marks it unread; `failed` adds a trailer)' -r -f -a "idle\t''
done\t''
failed\t''
needs_input\t'The layout\'s spelling; `needs-input` is accepted too'"
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l project-paths -d 'The files the agent changed in the project (relative to it): with auto-commit, only these are committed, and only if none was dirty when the turn began' -r
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -s n -l dry-run -d 'Print the commits the turn would make (turn, branch, nodes) and commit nothing: meta.json, the project and git are left as they are'
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand commit-turn" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand log" -s n -l max-count -d 'Show at most N commits' -r
complete -c git-session -n "__fish_git_session_using_subcommand log" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand log" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand log" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand log" -l all -d 'Every branch, not only HEAD\'s, and the remotes\' branches `fetch` keeps (`origin/main`)'
complete -c git-session -n "__fish_git_session_using_subcommand log" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand log" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand log" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand log" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand log" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand show" -l at -d 'Show the conversation as it stood at this turn (a turn number, prev, next, branch, commit or node id) without moving anything' -r
complete -c git-session -n "__fish_git_session_using_subcommand show" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand show" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand show" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand show" -l full -d 'Tool calls whole: their input (as JSON) and their result; by default a tool call is its name and input (cut to 60 characters) and the first 3 lines of its result (each cut to 120), then how many more there are'
complete -c git-session -n "__fish_git_session_using_subcommand show" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand show" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand show" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand show" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand show" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l branch -d 'The branch whose turns are numbered: a git branch, or a tip\'s node id (`git-session branch` lists them) [default: the session\'s current branch]' -r
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l stat -d 'Counts instead of text: each turn\'s nodes by role and, for each agent commit, the files it changed with the lines added and removed (as `git show --stat`); under `--json`, no `node` records and no patch text'
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l full -d 'Tool calls whole, as `show --full` prints them'
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand diff" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand diff" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand diff" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand export" -l format -d 'md (Markdown) or html' -r -f -a "md\t'Markdown, as code hosts render it'
html\t'HTML, each page one self-contained file'"
complete -c git-session -n "__fish_git_session_using_subcommand export" -l branch -d 'Show this branch (a git branch of the session, or a tip node id) instead of the current one' -r
complete -c git-session -n "__fish_git_session_using_subcommand export" -s o -l output -d 'Write to PATH: a file for one session (its attachments are copied into <name>_files/ beside it), a directory for --all' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand export" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand export" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand export" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand export" -l all -d 'Every session, as a site in the directory -o names'
complete -c git-session -n "__fish_git_session_using_subcommand export" -l no-redact -d 'Keep the secrets the scanner finds instead of masking them'
complete -c git-session -n "__fish_git_session_using_subcommand export" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand export" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand export" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand export" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand checkout" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand branch" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand branch" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand branch" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand branch" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand branch" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand branch" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand branch" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand branch" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand list" -l agent -d 'Only this agent\'s sessions' -r
complete -c git-session -n "__fish_git_session_using_subcommand list" -l source -d 'Only sessions from this source (cli, web, a channel…)' -r
complete -c git-session -n "__fish_git_session_using_subcommand list" -l project -d 'Only sessions of this project (id or name)' -r
complete -c git-session -n "__fish_git_session_using_subcommand list" -l status -d 'Only sessions with this status' -r
complete -c git-session -n "__fish_git_session_using_subcommand list" -l limit -d 'At most N rows' -r
complete -c git-session -n "__fish_git_session_using_subcommand list" -l offset -d 'Skip the first N rows' -r
complete -c git-session -n "__fish_git_session_using_subcommand list" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand list" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand list" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand list" -l archived -d 'Only archived sessions'
complete -c git-session -n "__fish_git_session_using_subcommand list" -l include-archived -d 'Archived sessions too'
complete -c git-session -n "__fish_git_session_using_subcommand list" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand list" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand list" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand list" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand list" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand update" -l title -d 'New title (empty: clear it, and let automatic titling name it again)' -r
complete -c git-session -n "__fish_git_session_using_subcommand update" -l status -d 'idle, running, needs_input (or needs-input), done, failed or interrupted' -r
complete -c git-session -n "__fish_git_session_using_subcommand update" -l group -d 'Group name (empty: no group)' -r
complete -c git-session -n "__fish_git_session_using_subcommand update" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand update" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand update" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand update" -l pin -d 'Pin it to the top of a UI\'s list'
complete -c git-session -n "__fish_git_session_using_subcommand update" -l unpin -d 'Take the pin off'
complete -c git-session -n "__fish_git_session_using_subcommand update" -l read -d 'Mark as read'
complete -c git-session -n "__fish_git_session_using_subcommand update" -l unread -d 'Mark as unread'
complete -c git-session -n "__fish_git_session_using_subcommand update" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand update" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand update" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand update" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand update" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand archive" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand archive" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand archive" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand archive" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand archive" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand archive" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand archive" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand archive" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand unarchive" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand delete" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand delete" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand delete" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand delete" -s y -l yes -d 'Do not ask'
complete -c git-session -n "__fish_git_session_using_subcommand delete" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand delete" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand delete" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand delete" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand delete" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand title" -l command -d 'Command that prints a title (run with `sh -c`, prompt on stdin)' -r
complete -c git-session -n "__fish_git_session_using_subcommand title" -l timeout -d 'Seconds to wait for the command to end and its output to close; then it is killed, with every process it started (`inf`: no limit)' -r
complete -c git-session -n "__fish_git_session_using_subcommand title" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand title" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand title" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand title" -l auto -d 'Retitle only at the progressive thresholds'
complete -c git-session -n "__fish_git_session_using_subcommand title" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand title" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand title" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand title" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand title" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand recover" -l older-than -d 'Shells younger than this are kept (see gc-shells)' -r
complete -c git-session -n "__fish_git_session_using_subcommand recover" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand recover" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand recover" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand recover" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand recover" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand recover" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand recover" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand recover" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -l older-than -d 'Minimum age (by created_at): 90s, 30m, 1h, 2d…' -r
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -l dry-run -d 'Say what would be removed, remove nothing'
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand gc-shells" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "add" -d 'Register a working directory (the id is stable per path)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "list" -d 'List projects; a moved directory is shown with the relocate command'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "show" -d 'Show one project and its sessions'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "set" -d 'Change a project\'s settings'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "bind" -d 'Bind a session to a project (before its first turn; after it, only to the same project)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "remove" -d 'Remove a project from the registry (its directory, repository and sessions are untouched; the sessions keep their history and project_id; `push` carries the removal, so no fetch registers it again)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "unbind" -d 'Deprecated name of `project remove`'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "log" -d 'The agent\'s commits in the project\'s repository, with their session and turn'
complete -c git-session -n "__fish_git_session_using_subcommand project; and not __fish_seen_subcommand_from add list show set bind remove unbind log help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -l name -d 'Display name [default: the directory\'s name]' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -l auto-commit -d 'Commit the agent\'s changes at the end of each turn'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l name -d 'A new display name (the id and path stay)' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l status -d 'active, paused or done' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l auto-commit -d 'Commit the agent\'s changes at the end of each turn' -r -f -a "true\t''
false\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l hooks -d 'Let git run the project\'s hooks on agent commits' -r -f -a "true\t''
false\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from bind" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from unbind" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -s n -l max-count -d 'At most N commits' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from log" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "add" -d 'Register a working directory (the id is stable per path)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "list" -d 'List projects; a moved directory is shown with the relocate command'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one project and its sessions'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "set" -d 'Change a project\'s settings'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "bind" -d 'Bind a session to a project (before its first turn; after it, only to the same project)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a project from the registry (its directory, repository and sessions are untouched; the sessions keep their history and project_id; `push` carries the removal, so no fetch registers it again)'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "unbind" -d 'Deprecated name of `project remove`'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "log" -d 'The agent\'s commits in the project\'s repository, with their session and turn'
complete -c git-session -n "__fish_git_session_using_subcommand project; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand begin-turn" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -l session -d 'Record the move in this session only' -r
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -l from -d 'Run again for the path the project has: the path it moved from, for a move no session\'s record names yet (every session failed to take its record the first time)' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand relocate" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -s j -l jobs -d 'Sessions processed in parallel; the output stays in id order [default: the number of cores]' -r
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -l all -d 'Every session in the state dir'
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -l dry-run -d 'Say what would be committed, write nothing'
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand backfill" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l node-names -d 'Instead: rename the node files of every session (or of each `--session`) to the naming NAMING, `python` the Python store\'s (`0012-l-<id>.json`), so that it can continue them: the same blobs, one commit per branch that held an old name, the files renamed on disk. A session named so already is left as it is' -r -f -a "python\t''"
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l session -d 'With `--node-names`: this session only (repeatable)' -r
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l dry-run -d 'Say what would be migrated, change nothing'
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l prune-sources -d 'Remove each source once its published copy is verified identical'
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand migrate" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -s j -l jobs -d 'Sessions checked in parallel; the output stays in id order [default: the number of cores]' -r
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l all -d 'Every session and the state dir itself'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l fix -d 'Repair what is safe (never deletes a node) and say what was done'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l objects -d 'Also read every object the branches reach (commits, trees, blobs) and check it against its id, as `git fsck` does: finds a stored object damaged on disk; reads the whole history, so it is slower'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l stats -d 'Print each session\'s figures: DAG turns and turn commits per branch, highest seq and highest committed seq (always in `--json`)'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand verify" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand demo" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand demo" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand demo" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand demo" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand demo" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand demo" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand demo" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand demo" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand man" -l dir -d 'Write every page into DIR instead' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand man" -l install -d 'Install every page where `man` finds it: `man1/`, `man5/` and `man7/` under DIR [default: `$XDG_DATA_HOME/man`, else `~/.local/share/man`], so that `git session --help` and `man git-session` work' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand man" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand man" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand man" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand man" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand man" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand man" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand man" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand completions" -l dir -d 'Write the scripts into DIR instead (git-session.bash, _git-session, git-session.fish)' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand completions" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand completions" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand completions" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand completions" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand completions" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand completions" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand completions" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand batch" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand batch" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand batch" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand batch" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand batch" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand batch" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand batch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand batch" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand schema" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand schema" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand schema" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand schema" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand schema" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand schema" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand schema" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l after-seq -d 'Only nodes with a seq above N [default: every node]' -r
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l limit -d 'At most N nodes (the lowest seqs first)' -r
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l ingestion-time -d 'The ingestion time the records carry (unix seconds) [default: now]' -r
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand nodes" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand cat" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand cat" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand cat" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand cat" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand cat" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand cat" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand cat" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand cat" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand feed" -l cursor -d 'Cursor file: read at the start, written (atomically) at the end [default: no cursor: every node, nothing written]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand feed" -l ingestion-time -d 'The ingestion time every record of this run carries (unix seconds) [default: now]' -r
complete -c git-session -n "__fish_git_session_using_subcommand feed" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand feed" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand feed" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand feed" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand feed" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand feed" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand feed" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand feed" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l session -d 'Only this session (repeat for several)' -r
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l agent -d 'Only sessions of this agent' -r
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l project -d 'Only sessions bound to this project (id or name)' -r
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l role -d 'Only nodes of this role (repeat for several)' -r -f -a "user\t''
assistant\t'An assistant reply (stored as `llm`, which is accepted too)'
tool\t'A tool call and its result (stored as `code`, which is accepted too)'"
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l limit -d 'Stop after N matches' -r
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand grep" -s i -l ignore-case -d 'Case-insensitive'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -s F -l fixed-strings -d 'The pattern is a fixed string, not a regular expression'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l include-archived -d 'Search archived sessions too'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand grep" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -f -a "scan" -d 'Scan sessions: every turn on every branch, and what is not committed yet. Exit 1 when a secret not allowed was found'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -f -a "allow" -d 'Let findings through from now on: add their fingerprints to the state dir\'s allow-list (`<state>/secrets-allow`, one per line, `#` starts a comment; a person may edit it)'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and not __fish_seen_subcommand_from scan allow help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -l allow -d 'Count this fingerprint as allowed too (repeat for several)' -r
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -l all -d 'Every session (the default when none is named)'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from scan" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -l note -d 'Why, kept as a comment beside each' -r
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from allow" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from help" -f -a "scan" -d 'Scan sessions: every turn on every branch, and what is not committed yet. Exit 1 when a secret not allowed was found'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from help" -f -a "allow" -d 'Let findings through from now on: add their fingerprints to the state dir\'s allow-list (`<state>/secrets-allow`, one per line, `#` starts a comment; a person may edit it)'
complete -c git-session -n "__fish_git_session_using_subcommand secrets; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l rule -d 'Only findings of this rule (repeat for several)' -r
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l fingerprint -d 'Only the finding with this fingerprint (repeat for several; an allowed one too)' -r
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l dry-run -d 'Say what would be replaced; change nothing'
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l drop-backup -d 'Delete the backup refs of earlier redactions and drop the history they kept (and nothing else)'
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand redact" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand redact" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand redact" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand redact" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand import" -l project -d 'Bind new sessions to this project [default: the registered project whose directory is the transcript\'s working directory]' -r
complete -c git-session -n "__fish_git_session_using_subcommand import" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand import" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand import" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand import" -s n -l dry-run -d 'Print what would be imported and write nothing'
complete -c git-session -n "__fish_git_session_using_subcommand import" -l finish -d 'The sessions are over: also commit the turn each transcript left open (`Status: interrupted` when it was cut off: a call without its result, no reply after the last message or result, a Codex turn that never completed) and the records after its last node, as the `SessionEnd` hook does'
complete -c git-session -n "__fish_git_session_using_subcommand import" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand import" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand import" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand import" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -f -a "claude-code" -d 'A Claude Code hook: the event on stdin'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -f -a "codex" -d 'A Codex hook: the event as the last argument (`notify`) or on stdin'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -f -a "install" -d 'Add our hooks to an agent\'s hook settings'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -f -a "uninstall" -d 'Remove our hooks from an agent\'s hook settings (only ours)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and not __fish_seen_subcommand_from claude-code codex install uninstall help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from codex" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -l project -d 'A project\'s settings (`DIR/.claude/settings.json`, `DIR/.codex/hooks.json`); a link there that leads out of DIR is refused' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -l user -d 'The user\'s settings (`~/.claude/settings.json`, `$CODEX_HOME/hooks.json`) [default]'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -s n -l dry-run -d 'Print the change and write nothing'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from install" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l project -d 'A project\'s settings (`DIR/.claude/settings.json`, `DIR/.codex/hooks.json`); a link there that leads out of DIR is refused' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l user -d 'The user\'s settings (`~/.claude/settings.json`, `$CODEX_HOME/hooks.json`) [default]'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -s n -l dry-run -d 'Print the change and write nothing'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "claude-code" -d 'A Claude Code hook: the event on stdin'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "codex" -d 'A Codex hook: the event as the last argument (`notify`) or on stdin'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "install" -d 'Add our hooks to an agent\'s hook settings'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove our hooks from an agent\'s hook settings (only ours)'
complete -c git-session -n "__fish_git_session_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -f -a "add" -d 'Add a remote (kept in the state dir\'s `sync/remotes.json`)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -f -a "list" -d 'List the remotes, with the refs each push queue still holds'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -f -a "remove" -d 'Forget a remote (nothing on it, and no session, is touched)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and not __fish_seen_subcommand_from add list remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a remote (kept in the state dir\'s `sync/remotes.json`)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the remotes, with the refs each push queue still holds'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Forget a remote (nothing on it, and no session, is touched)'
complete -c git-session -n "__fish_git_session_using_subcommand remote; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand push" -l allow -d 'Send a session even though its turns hold this finding (a false positive): its fingerprint, as the refusal shows it (repeat for several; `git-session secrets allow` keeps one allowed)' -r
complete -c git-session -n "__fish_git_session_using_subcommand push" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand push" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand push" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand push" -l all -d 'Every session (the default when none is named)'
complete -c git-session -n "__fish_git_session_using_subcommand push" -l dry-run -d 'Say what would be sent; send nothing'
complete -c git-session -n "__fish_git_session_using_subcommand push" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand push" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand push" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand push" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand push" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -l take -d 'Resolve the named sessions\' divergence: `local` keeps this machine\'s conversation current, `remote` the remote\'s; both keep every turn' -r -f -a "local\t''
remote\t''"
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -l all -d 'Every session (the default when none is named)'
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand fetch" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand clone" -l name -d 'The remote\'s name here' -r
complete -c git-session -n "__fish_git_session_using_subcommand clone" -l state-dir -d 'State directory [default: $OPENPROGRAM_HOME, ~/.openprogram-$OPENPROGRAM_PROFILE, ~/.openprogram]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand clone" -l lock-timeout -d 'Seconds to wait for a busy lock' -r
complete -c git-session -n "__fish_git_session_using_subcommand clone" -l color -d 'Colour what log, show, diff, branch and verify print: auto (when stdout is a terminal; NO_COLOR set turns it off, CLICOLOR_FORCE set and not 0 on), always or never; never under --json' -r -f -a "auto\t''
always\t''
never\t''"
complete -c git-session -n "__fish_git_session_using_subcommand clone" -l json -d 'Print JSON Lines on stdout: one {"type": …, "data": …} record per line'
complete -c git-session -n "__fish_git_session_using_subcommand clone" -s q -l quiet -d 'No notes on stderr (warnings and errors still show)'
complete -c git-session -n "__fish_git_session_using_subcommand clone" -l no-wait -d 'Fail at once (exit 75) when a lock is busy'
complete -c git-session -n "__fish_git_session_using_subcommand clone" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand clone" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "init" -d 'Create a session: its repository, meta.json and index row'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "append" -d 'Append one node to a session\'s DAG'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "commit-turn" -d 'Commit the turn: one git commit per turn not yet in git'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "log" -d 'Show the turn commits of a session, newest first'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "show" -d 'Print the conversation of a session as a person reads it: the branch that ends at the head (or at `--at`), turn by turn, each turn headed by its number, time, the session commit that holds it (`log` lists it) and the seqs of its nodes; each reply followed by its tool calls (a line each and the first lines of their result, or whole with `--full`) and the agent\'s commit in the project (or why none was made), with records (a relocation, a compaction) where they happened. On a terminal, in colour (see `--color`)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "diff" -d 'Show what a range of turns added: the conversation\'s nodes, as `show` prints them, and, for a session bound to a project, the agent\'s commits those turns recorded, each as `git show` prints it (read from the project\'s repository; another session\'s commits in the same project never are)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "export" -d 'Export a session, or every session, as pages a person reads'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "checkout" -d 'Move the session\'s head to an earlier turn (or back to a branch tip)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "branch" -d 'List the conversation\'s branches: every DAG tip with its git branch, turn count and last activity; `*` marks the one being viewed'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "list" -d 'List sessions, most recently active first (archived ones hidden)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "update" -d 'Change a session\'s title, pin, status, read state or group'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "archive" -d 'Archive a session: hidden from `list`, fully readable, reversible'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "unarchive" -d 'Bring an archived session back into `list`'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "delete" -d 'Delete a session: its repository with every turn, its index row, its location and project bindings. There is no undo'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "title" -d 'Name a session: phase 1 (the first user message, 50 chars) and phase 2 (the first line CMD prints, given the conversation on stdin)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "recover" -d 'Start-up repair: rebuild a missing, corrupt or stale index, mark sessions left `running` by a crash as `interrupted`, finish deletes a crash cut short, then collect empty shells'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "gc-shells" -d 'Delete unarchived sessions older than `--older-than` that have no node'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "project" -d 'Projects: working directories whose repositories receive the agent\'s commits'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "begin-turn" -d 'Mark a turn as running and, for a bound project, record the baseline of its working tree (HEAD and the dirty paths, .gitignore honoured), so that `commit-turn` can tell the agent\'s changes from the user\'s'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "relocate" -d 'Point a project at its new directory: the id stays, the path changes, and each bound session (or `--session`) gets a `project/relocate` record node (the head does not move). The default project is refused'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "backfill" -d 'Commit every node not yet in git, turn by turn, with the nodes\' own times'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "migrate" -d 'Move legacy `<project>/.openprogram/sessions/<id>/` repositories into `sessions/projects/<project>/<id>/`, crash-safe'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "verify" -d 'Check that the DAG files and their git mirror agree'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "demo" -d 'Record two sample sessions (turns with tool calls, a retry branch) into the `--state-dir` given, or a new one in DIR, and print what to try next'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "man" -d 'Show a man page, or write them all: git-session(1), one git-session-<command>(1) per subcommand (and git-session-<command>-<sub>(1) per subcommand of one), git-session-layout(5), git-session-json(7), git-session-guide(7) and git-session-performance(7)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "completions" -d 'Print a shell completion script, or write them all'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "batch" -d 'Run many requests in one process: one JSON request per line on stdin, the answer\'s records and a closing `exit` record per request on stdout'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "schema" -d 'Print the JSON Schema (draft 2020-12) of one `--json` output line'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "nodes" -d 'Print a session\'s nodes with seq above N, in seq order, every branch, each with its provenance: project, session, node id, seq, the turn commit that holds it (null while uncommitted) and its time'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "cat" -d 'Print one node as stored: the node file\'s JSON, byte for byte (with `--json`, a `session_node` record with its provenance)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "feed" -d 'Print every node past the cursor, across every session (archived ones included), with its provenance; then move the cursor'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "grep" -d 'Search the text of every node (its `output`, and a tool\'s `input`) across sessions, newest sessions first; print each match with its session, node, seq, role, turn and the line that matches'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "secrets" -d 'Secrets in sessions: find them before a push does, and let known false positives through'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "redact" -d 'Replace a session\'s secrets with `[REDACTED:<rule>:<fingerprint>]`, in its files and in every commit from the first one that held them'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "import" -d 'Import an agent\'s transcripts: each becomes a session (`claude-<sessionId>`, `codex-<id>`), one commit per turn dated by the transcript, so that importing it again, or on another machine, gives the same commits'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "hook" -d 'Run as an agent\'s hook, or add the hooks to an agent\'s settings'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "remote" -d 'Remotes: git repositories that hold every session, for several machines'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "push" -d 'Send sessions to a remote: each branch a fast-forward, never forced'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "fetch" -d 'Bring sessions from a remote to this machine'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "clone" -d 'Set up this machine from a remote: add it as `origin`, fetch every session'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from init append commit-turn log show diff export checkout branch list update archive unarchive delete title recover gc-shells project begin-turn relocate backfill migrate verify demo man completions batch schema nodes cat feed grep secrets redact import hook remote push fetch clone help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "add" -d 'Register a working directory (the id is stable per path)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "list" -d 'List projects; a moved directory is shown with the relocate command'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "show" -d 'Show one project and its sessions'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "set" -d 'Change a project\'s settings'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "bind" -d 'Bind a session to a project (before its first turn; after it, only to the same project)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "remove" -d 'Remove a project from the registry (its directory, repository and sessions are untouched; the sessions keep their history and project_id; `push` carries the removal, so no fetch registers it again)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "unbind" -d 'Deprecated name of `project remove`'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from project" -f -a "log" -d 'The agent\'s commits in the project\'s repository, with their session and turn'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from secrets" -f -a "scan" -d 'Scan sessions: every turn on every branch, and what is not committed yet. Exit 1 when a secret not allowed was found'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from secrets" -f -a "allow" -d 'Let findings through from now on: add their fingerprints to the state dir\'s allow-list (`<state>/secrets-allow`, one per line, `#` starts a comment; a person may edit it)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "claude-code" -d 'A Claude Code hook: the event on stdin'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "codex" -d 'A Codex hook: the event as the last argument (`notify`) or on stdin'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "install" -d 'Add our hooks to an agent\'s hook settings'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "uninstall" -d 'Remove our hooks from an agent\'s hook settings (only ours)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "add" -d 'Add a remote (kept in the state dir\'s `sync/remotes.json`)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "list" -d 'List the remotes, with the refs each push queue still holds'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from remote" -f -a "remove" -d 'Forget a remote (nothing on it, and no session, is touched)'

# Session ids, project ids, branch names and remotes come from the state dir:
# `git-session __complete` names them (it reads index.json, projects.json,
# remotes.json and a session's refs, and writes nothing).
function __fish_git_session_dynamic
    set -l before (commandline -opc)
    command $before[1] __complete --shell fish --index (count $before) -- $before (commandline -ct) 2>/dev/null
end
complete -c git-session -f -n '__fish_git_session_dynamic >/dev/null' -a '(__fish_git_session_dynamic)'
