//! Live equals replay (issue 49): a session built while the agent writes
//! its transcript (imports of growing prefixes, or the hooks) is the
//! session one import of the finished transcript makes, to the byte: the
//! same node files, commits, commit ids and refs, the same turn pending.
//! Random Claude Code and Codex conversations (multi-record replies, tool
//! loops, rewinds, compactions in the middle of a turn, turn-end records
//! or none, a last turn cut off), cut at random bytes (torn lines too).

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::env::TestEnv;

/// One conversation, as the generator describes it.
#[derive(Debug, Clone)]
struct Script {
    turns: Vec<TurnScript>,
    /// The turns end with an end record (Claude Code `turn_duration`,
    /// Codex `task_complete`).
    ends: bool,
    /// The last turn stops in the middle (a call without its result).
    cut_off: bool,
    /// Claude Code: turn 1's first call runs a subagent (`Task`), whose
    /// transcript grows beside the parent's (`None`: no subagent; `true`:
    /// under `<session>/subagents/`, `false`: the older layout, beside the
    /// parent's file). Codex: the rollout format before `session_meta`.
    variant: Option<bool>,
}

#[derive(Debug, Clone)]
struct TurnScript {
    /// Steps of the tool loop: each a reply of `blocks` records, calling a
    /// tool when `calls`.
    steps: Vec<(usize, bool)>,
    /// A rewind: the message answers turn 1's first reply again.
    rewind: bool,
    /// A compaction after the first step.
    compacts: bool,
    /// The user stops the agent at the end of it (Claude Code's interrupt
    /// marker, Codex's `turn_aborted`, in place of the end record).
    interrupts: bool,
}

fn turn() -> impl Strategy<Value = TurnScript> {
    (
        proptest::collection::vec((1usize..4, any::<bool>()), 1..4),
        any::<bool>(),
        any::<bool>(),
        proptest::bool::weighted(0.25),
    )
        .prop_map(|(steps, rewind, compacts, interrupts)| TurnScript {
            steps,
            rewind,
            compacts,
            interrupts,
        })
}

