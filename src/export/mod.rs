//! `export`: a session as a page a person reads (issue 53), in Markdown or
//! self-contained HTML; or every session as a small site (an index, a page
//! per project, a page per session and branch) that a second run brings up
//! to date by rewriting only what changed.
//!
//! What a page shows comes from the record alone: the conversation along
//! one branch of the DAG ([`crate::view::branch_nodes`], as `show` reads
//! it), the session commit of each turn, and the agent's commit in the
//! project that the turn's reply records (`metadata.project_commit`), with
//! its diff read from the project's repository. Every string taken from
//! the record goes through the secrets scanner first ([`Mask`]) unless the
//! caller asks otherwise; the renderers escape what they print.
//!
//! - [`model`]: a session read ([`Session`]) and one branch of it as turns
//!   ([`model::Conversation`]);
//! - [`html`] and [`markdown`]: the renderers, pure (text in, text out);
//! - [`site`]: `--all`, its manifest and progress; [`journal`]: what a
//!   run under way wrote, for the next one when it is killed.

pub mod html;
pub mod journal;
pub mod markdown;
pub mod model;
pub mod site;

use std::cell::Cell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, IoContext, Result};
use crate::layout::StateDir;
use crate::layout::lock::LockOptions;

pub use model::{Conversation, Session};

/// The format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
}

impl Format {
    /// The file extension of its pages.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
        }
    }
}

/// What every export is asked.
#[derive(Debug, Clone)]
pub struct Options {
    pub format: Format,
    /// Mask every secret the scanner finds (`--no-redact` turns it off).
    pub redact: bool,
}

/// The secrets scanner over what an export shows: each string handed to it
/// comes back with every finding replaced by `[REDACTED:<rule>:<id>]`
/// (when on), but those whose fingerprint the allow-list lets through
/// (`git-session secrets allow`, as `push` reads it), and the findings
/// masked are counted.
#[derive(Debug, Default)]
pub struct Mask {
    on: bool,
    allowed: BTreeSet<String>,
    count: Cell<u64>,
}

impl Mask {
    /// A mask, on or off, letting through the fingerprints `allowed`.
    pub fn new(on: bool, allowed: BTreeSet<String>) -> Mask {
        Mask {
            on,
            allowed,
            count: Cell::new(0),
        }
    }

    /// The mask `opts` ask for: on unless `--no-redact`, with the state
    /// dir's allow-list.
    pub fn of(state: &StateDir, opts: &Options) -> Result<Mask> {
        let allowed = match opts.redact {
            true => crate::secrets::session::allowed(state, &[])?,
            false => BTreeSet::new(),
        };
        Ok(Mask::new(opts.redact, allowed))
    }

    /// The fingerprints it lets through, in order.
    pub fn allowed(&self) -> Vec<&str> {
        self.allowed.iter().map(String::as_str).collect()
    }

    /// How many secrets were masked so far.
    pub fn count(&self) -> u64 {
        self.count.get()
    }

    /// The findings of `text` to mask: none when off, and none the
    /// allow-list names; counted.
    fn hits(&self, text: &[u8]) -> Vec<crate::secrets::Hit> {
        if !self.on || text.is_empty() {
            return Vec::new();
        }
        let mut hits = crate::secrets::scan_text(text);
        hits.retain(|h| !self.allowed.contains(&h.fingerprint));
        self.count.set(self.count.get() + hits.len() as u64);
        hits
    }

    pub fn str(&self, text: &str) -> String {
        let hits = self.hits(text.as_bytes());
        if hits.is_empty() {
            return text.to_string();
        }
        crate::secrets::redact_text(text, &hits)
    }

    /// Every string of `v` (at any depth) masked in place.
    pub fn json(&self, v: &mut Value) {
        if self.on {
            let allowed = &self.allowed;
            let n =
                crate::secrets::redact_json_where(v, &|h| !allowed.contains(&h.fingerprint)).len();
            self.count.set(self.count.get() + n as u64);
        }
    }

    /// A file's bytes, masked when it is text (UTF-8 without NUL).
    pub fn file(&self, data: Vec<u8>) -> Vec<u8> {
        if !self.on || crate::secrets::is_binary(&data) {
            return data;
        }
        match String::from_utf8(data) {
            Ok(text) => self.str(&text).into_bytes(),
            Err(e) => e.into_bytes(),
        }
    }

    /// A string a writer cut (`…` ends it) from a text the export does not
    /// read, masked: its last word dropped ([`drop_cut_word`]), which may
    /// be the start of a secret no rule finds whole.
    pub fn cut_str(&self, text: &str) -> String {
        let masked = self.str(text);
        match self.on && text.ends_with('…') {
            true => drop_cut_word(&masked),
            false => masked,
        }
    }
}

