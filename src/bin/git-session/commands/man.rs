//! `man` and `completions`: documentation generated from the clap
//! definitions (SPEC §5.16). The committed copies under `man/` and
//! `completions/` are checked fresh by a test.
//!
//! Reads: nothing. Writes: with `--dir`, the pages or completion scripts.
//! Prints: one page or script on stdout otherwise.

use std::io::Write;
use std::path::PathBuf;

use crate::context::Ctx;
use git_session::error::{IoContext, Result, Usage, exit};

mod markdown;

/// git-session-guide(7) and git-session-performance(7): the manual beyond
/// the README, written in Markdown and rendered to roff.
const GUIDE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/doc/guide.md"));
const PERFORMANCE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/doc/performance.md"));

/// Show a man page, or write them all: git-session(1), one
/// git-session-<command>(1) per subcommand (and git-session-<command>-<sub>(1)
/// per subcommand of one), git-session-layout(5), git-session-json(7),
/// git-session-guide(7) and git-session-performance(7).
///
/// On a terminal the page is shown through `man -l -` (rendered, in man's
/// pager); where there is no `man`, `$PAGER` (or `less`) shows the roff.
/// Piped or redirected, the roff itself is printed, as `man -l` reads it.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// The page: a command name, `layout`, `json`, `guide` or `performance` [default: git-session(1)]
    pub page: Option<String>,
    /// Write every page into DIR instead
    #[arg(long, value_name = "DIR", conflicts_with = "page")]
    pub dir: Option<PathBuf>,
    /// Install every page where `man` finds it: `man1/`, `man5/` and `man7/` under
    /// DIR [default: `$XDG_DATA_HOME/man`, else `~/.local/share/man`], so
    /// that `git session --help` and `man git-session` work
    #[arg(long, value_name = "DIR", num_args = 0..=1, conflicts_with_all = ["page", "dir"])]
    pub install: Option<Option<PathBuf>>,
}

/// Print a shell completion script, or write them all.
///
/// The script completes commands, flags and fixed values from the command
/// definitions, and session ids, project ids, branch names and remotes
/// from the state dir (the one the line names with `--state-dir`, else the
/// usual one) by calling `git-session __complete`, which reads
/// `index.json`, `projects.json`, `remotes.json` and a session's refs and
/// writes nothing. Installed with one command, run once:
///
/// bash: `echo 'source <(git-session completions bash)' >> ~/.bashrc`;
/// zsh: `echo 'source <(git-session completions zsh)' >> ~/.zshrc` (after
/// `compinit`); fish: `git-session completions fish >
/// ~/.config/fish/completions/git-session.fish`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// bash, zsh or fish (`all` with --dir)
    pub shell: String,
    /// Write the scripts into DIR instead (git-session.bash, _git-session, git-session.fish)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

const EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success.
.TP
\fB1\fR
The command ran and the answer is no: problems found (\fBverify\fR), a refused request (unknown session, unknown predecessor, duplicate node id, a bad checkout target).
.TP
\fB2\fR
Usage error: a bad flag, an invalid id.
.TP
\fB75\fR
A lock is busy (\fB\-\-no\-wait\fR, or \fB\-\-lock\-timeout\fR ran out).
.TP
\fB128\fR
Fatal: an I/O error, a file that does not parse, a damaged repository.
"#;

/// git-session(1) points to the pages that are not about one command.
const SEE_ALSO: &str = r#".SH "SEE ALSO"
\fBgit\-session\-guide\fR(7) (the manual beyond the README: projects, imports and hooks, several machines, secrets, time travel, reading the record, pages to read and share, CI, on disk, reliability, the Python store, what the tool trusts), \fBgit\-session\-performance\fR(7), \fBgit\-session\-layout\fR(5), \fBgit\-session\-json\fR(7)
"#;

const FILES: &str = r#".SH FILES
.TP
\fI<state>/sessions/<id>/\fR
A session repository: \fImeta.json\fR, \fIhistory/\fR (one JSON file per DAG node), \fIworkdir/\fR, \fI.git/\fR.
.TP
\fI<state>/sessions/index.json\fR, \fIindex.journal\fR
The list registry (a cache rebuilt from meta.json) and its append-only journal.
.TP
\fI<state>/sessions/locations.json\fR
Session repositories outside the standard places.
.TP
\fI<state>/projects/projects.json\fR
The project registry.
.PP
The state directory is \fB\-\-state\-dir\fR, else \fB$OPENPROGRAM_HOME\fR, else \fI~/.openprogram\-$OPENPROGRAM_PROFILE\fR, else \fI~/.openprogram\fR. See \fBgit\-session\-layout\fR(5) for the whole contract.
"#;

