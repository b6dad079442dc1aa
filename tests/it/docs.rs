//! The committed man pages and completion scripts are what the binary
//! generates now.

use std::collections::BTreeMap;
use std::path::Path;

use crate::env::TestEnv;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn fresh(what: &str, args: &[&str]) {
    let env = TestEnv::new();
    let out = env.tmp.path().join(what);
    let mut a = args.to_vec();
    let out_s = out.to_str().unwrap().to_string();
    a.extend(["--dir", &out_s]);
    env.ok(&a);
    let committed = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(what));
    let generated = files(&out);
    assert_eq!(
        committed.keys().collect::<Vec<_>>(),
        generated.keys().collect::<Vec<_>>(),
        "{what}/ is stale: run `cargo run -- man --dir man && cargo run -- completions all --dir completions`"
    );
    for (name, bytes) in &generated {
        assert!(
            committed[name] == *bytes,
            "{what}/{name} is stale: run `cargo run -- man --dir man && cargo run -- completions all --dir completions`"
        );
    }
}

#[test]
fn man_pages_are_fresh() {
    fresh("man", &["man"]);
}

#[test]
fn completions_are_fresh() {
    fresh("completions", &["completions", "all"]);
}

#[test]
fn every_command_has_a_page_with_exit_status_and_files() {
    let env = TestEnv::new();
    let page = env.ok(&["man", "verify"]);
    assert!(
        page.contains(".SH \"EXIT STATUS\"")
            && page.contains(".SH FILES")
            && page.contains("\\-\\-fix")
    );
    let layout = env.ok(&["man", "layout"]);
    assert!(layout.starts_with(".TH git-session-layout 5"));
    for shell in ["bash", "zsh", "fish"] {
        assert!(
            env.ok(&["completions", shell]).contains("commit-turn"),
            "{shell}"
        );
    }
    env.fails(&["man", "nope"], 2);
    env.fails(&["completions", "tcsh"], 2);
}

#[test]
fn help_is_there_for_every_command() {
    let env = TestEnv::new();
    let man = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    // The root and clap's `help` (which the walk leaves out) have pages too.
    let mut wanted =
        std::collections::BTreeSet::from(["git-session.1", "git-session-help.1"].map(String::from));
    for (name, subs) in crate::env::command_tree(&env) {
        let out = env.ok(&[&name, "--help"]);
        assert!(out.contains("Usage: git-session"), "{name} --help");
        wanted.insert(format!("git-session-{name}.1"));
        for sub in subs {
            let out = env.ok(&[&name, &sub, "--help"]);
            assert!(out.contains("Usage: git-session"), "{name} {sub} --help");
            wanted.insert(format!("git-session-{name}-{sub}.1"));
        }
    }
    // The walk saw the commands (and project's, hook's subcommands).
    assert!(wanted.len() > 40, "only {} commands", wanted.len());
    // One page a command, and no page for a command that is gone.
    let pages: std::collections::BTreeSet<String> = std::fs::read_dir(&man)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    assert_eq!(pages, wanted);
}

#[test]
fn readme_links_name_committed_pages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let links: Vec<&str> = readme
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .filter(|target| target.starts_with("man/") || target.starts_with("doc/"))
        .collect();
    for page in ["guide.7", "performance.7", "layout.5", "json.7"] {
        let link = format!("man/git-session-{page}");
        assert!(
            links.contains(&link.as_str()),
            "README lacks a link to {link}"
        );
    }
    for target in links {
        assert!(
            root.join(target).is_file(),
            "README links to {target}, which does not exist"
        );
    }
}

/// The words of `text` between backticks that follow `lead` (`end with a
/// `code:` line` → `code:`), each time it occurs.
fn quoted_after<'a>(text: &'a str, lead: &str) -> Vec<&'a str> {
    text.split(lead)
        .skip(1)
        .filter_map(|rest| rest.strip_prefix('`')?.split_once('`'))
        .map(|(word, _)| word)
        .collect()
}

/// What the README and the guide say of errors and of `man --install` is
/// what the binary does: an error's last line is the one they say it ends
/// with, and the directories `man --install` makes are the ones the README
/// lists.
#[test]
fn readme_and_guide_say_what_the_binary_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let guide = std::fs::read_to_string(root.join("doc/guide.md")).unwrap();
    let env = TestEnv::new();

    let text = format!("{readme}\n{guide}").replace('\n', " ");
    let ends = quoted_after(&text, "end with a ");
    assert!(!ends.is_empty(), "neither says how an error ends");
    for args in [&["show", "nope"][..], &["log", "s1", "-n", "x"]] {
        let err = env.run(args);
        let err = String::from_utf8_lossy(&err.stderr).into_owned();
        let last = err.lines().last().unwrap_or("");
        for end in &ends {
            assert!(
                last.starts_with(end),
                "they say `{end}`; {args:?} ends: {err}"
            );
        }
    }

    let said: std::collections::BTreeSet<String> = readme
        .lines()
        .skip_while(|l| !l.contains("man --install"))
        .take(3)
        .flat_map(|l| l.split('`'))
        .filter(|w| w.starts_with("man") && w.ends_with('/'))
        .map(|w| w.trim_end_matches('/').to_string())
        .collect();
    let dir = env.tmp.path().join("share-man");
    env.ok(&["man", "--install", dir.to_str().unwrap()]);
    let made: std::collections::BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(said, made, "README: {said:?}");
}

/// `man` into a pipe prints the roff, whatever a terminal would get (a
/// pager that fails, were one run, would show); on a terminal (a pty, made
/// by util-linux `script`) the page is rendered by `man -l -`.
#[test]
fn man_prints_roff_to_a_pipe_and_renders_it_on_a_terminal() {
    let env = TestEnv::new();
    let mut c = env.cmd();
    c.env("PAGER", "false")
        .env("MANPAGER", "false")
        .args(["man", "log"]);
    let piped = env.ok_cmd(c);
    assert!(piped.contains("\n.TH git-session-log 1 "), "{piped}");
    let have = |p: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !(have("script") && have("man")) {
        eprintln!("no `script` or no `man`: the terminal half is not run");
        return;
    }
    let line = format!(
        "'{}' --state-dir '{}' man log",
        crate::env::BIN,
        env.state().display()
    );
    let mut c = std::process::Command::new("script");
    env.isolate(&mut c);
    c.args(["-qec", &line, "/dev/null"])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80");
    let shown = env.ok_cmd(c);
    assert!(
        shown.contains("Show the turn commits of a session") && !shown.contains(".TH "),
        "{shown}"
    );
}

#[test]
fn topic_pages_print() {
    let env = TestEnv::new();
    let guide = env.ok(&["man", "guide"]);
    assert!(guide.starts_with(".TH git-session-guide 7"), "{guide}");
    for section in [
        "PROJECTS",
        "SEVERAL MACHINES",
        "WHAT THE TOOL TRUSTS",
        "SEE ALSO",
    ] {
        assert!(
            guide.contains(&format!(".SH \"{section}")),
            "guide lacks {section}"
        );
    }
    let performance = env.ok(&["man", "performance"]);
    assert!(
        performance.starts_with(".TH git-session-performance 7"),
        "{performance}"
    );
    assert!(performance.contains(".TS") && performance.contains("bench/batch.py"));
}