/// Where a page's links go: each is a relative reference from the page,
/// or `None` when the export has no such page (a single file).
#[derive(Debug, Default, Clone)]
pub struct Links {
    /// The site's index.
    pub index: Option<String>,
    /// The session's project page.
    pub project: Option<String>,
    /// The page of each branch of the session, by the branch's position in
    /// [`Session::branches`].
    pub branches: Vec<Option<String>>,
    /// The directory the session's attachments are copied into, relative
    /// to the page (with a trailing `/`); `None`: not copied.
    pub attachments: Option<String>,
}

/// A file name for a branch page: `branch-` and the branch name with every
/// byte but `[A-Za-z0-9._-]` written `~xx` (so that any two names give two
/// files, none climbs out of the directory, and each is a plain URL), cut
/// with a hash of the name past a length any file system takes.
pub fn branch_file(name: &str, ext: &str) -> String {
    let mut enc = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            enc.push(b as char);
        } else {
            enc.push_str(&format!("~{b:02x}"));
        }
    }
    if enc.len() > 120 {
        let hash = crate::git::sha1_hex(name.as_bytes());
        let mut cut = 80;
        while !enc.is_char_boundary(cut) {
            cut -= 1;
        }
        enc = format!("{}-{}", &enc[..cut], &hash[..16]);
    }
    format!("branch-{enc}.{ext}")
}

/// `s` as a URL path segment: every byte but `[A-Za-z0-9._~-]`
/// percent-encoded.
pub fn url_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"._~-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A time as a person reads it in a page: `2026-11-30 05:45 UTC`.
pub fn when(secs: f64) -> String {
    let t = crate::out::rfc3339(secs);
    match (t.get(..10), t.get(11..16)) {
        (Some(d), Some(hm)) => format!("{d} {hm} UTC"),
        _ => t,
    }
}

/// `n` and `what`, plural unless one: `1 session`, `2 sessions`.
pub fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// How a mask marker begins (`[REDACTED:<rule>:<id>]`).
const MARKER: &str = "[REDACTED:";

/// The longest prefix of `text` (masked) of at most `n` characters that
/// splits no `[REDACTED:…]` marker: a marker the cut would go through is
/// left out whole (a part of one would read as text of the message, or as
/// the start of a secret).
pub fn cut_masked(text: &str, n: usize) -> &str {
    let end = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
    unsplit(text, end)
}

/// [`cut_masked`] at `n` bytes (less, to end on a character).
pub fn cut_masked_bytes(text: &str, n: usize) -> &str {
    let mut end = n.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    unsplit(text, end)
}

/// `text` up to byte `end` (a character boundary), or up to the marker
/// that `end` would split.
fn unsplit(text: &str, end: usize) -> &str {
    for (start, _) in text.match_indices(MARKER) {
        if start >= end {
            break;
        }
        let close = text[start..]
            .find(']')
            .map_or(text.len(), |c| start + c + 1);
        if close > end {
            return &text[..start];
        }
    }
    &text[..end]
}

/// A phase-1 title ([`crate::session::title_from_text`]) of a user text
/// masked whole first: its cut goes through no secret, and no marker.
pub fn title_of(masked: &str) -> String {
    let line = crate::session::title_line(masked);
    match line.chars().count() > crate::session::TITLE_CHARS {
        true => format!(
            "{}…",
            cut_masked(&line, crate::session::TITLE_CHARS).trim_end()
        ),
        false => line,
    }
}

/// An index row's preview ([`crate::layout::schema::preview`]) of a user
/// text masked whole first.
pub fn preview_of(masked: &str) -> String {
    use crate::layout::schema::{PREVIEW_CHARS, PREVIEW_KEPT, preview_line};
    let line = preview_line(masked);
    match line.chars().count() > PREVIEW_CHARS {
        true => format!("{}…", cut_masked(&line, PREVIEW_KEPT).trim_end()),
        false => line,
    }
}

/// A string a writer cut from a text the export does not have (a stored
/// title, an index row's preview, an agent commit's subject), masked: the
/// cut may have gone through a secret, whose start no rule finds, so its
/// last word goes (unless it is a whole marker) and `…` ends it.
pub fn drop_cut_word(masked: &str) -> String {
    let body = masked.strip_suffix('…').unwrap_or(masked).trim_end();
    let start = body
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let last = &body[start..];
    let kept = match last.starts_with(MARKER) && last.ends_with(']') {
        true => body,
        false => body[..start].trim_end(),
    };
    format!("{kept}…")
}