const LAYOUT: &str = r#".TH git-session-layout 5 "" "git-session" "git-session manual"
.SH NAME
git-session-layout \- the on-disk contract of git-session
.SH DESCRIPTION
Subcommands of \fBgit-session\fR(1) compose through files on disk under advisory locks; this layout is the only contract between them, and what another tool implements against.
.SH "STATE DIRECTORY"
\fB\-\-state\-dir\fR, else \fB$OPENPROGRAM_HOME\fR, else \fI~/.openprogram\-$OPENPROGRAM_PROFILE\fR when that variable is set, else \fI~/.openprogram\fR; created with mode 0700.
.nf
<state>/sessions/index.json              list rows (cache)
<state>/sessions/index.journal           appended rows, folded into index.json
<state>/sessions/locations.json          session id -> repository path
<state>/sessions/<id>/                   a session in the default project
<state>/sessions/projects/<project>/<id>/   a session bound to a project
<state>/projects/projects.json           project registry
<state>/projects/<project>.lock          one agent commit (and its baseline) in the project at a time
<state>/git\-session\-hooks.log           failures that git\-session hook kept from the agent
<state>/git\-session\-hooks.log.1         its older part: the log as it was when it passed 1 MiB
<state>/sync/remotes.json                remotes of push and fetch: {name: {"url": …}}
<state>/sync/repo/                       the transfer repository (copies only: deletable)
<state>/sync/queue\-<remote>              refs a push has yet to get confirmed
<state>/sync/tombstones/sessions/<id>.json   a session deleted here, or by a peer (a tombstone; push carries it)
<state>/sync/tombstones/projects/<id>.json   a project removed here (likewise)
<state>/sync/sync.lock                   one push, fetch or remote change at a time
.fi
Session ids are 1\-128 characters of [A\-Za\-z0\-9._\-], not starting with . or \-, and none of \fIprojects\fR, \fIindex.json\fR, \fIindex.journal\fR, \fIlocations.json\fR in any case (the names \fIsessions/\fR holds beside its sessions). Project ids are \fIdefault\fR or \fIproj_\fR followed by hex.
.SH "SESSION REPOSITORY"
.TP
\fImeta.json\fR
An open JSON object (unknown keys are kept): id, agent_id, title, created_at, updated_at (float unix seconds; moves only when a node is appended), source, project_id, bound_at (float unix seconds: when the session joined project_id, written by \fBinit \-\-project\fR and \fBproject bind\fR and kept by a bind again to the same project; absent in a session bound by an older version or the Python store, whose created_at then stands for it), status (idle, running, needs_input, done, failed, interrupted), pinned, archived, unread, group, channel, account_id, peer_display, peer_id, head_id (the active DAG tip), view_tip (the tip browsed by checkout), _user_titled, _auto_titled, _title_gen_count.
.TP
\fIhistory/<seq>\-<letter>\-<id>.json\fR
One compact JSON object per DAG node: id, created_at, seq (the sort key, unique), role (user, llm, code), name, input, output, caller ("" or ROOT at top level), predecessor (ROOT on a first turn, null for sub-calls), reads, metadata. Written here as seq padded to 6 digits and letters u, a, t; readers accept any padding and the letters u l c a t s x, and order by the payload's seq. Nodes are never deleted by git-session.
.TP
\fIworkdir/\fR
Scratch space; \fIworkdir/attachments/\fR holds files copied in by \fBappend \-\-attach\fR, and the long strings of an imported node too big for one file, each stored once as \fI<blob>.txt\fR (its git blob id) and named in the node's metadata.attachments: {"name", "path", "size", "blob", "holds": the JSON pointers where the string stood, now a note of where it is}.
.TP
\fI.git/\fR
Branch \fImain\fR, branches \fIretry\-<assistant id>\fR for retries (an id git cannot take in a branch name, with \fI..\fR or a final \fI.\fR or \fI.lock\fR, is made safe and given a 12\-digit tag of its SHA\-1: \fIretry\-r.1\-<tag>\fR for \fIr..1\fR), repo-local config pinned (no hooks, no signing, index.skipHash).
.TP
\fI.git/git\-session.lock\fR
The session's advisory lock (flock): shared for readers, exclusive for writers. Never deleted.
.TP
\fI.git/git\-session/\fR
\fIcatalog\fR and \fIcatalog.stamp\fR (a cache of history/ names), \fIsnapshot\fR (the commit the index mirrors, the turns since the last background \fBgit gc\fR, and the objects written since packing last started, with the loose ones' bytes), \fImaintenance.lock\fR (held by the background packing run, one at a time), \fIimport.lines\fR (how far each transcript an imported session holds was read: the first line no node holds, its byte offset, and the file; a JSON object keyed by transcript), \fIimport.uuids\fR (one row per Claude Code record the session holds: its uuid and the node it leads to, so that a grown transcript is read from its cursor on), \fIimport.base\fR (meta.json as an import began writing nodes, with its transcript and whether it ends the session, \fB{"transcript", "meta", "finish"}\fR, written in place and emptied once its commits are made: a rerun of an import killed in between goes on from it, so its commits are those of an import not cut short), \fIimport.pending\fR (the pending area: the turn each transcript has not closed yet, no later message and no turn-end record, kept whole outside \fBhistory/\fR so that no commit holds it early; a JSON object keyed by transcript, each \fB{"transcript", "line", "nodes", "records"}\fR: the file, its first line not in \fBhistory/\fR, the turn's nodes as they will be written with seq 0, and the lines no node holds yet. Every import writes it anew from the transcript; the import that finds the turn closed writes its nodes into \fBhistory/\fR, one commit, and drops the entry; \fBshow\fR and \fBnodes\fR list it as in progress, \fBverify\fR notes it).
.SH "THE DAG"
The conversation is the chain of \fBconversational\fR nodes (top\-level user and assistant nodes) linked by \fIpredecessor\fR; tool nodes hang off the reply that called them by \fIcaller\fR and have no predecessor. \fIhead_id\fR in meta.json is the last conversational node: every conversational node appended with the head as its predecessor moves the head (as the Python store's \fIappend_message\fR does), a tool node does not. So a turn with a tool loop is one chain, user \(-> reply \(-> reply:
.nf
u1  user       "Fix the bug"               predecessor ROOT
a1  assistant  "Let me look."              predecessor u1
t1  tool       read {"path": "a.rs"}       caller a1
a2  assistant  "Fixed it."                 predecessor a1
.fi
\fBappend\fR gives a user or assistant node the head as its predecessor and a tool node the head as its caller (the turn's latest reply, or its user message before any reply). A head meta.json lags behind (a crash between a node file and meta.json, a writer that moves none, a session the Python store started, whose head is null until its first commit) is found from the node files: the latest message, moved on along the messages written after it that go on from it; a head \fBcheckout\fR placed stands. A fork is a node whose predecessor already has a conversational successor: a user message with \fB\-\-predecessor\fR an earlier node (a retry: from the end of a turn, or from a reply inside one, \fIa1\fR above), a reply with \fB\-\-regenerate\fR (its predecessor the head's turn's user message: a sibling of that turn's first reply), or a reply after a \fBcheckout\fR of a turn the conversation went on from (more of that turn, \fBturn <N> (continued)\fR). Each fork is a git branch (below).
.SH "TURNS AND COMMITS"
A turn starts at a top-level user node and holds every node appended after it up to the next one. Each turn is one commit whose tree is the whole session directory (temp files excluded); its parent is the commit of the turn that holds the new turn's predecessor. The message is
.nf
turn <N>: <first 60 chars of the user message>

assistant: <first 80 chars of the turn's last reply that has text>
tools: read, grep \(mu 3, list

[meta: turn took 12.3s, 18 tools, 4521 tokens]

Session: <id>
Turn: <N>
Nodes: <first seq>..<last seq>
.fi
with a \fIStatus: failed\fR trailer for a failed turn (\fIStatus: interrupted\fR for an imported turn the transcript ended cut off, or one the user stopped: a node whose metadata has \fIinterrupted\fR, set by \fBimport\fR from Claude Code's \fI[Request interrupted by user]\fR marker, which is no message of the user's, and from Codex's \fIturn_aborted\fR). The subject takes the first line of the user message that holds more than blanks. \fItools:\fR names every tool node of the turn in first\-use order. \fI[meta: …]\fR holds the turn's duration (its first node to its last, or \fBcommit\-turn \-\-duration\fR), its tool count and its tokens, summed over its nodes from the first of these a node's metadata has: \fItokens\fR; \fIinput_tokens\fR + \fIoutput_tokens\fR; \fIusage.input_tokens\fR + \fIusage.output_tokens\fR (Claude Code's shape: cache reads and writes are not added); \fIusage.total_token_usage\fR (Codex's running total: the turn counts its last total's input + output minus the previous turn's on its chain, a total that started over counting whole; Codex's input count holds its cached input, and is taken as it is); \fIusage.total_tokens\fR. \fBcommit\-turn \-\-tokens\fR overrides the sum. commit\-turn, batch, import, backfill and the hooks all write this one message. Commit times are the nodes' own times, so \fBbackfill\fR is deterministic; a time before 1970 or after 9999, which git cannot date (\fBgit fsck\fR refuses a negative date, and so does a remote that checks what it is pushed), is held to the nearer end of that range in the commit, and the node keeps its own. Every fork of the DAG is a branch: a retried user message (\fBturn <N>:\fR on a new \fIretry\-<assistant id>\fR branch) and a regenerated reply, a second top\-level reply to one user message (\fBturn <N> (regenerated):\fR, its parent the parent of the turn it regenerates). A turn of a project session is one session commit too: the agent's commit in the project is made first (its trailers \fISession\fR, \fITurn\fR and \fINodes\fR name the session's nodes) and recorded in the turn's assistant node.
.SH "WHAT IS MIRRORED"
Node files are immutable records: once committed, a node file stays byte\-identical to the commit that holds it. \fImeta.json\fR and the rest of the session directory are mutable metadata and scratch: changes between turns are normal and are committed with the next turn. \fBgit\-session\-verify\fR(1) checks the one against git and the other for sense, and keeps what \fB\-\-fix\fR replaced in \fI.git/git\-session/quarantine/\fR.
.SH "A REMOTE"
\fBpush\fR and \fBfetch\fR keep every session in one git repository, outside \fIrefs/heads\fR (a plain clone of it fetches none): a session's branch \fIB\fR is \fIrefs/sessions/<shard>/<id>/heads/B\fR, where the shard is the id's last two characters (a dot as _, a one-character id followed by _); a bound project's name and path is \fIrefs/projects/<project>\fR, a commit whose tree holds \fIproject.json\fR. Refs only move forward there. In a session repository, \fBfetch\fR keeps a remote's tips as \fIrefs/remotes/<remote>/<branch>\fR; a tip whose node files are not all in \fIhistory/\fR is a divergence (\fBverify\fR: \fIdiverged\fR), which \fBfetch \-\-take\fR resolves, keeping this machine's old tips as \fIrefs/kept/<remote>/<branch>\-<commit>\fR.
.PP
A deletion travels as a tombstone: \fIrefs/tombstones/sessions/<shard>/<id>\fR or \fIrefs/tombstones/projects/<project>\fR, a commit whose tree holds \fItombstone.json\fR, {"kind": "session" or "project", "id", "deleted_at" (float unix seconds), "tips" (a session's branch tips when it was deleted, commit ids), "commits" (every commit those tips reach: what the deletion saw), "revived_at" (set when it was made or pushed again after: the tombstone then covers nothing, and names what it revoked)}; each new one a child of the last. \fBdelete\fR and \fBproject remove\fR write it to \fI<state>/sync/tombstones/\fR, and \fBpush\fR sends it when the remote has the session or project. A tombstone covers a copy of a session whose every branch tip is one of its commits, decided from the tombstone alone; one that does not cover the remote's own tips stands for nothing (someone went on with the session after it). \fBfetch\fR and \fBclone\fR do not bring in a session whose remote copy it covers, and remove this machine's copy only when it covers it and nothing here is uncommitted (no node outside the tips' trees, no open imported turn); otherwise the copy is kept and reported (\fIkept\fR), and pushing it revives the session on the remote. A removed project is not registered again by a fetch; its sessions keep their project_id (\fBverify\fR: \fIbinding_removed_project\fR, a note). The session's refs and objects stay on the remote (refs only move forward), until its owner prunes them.
.SH SECRETS
\fI<state>/secrets\-allow\fR lists the fingerprints of findings let through (\fBpush\fR, \fBsecrets scan\fR), one per line; \fI#\fR starts a comment. A fingerprint is 16 hex digits of the SHA\-1 of the rule id, a NUL byte and the secret. \fI<state>/git\-session.json\fR with \fB{"redact": "on\-write"}\fR makes every writer of nodes (\fBappend\fR, \fBbatch\fR, \fBimport\fR, the hooks) replace each secret with \fI[REDACTED:<rule>:<fingerprint>]\fR before the node, its text attachments, an imported turn still open or a preview is written. \fBredact\fR writes the history again with the same replacement (whole values, JSON\-escaped ones, and cut copies: 20 characters of a secret or more, or half of a short one where a line, a JSON string or a cut with \(oq…\(cq ends), keeps each branch's tip before under \fIrefs/redacted/<unix time>/<branch>\fR (a fetch that takes another machine's redaction: \fIrefs/redacted/<time>\-<remote>/<branch>\fR) and adds a \fIcontext/redact\fR node off the conversation: metadata \fIsecrets\fR (rule, fingerprint), \fInodes\fR, \fIbranches\fR (old and new tips), \fIreplaced\fR (every old commit id to its new one) and \fIbackup\fR. Authors, committers, dates and the shape of the history stay; commits before the first that held a secret keep their ids. On a remote, \fBpush\fR replaces a session's ref whose tip is a commit \fIreplaced\fR names with \fI\-\-force\-with\-lease\fR on that tip; the old objects stay in the remote's store until its own gc prunes them.
.SH "THE PYTHON STORE"
OpenProgram's Python store lists every directory in \fIsessions/\fR and every \fIlocations.json\fR entry and reads nodes in file-name order: every session repository not at \fIsessions/<id>/\fR has a \fIlocations.json\fR entry, and a session keeps the naming its node files have (\fI0003\-u\-<id>.json\fR, letters u, l, c, for sessions that store started). A new session is named that way in a state dir the Python store uses: its own (\fI~/.openprogram\fR, \fI~/.openprogram\-<profile>\fR, \fI$OPENPROGRAM_HOME\fR, reached by default or named with \fB\-\-state\-dir\fR), one that holds a session in that naming, or one whose \fI<state>/git\-session.json\fR says \fB{"node_names": "python"}\fR; elsewhere the layout's naming (\fB"layout"\fR names that default; it does not override a state dir the Python store uses; any other value, or a file that does not parse, is ignored and \fBverify\fR notes it: \fIsettings_unread\fR). \fBverify \-\-fix\fR renames the files of a session named both ways, and \fBmigrate \-\-node\-names python\fR those of any session, to the Python naming: the same blobs, one commit per branch whose tree held an old name (subject \fIsession: node files named as the Python store names them\fR, trailer \fIRenamed: python\fR; a turn after it goes on from it), the files renamed on disk (each new name linked first, the old ones removed last: a kill is finished by running it again); \fBfetch\fR takes a renamed session in as a fast\-forward and drops the old names too. A node under both names with different contents is refused by the rename and by \fBcommit\-turn\fR (\fImirror::node_named_twice\fR), never committed twice. \fIindex.json\fR itself is current when every command but a bare \fBappend\fR ends (the Python store reads it alone): the rows a command journals are folded in before it exits, by a \fBbatch\fR whenever no further request waits; a bare append's preview and \fIupdated_at\fR wait for the \fBcommit\-turn\fR that ends its turn. Nodes with \fIcalled_by\fR and \fImetadata.parent_id\fR (the released store's keys) are read as caller and predecessor and written back in that shape.
.SH TRUST
Everything on disk is input from a stranger. No git setting of a session repository runs: background packing is the only git process started in one, with \fIcore.hooksPath=/dev/null\fR, \fIcore.fsmonitor=false\fR, no pager and no global or system config forced on its command line, and \fBmigrate\fR gives a copy the pinned config, never the source's. Files rewritten in place or appended to are opened with O_NOFOLLOW; others are replaced by a rename. A symlink in place of \fI.git/\fR, \fI.git/git\-session/\fR, \fIhistory/\fR, \fIworkdir/\fR, \fIworkdir/attachments/\fR or a private file is refused. A session resolves only to a directory whose meta.json does not name another id (through \fIlocations.json\fR: names this id), and \fBdelete\fR removes only a directory holding nothing but a session's own entries. The state dir, anything in it or holding it, and a session repository are never a project. FIFOs, sockets and devices are skipped; \fI.git\fR in any case is never committed; \fIROOT\fR is no node id. Nothing printed for a person acts on the terminal: in human output, the C0 controls but tab and newline (a carriage return only where it ends a line), DEL, the C1 controls and the bidirectional overrides in node text, titles and file names are shown as escapes (\fI\\u{1b}\fR); \fB\-\-json\fR and \fBcat\fR keep the exact text.
.SH LOCKS
One lock per session, one for the registries (\fIsessions/.registry.lock\fR), one per project for the turns of its sessions (\fIprojects/<project_id>.lock\fR: a turn's baseline and its agent commit); the order is registry, then project, then session. git's own \fI*.lock\fR files mean git is busy: git-session waits and never deletes them. Every file is written through a temp file (prefix \fI.gs\-tmp\-\fR) renamed into place. Every wait for a busy lock backs off the same way (1 ms, doubling to 50 ms): ours for \fB\-\-lock\-timeout\fR, git's \fIindex.lock\fR and ref locks for 3 s. A session's \fIindex.lock\fR and a project's are taken the one way: a hard link of a temp file of ours, so that what a kill leaves is known for ours (under the session's lock it is removed; in a project it is finished or undone by the commit it names).
.SH DURABILITY
With fsync on (the default; \fBGIT_SESSION_FSYNC=0\fR turns it off), a node file, \fImeta.json\fR and the registries (\fIindex.json\fR, \fIindex.journal\fR, \fIlocations.json\fR) are synced, with their directory, before the command that wrote them reports success. A turn's git objects are all written first (loose, through gix; zlib level 0 until background packing rolls them up), then made durable before any ref moves. On ext4 and xfs that takes one flush, as git's \fBcore.fsyncMethod=batch\fR does: the write\-out of every object file is started and waited for (\fBsync_file_range\fR(2)), and one \fBfsync\fR(2) of the last forces the journal, which holds every file's creation, size and name in order (ext4 in its default \fIdata=ordered\fR mode writes a file's data before the metadata that names it), and flushes the disk's cache. On any other file system (btrfs logs only the file an \fBfsync\fR names; a network file system promises less) each object file is synced, then its directory and \fIobjects/\fR. A pack written in bulk (backfill, migrate, redact, the transfer repository) is synced whole. Refs and the session's \fIindex\fR are renamed into place as git does and not synced.
.PP
What a power cut can lose: a turn's ref move made in the seconds before it (the branch is then at the turn before, and the next \fBcommit\-turn\fR commits that turn again, as its own turn, from the node files; when the index and the snapshot marker survived the cut, it finds the branch behind the last commit it wrote and says so), the index (rebuilt from HEAD's tree), objects no ref reaches, and temp files (swept). What it cannot lose: a node \fBappend\fR reported written, \fImeta.json\fR, a registry row; and no ref ever names an object that is not on disk. On ext4 mounted \fIdata=writeback\fR a power cut can also leave a loose object empty: \fBverify\fR reports it, the node files it mirrored are still on disk, and the next commit of that content writes the object again (an empty loose file is never taken for the object).
.SH "SEE ALSO"
\fBgit-session\fR(1), \fBgit-session-verify\fR(1), \fBgit-session-guide\fR(7)
"#;

/// Roff text: backslashes and leading dashes escaped.
fn roff(s: &str) -> String {
    s.replace('\\', "\\e").replace('-', "\\-")
}

/// git-session-verify(1): the model of what is mirrored, and every finding
/// kind with its fix and what `--fix` does about it.
fn verify_findings() -> String {
    let mut s = String::from(
        r#".SH "WHAT IS MIRRORED"
Node files are immutable records: once a commit holds a node, the file must stay byte-identical to it, and every node must be held by a commit that a branch (or HEAD) reaches. \fImeta.json\fR and the other files of a session (\fIworkdir/\fR, \fIcontext/\fR) are mutable: a rename, a flag, a status or a checkout changes them between turns, and the next turn commits them; verify checks that meta.json parses, names the session and that its head resolves, never that it equals HEAD. The git index mirrors the last commit written (after a \fBcheckout\fR, HEAD is an older turn). Commits that are not turns (a relocation record, a repair) are counted apart from the turn commits.
.PP
\fB\-\-fix\fR only ever makes things better: a damaged committed file is moved into \fI.git/git\-session/quarantine/\fR (named in the output) and restored from git; bytes that do not parse are never committed; a lost branch is recreated (or fast\-forwarded) at the commits that hold its turns; no commit is added on a checked\-out view; nodes are never deleted. After \fBverify \-\-fix\fR, a second \fBverify\fR is clean or lists only what the first could not repair.
.SH FINDINGS
Each finding has a stable code (the \fIkind\fR of its JSON record, whose \fIseverity\fR is \fIproblem\fR or \fInote\fR; notes do not make verify exit 1).
"#,
    );
    for k in git_session::verify::KINDS {
        s.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}.\nFix: {}. With \\fB\\-\\-fix\\fR: {}.\n",
            roff(k.code),
            roff(k.meaning),
            roff(k.fix),
            roff(k.repair)
        ));
    }
    s.push_str(
        r#".SH FIGURES
Per session, a \fIstats\fR record (always under \fB\-\-json\fR, as text with \fB\-\-stats\fR): \fIdag_turns\fR (every fork counted), \fIturn_commits\fR and \fIother_commits\fR (reachable, the root left out), \fImax_seq\fR, \fImax_committed_seq\fR, \fIpending_files\fR, and per branch its \fIdag_turns\fR, \fIturn_commits\fR and \fIother_commits\fR along its first\-parent line.
"#,
    );
    s
}

