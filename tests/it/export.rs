//! `export` (issue 53): a session as Markdown or HTML, every session as a
//! site. The pages are parsed (HTML with an HTML5 parser, Markdown with
//! pulldown-cmark), never grepped for what they should show.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag};
use scraper::{Html, Selector};
use serde_json::Value;

use crate::env::TestEnv;

/// Text no session may leak and no page may run: it must show as text.
const HOSTILE: &str = "</details><script>alert(1)</script><img src=http://evil.example/x.png>";

/// A synthetic GitHub token: the shape of one, made from a fixed seed.
fn token() -> String {
    let alnum: Vec<char> = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        .chars()
        .collect();
    let mut x: u64 = 0x0e77_0e77_5eed_0053;
    let tail: String = (0..36)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alnum[(x % alnum.len() as u64) as usize]
        })
        .collect();
    format!("ghp_{tail}")
}

/// The fixture: `s1`, bound to the auto-commit project `work`, with two
/// branches (turn 2 and a retry of it from turn 1's answer), tool calls,
/// an attachment (holding a secret), agent commits in turns 1 and 2 and a
/// skip in the retry, a relocation record, hostile text and a secret in a
/// reply; and `s2`, unbound, one turn.
struct Fixture {
    env: TestEnv,
    work: PathBuf,
    project: String,
}

fn fixture() -> Fixture {
    let env = TestEnv::new();
    let work = env.tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let git = |args: &[&str]| env.git_ok(&work, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "User"]);
    git(&["config", "user.email", "user@example.com"]);
    std::fs::write(work.join("main.rs"), "fn main() {}\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "user's first commit"]);
    let project = env
        .ok(&[
            "project",
            "add",
            work.to_str().unwrap(),
            "--auto-commit",
            "--name",
            "work",
        ])
        .trim()
        .to_string();
    env.ok(&[
        "init",
        "s1",
        "--project",
        &project,
        "--title",
        "Export <fixture> & co",
    ]);
    let notes = env.tmp.path().join("notes.txt");
    std::fs::write(&notes, format!("deploy with token {}\n", token())).unwrap();

    env.ok(&["begin-turn", "s1"]);
    std::fs::write(work.join("helper.rs"), "pub fn help() {}\n").unwrap();
    let s1 = |args: &[&str]| env.append("s1", args);
    s1(&[
        "--id",
        "u1",
        "--text",
        "Add a helper, see the notes.",
        "--attach",
        notes.to_str().unwrap(),
    ]);
    s1(&[
        "--id",
        "a1",
        "--role",
        "assistant",
        "--name",
        "m1",
        "--text",
        "Reading first.",
    ]);
    s1(&[
        "--id",
        "t1",
        "--role",
        "tool",
        "--name",
        "read",
        "--input",
        r#"{"path":"main.rs"}"#,
        "--text",
        "fn main() {}\n",
    ]);
    s1(&[
        "--id",
        "a2",
        "--role",
        "assistant",
        "--name",
        "m1",
        "--text",
        "Wrote helper.rs\nwith help().",
    ]);
    env.ok(&["commit-turn", "s1"]);

    env.ok(&["begin-turn", "s1"]);
    std::fs::write(work.join("main.rs"), "fn main() {\n    help();\n}\n").unwrap();
    s1(&["--id", "u2", "--text", "Call it from main."]);
    s1(&[
        "--id",
        "a3",
        "--role",
        "assistant",
        "--name",
        "m1",
        "--text",
        "Running it.",
    ]);
    s1(&[
        "--id",
        "t2",
        "--role",
        "tool",
        "--name",
        "run",
        "--input",
        "\"cargo run\"",
        "--text",
        HOSTILE,
    ]);
    let leak = format!("Called. Also, your token is {} and {HOSTILE}", token());
    s1(&[
        "--id",
        "a4",
        "--role",
        "assistant",
        "--name",
        "m1",
        "--text",
        &leak,
    ]);
    env.ok(&["commit-turn", "s1"]);

    // A retry of turn 2, from turn 1's answer: a second branch, on which
    // the agent changed nothing in the project.
    env.ok(&["begin-turn", "s1"]);
    s1(&[
        "--id",
        "u3",
        "--predecessor",
        "a2",
        "--text",
        "Instead, document it.",
    ]);
    s1(&[
        "--id",
        "a5",
        "--role",
        "assistant",
        "--name",
        "m1",
        "--text",
        "Documented.",
    ]);
    env.ok(&["commit-turn", "s1"]);

    let moved = env.tmp.path().join("work-moved");
    std::fs::rename(&work, &moved).unwrap();
    env.ok(&["relocate", &project, moved.to_str().unwrap()]);

    env.ok(&["init", "s2"]);
    env.turn("s2", "Is git a database?", &["read"]);
    Fixture {
        env,
        work: moved,
        project,
    }
}

/// The nodes of `session` as stored: id → node.
fn nodes(env: &TestEnv, session: &str) -> BTreeMap<String, Value> {
    env.ok(&["--json", "nodes", session])
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            let n = r["data"]["node"].clone();
            (n["id"].as_str().unwrap().to_string(), n)
        })
        .collect()
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap(),
    }
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn parse(path: &Path) -> Html {
    Html::parse_document(&std::fs::read_to_string(path).unwrap())
}

