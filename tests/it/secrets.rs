//! Secrets never leave the machine by accident (issue 54): the scanner,
//! push protection, the allow-list. Every secret here is synthetic: made
//! from a fixed seed in the shape of a rule, never a real one.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::env::TestEnv;
use crate::sync::{bare_remote, records, remote_refs, settled};

/// Characters from a fixed xorshift sequence: random-looking, the same on
/// every run.
struct Synthetic(u64);

impl Synthetic {
    fn chars(&mut self, n: usize, alphabet: &str) -> String {
        let a: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                a[(self.0 % a.len() as u64) as usize]
            })
            .collect()
    }
}

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const DIGITS: &str = "0123456789";

/// One synthetic secret of each shape the issue names: (rule, secret, the
/// text it is said in).
fn shapes() -> Vec<(&'static str, String, String)> {
    let mut r = Synthetic(0x5eed_1234_abcd_0042);
    let mut v = Vec::new();
    let aws = format!("AKIA{}", r.chars(16, &format!("{UPPER}234567")));
    v.push((
        "aws-access-token",
        aws.clone(),
        format!("aws_access_key_id = {aws}\n"),
    ));
    let ghp = format!("ghp_{}", r.chars(36, ALNUM));
    v.push((
        "github-pat",
        ghp.clone(),
        format!("git remote set-url origin with {ghp} now"),
    ));
    let glpat = format!("glpat-{}", r.chars(20, ALNUM));
    v.push(("gitlab-pat", glpat.clone(), format!("token: {glpat}")));
    let openai = format!(
        "sk-proj-{}T3BlbkFJ{}",
        r.chars(58, ALNUM),
        r.chars(58, ALNUM)
    );
    v.push((
        "openai-api-key",
        openai.clone(),
        format!("OPENAI_API_KEY={openai}\n"),
    ));
    let anthropic = format!("sk-ant-api03-{}AA", r.chars(93, ALNUM));
    v.push((
        "anthropic-api-key",
        anthropic.clone(),
        format!("export ANTHROPIC_API_KEY=\"{anthropic}\""),
    ));
    let slack = format!(
        "xoxb-{}-{}-{}",
        r.chars(12, DIGITS),
        r.chars(12, DIGITS),
        r.chars(24, ALNUM)
    );
    v.push((
        "slack-bot-token",
        slack.clone(),
        format!("SLACK_BOT_TOKEN {slack}"),
    ));
    let body: String = (0..6).map(|_| r.chars(64, ALNUM) + "\n").collect();
    let key = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----");
    v.push(("private-key", key.clone(), format!("cat id_rsa\n{key}\n")));
    let jwt = format!(
        "eyJ{}.eyJ{}.{}",
        r.chars(30, ALNUM),
        r.chars(40, ALNUM),
        r.chars(43, ALNUM)
    );
    v.push(("jwt", jwt.clone(), format!("Authorization: Bearer {jwt}\n")));
    let password = r.chars(18, ALNUM);
    v.push((
        "credentialed-url",
        password.clone(),
        format!("DATABASE_URL=postgres://app:{password}@db.internal:5432/app"),
    ));
    let assigned = r.chars(28, ALNUM);
    v.push((
        "generic-api-key",
        assigned.clone(),
        format!("db_password = \"{assigned}\"\n"),
    ));
    v
}