fn script() -> impl Strategy<Value = Script> {
    (
        proptest::collection::vec(turn(), 1..5),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(|(turns, ends, cut_off, variant)| Script {
            turns,
            ends,
            cut_off,
            variant,
        })
}

const SID: &str = "22222222-3333-4444-5555-666666666666";

/// The script as a Claude Code transcript.
fn claude(s: &Script) -> Vec<Value> {
    let mut out = Vec::new();
    let mut n = 0u32;
    let mut ts = || {
        n += 1;
        format!("2026-11-02T09:{:02}:{:02}.000Z", n / 60, n % 60)
    };
    let rec = |kind: &str, uuid: String, parent: Option<String>, time: String, extra: Value| {
        let mut r = json!({"type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": time,
            "sessionId": SID, "cwd": "/home/me/proj", "version": "2.1.0", "isSidechain": false});
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        r
    };
    let mut last: Option<String> = None;
    let mut first_reply: Option<String> = None;
    let turns = s.turns.len();
    for (t, turn) in s.turns.iter().enumerate() {
        out.push(
            json!({"type": "file-history-snapshot", "messageId": format!("m{t}"), "snapshot": {}}),
        );
        let parent = match (turn.rewind, &first_reply) {
            (true, Some(r)) if t > 0 => Some(r.clone()),
            _ => last.clone(),
        };
        let u = format!("u{t}");
        out.push(rec(
            "user",
            u.clone(),
            parent,
            ts(),
            json!({"message": {"role": "user", "content": format!("message {t}")}}),
        ));
        last = Some(u);
        for (k, &(blocks, calls)) in turn.steps.iter().enumerate() {
            let msg = format!("msg_{t}_{k}");
            let cut_here = s.cut_off && t + 1 == turns && k + 1 == turn.steps.len();
            for b in 0..blocks {
                let uuid = format!("a{t}_{k}_{b}");
                let block = if b == 0 && blocks > 1 {
                    json!({"type": "thinking", "thinking": "hmm", "signature": "s"})
                } else {
                    json!({"type": "text", "text": format!("reply {t}.{k} part {b}")})
                };
                // After a compaction, the next record names what it goes
                // on from only as its logical parent.
                let (parent, logical) = match last.as_deref() {
                    Some(l) if l.starts_with("cs") => (None, Some(l.to_string())),
                    l => (l.map(str::to_string), None),
                };
                let mut r = rec(
                    "assistant",
                    uuid.clone(),
                    parent,
                    ts(),
                    json!({"message": {"id": msg, "model": "claude-opus-4", "role": "assistant",
                        "content": [block], "usage": {"input_tokens": 5, "output_tokens": 7}}}),
                );
                if let Some(l) = logical {
                    r["logicalParentUuid"] = l.into();
                }
                out.push(r);
                first_reply.get_or_insert(uuid.clone());
                last = Some(uuid);
            }
            // (A subagent is run by a call: turn 1's first step makes one.)
            let runs_subagent = s.variant.is_some() && t == 0 && k == 0;
            if calls || cut_here || runs_subagent {
                let call = format!("toolu_{t}_{k}");
                let uuid = format!("a{t}_{k}_call");
                let task = runs_subagent && !cut_here;
                out.push(rec(
                    "assistant",
                    uuid.clone(),
                    last.clone(),
                    ts(),
                    json!({"message": {"id": msg, "model": "claude-opus-4", "role": "assistant",
                        "content": [{"type": "tool_use", "id": call,
                            "name": if task { "Task" } else { "Bash" },
                            "input": {"command": format!("ls {t} {k}")}}]}}),
                ));
                last = Some(uuid.clone());
                if cut_here {
                    break;
                }
                out.push(
                    json!({"type": "progress", "uuid": format!("p{t}_{k}"), "parentUuid": uuid,
                    "timestamp": ts(), "sessionId": SID, "data": {"type": "bash_progress"}}),
                );
                let r = format!("r{t}_{k}");
                let mut result = rec(
                    "user",
                    r.clone(),
                    Some(uuid),
                    ts(),
                    json!({"message": {"role": "user", "content": [{"type": "tool_result",
                        "tool_use_id": call, "content": format!("out {t}.{k}")}]}}),
                );
                if task {
                    result["toolUseResult"] = json!({"agentId": SUBAGENT, "status": "completed"});
                }
                out.push(result);
                last = Some(r);
            }
            if turn.compacts && k == 0 {
                let c = format!("c{t}");
                let mut r = rec(
                    "system",
                    c.clone(),
                    None,
                    ts(),
                    json!({"subtype": "compact_boundary",
                        "compactMetadata": {"trigger": "auto", "preTokens": 1000}}),
                );
                r["logicalParentUuid"] = last.clone().into();
                out.push(r);
                let cs = format!("cs{t}");
                out.push(rec(
                    "user",
                    cs.clone(),
                    Some(c),
                    ts(),
                    json!({"isCompactSummary": true,
                        "message": {"role": "user", "content": "Summary of the conversation"}}),
                ));
                last = Some(cs);
            }
        }
        if s.cut_off && t + 1 == turns {
            // Cut off: no end.
        } else if turn.interrupts {
            let e = format!("i{t}");
            out.push(rec(
                "user",
                e.clone(),
                last.clone(),
                ts(),
                json!({"message": {"role": "user",
                    "content": [{"type": "text", "text": "[Request interrupted by user]"}]}}),
            ));
            last = Some(e);
        } else if s.ends {
            let e = format!("e{t}");
            out.push(rec(
                "system",
                e.clone(),
                last.clone(),
                ts(),
                json!({"subtype": "turn_duration", "durationMs": 1200}),
            ));
            last = Some(e);
        }
    }
    out
}

/// The subagent a script's `Task` call runs.
const SUBAGENT: &str = "a1b2c3";

/// A Claude Code transcript as a subagent's: its records on the side
/// chain, named by the agent, their ids its own.
fn as_subagent(lines: Vec<Value>) -> Vec<Value> {
    lines
        .into_iter()
        .map(|mut r| {
            for k in ["uuid", "parentUuid", "logicalParentUuid", "messageId"] {
                if let Some(v) = r[k].as_str() {
                    r[k] = format!("s-{v}").into();
                }
            }
            if let Some(id) = r["message"]["id"].as_str() {
                r["message"]["id"] = format!("s-{id}").into();
            }
            if let Some(blocks) = r["message"]["content"].as_array_mut() {
                for b in blocks {
                    for k in ["id", "tool_use_id"] {
                        if let Some(v) = b[k].as_str() {
                            b[k] = format!("s-{v}").into();
                        }
                    }
                }
            }
            if r.get("sessionId").is_some() {
                r["isSidechain"] = true.into();
                r["agentId"] = SUBAGENT.into();
            }
            r
        })
        .collect()
}

/// A Codex rollout in the format before `session_meta`: a header line,
/// then the items bare (no events, no turn contexts, no times), with
/// `record_type: state` lines between.
fn as_legacy_codex(lines: Vec<Value>) -> Vec<Value> {
    let mut out = vec![json!({"id": SID, "timestamp": "2026-11-02T09:00:00.000Z",
        "instructions": null, "git": {"branch": "main"}})];
    for r in lines.into_iter().filter(|r| r["type"] == "response_item") {
        let user = r["payload"]["role"] == "user";
        out.push(r["payload"].clone());
        if user {
            out.push(json!({"record_type": "state"}));
        }
    }
    out
}

/// The script as a Codex rollout (rewinds and compactions have no Codex
/// shape here: a compaction is a `compacted` record).
fn codex(s: &Script) -> Vec<Value> {
    let mut out = Vec::new();
    let mut n = 0u32;
    let mut rec = |kind: &str, payload: Value| {
        n += 1;
        json!({"timestamp": format!("2026-11-02T09:{:02}:{:02}.000Z", n / 60, n % 60),
            "type": kind, "payload": payload})
    };
    out.push(rec(
        "session_meta",
        json!({"id": SID, "cwd": "/home/me/proj", "originator": "codex_cli_rs"}),
    ));
    let turns = s.turns.len();
    for (t, turn) in s.turns.iter().enumerate() {
        let tid = format!("turn-{t}");
        let last = t + 1 == turns;
        out.push(rec(
            "event_msg",
            json!({"type": "task_started", "turn_id": tid}),
        ));
        out.push(rec(
            "response_item",
            json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}),
        ));
        out.push(rec(
            "turn_context",
            json!({"turn_id": tid, "cwd": "/home/me/proj", "model": "gpt-5-codex"}),
        ));
        let text = format!("task {t}");
        out.push(rec(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
        ));
        out.push(rec(
            "event_msg",
            json!({"type": "user_message", "message": text}),
        ));
        for (k, &(blocks, calls)) in turn.steps.iter().enumerate() {
            for _ in 1..blocks {
                out.push(rec(
                    "response_item",
                    json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}]}),
                ));
            }
            let cut_here = s.cut_off && last && k + 1 == turn.steps.len();
            if calls || cut_here {
                let call = format!("call_{t}_{k}");
                out.push(rec(
                    "response_item",
                    json!({"type": "function_call", "name": "shell", "call_id": call,
                        "arguments": "{\"command\":[\"ls\"]}"}),
                ));
                if cut_here {
                    break;
                }
                out.push(rec(
                    "response_item",
                    json!({"type": "function_call_output", "call_id": call, "output": format!("out {t}.{k}")}),
                ));
            }
            if turn.compacts && k == 0 {
                out.push(rec("compacted", json!({"message": "summary so far"})));
            }
            let say = format!("reply {t}.{k}");
            out.push(rec(
                "event_msg",
                json!({"type": "agent_message", "message": say}),
            ));
            out.push(rec(
                "response_item",
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": say}]}),
            ));
        }
        out.push(rec(
            "event_msg",
            json!({"type": "token_count", "info": {"total_token_usage": {"total_tokens": 100 * (t + 1)}}}),
        ));
        if s.cut_off && last {
            // Cut off: no end.
        } else if turn.interrupts {
            out.push(rec(
                "event_msg",
                json!({"type": "turn_aborted", "turn_id": tid, "reason": "interrupted"}),
            ));
        } else if s.ends {
            out.push(rec(
                "event_msg",
                json!({"type": "task_complete", "turn_id": tid}),
            ));
        }
    }
    out
}

