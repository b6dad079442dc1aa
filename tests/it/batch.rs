//! `batch` (issue 20): one process, many requests, the same answers as the
//! one-shot commands; concurrent with other writers; killed mid-stream.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use crate::env::TestEnv;

/// One request: argv and standard input.
pub(crate) struct Req {
    argv: Vec<String>,
    stdin: String,
}

pub(crate) fn req(argv: &[&str]) -> Req {
    Req {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        stdin: String::new(),
    }
}

/// The requests of the comparison: every subcommand that prints records,
/// errors included, several hundred in all. Ids are given, so both runs
/// make the same nodes. `transcript`: a Claude Code transcript to import.
fn requests(project: &Path, transcript: &Path, remote: &Path) -> Vec<Req> {
    let p = project.to_str().unwrap();
    let url = remote.to_str().unwrap();
    let t = transcript.to_str().unwrap();
    let mut r = vec![
        req(&["init", "s1", "--title", "First"]),
        req(&["init", "s2"]),
        req(&["project", "add", p, "--name", "proj"]),
        req(&["project", "list"]),
        req(&["project", "show", "proj"]),
        req(&["project", "set", "proj", "--status", "paused"]),
        req(&["init", "b1", "--project", "proj"]),
    ];
    for t in 0..60 {
        let (u, a) = (format!("u{t}"), format!("a{t}"));
        r.push(req(&[
            "append",
            "s1",
            "--id",
            &u,
            "--text",
            &format!("question {t}"),
        ]));
        r.push(Req {
            argv: [
                "append",
                "s1",
                "--role",
                "assistant",
                "--id",
                &a,
                "--file",
                "-",
            ]
            .map(String::from)
            .into(),
            stdin: format!("answer {t}\nsecond line"),
        });
        if t % 3 == 0 {
            r.push(req(&[
                "append",
                "s1",
                "--role",
                "tool",
                "--name",
                "read",
                "--id",
                &format!("t{t}"),
                "--input",
                "{\"path\": \"a.rs\"}",
                "--text",
                "ok",
            ]));
        }
        r.push(req(&["commit-turn", "s1", "--duration", "1.5"]));
        if t % 10 == 5 {
            r.push(req(&["log", "s1", "-n", "3"]));
            r.push(req(&["branch", "s1"]));
            r.push(req(&["list"]));
            r.push(req(&["show", "s1", "--at", "2"]));
        }
    }
    r.extend([
        Req {
            argv: ["append", "s2", "--json-node"].map(String::from).into(),
            stdin: r#"{"id": "j1", "role": "user", "output": "from json"}"#.into(),
        },
        req(&["commit-turn", "s2"]),
        req(&["update", "s2", "--pin", "--title", "Second"]),
        req(&["archive", "s2"]),
        req(&["unarchive", "s2"]),
        req(&["title", "s1"]),
        req(&["checkout", "s1", "3"]),
        req(&["append", "s1", "--id", "retry1", "--text", "a retry"]),
        req(&["commit-turn", "s1"]),
        req(&["checkout", "s1", "main"]),
        req(&[
            "append",
            "s1",
            "--role",
            "assistant",
            "--predecessor",
            "u59",
            "--id",
            "regen",
            "--text",
            "again",
        ]),
        req(&["commit-turn", "s1"]),
        req(&["begin-turn", "s1"]),
        req(&["update", "s1", "--status", "idle"]),
        req(&["append", "b1", "--id", "bu1", "--text", "bound"]),
        req(&["commit-turn", "b1"]),
        req(&["import", "claude-code", "--dry-run", t]),
        // The hook's event is the request's `stdin`, never the requests
        // after it.
        Req {
            argv: ["hook", "claude-code"].map(String::from).into(),
            stdin: json!({"session_id": "s", "transcript_path": t, "hook_event_name": "Stop"})
                .to_string(),
        },
        req(&["import", "claude-code", t]),
        req(&[
            "hook",
            "install",
            "claude-code",
            "--project",
            p,
            "--dry-run",
        ]),
        req(&["backfill", "--all"]),
        req(&["verify", "--all", "--stats"]),
        req(&["migrate", "--dry-run"]),
        req(&["recover"]),
        req(&["gc-shells", "--dry-run"]),
        req(&["project", "log", "proj"]),
        // An answer longer than the output batch holds back (64 KiB): it
        // leaves in several writes, whole and in order.
        Req {
            argv: [
                "append", "s1", "--role", "tool", "--name", "read", "--id", "big", "--file", "-",
            ]
            .map(String::from)
            .into(),
            stdin: "a long tool output line\n".repeat(6000),
        },
        req(&["commit-turn", "s1"]),
        req(&["show", "s1"]),
        req(&["show", "nope"]),
        req(&["append", "s1", "--txt", "x"]),
        req(&["append", "s1", "--id", "u1", "--text", "duplicate"]),
        req(&["append", "s1", "--input", "{bad", "--text", "x"]),
        req(&["checkout", "s1", "99"]),
        req(&["delete", "s2"]),
        req(&["delete", "s2", "--yes"]),
        req(&["list", "--include-archived"]),
        // The read layer.
        req(&["nodes", "s1"]),
        req(&["cat", "s1", "u7"]),
        req(&["cat", "s1", "nope"]),
        req(&["feed"]),
        req(&["grep", "question 4"]),
        req(&["grep", "("]),
        req(&["schema"]),
        // Remote sync, to a bare repository made afresh for each run.
        req(&["remote", "add", "origin", url]),
        req(&["remote", "list"]),
        req(&["push", "origin"]),
        req(&["push", "origin"]),
        req(&["fetch", "origin"]),
        req(&["clone", url]),
        req(&["remote", "remove", "origin"]),
        req(&["push", "nowhere"]),
        req(&["completions", "bash"]),
        req(&["man"]),
        req(&["verify", "s1"]),
        // Last: its record node has a fresh id (so the commits differ).
        req(&["relocate", "proj", p]),
    ]);
    r
}