/// Append a whole node given as JSON.
fn append_json(env: &TestEnv, session: &str, node: &Value) {
    let mut c = env.cmd();
    c.args(["append", session, "--json-node"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(node.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A turn that says `text` in a user message's output, a tool call's
/// input and a reply's metadata.
fn turn_holding(env: &TestEnv, session: &str, text: &str) {
    env.append(session, &["--text", text]);
    let reply = env.append(session, &["--role", "assistant", "--text", "let me look"]);
    env.append(
        session,
        &[
            "--role",
            "tool",
            "--name",
            "bash",
            "--caller",
            &reply,
            "--input",
            &json!({"command": text}).to_string(),
            "--text",
            "done",
        ],
    );
    append_json(
        env,
        session,
        &json!({"role": "llm", "output": "noted", "metadata": {"env": {"SEEN": text}}}),
    );
    env.ok(&["commit-turn", session]);
}

fn scan(env: &TestEnv, args: &[&str]) -> (Vec<Value>, String, i32) {
    let mut a = vec!["--json", "secrets", "scan"];
    a.extend_from_slice(args);
    let out = env.run(&a);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    (records(&stdout, "secret"), all, out.status.code().unwrap())
}

/// Every object of a git directory, as bytes (loose and packed).
fn all_object_bytes(env: &TestEnv, dir: &Path) -> Vec<u8> {
    let out = env.git_in(dir, &["cat-file", "--batch-all-objects", "--batch"]);
    assert!(out.status.success());
    out.stdout
}

#[test]
fn every_rule_shape_is_found_in_output_input_and_metadata_and_never_shown() {
    let env = TestEnv::new();
    let shapes = shapes();
    for (i, (_, _, text)) in shapes.iter().enumerate() {
        let s = format!("s{i}");
        env.ok(&["init", &s]);
        turn_holding(&env, &s, text);
    }
    let (found, printed, code) = scan(&env, &["--all"]);
    assert_eq!(code, 1, "secrets found: exit 1\n{printed}");
    for (i, (rule, secret, _)) in shapes.iter().enumerate() {
        let s = format!("s{i}");
        let mine: Vec<&Value> = found
            .iter()
            .filter(|f| f["session"] == s.as_str())
            .collect();
        for field in ["output", "input.command", "metadata.env.SEEN"] {
            assert!(
                mine.iter()
                    .any(|f| f["field"] == field && f["rule"] == *rule && f["node"].is_string()),
                "{rule} in {field}: {mine:#?}"
            );
        }
        // The same value has the same fingerprint in every node (the
        // title holds a cut of the first message: another value).
        let fps: std::collections::BTreeSet<&str> = mine
            .iter()
            .filter(|f| f["rule"] == *rule && f["node"].is_string())
            .map(|f| f["fingerprint"].as_str().unwrap())
            .collect();
        assert_eq!(fps.len(), 1, "{rule}: {fps:?} {mine:#?}");
        assert!(
            !printed.contains(secret.as_str()),
            "{rule}: the secret itself was printed"
        );
        for f in &mine {
            let masked = f["masked"].as_str().unwrap();
            assert!(
                masked.contains('…') && masked.len() < secret.len(),
                "{masked}"
            );
        }
    }
    // A second run (another process) names them by the same fingerprints.
    let (again, _, _) = scan(&env, &["s0"]);
    let first: Vec<&Value> = found.iter().filter(|f| f["session"] == "s0").collect();
    assert_eq!(again.iter().collect::<Vec<_>>(), first);
    for i in 0..shapes.len() {
        env.assert_clean(&format!("s{i}"));
    }
}

#[test]
fn scan_reads_what_is_not_committed_yet_and_attachment_files() {
    let env = TestEnv::new();
    let shapes = shapes();
    env.ok(&["init", "s1"]);
    env.turn("s1", "nothing to see", &[]);
    let (found, _, code) = scan(&env, &["s1"]);
    assert_eq!((found.len(), code), (0, 0), "{found:#?}");
    let file = env.tmp.path().join("env.txt");
    std::fs::write(&file, format!("HOME=/root\n{}", shapes[0].2)).unwrap();
    env.append(
        "s1",
        &[
            "--text",
            "here is my env",
            "--attach",
            file.to_str().unwrap(),
        ],
    );
    env.append("s1", &["--role", "assistant", "--text", &shapes[1].2]);
    let (found, printed, code) = scan(&env, &["s1"]);
    assert_eq!(code, 1, "{printed}");
    assert!(
        found
            .iter()
            .any(|f| f["path"] == "workdir/attachments/env.txt"
                && f["rule"] == "aws-access-token"
                && f["node"].is_null()),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|f| f["rule"] == "github-pat" && f["field"] == "output"),
        "{found:#?}"
    );
}

#[test]
fn push_sends_clean_sessions_and_withholds_the_one_holding_a_secret() {
    let env = TestEnv::new();
    let (remote, url) = bare_remote(&env, "remote.git");
    let shapes = shapes();
    env.ok(&["init", "clean"]);
    env.turn("clean", "a question", &["read"]);
    env.ok(&["init", "leaky"]);
    env.turn("leaky", "first, nothing secret", &[]);
    env.ok(&["remote", "add", "origin", &url]);
    env.ok(&["push"]);
    let before = env.git_ok(&remote, &["rev-parse", "refs/sessions/ky/leaky/heads/main"]);
    // Later turns: one holds two secrets.
    env.turn("clean", "another question", &[]);
    turn_holding(&env, "leaky", &format!("{}\n{}", shapes[3].2, shapes[4].2));
    let planned = env.run(&["--json", "push", "--dry-run"]);
    let planned = String::from_utf8_lossy(&planned.stdout).into_owned();
    assert_eq!(
        records(&planned, "push_summary")[0]["withheld"][0]["session"],
        "leaky",
        "a dry run says what would be withheld: {planned}"
    );
    let out = env.run(&["--json", "push"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let summary = &records(&stdout, "push_summary")[0];
    assert_eq!(
        summary["withheld"].as_array().unwrap().len(),
        1,
        "{summary}"
    );
    let found = records(&stdout, "secret");
    // The commit's subject quotes the first words: a cut copy, found too.
    assert!(
        found
            .iter()
            .any(|f| f["path"].as_str().unwrap().starts_with("commit ")),
        "{found:#?}"
    );
    let rules: std::collections::BTreeSet<&str> = found
        .iter()
        .filter(|f| f["node"].is_string())
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        ["anthropic-api-key", "openai-api-key"]
            .into_iter()
            .collect(),
        "{found:#?}"
    );
    assert!(stderr.contains("session `leaky` not pushed"), "{stderr}");
    // The clean session went; nothing of the leaky one's new turn did.
    let pushed = records(&stdout, "pushed_ref");
    assert!(
        pushed.iter().all(|r| r["session"] == "clean"),
        "{pushed:#?}"
    );
    assert_eq!(
        env.git_ok(&remote, &["rev-parse", "refs/sessions/ky/leaky/heads/main"]),
        before
    );
    assert_eq!(
        env.git_ok(&remote, &["rev-parse", "refs/sessions/an/clean/heads/main"]),
        env.git("clean", &["rev-parse", "main"])
    );
    let objects = all_object_bytes(&env, &remote);
    for (_, secret, _) in &shapes[3..5] {
        assert!(
            !objects
                .windows(secret.len())
                .any(|w| w == secret.as_bytes()),
            "the remote holds a secret"
        );
    }
    // Let one through on the command line: the other still holds it back.
    let fps: Vec<String> = found
        .iter()
        .map(|f| f["fingerprint"].as_str().unwrap().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let out = env.run(&["--json", "push", "--allow", &fps[0]]);
    assert_eq!(out.status.code(), Some(1));
    let objects = all_object_bytes(&env, &remote);
    for (_, secret, _) in &shapes[3..5] {
        assert!(
            !objects
                .windows(secret.len())
                .any(|w| w == secret.as_bytes())
        );
    }
    // All, through the allow-list file: sent.
    let mut allow = vec!["secrets", "allow"];
    allow.extend(fps.iter().map(String::as_str));
    allow.extend(["--note", "test keys"]);
    env.ok(&allow);
    let listed = std::fs::read_to_string(env.state().join("secrets-allow")).unwrap();
    assert!(
        listed.contains(&format!("{}  # test keys", fps[0])),
        "{listed}"
    );
    let out = env.ok(&["--json", "push"]);
    assert!(
        records(&out, "push_summary")[0]["withheld"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        env.git_ok(&remote, &["rev-parse", "refs/sessions/ky/leaky/heads/main"]),
        env.git("leaky", &["rev-parse", "main"])
    );
    let (found, _, code) = scan(&env, &["leaky"]);
    assert_eq!(code, 0, "allowed findings are no problem");
    assert!(found.iter().all(|f| f["allowed"] == true), "{found:#?}");
    assert!(remote_refs(&env, &remote).len() >= 2);
    settled(&[&env], &remote);
}

#[test]
fn an_allow_list_that_is_not_fingerprints_is_refused() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    std::fs::write(
        env.state().join("secrets-allow"),
        "sk-live-not-a-fingerprint\n",
    )
    .unwrap();
    let err = env.fails(&["secrets", "scan"], 2);
    assert!(err.contains("secrets::bad_fingerprint"), "{err}");
    let (_, url) = bare_remote(&env, "remote.git");
    env.ok(&["remote", "add", "origin", &url]);
    let err = env.fails(&["push", "--allow", "xyz"], 2);
    assert!(err.contains("is not a fingerprint"), "{err}");
}

#[test]
fn the_real_transcripts_hold_no_secret() {
    // Measured false positives: none in the public transcripts (3 Claude
    // Code, 4 Codex sessions, 3.8 MB), every rule applied.
    let env = TestEnv::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
    for (agent, dir) in [("claude-code", "claude"), ("codex", "codex")] {
        env.ok(&["import", agent, root.join(dir).to_str().unwrap()]);
    }
    let (found, printed, code) = scan(&env, &["--all"]);
    assert_eq!((found.len(), code), (0, 0), "{printed}");
    let summary = records(&printed, "secrets_summary");
    assert!(summary[0]["sessions"].as_u64().unwrap() >= 5, "{printed}");
}

/// Whether any byte of the state dir holds `secret`: every file, and every
/// object of every repository in it (uncompressed).
fn state_holds(env: &TestEnv, secret: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in walkdir::WalkDir::new(env.state()).into_iter().flatten() {
        if e.file_type().is_dir() && e.file_name() == ".git" {
            let bytes = all_object_bytes(env, e.path());
            if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                found.push(format!("objects of {}", e.path().display()));
            }
        }
        if e.file_type().is_file() {
            let bytes = std::fs::read(e.path()).unwrap();
            if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                found.push(e.path().display().to_string());
            }
        }
    }
    found
}

#[test]
fn redact_on_write_stores_no_secret_from_append_batch_import_or_hooks() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.state()).unwrap();
    std::fs::write(
        env.state().join("git-session.json"),
        r#"{"redact": "on-write"}"#,
    )
    .unwrap();
    let shapes = shapes();
    // append: output, a tool's input, metadata, an attachment.
    env.ok(&["init", "s1"]);
    turn_holding(&env, "s1", &shapes[0].2);
    let file = env.tmp.path().join("env.txt");
    std::fs::write(&file, &shapes[1].2).unwrap();
    env.append(
        "s1",
        &["--text", "my env", "--attach", file.to_str().unwrap()],
    );
    env.ok(&["commit-turn", "s1"]);
    // batch.
    env.batch(&[
        ["append", "s2", "--create", "--text", &shapes[2].2]
            .map(String::from)
            .to_vec(),
        ["commit-turn", "s2"].map(String::from).to_vec(),
    ]);
    // import, then a hook on the same transcript as it grows.
    let mut t = crate::import::Transcript::default();
    t.user("u1", None, &shapes[3].2).reply(
        "a1",
        "u1",
        "msg_1",
        json!({"type": "text", "text": format!("I see {}", shapes[4].1)}),
    );
    let path = t.write(env.tmp.path(), "");
    env.ok(&["import", "claude-code", path.to_str().unwrap()]);
    t.user("u2", Some("a1"), &shapes[5].2).reply(
        "a2",
        "u2",
        "msg_2",
        json!({"type": "text", "text": "ok"}),
    );
    t.write(env.tmp.path(), "");
    let out = crate::import::hook_with(
        &env,
        &["hook", "claude-code"],
        &json!({"hook_event_name": "Stop", "session_id": "11111111-2222-3333-4444-555555555555",
            "transcript_path": path, "cwd": "/home/me/proj"}),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The turn still open is closed by a finished import; one more adds
    // nothing: the redacted records are the ones kept.
    env.ok(&["import", "claude-code", "--finish", path.to_str().unwrap()]);
    let again = env.ok(&[
        "--json",
        "import",
        "claude-code",
        "--finish",
        path.to_str().unwrap(),
    ]);
    assert_eq!(records(&again, "imported")[0]["nodes"], 0, "{again}");
    let sessions = env.ok(&["list"]);
    assert_eq!(sessions.lines().count(), 3, "{sessions}");
    for (rule, secret, _) in &shapes[..6] {
        assert!(
            state_holds(&env, secret).is_empty(),
            "{rule}: {:?}",
            state_holds(&env, secret)
        );
    }
    let texts = env.ok(&["--json", "nodes", crate::import::SESSION]);
    assert!(
        texts.contains(&format!("[REDACTED:{}:", shapes[3].0)),
        "{texts}"
    );
    assert!(
        texts.contains(&format!("[REDACTED:{}:", shapes[5].0)),
        "{texts}\n{again}"
    );
    let (found, printed, code) = scan(&env, &["--all"]);
    assert_eq!((found.len(), code), (0, 0), "{printed}");
    for s in ["s1", "s2", crate::import::SESSION] {
        env.assert_clean(s);
    }
    env.ok(&["verify", "--all"]);
}

/// Whether the objects `rev-list --objects <revs>` names in `dir` hold
/// `secret` (commits' messages, trees, blobs).
fn reachable_holds(env: &TestEnv, dir: &Path, revs: &[&str], secret: &str) -> bool {
    let mut args = vec!["rev-list", "--objects"];
    args.extend_from_slice(revs);
    let list = env.git_ok(dir, &args);
    let ids: String = list
        .lines()
        .filter_map(|l| l.split(' ').next())
        .map(|id| format!("{id}\n"))
        .collect();
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(ids.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    out.stdout
        .windows(secret.len())
        .any(|w| w == secret.as_bytes())
}

fn fetched(out: &str, session: &str) -> Value {
    records(out, "fetched")
        .into_iter()
        .find(|r| r["session"] == session)
        .unwrap_or(Value::Null)
}

#[test]
fn redact_rewrites_the_history_and_sync_replaces_every_copy() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    let shapes = shapes();
    let (secret, said) = (&shapes[4].1, &shapes[4].2);
    a.ok(&["init", "leaky"]);
    let (_, first) = a.turn("leaky", "a first question", &[]);
    // The secret in a message, a tool's input, metadata and a subject.
    turn_holding(&a, "leaky", said);
    a.turn("leaky", "and a last one", &["read"]);
    a.ok(&["remote", "add", "origin", &url]);
    // Let through by mistake: the remote has it now, and so does `b`.
    let (found, _, _) = scan(&a, &["leaky"]);
    let fp = found[0]["fingerprint"].as_str().unwrap().to_string();
    a.ok(&["push", "--allow", &fp]);
    assert!(reachable_holds(&a, &remote, &["--all"], secret));
    b.ok(&["clone", &url]);
    let dir = a.session_dir("leaky");
    assert!(reachable_holds(&a, &dir, &["--branches"], secret));
    let turns_before = a.ok(&["log", "leaky"]).lines().count();

    let out = a.ok(&["--json", "redact", "leaky"]);
    let done = &records(&out, "redacted")[0];
    assert_eq!(done["secrets"], 1, "{out}");
    assert!(!out.contains(secret.as_str()), "the secret was printed");
    let backup = done["backup"].as_str().unwrap().to_string();
    assert!(backup.starts_with("refs/redacted/"), "{backup}");
    // Nothing the branches reach holds it; the backup keeps the original.
    assert!(!reachable_holds(&a, &dir, &["--branches"], secret));
    assert!(reachable_holds(
        &a,
        &dir,
        &[&format!("{backup}main")],
        secret
    ));
    for e in walkdir::WalkDir::new(&dir).into_iter().flatten() {
        if e.file_type().is_file() && !e.path().starts_with(dir.join(".git/objects")) {
            let bytes = std::fs::read(e.path()).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds it",
                e.path().display()
            );
        }
    }
    // The same conversation: every turn, the first commit (before the
    // secret) unchanged, the record beside the turns.
    let log = a.ok(&["log", "leaky"]);
    assert_eq!(log.lines().count(), turns_before + 1, "{log}");
    assert!(log.contains(&first[..7]), "{log}");
    let nodes = a.ok(&["--json", "nodes", "leaky"]);
    let record = records(&nodes, "session_node")
        .into_iter()
        .find(|n| n["node"]["name"] == "context/redact")
        .expect("a context/redact node");
    assert_eq!(
        record["node"]["metadata"]["secrets"][0]["fingerprint"],
        fp.as_str()
    );
    assert!(nodes.contains(&format!("[REDACTED:{}:{fp}]", shapes[4].0)));
    let (left, _, code) = scan(&a, &["leaky"]);
    assert_eq!((left.len(), code), (0, 0), "{left:#?}");
    a.assert_clean("leaky");
    a.ok(&["verify", "leaky"]);
    crate::sync::fsck(&a, &dir);

    // This machine's fetch: the remote's copy is what was redacted, not a
    // divergence.
    let out = a.ok(&["--json", "fetch"]);
    assert_eq!(fetched(&out, "leaky")["outcome"], "ahead", "{out}");
    // Its push: the one forced update, of that session's ref alone.
    let out = a.ok(&["--json", "push"]);
    let sent = records(&out, "pushed_ref");
    assert_eq!(sent.len(), 1, "{out}");
    assert_eq!(sent[0]["status"], "replaced", "{out}");
    assert_eq!(
        a.git_ok(&remote, &["rev-parse", "refs/sessions/ky/leaky/heads/main"]),
        a.git("leaky", &["rev-parse", "main"])
    );
    assert!(!reachable_holds(&a, &remote, &["--all"], secret));
    // The old objects stay in the remote's store until its own gc.
    a.git_ok(
        &remote,
        &["reflog", "expire", "--expire-unreachable=now", "--all"],
    );
    a.git_ok(&remote, &["gc", "--prune=now", "--quiet"]);
    assert!(!String::from_utf8_lossy(&all_object_bytes(&a, &remote)).contains(secret.as_str()));
    crate::sync::fsck(&a, &remote);

    // The other machine takes the redaction; its history before is kept.
    let out = b.ok(&["--json", "fetch"]);
    assert_eq!(fetched(&out, "leaky")["outcome"], "redacted", "{out}");
    let bdir = b.session_dir("leaky");
    assert_eq!(
        b.git("leaky", &["rev-parse", "main"]),
        a.git("leaky", &["rev-parse", "main"])
    );
    assert!(!reachable_holds(&b, &bdir, &["--branches"], secret));
    assert_eq!(
        b.ok(&["--json", "nodes", "leaky"])
            .matches("[REDACTED:")
            .count(),
        a.ok(&["--json", "nodes", "leaky"])
            .matches("[REDACTED:")
            .count()
    );
    b.assert_clean("leaky");
    b.ok(&["verify", "--all"]);
    let (left, _, code) = scan(&b, &["leaky"]);
    assert_eq!((left.len(), code), (0, 0), "{left:#?}");
    // Both sides are one again.
    let out = b.ok(&["--json", "push"]);
    assert!(records(&out, "pushed_ref").is_empty(), "{out}");
    b.turn("leaky", "goes on from the other machine", &[]);
    b.ok(&["push"]);
    let out = a.ok(&["--json", "fetch"]);
    assert_eq!(fetched(&out, "leaky")["outcome"], "fast_forward", "{out}");

    // The backups go when asked, and the secret with them.
    for env in [&a, &b] {
        env.ok(&["redact", "leaky", "--drop-backup"]);
        let d = env.session_dir("leaky");
        assert!(
            env.git_ok(&d, &["for-each-ref", "refs/redacted/"])
                .is_empty()
        );
        assert!(
            !String::from_utf8_lossy(&all_object_bytes(env, &d)).contains(secret.as_str()),
            "objects still hold it"
        );
        env.ok(&["verify", "--all"]);
        crate::sync::fsck(env, &d);
    }
}

#[test]
fn a_forced_update_replaces_only_what_the_redaction_replaced() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (remote, url) = bare_remote(&a, "remote.git");
    let shapes = shapes();
    a.ok(&["init", "leaky"]);
    turn_holding(&a, "leaky", &shapes[1].2);
    a.ok(&["remote", "add", "origin", &url]);
    let (found, _, _) = scan(&a, &["leaky"]);
    a.ok(&["push", "--allow", found[0]["fingerprint"].as_str().unwrap()]);
    b.ok(&["clone", &url]);
    // The other machine goes on from the unredacted history first.
    b.turn("leaky", "a turn the redaction never saw", &[]);
    b.ok(&["push", "--allow", found[0]["fingerprint"].as_str().unwrap()]);
    let theirs = b.git("leaky", &["rev-parse", "main"]);
    a.ok(&["redact", "leaky"]);
    let out = a.run(&["--json", "push"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        records(&stdout, "pushed_ref")[0]["status"],
        "rejected",
        "{stdout}"
    );
    assert_eq!(
        a.git_ok(&remote, &["rev-parse", "refs/sessions/ky/leaky/heads/main"]),
        theirs,
        "the other machine's turn is not overwritten"
    );
}

#[test]
fn redact_chooses_by_rule_or_fingerprint_and_refuses_an_unknown_one() {
    let env = TestEnv::new();
    let shapes = shapes();
    env.ok(&["init", "s1"]);
    turn_holding(&env, "s1", &format!("{}\n{}", shapes[0].2, shapes[1].2));
    let err = env.fails(&["redact", "s1", "--fingerprint", "0123456789abcdef"], 2);
    assert!(err.contains("redact::no_such_finding"), "{err}");
    let planned = env.ok(&[
        "--json",
        "redact",
        "s1",
        "--rule",
        "github-pat",
        "--dry-run",
    ]);
    assert_eq!(records(&planned, "redacted")[0]["secrets"], 1, "{planned}");
    let head = env.git("s1", &["rev-parse", "HEAD"]);
    assert_eq!(
        env.git("s1", &["rev-parse", "HEAD"]),
        head,
        "a dry run changes nothing"
    );
    env.ok(&["redact", "s1", "--rule", "github-pat"]);
    let (left, _, _) = scan(&env, &["s1"]);
    let rules: std::collections::BTreeSet<&str> =
        left.iter().map(|f| f["rule"].as_str().unwrap()).collect();
    assert_eq!(
        rules,
        ["aws-access-token"].into_iter().collect(),
        "{left:#?}"
    );
    let fp = left[0]["fingerprint"].as_str().unwrap().to_string();
    env.ok(&["redact", "s1", "--fingerprint", &fp]);
    let (left, _, code) = scan(&env, &["s1"]);
    assert_eq!((left.len(), code), (0, 0));
    // Two redactions, two backups; nothing left: a third does nothing.
    let refs = env.git(
        "s1",
        &["for-each-ref", "--format=%(refname)", "refs/redacted/"],
    );
    assert_eq!(refs.lines().count(), 2, "{refs}");
    let out = env.ok(&["--json", "redact", "s1"]);
    assert_eq!(records(&out, "redacted")[0]["secrets"], 0);
    env.assert_clean("s1");
    env.ok(&["verify", "s1"]);
}

#[test]
fn commit_turn_says_when_the_turn_holds_a_secret() {
    let env = TestEnv::new();
    let shapes = shapes();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", &shapes[2].2]);
    let out = env.run(&["commit-turn", "s1"]);
    assert!(out.status.success(), "a warning, never a refusal");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds 1 secret: gitlab-pat") && err.contains("git-session redact s1"),
        "{err}"
    );
    assert!(!err.contains(shapes[2].1.as_str()));
    // The next turn is clean: nothing said (the scan is the turn's own).
    env.append("s1", &["--text", "a clean question"]);
    let out = env.run(&["commit-turn", "s1"]);
    assert!(String::from_utf8_lossy(&out.stderr).is_empty());
}