/// Everything a session is, as bytes to compare: node files, refs, every
/// commit, the turn kept pending (as `show` gives it).
pub(crate) fn state_of(env: &TestEnv, session: &str) -> Vec<String> {
    let dir = env.session_dir(session);
    let mut out = Vec::new();
    // (Not a temp file a killed process left: no part of the record.)
    for f in env
        .history_files(session)
        .into_iter()
        .filter(|f| !f.starts_with(".gs-tmp-"))
    {
        out.push(f.clone());
        out.push(std::fs::read_to_string(dir.join("history").join(&f)).unwrap());
    }
    out.push(env.git(
        session,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    ));
    out.push(env.git(session, &["symbolic-ref", "HEAD"]));
    out.push(env.git(session, &["log", "--all", "--format=%H %T %ad %s"]));
    out.push(env.ok(&["--json", "show", session]));
    out
}

/// A conversation's transcript files, the parent's first (a subagent's
/// second, where it goes below the parent's directory), as bytes.
struct Files {
    main: Vec<u8>,
    sub: Option<(String, Vec<u8>)>,
}

impl Files {
    /// Writes each file cut at the share of it that `cut` is of the main
    /// one up to the line with the subagent's result (a file cut to
    /// nothing is not there yet); the main file's path.
    fn write(&self, dir: &std::path::Path, cut: usize) -> std::path::PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let main = dir.join(format!("{SID}.jsonl"));
        std::fs::write(&main, &self.main[..cut]).unwrap();
        if let Some((rel, bytes)) = &self.sub {
            // As a subagent runs: its transcript written whole before the
            // parent's line with its result ends.
            let result = find(&self.main, b"\"toolUseResult\"").unwrap_or(self.main.len());
            let returned = result
                + find(&self.main[result..], b"\n").map_or(self.main.len() - result, |n| n + 1);
            let n = bytes.len() * cut.min(returned) / returned;
            if n > 0 {
                let p = dir.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, &bytes[..n]).unwrap();
            }
        }
        main
    }
}

