//! The transcript files: finding them (every `*.jsonl` below a directory,
//! a Claude Code session's subagents), reading their lines from an offset
//! on ([`read_lines`]), and the session a transcript names ([`probe`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Agent, Line, MAX_RECORD_DEPTH, codex, depth};
use crate::error::{IoContext, Result};
use crate::layout::atomic;

/// A transcript opened for reading: a regular file (a link to one is
/// followed, as the agent names its own transcript), never a FIFO, socket
/// or device, which would block or never end (`/dev/zero`) in a hook that
/// must not hold the agent up.
pub(super) fn open_transcript(path: &Path) -> std::io::Result<std::fs::File> {
    let f = atomic::open_read(path)?;
    let kind = f.metadata()?.file_type();
    if kind.is_file() {
        Ok(f)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            if kind.is_dir() {
                "a directory, not a transcript: not read"
            } else {
                "not a regular file (a FIFO, socket or device): not read"
            },
        ))
    }
}

/// A transcript's lines from byte `from.0` (line number `from.1`) on, the
/// end of the last complete one, and the torn last line if any: a last line
/// without its newline that does not parse (the agent is writing it) is
/// left for the next import.
pub fn read_lines(path: &Path, from: (u64, usize), max: u64) -> Result<Read> {
    use std::io::{Read as _, Seek, SeekFrom};
    let mut f = open_transcript(path).io("read", path)?;
    let mut bytes = Vec::new();
    f.seek(SeekFrom::Start(from.0)).io("read", path)?;
    f.take(max).read_to_end(&mut bytes).io("read", path)?;
    let mut out = Read {
        lines: Vec::new(),
        torn: None,
        end: from.0,
        end_line: from.1,
    };
    let mut at = 0usize;
    let mut line = from.1;
    while at < bytes.len() {
        let (raw, next, complete) = match bytes[at..].iter().position(|&b| b == b'\n') {
            Some(n) => (&bytes[at..at + n], at + n + 1, true),
            None => (&bytes[at..], bytes.len(), false),
        };
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = String::from_utf8_lossy(raw);
        let byte = from.0 + at as u64;
        at = next;
        let this = line;
        line += 1;
        if text.trim().is_empty() {
            if complete {
                out.end = from.0 + at as u64;
                out.end_line = line;
            }
            continue;
        }
        // A record nested too deep to be read back once inside a node (its
        // `metadata.source_records` adds levels) is kept as its text.
        let record = serde_json::from_str::<Value>(&text)
            .ok()
            .filter(|r| r.is_object() && depth(r) <= MAX_RECORD_DEPTH);
        if record.is_none() && !complete {
            out.torn = Some(this);
            break;
        }
        out.end = from.0 + at as u64;
        out.end_line = line;
        out.lines.push(Line {
            line: this,
            byte,
            raw: if record.is_none() {
                text.into_owned()
            } else {
                String::new()
            },
            record,
        });
    }
    Ok(out)
}

/// What [`read_lines`] read.
pub struct Read {
    pub lines: Vec<Line>,
    /// The torn last line.
    pub torn: Option<usize>,
    /// The offset after the last line read whole, and its line number.
    pub end: u64,
    pub end_line: usize,
}

/// The session a transcript is, and the one it was forked from (Codex),
/// named by its first record that names one (read one line at a time), as
/// the mapping names them.
pub(super) fn probe(agent: Agent, path: &Path) -> Result<(Option<String>, Option<String>)> {
    use std::io::BufRead as _;
    let f = open_transcript(path).io("read", path)?;
    for raw in std::io::BufReader::new(f).split(b'\n') {
        let raw = raw.io("read", path)?;
        let Ok(r) = serde_json::from_slice::<Value>(&raw) else {
            continue;
        };
        match agent {
            Agent::ClaudeCode => {
                if let Some(sid) = r["sessionId"].as_str() {
                    // A subagent's records name its parent's session: its
                    // own is named by its agent too.
                    let agent = is_subagent_file(path).then(|| {
                        r["agentId"].as_str().map(str::to_string).or_else(|| {
                            let stem = path.file_stem()?.to_str()?;
                            stem.strip_prefix("agent-").map(str::to_string)
                        })
                    });
                    let own = match agent.flatten() {
                        Some(a) => format!("claude-{sid}-{a}"),
                        None => format!("claude-{sid}"),
                    };
                    return Ok((Some(own), None));
                }
            }
            Agent::Codex => {
                let r = codex::legacy_view(&r, None).unwrap_or(r);
                let p = &r["payload"];
                if r["type"] == "session_meta"
                    && let Some(id) = p["id"].as_str().or(p["session_id"].as_str())
                {
                    let fork = p["forked_from_id"].as_str().map(|f| format!("codex-{f}"));
                    return Ok((Some(format!("codex-{id}")), fork));
                }
            }
        }
    }
    Ok((None, None))
}