#[test]
fn a_redaction_killed_anywhere_is_finished_by_running_it_again() {
    let shapes = shapes();
    for point in ["redact-before-refs", "redact-after-refs"] {
        let env = TestEnv::new();
        env.ok(&["init", "s1"]);
        env.turn("s1", "clean first", &[]);
        turn_holding(&env, "s1", &shapes[6].2);
        env.turn("s1", "clean last", &[]);
        let old_tip = env.git("s1", &["rev-parse", "main"]).trim().to_string();
        env.crash_at(point, &["redact", "s1"]);
        env.ok(&["redact", "s1"]);
        let (left, printed, code) = scan(&env, &["s1"]);
        assert_eq!(
            (left.len(), code),
            (0, 0),
            "{point}: {printed} {}",
            env.git("s1", &["log", "--oneline", "--all"])
        );
        let dir = env.session_dir("s1");
        assert!(
            !reachable_holds(&env, &dir, &["--branches"], &shapes[6].1),
            "{point}"
        );
        let records: Vec<Value> = records(&env.ok(&["--json", "nodes", "s1"]), "session_node")
            .into_iter()
            .filter(|n| n["node"]["name"] == "context/redact")
            .collect();
        assert_eq!(records.len(), 1, "{point}: one record");
        let meta = &records[0]["node"]["metadata"];
        assert_eq!(
            meta["branches"]["main"]["old"],
            old_tip.as_str(),
            "{point}: {meta}"
        );
        assert!(meta["replaced"].get(&old_tip).is_some(), "{point}: {meta}");
        assert!(
            !env.git("s1", &["for-each-ref", "refs/redacted/"])
                .is_empty(),
            "{point}: the backup"
        );
        assert!(
            !env.session_dir("s1")
                .join(".git/git-session/redact.pending")
                .exists()
        );
        env.assert_clean("s1");
        env.ok(&["verify", "s1"]);
        crate::sync::fsck(&env, &dir);
    }
}

