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
    let help = env.ok(&["--help"]);
    for cmd in [
        "init",
        "append",
        "commit-turn",
        "log",
        "show",
        "checkout",
        "branch",
        "list",
        "update",
        "archive",
        "unarchive",
        "delete",
        "title",
        "recover",
        "gc-shells",
        "backfill",
        "verify",
        "demo",
        "man",
        "completions",
    ] {
        assert!(help.contains(cmd), "--help lacks {cmd}");
        let sub = env.ok(&[cmd, "--help"]);
        assert!(sub.contains("Usage: git-session"), "{cmd} --help");
    }
}