/// Transcripts under `path`: the file itself, or every `*.jsonl` below the
/// directory, sorted (main transcripts before their subagents'). Below a
/// directory, a `*.jsonl` that is a link or a special file is not read, and
/// a part that cannot be listed is left out; each is named in `warn`. A
/// path that is neither a file nor a directory (a FIFO, a device) is given
/// back, for its import to fail on it, named.
pub fn transcripts(path: &Path, warn: &mut dyn FnMut(String)) -> Result<Vec<PathBuf>> {
    let md = std::fs::metadata(path).io("read", path)?;
    if !md.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for e in walkdir::WalkDir::new(path).follow_links(false) {
        let e = match e {
            Ok(e) => e,
            Err(e) => {
                warn(format!("skipping part of `{}`: {e}", path.display()));
                continue;
            }
        };
        if e.path().extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        match e.file_type() {
            t if t.is_file() => out.push(e.into_path()),
            t if t.is_dir() => {}
            t if t.is_symlink() => warn(format!(
                "skipping `{}`: a link is not followed (give the path it points to, to import that)",
                e.path().display()
            )),
            _ => warn(format!(
                "skipping `{}`: not a regular file (a FIFO, socket or device)",
                e.path().display()
            )),
        }
    }
    out.sort_by_key(|p| (is_subagent_file(p), p.clone()));
    Ok(out)
}

/// The older layout's subagent transcripts of session `session` (a Claude
/// Code session id, `claude-<sessionId>`): `agent-*.jsonl` in `dir` whose
/// records name that session.
pub fn subagents_beside(dir: &Path, session: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && is_subagent_file(p)
                && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
        })
        .filter(|p| {
            probe(Agent::ClaudeCode, p).is_ok_and(|(id, _)| {
                id.and_then(|id| id.strip_prefix(session).map(|r| r.starts_with('-')))
                    .unwrap_or(false)
            })
        })
        .collect();
    out.sort();
    out
}

/// Whether the parent of Claude Code subagent transcript `path` (session
/// `claude-<sessionId>-<agentId>`) says the subagent is done: the last of
/// its complete records that names the agent is the completed result of
/// the call that ran it (`toolUseResult.agentId`, status completed; a later
/// call that resumes the agent names it again). The parent's transcript is
/// `<session>.jsonl` above `<session>/subagents/`, or, in the older layout,
/// `<sessionId>.jsonl` beside it.
pub(super) fn subagent_returned(path: &Path, session: &str) -> bool {
    use std::io::BufRead as _;
    let Some(agent_id) = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("agent-"))
    else {
        return false;
    };
    let Some(sid) = session
        .strip_prefix("claude-")
        .and_then(|s| s.strip_suffix(agent_id))
        .and_then(|s| s.strip_suffix('-'))
    else {
        return false;
    };
    let Some(dir) = path.parent() else {
        return false;
    };
    let parent = if dir.file_name().is_some_and(|n| n == "subagents") {
        match dir.parent() {
            Some(d) => d.with_extension("jsonl"),
            None => return false,
        }
    } else {
        dir.join(format!("{sid}.jsonl"))
    };
    let Ok(f) = open_transcript(&parent) else {
        return false;
    };
    let needle = format!("\"{agent_id}\"");
    let mut reader = std::io::BufReader::new(f);
    let mut line = Vec::new();
    let mut done = false;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            // A line the parent is still writing says nothing yet.
            Ok(_) if line.last() == Some(&b'\n') => {}
            _ => return done,
        }
        if !line.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            continue;
        }
        let Ok(r) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let res = &r["toolUseResult"];
        done =
            res["agentId"] == agent_id && res["status"].as_str().is_none_or(|s| s == "completed");
    }
}

/// Whether a Claude Code transcript is a subagent's: one under a
/// `subagents/` directory, or (the older layout) an `agent-*.jsonl` beside
/// its parent's transcript, whose `sessionId` names the parent.
pub fn is_subagent_file(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "subagents")
        || path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-"))
}