#[test]
fn a_secret_another_remote_has_is_still_withheld_from_this_one() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    let (_, team) = bare_remote(&a, "team.git");
    let (public, public_url) = bare_remote(&b, "public.git");
    let shapes = shapes();
    a.ok(&["init", "leaky"]);
    turn_holding(&a, "leaky", &shapes[0].2);
    a.ok(&["remote", "add", "origin", &team]);
    let (found, _, _) = scan(&a, &["leaky"]);
    let mut allow = vec!["push"];
    for f in &found {
        allow.extend(["--allow", f["fingerprint"].as_str().unwrap()]);
    }
    a.ok(&allow);
    // `b` fetched it (its transfer repository holds every object), then
    // pushes to a remote of its own.
    b.ok(&["clone", &team]);
    b.ok(&["init", "clean"]);
    b.turn("clean", "nothing secret", &[]);
    b.ok(&["remote", "add", "public", &public_url]);
    let out = b.run(&["--json", "push", "public"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        records(&stdout, "push_summary")[0]["withheld"][0]["session"],
        "leaky",
        "{stdout}"
    );
    let objects = all_object_bytes(&b, &public);
    assert!(
        !objects
            .windows(shapes[0].1.len())
            .any(|w| w == shapes[0].1.as_bytes())
    );
    assert!(
        remote_refs(&b, &public)
            .iter()
            .all(|r| !r.contains("leaky"))
    );
}