/// Records with the run's own paths and timings taken out (the two runs
/// differ only there).
fn normal(recs: Vec<Value>, env: &TestEnv) -> Vec<Value> {
    let tmp = env.tmp.path().to_string_lossy().into_owned();
    recs.into_iter()
        .map(|r| {
            let mut v: Value = serde_json::from_str(&r.to_string().replace(&tmp, "<tmp>")).unwrap();
            if let Some(d) = v["data"].as_object_mut() {
                d.remove("seconds");
            }
            v
        })
        .collect()
}

pub(crate) fn spawn_batch(env: &TestEnv) -> Child {
    env.cmd()
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn line(r: &Req) -> String {
    json!({"argv": r.argv, "stdin": r.stdin}).to_string()
}

#[test]
fn a_batch_answers_request_by_request_as_the_commands_do() {
    let project = std::env::temp_dir().join(format!("gs-batch-{}", std::process::id()));
    let claude = tempfile::tempdir().unwrap();
    let transcript = crate::import::Transcript::two_turns().write(claude.path(), "");
    let remote = project.with_extension("remote");
    let fresh = || {
        for d in [&project, &remote] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir_all(d).unwrap();
        }
        let made = std::process::Command::new("git")
            .args(["init", "-q", "--bare"])
            .arg(&remote)
            .status()
            .unwrap();
        assert!(made.success());
    };
    // In one batch process.
    fresh();
    let a = TestEnv::new();
    let reqs = requests(&project, &transcript, &remote);
    assert!(reqs.len() > 250, "{}", reqs.len());
    let mut child = spawn_batch(&a);
    // Written on a thread of its own: the answers are read meanwhile (a
    // writer that waited for its last request to be taken before reading
    // would deadlock with a batch waiting for its answers to be read).
    let mut stdin = child.stdin.take().unwrap();
    let lines: Vec<String> = reqs.iter().map(line).collect();
    let writer = std::thread::spawn(move || {
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
    });
    let out = crate::env::wait_output(child, &"the batch of the comparison");
    writer.join().unwrap();
    let mut answers: Vec<(Vec<Value>, i64)> = Vec::new();
    let mut cur = Vec::new();
    for l in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        if v["type"] == "exit" {
            answers.push((
                std::mem::take(&mut cur),
                v["data"]["code"].as_i64().unwrap(),
            ));
        } else {
            cur.push(v);
        }
    }
    assert_eq!(answers.len(), reqs.len(), "one closing record per request");
    // The read layer and sync do their work here, not only fail alike.
    for want in [
        &["nodes", "s1"][..],
        &["cat", "s1", "u7"],
        &["feed"],
        &["grep", "question 4"],
        &["push", "origin"],
        &["fetch", "origin"],
        &["hook", "claude-code"],
    ] {
        let (i, _) = reqs
            .iter()
            .enumerate()
            .find(|(_, r)| r.argv == want)
            .unwrap();
        assert_eq!(answers[i].1, 0, "{want:?}: {:?}", answers[i].0);
        assert!(!answers[i].0.is_empty() || want[0] == "hook", "{want:?}");
    }
    assert_eq!(
        out.status.code(),
        Some(2),
        "the last failure's code (`man`)"
    );
    // The same requests one by one.
    fresh();
    let b = TestEnv::new();
    for (i, r) in reqs.iter().enumerate() {
        let mut c = b.cmd();
        c.arg("--json")
            .args(&r.argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        c.stderr(Stdio::null());
        let mut ch = c.spawn().unwrap();
        ch.stdin
            .take()
            .unwrap()
            .write_all(r.stdin.as_bytes())
            .unwrap();
        let o = ch.wait_with_output().unwrap();
        if ["man", "completions", "schema"].contains(&r.argv[0].as_str()) {
            // Refused in batch (each prints a page, a script or a schema, no
            // records).
            assert_eq!(answers[i].1, 2);
            continue;
        }
        let recs: Vec<Value> = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("request {i} {:?}: {e}: {l:.300}", r.argv))
            })
            .collect();
        let code = o.status.code().unwrap() as i64;
        let (brecs, bcode) = &answers[i];
        if r.argv[0] == "relocate" {
            assert_eq!(*bcode, code);
            let kinds = |v: &[Value]| v.iter().map(|r| r["type"].clone()).collect::<Vec<_>>();
            assert_eq!(kinds(brecs), kinds(&recs));
            continue;
        }
        assert_eq!(*bcode, code, "request {i} {:?}: exit codes", r.argv);
        assert_eq!(
            normal(brecs.clone(), &a),
            normal(recs, &b),
            "request {i} {:?}: records",
            r.argv
        );
    }
    for env in [&a, &b] {
        env.assert_clean("s1");
        assert!(!env.state().join("git-session-hooks.log").exists());
        env.assert_clean(crate::import::SESSION);
        let v = env.run(&["verify", "--all"]);
        assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    }
    let _ = std::fs::remove_dir_all(&project);
    let _ = std::fs::remove_dir_all(&remote);
}