/// An agent commit's message, masked. Its subject (`[agent <session>] turn
/// <n>: <the user's first line>`) holds the user's line cut at
/// [`crate::project::agent::SUBJECT_CHARS`] before anything masked it: one
/// that long loses its last word ([`drop_cut_word`]).
pub fn agent_message(mask: &Mask, message: &str) -> String {
    let (subject, rest) = message.split_once('\n').unwrap_or((message, ""));
    let cut = subject.starts_with("[agent ")
        && subject
            .split_once(": ")
            .is_some_and(|(_, said)| said.chars().count() >= crate::project::agent::SUBJECT_CHARS);
    let subject = match mask.on && cut {
        true => drop_cut_word(&mask.str(subject)),
        false => mask.str(subject),
    };
    match message.contains('\n') {
        true => format!("{subject}\n{}", mask.str(rest)),
        false => subject,
    }
}

/// The note under a tool's input or output a page cut
/// ([`model::TOOL_LIMIT`]).
pub fn left_out(bytes: usize) -> String {
    format!(
        "(cut: {} not shown; the page shows the first {} KiB)",
        count(bytes, "byte"),
        model::TOOL_LIMIT / 1024
    )
}

/// What a skip reason recorded in a turn's `project_commit` means.
pub fn skip_reason(code: &str) -> &'static str {
    match code {
        "no_baseline" => "the turn had no baseline (`begin-turn` was not run)",
        "dirty_tree" => "the project had uncommitted changes of the user's when the turn began",
        "no_changes" => "the agent changed no file",
        "path_missing" => "the project's directory was missing",
        "state_dir" => "the project's directory is the state directory",
        "not_a_repo" => "the project's directory is not a git repository",
        "detached_head" => "the project's HEAD was detached",
        "merge_in_progress" => "a merge or rebase was in progress in the project",
        "path_not_utf8" => "a changed file's name is not UTF-8",
        "file_changing" => "a file was still being written",
        "head_moved" => "the project's branch moved while the commit was made",
        "git_busy" => "git held the project's index",
        "hook_refused" => "the project's hooks refused the commit",
        _ => "the record gives no known reason",
    }
}

/// What [`one`] wrote or printed.
#[derive(Debug)]
pub struct One {
    /// The page (printed on stdout when no file was given).
    pub text: String,
    /// The files written, the page first.
    pub written: Vec<PathBuf>,
    /// The branch shown.
    pub branch: String,
    /// Secrets masked.
    pub masked: u64,
}

/// Export session `id` on `branch` (a branch name or a tip node id;
/// default the session's current branch) as one page: written to `out`
/// (its attachments copied into `<stem>_files/` beside it), or returned
/// for stdout.
pub fn one(
    state: &StateDir,
    id: &str,
    branch: Option<&str>,
    opts: &Options,
    locks: LockOptions,
    out: Option<&Path>,
    warn: &mut dyn FnMut(String),
) -> Result<One> {
    let mask = Mask::of(state, opts)?;
    let sd = state.find_session(id)?;
    let _lock = crate::layout::lock::session(&sd, crate::layout::lock::Kind::Shared, locks)?;
    let session = Session::read(state, &sd, id, &mask, warn)?;
    let shown = match branch {
        Some(b) => session.branch_named(b)?,
        None => session.current,
    };
    let mut patches = model::Patches::default();
    let conv = Conversation::of(&session, shown, &mask, &mut patches);
    let mut links = Links {
        branches: vec![None; session.branches.len()],
        ..Links::default()
    };
    let mut copies = Vec::new();
    if let Some(path) = out {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "export".into());
        let files_dir = format!("{stem}_files");
        links.attachments = Some(format!("{}/", url_segment(&files_dir)));
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new(".")).join(&files_dir);
        copies = session.attachment_copies(&conv, &dir, &mask);
    }
    let text = match opts.format {
        Format::Html => html::session_page(&session, &conv, &links),
        Format::Markdown => markdown::session_page(&session, &conv, &links),
    };
    let mut written = Vec::new();
    if let Some(path) = out {
        let file = Path::new(path.file_name().unwrap_or(path.as_os_str()));
        let root = path.parent().unwrap_or(Path::new(""));
        write_file(root, file, text.as_bytes())?;
        written.push(path.to_path_buf());
        for (to, bytes) in copies {
            let rel = to.strip_prefix(root).unwrap_or(&to);
            write_file(root, rel, &bytes)?;
            written.push(to);
        }
    }
    Ok(One {
        text,
        written,
        branch: session
            .branches
            .get(shown)
            .map_or(String::new(), |b| b.label.clone()),
        masked: mask.count(),
    })
}