/// Run `git-session hook AGENT` with `event` on stdin.
pub(crate) fn hook(env: &TestEnv, agent: &str, event: &Value) -> std::process::Output {
    crate::import::hook_with(env, &["hook", agent], event)
}

/// Feed `files` cut at `cuts` (of the main file) through imports of their
/// directory or through the hooks (a subagent's transcript at its
/// `SubagentStop`), then compare with one import of each whole file, both
/// ended (`finish`) or both not (a subagent is over once the parent holds
/// its result, either way).
fn live_equals_replay(
    agent: &str,
    session: &str,
    files: &Files,
    cuts: &[usize],
    hooks: bool,
    finish: bool,
) -> Result<(), TestCaseError> {
    let env = TestEnv::new();
    let dir = env.tmp.path().join("proj");
    let sub_session = format!("claude-{SID}-{SUBAGENT}");
    let sessions: Vec<&str> = match files.sub {
        Some(_) => vec![session, &sub_session],
        None => vec![session],
    };
    let step = |cut: usize, last: bool| {
        let file = files.write(&dir, cut);
        let end = last && finish;
        let mut outs = Vec::new();
        if hooks {
            if let Some((rel, _)) = files.sub.as_ref().filter(|_| last) {
                outs.push(hook(
                    &env,
                    agent,
                    &json!({"session_id": SID, "transcript_path": file,
                        "agent_id": SUBAGENT, "agent_transcript_path": dir.join(rel),
                        "hook_event_name": "SubagentStop"}),
                ));
            }
            let name = if end {
                "SessionEnd"
            } else if cut.is_multiple_of(2) {
                "PostToolUse"
            } else {
                "Stop"
            };
            outs.push(hook(
                &env,
                agent,
                &json!({"session_id": SID, "transcript_path": file, "hook_event_name": name}),
            ));
        } else {
            let mut args = vec!["import", agent, dir.to_str().unwrap()];
            if end {
                args.push("--finish");
            }
            outs.push(env.run(&args));
        }
        for out in outs {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let log = env.state().join("git-session-hooks.log");
        assert!(
            !log.exists(),
            "{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    };
    for (i, &cut) in cuts.iter().enumerate() {
        step(cut, false);
        for s in sessions
            .iter()
            .filter(|s| i % 2 == 0 && env.session_dir(s).is_dir())
        {
            // Every step leaves a session git and `verify` find whole.
            let fsck = env.git_in(&env.session_dir(s), &["fsck", "--strict", "--no-progress"]);
            prop_assert!(
                fsck.status.success(),
                "{}",
                String::from_utf8_lossy(&fsck.stderr)
            );
            let v = env.run(&["verify", s]);
            prop_assert!(
                v.status.success(),
                "{}{}",
                String::from_utf8_lossy(&v.stdout),
                String::from_utf8_lossy(&v.stderr)
            );
        }
    }
    step(files.main.len(), true);
    let one = TestEnv::new();
    let whole = one.tmp.path().join("proj");
    let main = files.write(&whole, files.main.len());
    let import = |path: &std::path::Path, finish: bool| {
        let mut args = vec!["import", agent, path.to_str().unwrap()];
        if finish {
            args.push("--finish");
        }
        one.ok(&args);
    };
    import(&main, finish);
    if let Some((rel, _)) = &files.sub {
        import(&whole.join(rel), finish);
    }
    for s in sessions {
        prop_assert_eq!(state_of(&env, s), state_of(&one, s));
        // Clean once a turn is committed (meta.json goes with the first).
        if env.git(s, &["rev-list", "--count", "HEAD"]).trim() != "1" {
            env.assert_clean(s);
        }
        let v = env.run(&["verify", s]);
        prop_assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn text(lines: &[Value]) -> Vec<u8> {
    let mut s = String::new();
    for l in lines {
        s.push_str(&l.to_string());
        s.push('\n');
    }
    s.into_bytes()
}

/// Byte positions to cut at (anywhere: a torn last line too).
fn cuts(len: usize, picks: &[u16]) -> Vec<usize> {
    let mut c: Vec<usize> = picks
        .iter()
        .map(|&p| 1 + (p as usize * (len - 1)) / u16::MAX as usize)
        .collect();
    c.sort_unstable();
    c.dedup();
    c
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_claude_code_session_built_live_is_the_one_an_import_of_the_whole_makes(
        s in script(),
        picks in proptest::collection::vec(any::<u16>(), 1..7),
        hooks in any::<bool>(),
        finish in any::<bool>(),
    ) {
        let main = text(&claude(&s));
        let sub = s.variant.map(|newer| {
            let mut inner = s.clone();
            inner.variant = None;
            inner.turns.truncate(1);
            let rel = match newer {
                true => format!("{SID}/subagents/agent-{SUBAGENT}.jsonl"),
                false => format!("agent-{SUBAGENT}.jsonl"),
            };
            (rel, text(&as_subagent(claude(&inner))))
        });
        let cuts = cuts(main.len(), &picks);
        let session = format!("claude-{SID}");
        live_equals_replay("claude-code", &session, &Files { main, sub }, &cuts, hooks, finish)?;
    }

    #[test]
    fn a_codex_session_built_live_is_the_one_an_import_of_the_whole_makes(
        s in script(),
        picks in proptest::collection::vec(any::<u16>(), 1..7),
        hooks in any::<bool>(),
        finish in any::<bool>(),
    ) {
        let lines = match s.variant {
            Some(_) => as_legacy_codex(codex(&s)),
            None => codex(&s),
        };
        let main = text(&lines);
        let cuts = cuts(main.len(), &picks);
        let session = format!("codex-{SID}");
        live_equals_replay("codex", &session, &Files { main, sub: None }, &cuts, hooks, finish)?;
    }
}