/// Send one request and read its answer up to the closing record.
pub(crate) fn ask(stdin: &mut impl Write, out: &mut impl BufRead, r: &Req) -> (Vec<Value>, i64) {
    writeln!(stdin, "{}", line(r)).unwrap();
    stdin.flush().unwrap();
    answer_of(out)
}

#[test]
fn two_batches_and_one_shots_on_one_session_lose_nothing() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let run = |tag: &'static str| {
        let env = &env;
        move || {
            let mut child = spawn_batch(env);
            let mut stdin = child.stdin.take().unwrap();
            let mut out = BufReader::new(child.stdout.take().unwrap());
            let mut acked = Vec::new();
            for i in 0..40 {
                let id = format!("{tag}{i}");
                let (_, code) = ask(
                    &mut stdin,
                    &mut out,
                    &req(&["append", "s1", "--id", &id, "--text", &id]),
                );
                assert_eq!(code, 0);
                acked.push(id);
                if i % 7 == 0 {
                    let (recs, code) = ask(&mut stdin, &mut out, &req(&["commit-turn", "s1"]));
                    assert_eq!(code, 0, "{recs:?}");
                }
            }
            drop(stdin);
            assert!(child.wait().unwrap().success());
            acked
        }
    };
    let acked: Vec<String> = std::thread::scope(|s| {
        let a = s.spawn(run("a"));
        let b = s.spawn(run("b"));
        let c = s.spawn(|| {
            let mut acked = Vec::new();
            for i in 0..30 {
                let id = format!("c{i}");
                env.ok(&["append", "s1", "--id", &id, "--text", &id]);
                acked.push(id);
                if i % 5 == 0 {
                    env.ok(&["commit-turn", "s1"]);
                }
            }
            acked
        });
        [a.join().unwrap(), b.join().unwrap(), c.join().unwrap()].concat()
    });
    env.ok(&["commit-turn", "s1"]);
    let files = env.history_files("s1");
    for id in &acked {
        assert!(
            files.iter().any(|f| f.ends_with(&format!("-{id}.json"))),
            "{id} lost"
        );
    }
    assert_eq!(files.len(), acked.len());
    env.assert_clean("s1");
    assert_eq!(env.ok(&["verify", "--all"]), "");
}