#[test]
fn a_turn_after_a_redaction_killed_past_its_refs_holds_no_secret() {
    let env = TestEnv::new();
    let shapes = shapes();
    env.ok(&["init", "s1"]);
    turn_holding(&env, "s1", &shapes[7].2);
    env.crash_at("redact-after-refs", &["redact", "s1"]);
    // Not run again: the next turn comes first.
    env.turn("s1", "the agent goes on", &[]);
    let dir = env.session_dir("s1");
    assert!(!reachable_holds(&env, &dir, &["--branches"], &shapes[7].1));
    env.ok(&["redact", "s1"]);
    let (left, printed, code) = scan(&env, &["s1"]);
    assert_eq!((left.len(), code), (0, 0), "{printed}");
    env.assert_clean("s1");
    env.ok(&["verify", "s1"]);
}

#[test]
fn a_session_withheld_for_a_secret_is_not_revived_either() {
    let env = TestEnv::new();
    let (remote, url) = bare_remote(&env, "remote.git");
    let shapes = shapes();
    env.ok(&["init", "s1"]);
    env.turn("s1", "first life", &[]);
    env.ok(&["remote", "add", "origin", &url]);
    env.ok(&["push"]);
    env.ok(&["delete", "s1", "--yes"]);
    env.ok(&["push"]);
    let tomb = "refs/tombstones/sessions/s1/s1";
    let buried = env.git_ok(&remote, &["rev-parse", tomb]);
    // Made again, with a secret: withheld, and the deletion stands there.
    env.ok(&["init", "s1"]);
    turn_holding(&env, "s1", &shapes[2].2);
    let out = env.run(&["--json", "push"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(env.git_ok(&remote, &["rev-parse", tomb]), buried);
    let objects = all_object_bytes(&env, &remote);
    assert!(
        !objects
            .windows(shapes[2].1.len())
            .any(|w| w == shapes[2].1.as_bytes())
    );
}

#[test]
fn a_journal_planted_where_redact_keeps_its_own_is_never_read_or_followed() {
    let shapes = shapes();
    for kind in ["link", "fifo"] {
        let env = TestEnv::new();
        env.ok(&["init", "s1"]);
        turn_holding(&env, "s1", &shapes[8].2);
        let at = env
            .session_dir("s1")
            .join(".git/git-session/redact.pending");
        let outside = env.tmp.path().join("forged.json");
        let forged = r#"{"replaced": {"1111111111111111111111111111111111111111": "2222222222222222222222222222222222222222"}}"#;
        crate::env::plant(kind, &at, &outside, forged.as_bytes());
        env.ok(&["redact", "s1"]);
        let nodes = env.ok(&["--json", "nodes", "s1"]);
        assert!(
            !nodes.contains("1111111111"),
            "{kind}: the forged map was read"
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), forged, "{kind}");
        let (left, _, code) = scan(&env, &["s1"]);
        assert_eq!((left.len(), code), (0, 0), "{kind}");
        env.assert_clean("s1");
    }
}
