//! The JSON contract (issue 20): every record a test sees is checked against
//! the schema `git-session schema` prints (generated from the record types,
//! as git-session-json(7) is). `TestEnv::run` checks every command's stdout;
//! the batch tests check each answer.

use std::sync::OnceLock;

use serde_json::Value;

use crate::env::TestEnv;

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(git_session::out::records::schema)
}

/// Every line of `stdout` that is a record (`{"type", "data"}`) matches the
/// schema; a line that is not JSON, or not a record, is not one.
pub fn check_stdout(context: &str, stdout: &[u8]) {
    let Ok(text) = std::str::from_utf8(stdout) else {
        return;
    };
    for line in text.lines() {
        if !line.starts_with("{\"type\":") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Err(e) = check(&v) {
            panic!("{context}: a record does not match `git-session schema`: {e}\n{line}");
        }
    }
}

/// One record against the schema.
pub fn check(record: &Value) -> Result<(), String> {
    let s = schema();
    let kind = record["type"].as_str().ok_or("no `type`")?;
    // The alternative for this kind: one error message that says what is
    // wrong in it, rather than "none of 35 matched".
    let alt = s["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["properties"]["type"]["const"] == kind)
        .ok_or_else(|| format!("no record kind `{kind}` in the schema"))?;
    validate(alt, record, "$", s)
}

/// A validator for the part of JSON Schema the generated schema uses:
/// `$ref`, `type`, `properties`, `required`, `additionalProperties`,
/// `items`, `const`, `oneOf`, `anyOf`, `minimum`, `maximum`.
fn validate(schema: &Value, v: &Value, at: &str, root: &Value) -> Result<(), String> {
    let Some(obj) = schema.as_object() else {
        return match schema {
            Value::Bool(true) => Ok(()),
            _ => Err(format!("{at}: nothing is allowed here")),
        };
    };
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").ok_or(format!("{at}: ref {r}"))?;
        let def = &root["$defs"][name];
        assert!(!def.is_null(), "the schema has no definition {name}");
        validate(def, v, at, root)?;
    }
    if let Some(t) = obj.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.iter().any(|t| is_type(v, t)) {
            return Err(format!("{at}: {v} is not {}", types.join(" or ")));
        }
    }
    if let Some(c) = obj.get("const")
        && c != v
    {
        return Err(format!("{at}: {v} is not {c}"));
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = obj.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{at}: {n} < {min}"));
        }
        if let Some(max) = obj.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{at}: {n} > {max}"));
        }
    }
    for (key, pick) in [("oneOf", 1usize), ("anyOf", 0)] {
        if let Some(alts) = obj.get(key).and_then(Value::as_array) {
            let errors: Vec<String> = alts
                .iter()
                .filter_map(|a| validate(a, v, at, root).err())
                .collect();
            let matched = alts.len() - errors.len();
            let ok = if pick == 1 {
                matched == 1
            } else {
                matched >= 1
            };
            if !ok {
                return Err(format!(
                    "{at}: {matched} of {key} matched ({})",
                    errors.join("; ")
                ));
            }
        }
    }
    if let Some(items) = obj.get("items")
        && let Some(a) = v.as_array()
    {
        for (i, x) in a.iter().enumerate() {
            validate(items, x, &format!("{at}[{i}]"), root)?;
        }
    }
    if let Some(o) = v.as_object() {
        let props = obj.get("properties").and_then(Value::as_object);
        for req in obj
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let req = req.as_str().unwrap();
            if !o.contains_key(req) {
                return Err(format!("{at}: `{req}` is missing"));
            }
        }
        for (k, x) in o {
            let path = format!("{at}.{k}");
            match props.and_then(|p| p.get(k)) {
                Some(p) => validate(p, x, &path, root)?,
                None => match obj.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        return Err(format!("{at}: `{k}` is not in the schema"));
                    }
                    Some(extra) => validate(extra, x, &path, root)?,
                    None => {}
                },
            }
        }
    }
    Ok(())
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

#[test]
fn the_validator_refuses_what_the_schema_does_not_say() {
    let ok = serde_json::json!({"type": "exit", "data": {"code": 0}});
    check(&ok).unwrap();
    for bad in [
        serde_json::json!({"type": "exit", "data": {"code": "0"}}),
        serde_json::json!({"type": "exit", "data": {}}),
        serde_json::json!({"type": "exit", "data": {"code": 0, "extra": 1}}),
        serde_json::json!({"type": "exit", "data": {"code": -1}}),
        serde_json::json!({"type": "no_such_kind", "data": {}}),
        serde_json::json!({"type": "finding", "data": {"session": null, "kind": "k",
            "severity": "bad", "path": "/", "message": "", "fix": "", "fixable": false}}),
        serde_json::json!({"type": "turn_committed", "data": {"session": "s", "commit": "c",
            "parent": null, "turn": 1, "branch": "main", "new_branch": false,
            "first_seq": 1, "last_seq": 2, "nodes": 2, "commit_extra": {}}}),
    ] {
        assert!(check(&bad).is_err(), "accepted: {bad}");
    }
}