#[test]
fn a_killed_batch_loses_no_acknowledged_node() {
    let mut env = TestEnv::new();
    env.fsync = true;
    env.ok(&["init", "s1"]);
    let mut child = spawn_batch(&env);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut acked = Vec::new();
    for i in 0..30 {
        let id = format!("k{i}");
        let (recs, code) = ask(
            &mut stdin,
            &mut out,
            &req(&["append", "s1", "--id", &id, "--text", &id]),
        );
        assert_eq!(code, 0, "{recs:?}");
        acked.push(id);
        if i == 12 {
            ask(&mut stdin, &mut out, &req(&["commit-turn", "s1"]));
        }
    }
    // One more request on its way, then kill -9.
    writeln!(stdin, "{}", line(&req(&["commit-turn", "s1"]))).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    env.ok(&["recover", "--older-than", "1000d"]);
    env.ok(&["commit-turn", "s1"]);
    let files = env.history_files("s1");
    for id in &acked {
        assert!(
            files.iter().any(|f| f.ends_with(&format!("-{id}.json"))),
            "{id} lost"
        );
    }
    env.assert_clean("s1");
    let out = env.run(&["verify", "--all", "--fix"]);
    assert!(out.status.success());
    assert_eq!(env.ok(&["verify", "--all"]), "");
}

/// The resident size of process `pid`, in KiB: now (`VmRSS`), or its
/// peak since it started its program (`VmHWM`; a child's `ru_maxrss` would
/// count its parent's memory up to the `exec`).
#[cfg(target_os = "linux")]
fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[cfg(target_os = "linux")]
fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS")
}

/// What a request holds is freed when it ends: a batch process asked to
/// list, grep and feed hundreds of times stays the size it was. `list`
/// used to keep every index row it read, as a one-shot process about to
/// exit may (about 100 KiB a request here).
#[test]
#[cfg(target_os = "linux")]
fn a_long_batch_keeps_nothing_from_one_request_to_the_next() {
    let env = TestEnv::new();
    let mut child = spawn_batch(&env);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let title = "a title of some length, as people give them ".repeat(4);
    for i in 0..100 {
        let id = format!("s{i}");
        let (recs, code) = ask(
            &mut stdin,
            &mut out,
            &req(&["init", &id, "--title", &title]),
        );
        assert_eq!(code, 0, "{recs:?}");
    }
    for argv in [&["list", "--limit", "1"][..], &["grep", "zzz"], &["feed"]] {
        let r = req(argv);
        for _ in 0..20 {
            ask(&mut stdin, &mut out, &r);
        }
        let before = rss_kib(child.id());
        for _ in 0..200 {
            ask(&mut stdin, &mut out, &r);
        }
        let after = rss_kib(child.id());
        assert!(
            after < before + 4096,
            "{argv:?}: {before} KiB before 200 requests, {after} KiB after"
        );
    }
    // (The batch's exit code is grep's: no match.)
    drop(stdin);
    child.wait().unwrap();
}

/// Each answer, its records and its `exit` record, leaves in one write: a
/// caller waiting on it wakes once. Seen through a sequenced-packet socket
/// as the batch's stdout, where every write is one message.
#[test]
fn each_answer_leaves_in_one_write() {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.ok(&["init", "s2"]);
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let rc = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0, fds.as_mut_ptr()) };
    assert_eq!(rc, 0, "socketpair");
    // SAFETY: both descriptors were just made and are owned here alone.
    let (mine, theirs) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut child = env
        .cmd()
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(theirs))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let requests = [
        // node_appended, exit
        req(&["append", "s1", "--text", "hi"]),
        // turn_committed, exit
        req(&["commit-turn", "s1"]),
        // a stats record a session, the summary, exit
        req(&["verify", "--all", "--stats"]),
        // error, exit
        req(&["show", "nope"]),
        // refused before it runs: error, exit
        req(&["man"]),
        // session records, exit
        req(&["list"]),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for r in &requests {
        writeln!(stdin, "{}", line(r)).unwrap();
    }
    drop(stdin);
    let mut sock = std::fs::File::from(mine);
    let mut messages = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = sock.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        messages.push(String::from_utf8(buf[..n].to_vec()).unwrap());
        if messages.len() == requests.len() {
            break;
        }
    }
    assert!(child.wait().unwrap().code() == Some(2));
    assert_eq!(messages.len(), requests.len(), "{messages:#?}");
    for (m, r) in messages.iter().zip(&requests) {
        let recs: Vec<Value> = m
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(m.ends_with('\n'), "{m}");
        assert!(recs.len() >= 2, "{:?}: {m}", r.argv);
        assert_eq!(recs.last().unwrap()["type"], "exit", "{:?}: {m}", r.argv);
        assert!(
            recs[..recs.len() - 1].iter().all(|v| v["type"] != "exit"),
            "{m}"
        );
    }
}