/// `rel` under `root`, each name on the way below `root` checked: a link
/// or a special file planted in the output directory is refused, so that
/// no page is written, and no stale one removed, through it.
pub fn under(root: &Path, rel: &Path) -> Result<PathBuf> {
    let mut path = root.to_path_buf();
    for c in rel.components() {
        path.push(c);
        crate::layout::atomic::refuse_unsafe(&path)?;
    }
    Ok(path)
}

/// Write `bytes` to `rel` under `root` ([`under`]) atomically, its
/// directories made first.
pub fn write_file(root: &Path, rel: &Path, bytes: &[u8]) -> Result<()> {
    let path = under(root, rel)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).io("create", dir)?;
        // Made meanwhile by someone else: checked again.
        under(root, rel)?;
    }
    crate::layout::atomic::write(&path, bytes)
}

/// An attachment's file in a session, by the path its node records
/// (`workdir/attachments/<name>`): only a regular file directly in that
/// directory, of a size this tool reads.
pub fn attachment_bytes(session_dir: &Path, rel: &str) -> Option<Vec<u8>> {
    let name = attachment_name(rel)?;
    let path = session_dir.join("workdir/attachments").join(name);
    let md = std::fs::symlink_metadata(&path).ok()?;
    if !md.is_file() || md.len() > crate::layout::schema::MAX_FILE_BYTES {
        return None;
    }
    std::fs::read(&path).ok()
}

/// The file name of an attachment path a node records, when it is one
/// this tool made: `workdir/attachments/<name>`, the name plain.
pub fn attachment_name(rel: &str) -> Option<&str> {
    let name = rel.strip_prefix("workdir/attachments/")?;
    (!name.is_empty() && !name.contains('/') && !name.contains('\\') && !name.starts_with('.'))
        .then_some(name)
}

/// The usage error of `export --all` without `-o DIR`.
pub fn needs_dir() -> Error {
    crate::error::Usage::ExportDir.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_files_are_plain_names_distinct_for_distinct_branches() {
        assert_eq!(branch_file("main", "html"), "branch-main.html");
        assert_eq!(branch_file("retry-a_1", "md"), "branch-retry-a_1.md");
        assert_eq!(branch_file("../x", "html"), "branch-..~2fx.html");
        assert_ne!(branch_file("a/b", "html"), branch_file("a~2fb", "html"));
        assert_eq!(branch_file("~tip", "html"), "branch-~7etip.html");
        let long = "é".repeat(200);
        let f = branch_file(&long, "html");
        assert!(
            f.len() < 120 && f.bytes().all(|b| b.is_ascii_graphic()),
            "{f}"
        );
        assert_ne!(f, branch_file(&"é".repeat(201), "html"));
    }

    #[test]
    fn a_cut_never_splits_a_marker_and_a_blind_cut_drops_its_last_word() {
        let m = "key [REDACTED:github-pat:0123456789abcdef] end";
        assert_eq!(cut_masked(m, 3), "key");
        assert_eq!(cut_masked(m, 8), "key ");
        assert_eq!(
            cut_masked(m, 4 + 38),
            "key [REDACTED:github-pat:0123456789abcdef]"
        );
        assert_eq!(cut_masked(m, 100), m);
        assert_eq!(cut_masked_bytes(m, 20), "key ");
        assert_eq!(cut_masked_bytes("aé", 2), "a");
        assert_eq!(cut_masked("é".repeat(9).as_str(), 4), "éééé");
        let x40 = "x".repeat(40);
        assert_eq!(title_of(&format!("{x40}{m}")), format!("{x40}key…"));
        assert_eq!(
            title_of("short [REDACTED:r:0123456789abcdef]"),
            "short [REDACTED:r:0123456789abcdef]"
        );
        assert_eq!(drop_cut_word("deploy with ghp_abcdef…"), "deploy with…");
        assert_eq!(
            drop_cut_word("with [REDACTED:r:0123456789abcdef]…"),
            "with [REDACTED:r:0123456789abcdef]…"
        );
        assert_eq!(drop_cut_word("ghp_abcdef"), "…");
    }

    #[test]
    fn urls_and_attachment_names() {
        assert_eq!(url_segment("a b#?.txt"), "a%20b%23%3F.txt");
        assert_eq!(attachment_name("workdir/attachments/x.txt"), Some("x.txt"));
        assert_eq!(attachment_name("workdir/attachments/../x"), None);
        assert_eq!(attachment_name("workdir/attachments/.x"), None);
        assert_eq!(attachment_name("/etc/passwd"), None);
    }
}