#[test]
fn the_schema_and_the_page_name_every_record_kind() {
    let env = TestEnv::new();
    let text = env.ok(&["schema"]);
    let printed: Value = serde_json::from_str(&text).expect("the schema is JSON");
    assert_eq!(&printed, schema());
    let page = env.ok(&["man", "json"]);
    let kinds: Vec<&str> = printed["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(kinds.len() >= 30, "{kinds:?}");
    for k in &kinds {
        assert!(
            page.contains(&format!(".SS {}\n", k.replace('-', "\\-"))),
            "git-session-json(7) has no section for `{k}`"
        );
    }
    // Every field of every record is described on the page.
    for field in [
        "first_seq",
        "time_rfc3339",
        "created_at_rfc3339",
        "session_commit",
    ] {
        assert!(page.contains(&format!("\\fI{field}\\fR")), "{field}");
    }
}

/// The records a full tour of the commands prints all match (most are
/// checked through `TestEnv::run` anyway; this one makes sure every kind
/// a test can reach shows up at least once).
#[test]
fn every_command_prints_records_the_schema_describes() {
    let env = TestEnv::new();
    let project = env.tmp.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    env.python_repo(&project);
    let p = project.to_str().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let mut json = |args: &[&str]| {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let out = env.run(&a);
        for l in String::from_utf8_lossy(&out.stdout).lines() {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}"));
            check(&v).unwrap_or_else(|e| panic!("{args:?}: {e}\n{l}"));
            seen.insert(v["type"].as_str().unwrap().to_string());
        }
    };
    json(&["init", "s1"]);
    json(&["project", "add", p, "--name", "proj", "--auto-commit"]);
    json(&["project", "bind", "s1", "proj"]);
    json(&["begin-turn", "s1"]);
    std::fs::write(project.join("a.txt"), "agent wrote this\n").unwrap();
    json(&["append", "s1", "--id", "u1", "--text", "hello"]);
    json(&[
        "append", "s1", "--role", "llm", "--id", "a1", "--text", "hi",
    ]);
    json(&[
        "append", "s1", "--role", "code", "--name", "read", "--text", "ok",
    ]);
    json(&["commit-turn", "s1"]);
    json(&[
        "append",
        "s1",
        "--predecessor",
        "ROOT",
        "--id",
        "u2",
        "--text",
        "again",
    ]);
    json(&["commit-turn", "s1"]);
    json(&["log", "s1", "--all"]);
    json(&["show", "s1"]);
    json(&["branch", "s1"]);
    json(&["checkout", "s1", "a1"]);
    json(&["title", "s1"]);
    json(&["update", "s1", "--pin"]);
    json(&["list"]);
    json(&["project", "list"]);
    json(&["project", "show", "proj"]);
    json(&["project", "log", "proj"]);
    json(&["nodes", "s1", "--after-seq", "1"]);
    json(&["cat", "s1", "u1"]);
    json(&["feed"]);
    json(&["grep", "hello"]);
    // A node no commit holds: a finding, then something to backfill.
    json(&["append", "s1", "--id", "u3", "--text", "late"]);
    json(&["verify", "--all", "--stats"]);
    json(&["backfill", "--all", "--dry-run"]);
    json(&["backfill", "--all"]);
    json(&["recover"]);
    json(&["gc-shells", "--dry-run"]);
    json(&["migrate", "--dry-run"]);
    json(&["init", "s2"]);
    json(&["delete", "s2", "--yes"]);
    json(&["append", "nope", "--text", "x"]);
    json(&["no-such-command"]);
    let moved = env.tmp.path().join("moved");
    std::fs::rename(&project, &moved).unwrap();
    json(&["relocate", "proj", moved.to_str().unwrap()]);
    json(&["project", "remove", "proj"]);
    for kind in [
        "initialized",
        "project",
        "bound",
        "baseline",
        "node_appended",
        "turn_committed",
        "project_commit",
        "commit",
        "node",
        "branch",
        "checkout",
        "title",
        "session_updated",
        "session",
        "agent_commit",
        "session_node",
        "hit",
        "finding",
        "stats",
        "verify_summary",
        "backfill_plan",
        "backfill_summary",
        "session_deleted",
        "error",
        "relocate_node",
        "relocated",
        "project_removed",
    ] {
        assert!(seen.contains(kind), "no `{kind}` record seen: {seen:?}");
    }
}