/// Read the answers a batch sends until its `exit` record: the records
/// before it, and its code.
fn answer_of(out: &mut impl BufRead) -> (Vec<Value>, i64) {
    let mut recs = Vec::new();
    loop {
        let mut l = String::new();
        assert!(out.read_line(&mut l).unwrap() > 0, "the batch ended early");
        let v: Value = serde_json::from_str(&l).unwrap();
        crate::records::check(&v).unwrap_or_else(|e| panic!("{e}\n{l}"));
        if v["type"] == "exit" {
            return (recs, v["data"]["code"].as_i64().unwrap());
        }
        recs.push(v);
    }
}

/// A line that is no request gets an error record and the batch goes on;
/// one longer than a request can be (192 MiB) is dropped once it passes
/// that limit, and the rest of it as it is read: never parsed, never held
/// whole.
#[test]
#[cfg(target_os = "linux")]
fn lines_that_are_no_request_are_refused_one_by_one_and_a_huge_one_dropped_as_read() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let mut child = spawn_batch(&env);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let refused = |out: &mut BufReader<_>, says: &str| {
        let (recs, code) = answer_of(out);
        assert_eq!(code, 2, "{recs:?}");
        assert_eq!(recs.len(), 1, "{recs:?}");
        assert_eq!(recs[0]["data"]["code"], "git_session::batch::request");
        let message = recs[0]["data"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    };
    stdin.write_all(b"not json\n").unwrap();
    refused(&mut out, "not JSON");
    stdin.write_all(b"{\"argv\": [\"list\", 1]}\n").unwrap();
    refused(&mut out, "array of strings");
    stdin.write_all(b"[\"list\"]\xff\n").unwrap();
    refused(&mut out, "not UTF-8");
    // 320 MiB of text in one request, written a MiB at a time.
    stdin
        .write_all(b"{\"argv\": [\"append\", \"s1\", \"--text\", \"")
        .unwrap();
    let mib = vec![b'x'; 1 << 20];
    for _ in 0..320 {
        stdin.write_all(&mib).unwrap();
    }
    stdin.write_all(b"\"]}\n").unwrap();
    refused(&mut out, "over the limit of 201326592; skipped");
    // A blank line is no request; a CRLF line is one; the last line needs
    // no newline.
    stdin
        .write_all(b"\n{\"argv\": [\"append\", \"s1\", \"--id\", \"n1\", \"--text\", \"hi\"]}\r\n")
        .unwrap();
    let (recs, code) = answer_of(&mut out);
    assert_eq!((code, recs[0]["data"]["id"].as_str()), (0, Some("n1")));
    let peak = status_kib(child.id(), "VmHWM");
    stdin
        .write_all(b"[\"append\", \"s1\", \"--id\", \"n2\", \"--text\", \"end\"]")
        .unwrap();
    drop(stdin);
    let (recs, code) = answer_of(&mut out);
    assert_eq!((code, recs[0]["data"]["id"].as_str()), (0, Some("n2")));
    // The batch's exit code is the last failure's.
    assert_eq!(child.wait().unwrap().code(), Some(2));
    // At most the limit's worth of it: neither the whole line (320 MiB)
    // nor its parse (the old reader held both, over 900 MiB).
    assert!(peak < 240 * 1024, "peak {peak} KiB");
    assert_eq!(env.history_files("s1").len(), 2);
    env.ok(&["commit-turn", "s1"]);
    env.ok(&["verify", "s1"]);
}