/// The text of every element `css` selects in `doc`.
fn texts(doc: &Html, css: &str) -> Vec<String> {
    doc.select(&sel(css)).map(|e| e.text().collect()).collect()
}

/// Every file under `dir`, relative.
fn files(dir: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Every `href` and `src` of every HTML page under `dir` is relative (no
/// scheme: nothing is fetched) and resolves: to a file that exists and,
/// with a fragment, to an element of that id in it. Returns how many links
/// were checked.
fn check_html_links(dir: &Path) -> usize {
    let mut checked = 0;
    for rel in files(dir).into_iter().filter(|f| f.ends_with(".html")) {
        let page = dir.join(&rel);
        let doc = parse(&page);
        assert_eq!(doc.select(&sel("script")).count(), 0, "{rel} runs a script");
        for (attr, css) in [("href", "[href]"), ("src", "[src]")] {
            for e in doc.select(&sel(css)) {
                let link = e.value().attr(attr).unwrap();
                assert!(!link.contains(':'), "{rel}: {attr}={link} names a scheme");
                let (path, frag) = link.split_once('#').unwrap_or((link, ""));
                let target = match path {
                    "" => page.clone(),
                    p => page.parent().unwrap().join(percent_decode(p)),
                };
                assert!(target.is_file(), "{rel}: {link} does not resolve");
                if !frag.is_empty() {
                    let t = parse(&target);
                    let id = sel(&format!("[id=\"{frag}\"]"));
                    assert_eq!(t.select(&id).count(), 1, "{rel}: {link}: no #{frag}");
                }
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn the_html_site_holds_every_node_and_its_links_resolve() {
    let f = fixture();
    let env = &f.env;
    let site = env.tmp.path().join("site");
    env.ok(&[
        "export",
        "--all",
        "--format",
        "html",
        "-o",
        site.to_str().unwrap(),
    ]);
    let pages = files(&site);
    for p in [
        "index.html",
        "sessions/s1/index.html",
        "sessions/s1/branch-main.html",
        "sessions/s2/index.html",
        "sessions/s1/attachments/notes.txt",
    ] {
        assert!(pages.contains(p), "{p} missing: {pages:?}");
    }
    assert!(
        pages.contains(&format!("projects/{}.html", f.project)),
        "{pages:?}"
    );

    // s1 is on the retry branch: its page shows turn 1 then the retry; the
    // main branch's page shows turn 1 then turn 2.
    let current = parse(&site.join("sessions/s1/index.html"));
    let main = parse(&site.join("sessions/s1/branch-main.html"));
    let on = |doc: &Html| -> BTreeSet<String> {
        doc.select(&sel("[id^=\"node-\"]"))
            .map(|e| {
                e.value()
                    .id()
                    .unwrap()
                    .trim_start_matches("node-")
                    .to_string()
            })
            .collect()
    };
    let stored = nodes(env, "s1");
    let everything: BTreeSet<String> = stored.keys().cloned().collect();
    let relocation: Vec<&String> = stored
        .iter()
        .filter(|(_, n)| n["name"] == "project/relocate")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(relocation.len(), 1);
    let retry_line: BTreeSet<String> = ["u1", "a1", "t1", "a2", "u3", "a5", relocation[0]]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let main_line: BTreeSet<String> = [
        "u1",
        "a1",
        "t1",
        "a2",
        "u2",
        "a3",
        "t2",
        "a4",
        relocation[0],
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(on(&current), retry_line);
    assert_eq!(on(&main), main_line);
    assert_eq!(&retry_line | &main_line, everything);

    // Every node's text, whole, in the element that shows it.
    for doc in [&current, &main] {
        for id in on(doc) {
            let n = &stored[&id];
            let el = doc
                .select(&sel(&format!("[id=\"node-{id}\"]")))
                .next()
                .unwrap();
            let shown: Vec<String> = el
                .select(&sel(".text, pre.output"))
                .map(|e| e.text().collect())
                .collect();
            let text = text_of(&n["output"]);
            if id == "a4" {
                // The secret in it is masked; the rest is there.
                assert!(shown[0].starts_with("Called. Also, your token is [REDACTED:github-pat:"));
                assert!(shown[0].ends_with(HOSTILE), "{shown:?}");
            } else if n["role"] == "llm" && text.is_empty() {
                continue;
            } else {
                assert_eq!(shown, vec![text], "node {id}");
            }
            if n["role"] == "code" && !n["input"].is_null() && id != *relocation[0] {
                let input: Vec<String> = el
                    .select(&sel("pre.input"))
                    .map(|e| e.text().collect())
                    .collect();
                assert_eq!(input, vec![text_of(&n["input"])], "node {id}");
                assert_eq!(el.value().name(), "details", "tool {id} is folded");
            }
        }
    }

    // The branch switcher: the shown branch marked, the other linked.
    let switch = |doc: &Html| -> (Vec<String>, Vec<String>) {
        (
            texts(doc, "nav.branches .branch.current"),
            doc.select(&sel("nav.branches a.branch"))
                .map(|e| e.value().attr("href").unwrap().to_string())
                .collect(),
        )
    };
    let (cur, others) = switch(&current);
    assert!(cur[0].starts_with("retry-"), "{cur:?}");
    assert_eq!(others, vec!["branch-main.html"]);
    let (cur, others) = switch(&main);
    assert!(cur[0].starts_with("main"), "{cur:?}");
    assert_eq!(others, vec!["index.html"]);

    // Turn N / M with prev and next.
    assert_eq!(texts(&main, ".turn h2"), vec!["Turn 1 / 2", "Turn 2 / 2"]);
    let hrefs = |doc: &Html, css: &str| -> Vec<String> {
        doc.select(&sel(css))
            .map(|e| e.value().attr("href").unwrap().to_string())
            .collect()
    };
    assert_eq!(hrefs(&main, "a.nav.next"), vec!["#turn-2"]);
    assert_eq!(hrefs(&main, "a.nav.prev"), vec!["#turn-1"]);

    // The agent commits: turn 1's and turn 2's as the project has them,
    // the retry's skip with its reason.
    let log = env.git_ok(&f.work, &["log", "--format=%H %s"]);
    let agent_commits: Vec<(&str, &str)> = log
        .lines()
        .filter(|l| l.contains("[agent s1]"))
        .map(|l| l.split_once(' ').unwrap())
        .collect();
    assert_eq!(agent_commits.len(), 2, "{log}");
    let agent_sel = sel(".agent.commit");
    let turn1: Vec<_> = current.select(&agent_sel).collect();
    assert_eq!(turn1.len(), 1);
    let code: String = turn1[0]
        .select(&sel("code"))
        .next()
        .unwrap()
        .value()
        .attr("title")
        .unwrap()
        .into();
    assert_eq!(code, agent_commits[1].0);
    let diff: String = turn1[0]
        .select(&sel("pre.diff"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(diff, git_show(env, &f.work, agent_commits[1].0));
    assert!(diff.contains("+pub fn help() {}"), "{diff}");
    let files_listed: Vec<String> = turn1[0]
        .select(&sel(".files li"))
        .map(|e| e.text().collect())
        .collect();
    assert_eq!(files_listed, vec!["A helper.rs"]);
    let main_boxes: Vec<_> = main.select(&agent_sel).collect();
    assert_eq!(main_boxes.len(), 2);
    let diff2: String = main_boxes[1]
        .select(&sel("pre.diff"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(diff2, git_show(env, &f.work, agent_commits[0].0));
    let skipped = texts(&current, ".agent.skipped");
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].contains("no_changes"), "{skipped:?}");

    // The relocation, shown as a record.
    let records = texts(&current, ".record .text");
    assert_eq!(records, vec![text_of(&stored[relocation[0]]["output"])]);

    // The attachment, linked to its copy (masked).
    let att: Vec<String> = current
        .select(&sel(".attachments a"))
        .map(|e| e.value().attr("href").unwrap().to_string())
        .collect();
    assert_eq!(att, vec!["attachments/notes.txt"]);

    // The index: both sessions, grouped by project; the project page
    // lists the agent commits.
    let index = parse(&site.join("index.html"));
    let groups: BTreeSet<String> = texts(&index, ".sidebar .group h2").into_iter().collect();
    assert_eq!(
        groups,
        BTreeSet::from(["No project".to_string(), "work".to_string()])
    );
    let project = parse(&site.join(format!("projects/{}.html", f.project)));
    let listed: Vec<String> = project
        .select(&sel(".agent.commit code[title]"))
        .map(|e| e.value().attr("title").unwrap().to_string())
        .collect();
    assert_eq!(listed, vec![agent_commits[0].0, agent_commits[1].0]);

    assert!(check_html_links(&site) > 20);
}

/// The diff `git show` prints of `commit` in `repo`, without its `index`
/// lines (the page names the commit, not each blob).
fn git_show(env: &TestEnv, repo: &Path, commit: &str) -> String {
    env.git_ok(repo, &["show", "--format=", commit])
        .lines()
        .filter(|l| !l.starts_with("index "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn hostile_text_is_text_and_secrets_are_masked_unless_asked() {
    let f = fixture();
    let env = &f.env;
    let site = env.tmp.path().join("site");
    env.ok(&[
        "export",
        "--all",
        "--format",
        "html",
        "-o",
        site.to_str().unwrap(),
    ]);
    let main = parse(&site.join("sessions/s1/branch-main.html"));
    assert_eq!(main.select(&sel("script, img")).count(), 0);
    let outputs = texts(&main, "pre.output");
    assert!(outputs.contains(&HOSTILE.to_string()), "{outputs:?}");
    // The title, escaped in the heading and the document's title alike.
    assert_eq!(texts(&main, "h1"), vec!["Export <fixture> & co"]);
    assert_eq!(
        texts(&main, "title"),
        vec!["Export <fixture> & co · git-session"]
    );

    let leaked = |dir: &Path| -> Vec<String> {
        files(dir)
            .into_iter()
            .filter(|f| {
                String::from_utf8_lossy(&std::fs::read(dir.join(f)).unwrap()).contains(&token())
            })
            .collect()
    };
    assert_eq!(leaked(&site), Vec::<String>::new());
    let notes = std::fs::read_to_string(site.join("sessions/s1/attachments/notes.txt")).unwrap();
    assert!(
        notes.starts_with("deploy with token [REDACTED:github-pat:"),
        "{notes}"
    );

    let open = env.tmp.path().join("open");
    let out = env.ok(&[
        "--json",
        "export",
        "--all",
        "--no-redact",
        "-o",
        open.to_str().unwrap(),
    ]);
    let rec: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (
            rec["data"]["redacted"].clone(),
            rec["data"]["masked"].clone()
        ),
        (false.into(), 0.into())
    );
    assert_eq!(
        leaked(&open),
        vec![
            "sessions/s1/attachments/notes.txt",
            "sessions/s1/branch-main.md"
        ]
    );
    // Markdown to stdout: masked too, and counted.
    let out = env.ok(&["--json", "export", "s1", "--branch", "main"]);
    let rec: Value = serde_json::from_str(out.trim()).unwrap();
    let content = rec["data"]["content"].as_str().unwrap();
    assert!(!content.contains(&token()) && content.contains("[REDACTED:github-pat:"));
    assert_eq!(rec["data"]["masked"], 1);
}

/// Markdown links of `md` (a page at `page`): each relative, resolving to
/// a file, and a fragment to an anchor `<a id=…>` of the target.
fn check_md_links(md: &str, page: Option<&Path>) -> usize {
    let mut n = 0;
    for e in Parser::new(md) {
        if let Event::Start(Tag::Link { dest_url, .. }) = e {
            assert!(!dest_url.contains(':'), "{dest_url}");
            let (path, frag) = dest_url.split_once('#').unwrap_or((&dest_url, ""));
            let target_text = match (path, page) {
                ("", _) => md.to_string(),
                (p, Some(page)) => {
                    let t = page.parent().unwrap().join(percent_decode(p));
                    assert!(t.is_file(), "{dest_url} from {}", page.display());
                    std::fs::read_to_string(&t).unwrap_or_default()
                }
                (p, None) => panic!("a link to {p} from stdout"),
            };
            if !frag.is_empty() {
                let anchor = format!("<a id=\"{frag}\">");
                let found = Parser::new(&target_text).any(
                    |e| matches!(e, Event::Html(h) | Event::InlineHtml(h) if h.trim() == anchor),
                );
                assert!(found, "no anchor {frag}");
            }
            n += 1;
        }
    }
    n
}

#[test]
fn markdown_holds_every_node_and_only_our_own_html() {
    let f = fixture();
    let env = &f.env;
    let stored = nodes(env, "s1");
    for (branch, line) in [
        (None, vec!["u1", "a1", "t1", "a2", "u3", "a5"]),
        (Some("main"), vec!["u1", "a1", "t1", "a2", "u2", "a3", "t2"]),
    ] {
        let mut args = vec!["export", "s1"];
        args.extend(branch.iter().flat_map(|b| ["--branch", b]));
        let md = env.ok(&args);
        let shown = git_session::export::markdown::rendered_text(&md);
        for id in line {
            let text = text_of(&stored[id]["output"]);
            assert!(shown.contains(&text), "{id}: {text:?} not in\n{shown}");
            if !stored[id]["input"].is_null() {
                assert!(
                    shown.contains(&text_of(&stored[id]["input"])),
                    "{id}'s input"
                );
            }
        }
        let relocation = stored
            .values()
            .find(|n| n["name"] == "project/relocate")
            .unwrap();
        assert!(shown.contains(&text_of(&relocation["output"])));
        // Raw HTML: only the page's own folds and anchors.
        for e in Parser::new(&md) {
            if let Event::Html(h) | Event::InlineHtml(h) = e {
                let h = h.trim();
                let ours = ["<details>", "</details>", "</summary>"].contains(&h)
                    || (h.starts_with("<summary>")
                        && h.ends_with("</summary>")
                        && !h[9..h.len() - 10].contains('<'))
                    || h == "</a>"
                    || (h.starts_with("<a id=\"turn-") && h.ends_with("\">"));
                assert!(ours, "raw HTML {h:?} in the page");
            }
        }
        assert!(check_md_links(&md, None) >= 2);
        assert!(md.contains("```diff\n"), "the agent commit's diff");
    }
    // The hostile reply (a4) shows its text, as text.
    let md = env.ok(&["export", "s1", "--branch", "main"]);
    let shown = git_session::export::markdown::rendered_text(&md);
    assert!(shown.contains(HOSTILE));

    let site = env.tmp.path().join("mdsite");
    env.ok(&[
        "export",
        "--all",
        "--format",
        "md",
        "-o",
        site.to_str().unwrap(),
    ]);
    let mut links = 0;
    for rel in files(&site).into_iter().filter(|f| f.ends_with(".md")) {
        let page = site.join(&rel);
        links += check_md_links(&std::fs::read_to_string(&page).unwrap(), Some(&page));
    }
    assert!(links > 10, "{links}");
}

/// mtime of `path`.
fn mtime(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

fn written(out: &str) -> (Vec<String>, Vec<String>) {
    let rec: Value = serde_json::from_str(out.trim()).unwrap();
    let list = |k: &str| -> Vec<String> {
        rec["data"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    (list("written"), list("rendered"))
}

#[test]
fn a_second_export_rewrites_only_the_session_that_changed() {
    let f = fixture();
    let env = &f.env;
    let site = env.tmp.path().join("site");
    let dir = site.to_str().unwrap();
    let (first, mut rendered) =
        written(&env.ok(&["--json", "export", "--all", "--format", "html", "-o", dir]));
    rendered.sort();
    assert_eq!(rendered, vec!["s1", "s2"]);
    assert_eq!(
        first.len(),
        files(&site).len() - 1,
        "every file but the manifest"
    );
    let before: BTreeMap<String, std::time::SystemTime> = files(&site)
        .into_iter()
        .map(|f| (f.clone(), mtime(&site.join(&f))))
        .collect();

    // Nothing changed: nothing read again, nothing written.
    let (again, rendered) =
        written(&env.ok(&["--json", "export", "--all", "--format", "html", "-o", dir]));
    assert_eq!((again, rendered), (vec![], vec![]));

    std::thread::sleep(std::time::Duration::from_millis(20));
    env.turn("s2", "And a second question?", &[]);
    let (changed, rendered) =
        written(&env.ok(&["--json", "export", "--all", "--format", "html", "-o", dir]));
    assert_eq!(rendered, vec!["s2"]);
    assert!(
        changed.contains(&"sessions/s2/index.html".to_string()),
        "{changed:?}"
    );
    for w in &changed {
        assert!(
            w.starts_with("sessions/s2/") || w == "index.html",
            "{w} rewritten"
        );
    }
    for (f, t) in &before {
        if !changed.contains(f) && f != ".git-session-export.json" {
            assert_eq!(mtime(&site.join(f)), *t, "{f} was touched");
        }
    }
    let page = parse(&site.join("sessions/s2/index.html"));
    assert_eq!(texts(&page, ".turn h2"), vec!["Turn 1 / 2", "Turn 2 / 2"]);

    // A session deleted: its pages go, and nothing else of the directory.
    std::fs::write(site.join("notes-of-mine.txt"), "mine").unwrap();
    env.ok(&["delete", "s2", "--yes"]);
    let out = env.ok(&["--json", "export", "--all", "--format", "html", "-o", dir]);
    let rec: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        rec["data"]["removed"],
        serde_json::json!(["sessions/s2/index.html"])
    );
    assert!(!site.join("sessions/s2").exists());
    assert!(site.join("notes-of-mine.txt").is_file());
}

/// The page of a session's current branch shows the line its head is on,
/// as `show` and `branch` do, also a line not committed yet (no git branch
/// names it; HEAD's branch is another).
#[test]
fn the_current_page_is_the_line_the_head_is_on() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "first question", &[]);
    env.append(
        "s1",
        &["--text", "a retry not committed", "--predecessor", "ROOT"],
    );
    let star = env.ok(&["branch", "s1"]);
    let current = star.lines().find(|l| l.starts_with('*')).unwrap();
    assert!(current.contains("(uncommitted)"), "{star}");
    assert!(env.ok(&["show", "s1"]).contains("a retry not committed"));
    let md = env.ok(&["export", "s1"]);
    assert!(md.contains("a retry not committed"), "{md}");
    assert!(md.contains("**uncommitted line ending at"), "{md}");
}

/// A link planted in the output directory (a session's directory made a
/// link to elsewhere) is refused, never written through; nor is a stale
/// page removed through one.
#[test]
fn a_link_planted_in_the_site_is_never_written_or_removed_through() {
    let f = fixture();
    let env = &f.env;
    let site = env.tmp.path().join("site");
    let dir = site.to_str().unwrap();
    env.ok(&["export", "--all", "--format", "html", "-o", dir]);
    let victim = env.tmp.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("index.html"), "not yours").unwrap();
    let s2 = site.join("sessions/s2");
    std::fs::remove_dir_all(&s2).unwrap();
    std::os::unix::fs::symlink(&victim, &s2).unwrap();
    // s2 changed: its pages would be written into the link.
    env.turn("s2", "And a second question?", &[]);
    let err = env.fails(&["export", "--all", "--format", "html", "-o", dir], 1);
    assert!(
        err.contains("sessions/s2` is a symbolic link") && err.contains("1 failed (s2)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("index.html")).unwrap(),
        "not yours"
    );
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
    // s2 deleted: its stale page is not removed through the link.
    env.ok(&["delete", "s2", "--yes"]);
    env.ok(&["export", "--all", "--format", "html", "-o", dir]);
    assert_eq!(
        std::fs::read_to_string(victim.join("index.html")).unwrap(),
        "not yours"
    );
    // A FIFO where the run's journal goes is refused, not opened (the open
    // would block).
    let fifo = site.join(".git-session-export.journal");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let err = env.fails(&["export", "--all", "--format", "html", "-o", dir], 1);
    assert!(
        err.contains("code: git_session::layout::special_file"),
        "{err}"
    );
    std::fs::remove_file(&fifo).unwrap();
    // A single page onto a link is refused too.
    let link = env.tmp.path().join("page.html");
    std::os::unix::fs::symlink(victim.join("index.html"), &link).unwrap();
    env.fails(
        &[
            "export",
            "s1",
            "--format",
            "html",
            "-o",
            link.to_str().unwrap(),
        ],
        1,
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("index.html")).unwrap(),
        "not yours"
    );
}

#[test]
fn one_session_to_a_file_with_its_attachments_beside_it() {
    let f = fixture();
    let env = &f.env;
    let out = env.tmp.path().join("out/s1.html");
    let rec = env.ok(&[
        "--json",
        "export",
        "s1",
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
    ]);
    let rec: Value = serde_json::from_str(rec.trim()).unwrap();
    assert_eq!(rec["data"]["written"].as_array().unwrap().len(), 2);
    assert!(env.tmp.path().join("out/s1_files/notes.txt").is_file());
    let doc = parse(&out);
    // The other branch is named, not linked: there is no page for it.
    assert_eq!(doc.select(&sel("nav.branches a")).count(), 0);
    assert_eq!(texts(&doc, "nav.branches .branch").len(), 2);
    assert!(check_html_links(&env.tmp.path().join("out")) >= 3);
}

#[test]
fn bad_requests_are_refused_with_their_help() {
    let f = fixture();
    let env = &f.env;
    let err = env.fails(&["export", "s9"], 1);
    assert!(
        err.contains("no session `s9`") && err.contains("session::not_found"),
        "{err}"
    );
    let err = env.fails(&["export", "--all"], 2);
    assert!(
        err.contains("-o DIR") && err.contains("usage::export_dir"),
        "{err}"
    );
    let err = env.fails(&["export", "s1", "--branch", "nope"], 1);
    assert!(err.contains("retry-") && err.contains("main"), "{err}");
    env.fails(&["export", "s1", "--all"], 2);
    let used = env.tmp.path().join("used");
    std::fs::create_dir_all(&used).unwrap();
    std::fs::write(used.join("index.html"), "mine").unwrap();
    let err = env.fails(&["export", "--all", "-o", used.to_str().unwrap()], 2);
    assert!(err.contains("holds files"), "{err}");
    assert_eq!(
        std::fs::read_to_string(used.join("index.html")).unwrap(),
        "mine"
    );
    let inside = env.state().join("site");
    env.fails(&["export", "--all", "-o", inside.to_str().unwrap()], 2);
}

/// Every file under `dir` that holds a start of `secret` (8 characters of
/// it, or of it after its `ghp_`, which Markdown writes `ghp\_`).
fn holding_a_start_of(dir: &Path, secret: &str) -> Vec<String> {
    files(dir)
        .into_iter()
        .filter(|f| {
            let text = String::from_utf8_lossy(&std::fs::read(dir.join(f)).unwrap()).into_owned();
            text.contains(&secret[..8]) || text.contains(&secret[4..12])
        })
        .collect()
}

#[test]
fn a_secret_a_title_a_preview_or_a_subject_cuts_through_is_masked_all_the_same() {
    let f = fixture();
    let env = &f.env;
    let t = token();
    // The title: the user's first line cut at 50 characters, 23 into the
    // token.
    let said = format!("please deploy with the key {t} now and more text");
    env.ok(&["append", "s3", "--create", "--text", &said]);
    env.ok(&["commit-turn", "s3"]);
    assert!(env.meta("s3")["title"].as_str().unwrap().contains(&t[..20]));
    // The preview (cut at 77) and the agent commit's subject (at 60): a
    // turn of s1 whose message has the token from its 46th character.
    env.ok(&["begin-turn", "s1"]);
    std::fs::write(f.work.join("more.rs"), "// more\n").unwrap();
    let said = format!("{}{t} and then some more", "word ".repeat(9));
    env.append("s1", &["--text", &said]);
    env.append("s1", &["--role", "assistant", "--text", "Done."]);
    env.ok(&["commit-turn", "s1"]);
    let log = env.git_ok(&f.work, &["log", "-1", "--format=%s"]);
    assert!(log.contains(&t[..10]), "{log}");

    for format in ["html", "md"] {
        let site = env.tmp.path().join(format!("site-{format}"));
        let dir = site.to_str().unwrap();
        env.ok(&["export", "--all", "--format", format, "-o", dir]);
        assert_eq!(holding_a_start_of(&site, &t), Vec::<String>::new());
        let one = env.tmp.path().join(format!("one/s3.{format}"));
        env.ok(&[
            "export",
            "s3",
            "--format",
            format,
            "-o",
            one.to_str().unwrap(),
        ]);
        env.ok(&[
            "export",
            "s1",
            "--format",
            format,
            "-o",
            one.with_file_name(format!("s1.{format}")).to_str().unwrap(),
        ]);
        assert_eq!(
            holding_a_start_of(one.parent().unwrap(), &t),
            Vec::<String>::new()
        );
    }
    let page = parse(&env.tmp.path().join("site-html/sessions/s3/index.html"));
    assert_eq!(texts(&page, "h1"), vec!["please deploy with the key…"]);
    let index = parse(&env.tmp.path().join("site-html/index.html"));
    let previews = texts(&index, ".sidebar .p");
    let cut = format!("{}…", "word ".repeat(9).trim_end());
    assert!(previews.contains(&cut), "{previews:?}");
}

/// Every file under `dir` with its bytes.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    files(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

#[test]
fn a_first_export_killed_between_pages_is_finished_by_the_next() {
    for at in ["export-session-written", "export-session-written#2"] {
        let f = fixture();
        let env = &f.env;
        let site = env.tmp.path().join("site");
        let dir = site.to_str().unwrap();
        env.crash_at(at, &["export", "--all", "--format", "html", "-o", dir]);
        let left = files(&site);
        let first = ["s1", "s2"]
            .into_iter()
            .find(|s| left.contains(&format!("sessions/{s}/index.html")))
            .unwrap_or_else(|| panic!("{at}: no session's page: {left:?}"));
        assert!(!left.contains("index.html"), "{at}: {left:?}");
        // A session deleted meanwhile: its pages, which the killed run
        // wrote, go too.
        env.ok(&["delete", first, "--yes"]);
        env.ok(&["export", "--all", "--format", "html", "-o", dir]);
        let clean = env.tmp.path().join("clean");
        env.ok(&[
            "export",
            "--all",
            "--format",
            "html",
            "-o",
            clean.to_str().unwrap(),
        ]);
        assert_eq!(files(&site), files(&clean), "{at}");
        assert!(contents(&site) == contents(&clean), "{at}");
    }
}

#[test]
fn a_compaction_shows_its_summary_folded() {
    use crate::import::{SESSION, Transcript};
    let env = TestEnv::new();
    let file = Transcript::eventful().write(env.tmp.path(), "");
    env.ok(&["import", "claude-code", "--finish", file.to_str().unwrap()]);
    let out = env.tmp.path().join("s.html");
    env.ok(&[
        "export",
        SESSION,
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc = parse(&out);
    let records = texts(&doc, ".record > .text");
    assert_eq!(
        records,
        vec!["context compacted (auto, 150000 tokens before)"]
    );
    assert_eq!(
        texts(&doc, ".record > details.summary > .summary-text"),
        vec!["Summary: fixed main.rs"]
    );
    let md = env.ok(&["export", SESSION]);
    let shown = git_session::export::markdown::rendered_text(&md);
    assert!(shown.contains("Summary: fixed main.rs"), "{md}");
    let folded = md
        .split("<summary>summary</summary>")
        .nth(1)
        .and_then(|rest| rest.split("</details>").next())
        .unwrap_or_default();
    assert!(folded.contains("Summary: fixed main.rs"), "{md}");
}

#[test]
fn where_the_user_stopped_a_tool_shows() {
    use crate::import::{SESSION, Transcript};
    let env = TestEnv::new();
    let mut t = Transcript::default();
    t.user("u1", None, "Run the tests")
        .reply(
            "a1",
            "u1",
            "msg_1",
            serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
                "input": {"command": "cargo test"}}),
        )
        .tool_result("r1", "a1", "toolu_1", "running 400 tests")
        .record(
            "user",
            "x1",
            Some("r1"),
            serde_json::json!({"message": {"role": "user", "content": [{"type": "text",
                "text": "[Request interrupted by user for tool use]"}]}}),
        );
    let file = t.write(env.tmp.path(), "");
    env.ok(&["import", "claude-code", "--finish", file.to_str().unwrap()]);
    let shown = env.ok(&["show", SESSION]);
    assert!(
        shown.contains("(stopped here: [Request interrupted by user for tool use])"),
        "{shown}"
    );
    let out = env.tmp.path().join("s.html");
    env.ok(&[
        "export",
        SESSION,
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
    ]);
    let doc = parse(&out);
    assert_eq!(texts(&doc, "details.tool .tn"), vec!["Bash"]);
    assert_eq!(
        texts(&doc, ".stopped"),
        vec!["stopped here: [Request interrupted by user for tool use]"]
    );
    let md = env.ok(&["export", SESSION]);
    let shown = git_session::export::markdown::rendered_text(&md);
    assert!(
        shown.contains("stopped here: [Request interrupted by user for tool use]"),
        "{md}"
    );
}

#[test]
fn the_turn_a_transcript_has_not_closed_is_exported_in_progress() {
    use crate::import::{SESSION, Transcript};
    let env = TestEnv::new();
    let site = env.tmp.path().join("site");
    let dir = site.to_str().unwrap();
    let page = site.join(format!("sessions/{SESSION}/index.html"));
    let export = || written(&env.ok(&["--json", "export", "--all", "--format", "html", "-o", dir]));
    let import = |t: &Transcript, finish: bool| {
        let file = t.write(env.tmp.path(), "");
        let mut args = vec!["import", "claude-code", file.to_str().unwrap()];
        if finish {
            args.push("--finish");
        }
        env.ok(&args);
    };
    let texts_of = |css: &str| texts(&parse(&page), css);

    // A first turn in progress: nothing in history/ yet.
    let mut t = Transcript::default();
    t.user("u1", None, "Fix the bug in main.rs").reply(
        "a1",
        "u1",
        "msg_1",
        serde_json::json!({"type": "text", "text": "Looking."}),
    );
    import(&t, false);
    assert!(env.ok(&["show", SESSION]).contains("in progress"));
    export();
    assert_eq!(texts_of(".turn h2"), vec!["Turn 1 / 1 (in progress)"]);
    assert_eq!(texts_of("p.in-progress").len(), 1);
    let said = texts_of(".msg .text");
    assert_eq!(said, vec!["Fix the bug in main.rs", "Looking."]);

    // It grew, still open: the session's pages are made again.
    t.reply(
        "a2",
        "a1",
        "msg_1",
        serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read",
            "input": {"file_path": "main.rs"}}),
    )
    .tool_result("r1", "a2", "toolu_1", "fn main() {}");
    import(&t, false);
    let (_, rendered) = export();
    assert_eq!(rendered, vec![SESSION]);
    assert_eq!(texts_of("details.tool pre.output"), vec!["fn main() {}"]);

    // Closed, and a second turn in progress after it.
    t.record(
        "system",
        "d1",
        Some("r1"),
        serde_json::json!({"subtype": "turn_duration", "durationMs": 6000}),
    )
    .user("u2", Some("d1"), "Now add a test.");
    import(&t, false);
    export();
    assert_eq!(
        texts_of(".turn h2"),
        vec!["Turn 1 / 2", "Turn 2 / 2 (in progress)"]
    );
    let md = env.ok(&["export", SESSION]);
    assert!(md.contains("## Turn 2 / 2 (in progress)"), "{md}");
    assert!(md.contains("Now add a test."), "{md}");

    // The session over: no turn in progress.
    import(&t, true);
    export();
    assert_eq!(texts_of(".turn h2"), vec!["Turn 1 / 2", "Turn 2 / 2"]);
    assert!(texts_of("p.in-progress").is_empty());
}

#[test]
fn a_tool_call_of_megabytes_is_cut_with_a_note_of_what_is_left_out() {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.append("s1", &["--text", "Read the log."]);
    env.append("s1", &["--role", "assistant", "--text", "Reading."]);
    let big = env.tmp.path().join("big.txt");
    let output = "0123456789abcdef".repeat(200 * 1024 / 16);
    std::fs::write(&big, &output).unwrap();
    let input = serde_json::json!({"content": "x".repeat(100_000)}).to_string();
    env.append(
        "s1",
        &[
            "--role",
            "tool",
            "--name",
            "read",
            "--input",
            &input,
            "--file",
            big.to_str().unwrap(),
        ],
    );
    env.ok(&["commit-turn", "s1"]);
    let limit = git_session::export::model::TOOL_LIMIT;
    let page = env.tmp.path().join("s1.html");
    env.ok(&[
        "export",
        "s1",
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(std::fs::metadata(&page).unwrap().len() < 3 * limit as u64);
    let doc = parse(&page);
    let shown = texts(&doc, "pre.output");
    assert_eq!(shown, vec![output[..limit].to_string()]);
    let shown_input = texts(&doc, "pre.input");
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&input).unwrap()).unwrap();
    assert_eq!(shown_input, vec![pretty[..limit].to_string()]);
    let notes = texts(&doc, "p.cut");
    let note = |n: usize| format!("(cut: {n} bytes not shown; the page shows the first 64 KiB)");
    assert_eq!(
        notes,
        vec![note(pretty.len() - limit), note(output.len() - limit)]
    );
    let md = env.ok(&["export", "s1"]);
    assert!(md.len() < 3 * limit, "{}", md.len());
    let shown = git_session::export::markdown::rendered_text(&md);
    assert!(shown.contains(&note(output.len() - limit)), "{shown}");
    assert!(shown.contains(&output[..limit]) && !shown.contains(&output[..limit + 1]));
}

#[test]
fn a_session_that_cannot_be_exported_is_named_and_the_export_exits_1() {
    let f = fixture();
    let env = &f.env;
    std::fs::write(env.session_dir("s2").join("meta.json"), "{not json").unwrap();
    let site = env.tmp.path().join("site");
    let out = env.run(&[
        "--json",
        "export",
        "--all",
        "--format",
        "html",
        "-o",
        site.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("session `s2` is not exported"), "{stderr}");
    let rec: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["data"]["failed"], serde_json::json!(["s2"]));
    assert_eq!(rec["data"]["rendered"], serde_json::json!(["s1"]));
    // The others' pages are written all the same.
    let pages = files(&site);
    assert!(pages.contains("sessions/s1/index.html") && pages.contains("index.html"));
    assert!(!pages.contains("sessions/s2/index.html"), "{pages:?}");
    let out = env.run(&[
        "export",
        "--all",
        "--format",
        "html",
        "-o",
        site.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1 failed (s2)"), "{stderr}");
}

#[test]
fn a_secret_the_allow_list_lets_through_is_not_masked() {
    let f = fixture();
    let env = &f.env;
    let site = env.tmp.path().join("site");
    let dir = site.to_str().unwrap();
    let export = || {
        let out = env.ok(&["--json", "export", "--all", "--format", "html", "-o", dir]);
        serde_json::from_str::<Value>(out.trim()).unwrap()
    };
    assert!(export()["data"]["masked"].as_u64().unwrap() > 0);
    let page = site.join("sessions/s1/branch-main.html");
    let reply = texts(&parse(&page), "#node-a4 .text").concat();
    let fp = reply
        .split("[REDACTED:github-pat:")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("{reply}"))
        .to_string();
    env.ok(&["secrets", "allow", &fp, "--note", "a test token"]);
    // The same directory: every page made again, the token shown.
    let rec = export();
    assert_eq!(rec["data"]["masked"], 0);
    let reply = texts(&parse(&page), "#node-a4 .text").concat();
    assert!(reply.contains(&token()), "{reply}");
    let notes = std::fs::read_to_string(site.join("sessions/s1/attachments/notes.txt")).unwrap();
    assert_eq!(notes, format!("deploy with token {}\n", token()));
    let md = env.ok(&["export", "s1", "--branch", "main"]);
    assert!(md.contains(&token()));
}