/// git-session-json(7): every record, generated from the record types
/// (the schema `git-session schema` prints).
fn json_page() -> String {
    use git_session::out::records;
    let (kinds, defs) = records::catalog();
    let mut s = String::from(
        r#".TH git-session-json 7 "" "git-session" "git-session manual"
.SH NAME
git-session-json \- the records git-session prints under \-\-json and in batch
.SH DESCRIPTION
Under \fB\-\-json\fR every command prints JSON Lines on stdout: one record per line, \fB{"type": \fR\fIkind\fR\fB, "data": {...}}\fR. \fBgit\-session batch\fR answers each request with the same records and a closing \fIexit\fR record. An error is a record too (\fIerror\fR, on stdout; the text stays on stderr). Notes and warnings are never records.
.PP
\fBgit\-session schema\fR prints the JSON Schema (draft 2020\-12) of one line; this page is generated from it, and the test suite checks every record it sees against it.
.SH CONVENTIONS
.IP \(bu 2
The session a record is about is \fIsession\fR (in a \fIsession\fR row of \fBlist\fR, the row's own \fIid\fR). Provenance records (\fIsession_node\fR, \fIagent_commit\fR) name their pointer back to the record as the abstract\-memory layer does: \fIproject_id\fR, \fIsession_id\fR, \fInode_id\fR, \fIcommit\fR, \fIevent_time\fR, \fIingestion_time\fR.
.IP \(bu 2
A time is two fields: \fIname\fR, unix seconds as a number, and \fIname\fR_rfc3339, the same instant in RFC 3339 UTC.
.IP \(bu 2
Roles are \fIuser\fR, \fIassistant\fR and \fItool\fR, as \fB\-\-role\fR takes them (which also accepts the stored names \fIllm\fR and \fIcode\fR). Only the node itself, in a \fInode\fR record of \fBshow\fR, is as its file holds it.
.IP \(bu 2
A field that does not apply is \fBnull\fR, not left out (the one exception: \fIpreview\fR of a \fIsession\fR row).
.IP \(bu 2
New fields may be added to a record; a field is never removed or retyped without a new record kind.
.SH RECORDS
"#,
    );
    for (kind, data) in &kinds {
        let Some(def) = records::definition(&defs, data) else {
            continue;
        };
        s.push_str(&format!(".SS {}\n", roff(kind)));
        if let Some(d) = def.get("description").and_then(|d| d.as_str()) {
            s.push_str(&format!("{}\n", roff(&one_paragraph(d))));
        }
        for (name, ty, doc) in fields(def, &defs) {
            s.push_str(&format!(
                ".TP\n\\fI{}\\fR ({})\n{}\n",
                roff(&name),
                roff(&ty),
                roff(&doc)
            ));
        }
    }
    s.push_str(
        r#".SH SEE ALSO
\fBgit\-session\fR(1), \fBgit\-session\-batch\fR(1), \fBgit\-session\-layout\fR(5)
"#,
    );
    unbacktick(&s)
}

/// A doc comment's lines as one paragraph.
fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The fields of an object schema: name, type in words, description; the
/// fields of a flattened or referenced object included in place.
fn fields(
    def: &serde_json::Value,
    defs: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let Some(props) = def.get("properties").and_then(|p| p.as_object()) else {
        return out;
    };
    for (name, p) in props {
        let doc = p
            .get("description")
            .or_else(|| {
                git_session::out::records::definition(defs, p).and_then(|d| d.get("description"))
            })
            .and_then(|d| d.as_str())
            .map(one_paragraph)
            .unwrap_or_default();
        out.push((name.clone(), type_words(p, defs), doc));
    }
    out
}

/// A field's type as the page says it: `string`, `integer or null`, `array
/// of string`, an enum's values, a referenced object's name.
fn type_words(p: &serde_json::Value, defs: &serde_json::Map<String, serde_json::Value>) -> String {
    use serde_json::Value;
    if let Some(name) = p.get("$ref").and_then(|r| r.as_str()) {
        let name = name.trim_start_matches("#/$defs/");
        return match defs.get(name) {
            Some(d) if d.get("enum").is_some() || d.get("oneOf").is_some() => type_words(d, defs),
            Some(d) if d.get("type").and_then(|t| t.as_str()) == Some("object") => {
                let inner: Vec<String> = fields(d, defs)
                    .into_iter()
                    .map(|(n, t, _)| format!("{n}: {t}"))
                    .collect();
                format!("object {{{}}}", inner.join(", "))
            }
            Some(_) if name == "AnyValue" => "any".into(),
            _ => name.to_string(),
        };
    }
    if let Some(any) = p.get("anyOf").and_then(|a| a.as_array()) {
        let parts: Vec<String> = any.iter().map(|a| type_words(a, defs)).collect();
        return parts.join(" or ");
    }
    if let Some(one) = p.get("oneOf").and_then(|a| a.as_array()) {
        let parts: Vec<String> = one
            .iter()
            .map(|a| match a.get("const").or_else(|| a.get("enum")) {
                Some(Value::String(c)) => format!("\"{c}\""),
                Some(Value::Array(v)) => v
                    .iter()
                    .map(|c| format!("{c}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                _ => type_words(a, defs),
            })
            .collect();
        return parts.join(" | ");
    }
    if let Some(e) = p.get("enum").and_then(|e| e.as_array()) {
        return e
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" | ");
    }
    match p.get("type") {
        Some(Value::String(t)) if t == "array" => match p.get("items") {
            Some(items) => format!("array of {}", type_words(items, defs)),
            None => "array".into(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            let item = p.get("items").map(|i| type_words(i, defs));
            ts.iter()
                .filter_map(|t| t.as_str())
                .map(|t| match (t, &item) {
                    ("array", Some(i)) => format!("array of {i}"),
                    _ => t.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" or ")
        }
        _ if p
            .as_object()
            .is_some_and(|o| o.is_empty() || o.keys().all(|k| k == "description")) =>
        {
            "any".into()
        }
        _ => "object".into(),
    }
}

fn render(cmd: clap::Command, title: &str) -> Result<Vec<u8>> {
    let cmd = cmd.version(env!("CARGO_PKG_VERSION"));
    let has_subcommands = cmd.has_subcommands();
    let man = clap_mangen::Man::new(cmd)
        .title(title)
        .section("1")
        .source("git-session")
        .manual("git-session manual");
    let mut out = Vec::new();
    let io = |r: std::io::Result<()>| r.io("render a man page", "<memory>");
    io(man.render_title(&mut out))?;
    io(man.render_name_section(&mut out))?;
    io(man.render_synopsis_section(&mut out))?;
    io(man.render_description_section(&mut out))?;
    io(man.render_options_section(&mut out))?;
    if has_subcommands {
        io(man.render_subcommands_section(&mut out))?;
    }
    if title == "git-session-verify" {
        out.extend_from_slice(verify_findings().as_bytes());
    }
    out.extend_from_slice(EXIT_STATUS.as_bytes());
    out.extend_from_slice(FILES.as_bytes());
    if title == "git-session" {
        out.extend_from_slice(SEE_ALSO.as_bytes());
    }
    io(man.render_version_section(&mut out))?;
    Ok(unbacktick(&String::from_utf8_lossy(&out)).into_bytes())
}

/// `code` in the help texts as bold in roff: the backticks the doc comments
/// use for commands and paths would otherwise show as they are.
fn unbacktick(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for line in roff.split_inclusive('\n') {
        if line.matches('`').count() < 2 {
            out.push_str(line);
            continue;
        }
        let pairs = line.matches('`').count() / 2;
        let mut seen = 0;
        for c in line.chars() {
            if c == '`' && seen < pairs * 2 {
                out.push_str(if seen % 2 == 0 { "\\fB" } else { "\\fR" });
                seen += 1;
            } else {
                out.push(c);
            }
        }
    }
    out
}

/// Every page: (file name, roff).
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let mut root = crate::cli::full_command();
    root.build(); // the subcommands get the global options
    let mut out = vec![(
        "git-session.1".to_string(),
        render(root.clone(), "git-session")?,
    )];
    for sub in root.get_subcommands() {
        let name = format!("git-session-{}", sub.get_name());
        let cmd = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("git-session {}", sub.get_name()));
        out.push((format!("{name}.1"), render(cmd, &name)?));
        // The pages its SUBCOMMANDS section names (`git-session-project-add`).
        let nested = sub.get_subcommands().filter(|c| c.get_name() != "help");
        for subsub in nested.filter(|_| sub.get_name() != "help") {
            let name = format!("git-session-{}-{}", sub.get_name(), subsub.get_name());
            let cmd = subsub.clone().name(name.clone()).bin_name(format!(
                "git-session {} {}",
                sub.get_name(),
                subsub.get_name()
            ));
            out.push((format!("{name}.1"), render(cmd, &name)?));
        }
    }
    out.push(("git-session-layout.5".into(), LAYOUT.as_bytes().to_vec()));
    out.push(("git-session-json.7".into(), json_page().into_bytes()));
    let topics = [
        ("guide", "what git-session does, section by section", GUIDE),
        (
            "performance",
            "what git-session costs, and how to measure it",
            PERFORMANCE,
        ),
    ];
    for (topic, summary, text) in topics {
        let name = format!("git-session-{topic}");
        let page = markdown::page(&name, 7, summary, text);
        out.push((format!("{name}.7"), page.into_bytes()));
    }
    Ok(out)
}

pub fn run(ctx: &Ctx, args: ManArgs) -> Result<u8> {
    let pages = pages()?;
    if let Some(dir) = args.install {
        let root = match dir {
            Some(d) => d,
            None => std::env::var_os("XDG_DATA_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
                .ok_or(Usage::NoHome {
                    message: "no `$HOME` to install the man pages under",
                    help: "give `--install DIR`",
                })?
                .join("man"),
        };
        for (name, roff) in &pages {
            let section = name.rsplit('.').next().unwrap_or("1");
            let dir = root.join(format!("man{section}"));
            std::fs::create_dir_all(&dir).io("create", &dir)?;
            git_session::layout::atomic::write(&dir.join(name), roff)?;
        }
        ctx.out.note(format!(
            "installed {} pages under `{}` (man1/, man5/, man7/); `man git-session` finds them when that directory is on the manual path",
            pages.len(),
            root.display()
        ));
        return Ok(exit::OK);
    }
    if let Some(dir) = args.dir {
        std::fs::create_dir_all(&dir).io("create", &dir)?;
        for (name, roff) in &pages {
            git_session::layout::atomic::write(&dir.join(name), roff)?;
        }
        ctx.out.note(format!(
            "wrote {} pages into `{}`",
            pages.len(),
            dir.display()
        ));
        return Ok(exit::OK);
    }
    let want = match args.page.as_deref() {
        None => "git-session.1".to_string(),
        Some("layout") => "git-session-layout.5".to_string(),
        Some("json") => "git-session-json.7".to_string(),
        Some(p @ ("guide" | "performance")) => format!("git-session-{p}.7"),
        Some(p) => format!("git-session-{p}.1"),
    };
    let Some((_, roff)) = pages.iter().find(|(n, _)| *n == want) else {
        return Err(Usage::NoSuchPage { page: want }.into());
    };
    show(roff);
    Ok(exit::OK)
}

/// How a page reaches its reader.
#[derive(Debug, PartialEq, Eq)]
enum Reader {
    /// The roff on stdout, as it is (a pipe, a file, no program to read it).
    Print,
    /// `man -l -`: the page rendered, in man's pager.
    Man,
    /// A pager (a shell command line: `$PAGER`, else `less`) with the roff
    /// as text, where there is no `man`.
    Pager(String),
}

/// The reader for stdout: a terminal gets `man -l -` when there is a
/// `man`, else `$PAGER` (`cat`: printed) or `less`; anything else, or no
/// program at all, the roff itself.
fn reader(
    terminal: bool,
    var: impl Fn(&str) -> Option<String>,
    on_path: impl Fn(&str) -> bool,
) -> Reader {
    if !terminal {
        return Reader::Print;
    }
    if on_path("man") {
        return Reader::Man;
    }
    match var("PAGER").filter(|p| !p.trim().is_empty()) {
        Some(p) if p.trim() == "cat" => Reader::Print,
        Some(p) => Reader::Pager(p),
        None if on_path("less") => Reader::Pager("less".into()),
        None => Reader::Print,
    }
}

/// Whether `program` is an executable file in a directory of `$PATH`.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Show `roff` to whoever reads stdout ([`reader`]); a program that cannot
/// be started leaves the roff printed instead.
fn show(roff: &[u8]) {
    use std::io::IsTerminal;
    use std::process::Command;
    let terminal = !super::batch::answering() && std::io::stdout().is_terminal();
    let var = |k: &str| std::env::var(k).ok();
    let started = match reader(terminal, var, on_path) {
        Reader::Print => None,
        Reader::Man => {
            git_session::child::run_on_terminal(Command::new("man").args(["-l", "-"]), roff).ok()
        }
        Reader::Pager(p) => {
            git_session::child::run_on_terminal(Command::new("sh").args(["-c", &p]), roff).ok()
        }
    };
    if started.is_none() {
        let _ = std::io::stdout().lock().write_all(roff);
    }
}

fn script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(
        shell,
        &mut crate::cli::full_command(),
        "git-session",
        &mut out,
    );
    super::complete::with_dynamic(shell, out)
}

/// Every completion script: (file name, content).
pub fn scripts() -> Vec<(&'static str, Vec<u8>)> {
    use clap_complete::Shell;
    vec![
        ("git-session.bash", script(Shell::Bash)),
        ("_git-session", script(Shell::Zsh)),
        ("git-session.fish", script(Shell::Fish)),
    ]
}

pub fn completions(ctx: &Ctx, args: CompletionsArgs) -> Result<u8> {
    use clap_complete::Shell;
    if let Some(dir) = args.dir {
        if args.shell != "all" {
            return Err(Usage::DirNeedsAll.into());
        }
        std::fs::create_dir_all(&dir).io("create", &dir)?;
        for (name, s) in scripts() {
            git_session::layout::atomic::write(&dir.join(name), &s)?;
        }
        ctx.out.note(format!(
            "wrote the completion scripts into `{}`",
            dir.display()
        ));
        return Ok(exit::OK);
    }
    let shell = match args.shell.as_str() {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        other => {
            return Err(Usage::Shell {
                shell: other.to_string(),
            }
            .into());
        }
    };
    let _ = std::io::stdout().lock().write_all(&script(shell));
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What shows a page: the roff itself unless stdout is a terminal;
    /// there `man`, else `$PAGER` (`cat` prints), else `less`, else print.
    #[test]
    fn a_terminal_gets_man_or_a_pager_and_a_pipe_the_roff() {
        let none = |_: &str| None;
        let pager = |k: &str| (k == "PAGER").then(|| "most -s".to_string());
        let cat = |k: &str| (k == "PAGER").then(|| " cat ".to_string());
        let blank = |k: &str| (k == "PAGER").then(String::new);
        let all = |_: &str| true;
        let nothing = |_: &str| false;
        let only_less = |p: &str| p == "less";
        assert_eq!(reader(false, pager, all), Reader::Print);
        assert_eq!(reader(false, none, nothing), Reader::Print);
        assert_eq!(reader(true, pager, all), Reader::Man);
        assert_eq!(reader(true, none, all), Reader::Man);
        assert_eq!(
            reader(true, pager, only_less),
            Reader::Pager("most -s".into())
        );
        assert_eq!(reader(true, none, only_less), Reader::Pager("less".into()));
        assert_eq!(reader(true, blank, only_less), Reader::Pager("less".into()));
        assert_eq!(reader(true, cat, only_less), Reader::Print);
        assert_eq!(reader(true, none, nothing), Reader::Print);
    }
}