/// What prints no records (help, version, a page, a script, the schema,
/// another batch) is refused as the parser reads the request, not by a
/// look at its words: a value that looks like a flag (`--text -V`) gets the
/// one-shot command's own answer, and a global option's value that is a
/// command's name (`--state-dir help`) is a value.
#[test]
fn requests_that_print_no_records_are_refused_as_parsed_not_by_their_words() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    let mut child = spawn_batch(&env);
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    for argv in [
        &["--help"][..],
        &["append", "--help"],
        &["list", "-h"],
        &["help", "list"],
        &["help"],
        &["--version"],
        &["-q", "man"],
        &["completions", "bash"],
        &["schema"],
        &["batch"],
    ] {
        let (recs, code) = ask(&mut stdin, &mut out, &req(argv));
        assert_eq!(code, 2, "{argv:?}: {recs:?}");
        assert_eq!(recs.len(), 1, "{argv:?}: {recs:?}");
        assert_eq!(recs[0]["data"]["code"], "git_session::batch::request");
        let message = recs[0]["data"]["message"].as_str().unwrap();
        assert!(
            message.ends_with("prints no records: not in batch"),
            "{message}"
        );
    }
    let (recs, code) = ask(&mut stdin, &mut out, &req(&[]));
    assert_eq!(code, 2);
    assert_eq!(
        recs[0]["data"]["message"],
        "bad request: `argv` is empty: it names no command"
    );
    // As the one-shot command answers it.
    let argv = ["append", "s1", "--text", "-V"];
    let (recs, code) = ask(&mut stdin, &mut out, &req(&argv));
    let one = env.run(&[&["--json"][..], &argv].concat());
    let one_recs: Vec<Value> = String::from_utf8(one.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        (code, &recs),
        (one.status.code().unwrap() as i64, &one_recs)
    );
    assert_eq!(recs[0]["data"]["code"], "git_session::usage::parse");
    let other = env.tmp.path().join("help");
    let (recs, code) = ask(
        &mut stdin,
        &mut out,
        &req(&["--state-dir", other.to_str().unwrap(), "init", "h1"]),
    );
    assert_eq!((code, recs[0]["type"].as_str()), (0, Some("initialized")));
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(2));
    assert!(other.join("sessions").join("h1").is_dir());
}

/// Input that cannot be read (here a directory) ends the batch with one
/// error record and exit 128; it used to answer the same error for ever.
#[test]
fn a_batch_whose_input_cannot_be_read_stops_with_one_error() {
    use std::io::Read;
    let env = TestEnv::new();
    let dir = std::fs::File::open(env.tmp.path()).unwrap();
    let mut child = env
        .cmd()
        .arg("batch")
        .stdin(Stdio::from(dir))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // At most a MiB: the old loop wrote without end.
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.take(1 << 20).read_to_string(&mut text).unwrap();
        text
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the batch did not stop on input it cannot read");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128));
    let text = reader.join().unwrap();
    let recs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2, "{text}");
    assert_eq!(recs[0]["type"], "error");
    assert_eq!(recs[0]["data"]["code"], "git_session::io");
    assert_eq!(recs[1], json!({"type": "exit", "data": {"code": 128}}));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("cannot read requests from"), "{err}");
}

/// A batch passed its outer `--state-dir` on to each request as a lossy
/// string: under a state dir whose path is not UTF-8, every request wrote
/// into another directory (its name with U+FFFD), made for the purpose,
/// while one-shot commands wrote into the one given. The path is now
/// passed on as it is.
#[test]
fn a_batch_writes_into_the_state_dir_it_was_given_whatever_its_name() {
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let state = env.tmp.path().join(std::ffi::OsStr::from_bytes(b"st\xe9"));
    let mut c = std::process::Command::new(crate::env::BIN);
    env.isolate(&mut c);
    let mut child = c
        .arg("--state-dir")
        .arg(&state)
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"argv": ["append", "s1", "--create", "--text", "hi"]}}"#
    )
    .unwrap();
    drop(stdin);
    let out = crate::env::wait_within(child, &"batch", std::time::Duration::from_secs(30));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(state.join("sessions/s1/meta.json").is_file());
    let made: Vec<_> = std::fs::read_dir(env.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.as_bytes().starts_with(b"st"))
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
}
