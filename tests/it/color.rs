//! Colour (issue 53): `log`, `show`, `diff`, `branch` and `verify` colour
//! what they print when asked (`--color always`, or `auto` with
//! `CLICOLOR_FORCE`), never when piped unless asked, never under `--json`
//! or `NO_COLOR` (with `auto`); coloured output is the plain output with
//! SGR escapes around some of its pieces, and text from the record never
//! brings an escape of its own.

use crate::env::TestEnv;

/// A session `s1` with two turns, a tool call whose output holds an
/// escape sequence, and a node appended but not committed (a `verify`
/// finding).
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.ok(&["init", "s1"]);
    env.turn("s1", "one", &["read"]);
    env.append(
        "s1",
        &["--text", "two \u{1b}]52;c;aGk=\u{7} \u{1b}[2J cleared?"],
    );
    env.append("s1", &["--role", "assistant", "--text", "r2"]);
    env.ok(&["commit-turn", "s1"]);
    env.append("s1", &["--text", "pending"]);
    env
}

/// Run `args` with the environment `vars` set; stdout (exit 0, or 1 for
/// `verify`'s finding).
fn run(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> String {
    let mut c = env.cmd();
    c.args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = crate::env::output(&mut c);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// An SGR escape: a colour, bold, a reset.
fn sgr() -> regex::Regex {
    regex::Regex::new("\u{1b}\\[[0-9;]*m").unwrap()
}

/// `text` without its SGR escapes.
fn plain(text: &str) -> String {
    sgr().replace_all(text, "").into_owned()
}

const READERS: &[&[&str]] = &[
    &["log", "s1"],
    &["log", "s1", "--all"],
    &["show", "s1"],
    &["show", "s1", "--full"],
    &["diff", "s1"],
    &["diff", "s1", "0", "2", "--stat"],
    &["branch", "s1"],
    &["verify", "s1"],
];

#[test]
fn color_always_colours_what_a_piped_run_prints_plain() {
    let env = fixture();
    let ours = sgr();
    for args in READERS {
        let piped = run(&env, args, &[]);
        assert!(!piped.contains('\u{1b}'), "{args:?}: {piped}");
        let mut asked = args.to_vec();
        asked.extend(["--color", "always"]);
        let coloured = run(&env, &asked, &[]);
        assert!(coloured.contains("\u{1b}["), "{args:?}: {coloured}");
        // The same text: the colours only go around it.
        assert_eq!(plain(&coloured), piped, "{args:?}");
        // Every escape is one of ours: the record's own are shown escaped.
        assert_eq!(
            ours.find_iter(&coloured).count(),
            coloured.matches('\u{1b}').count(),
            "{args:?}: {coloured}"
        );
    }
}

#[test]
fn json_never_and_no_color_turn_colour_off_clicolor_force_on() {
    let env = fixture();
    let log = |args: &[&str], vars: &[(&str, &str)]| {
        let mut a = vec!["log", "s1"];
        a.extend_from_slice(args);
        run(&env, &a, vars)
    };
    let has = |s: &str| s.contains('\u{1b}');
    assert!(has(&log(&["--color", "always"], &[])));
    assert!(!has(&log(&[], &[])));
    assert!(!has(&log(&["--color", "auto"], &[])));
    assert!(!has(&log(&["--json", "--color", "always"], &[])));
    assert!(!has(&log(
        &["--color", "never"],
        &[("CLICOLOR_FORCE", "1")]
    )));
    assert!(!has(&log(&["--color", "auto"], &[("NO_COLOR", "1")])));
    assert!(has(&log(&["--color", "auto"], &[("CLICOLOR_FORCE", "1")])));
    assert!(has(&log(&[], &[("CLICOLOR_FORCE", "1")])));
    assert!(!has(&log(&[], &[("CLICOLOR_FORCE", "0")])));
    // NO_COLOR wins over CLICOLOR_FORCE; the command line over both.
    assert!(!has(&log(
        &[],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
    )));
    assert!(has(&log(&["--color", "always"], &[("NO_COLOR", "1")])));
    // An empty NO_COLOR asks nothing.
    assert!(has(&log(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")])));
}

/// What is coloured: commit ids yellow, the branch HEAD is on green, turn
/// headers bold, roles each in their colour, a problem red.
#[test]
fn ids_branches_headers_roles_and_problems_take_their_colours() {
    let env = fixture();
    let always = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--color", "always"]);
        run(&env, &a, &[])
    };
    let log = always(&["log", "s1"]);
    let first = log.lines().next().unwrap();
    assert!(first.starts_with("\u{1b}[33m"), "{first:?}");
    assert!(
        first.ends_with("(\u{1b}[1m\u{1b}[32mHEAD -> \u{1b}[0m\u{1b}[32mmain\u{1b}[0m)"),
        "{first:?}"
    );
    let show = always(&["show", "s1"]);
    assert!(show.contains("\u{1b}[1m── turn 1 · "), "{show}");
    assert!(
        show.contains("\u{1b}[1m\u{1b}[34muser\u{1b}[0m: one"),
        "{show}"
    );
    assert!(show.contains("\u{1b}[1m\u{1b}[35massistant (m1)\u{1b}[0m: re: one"));
    assert!(
        show.contains("  \u{1b}[36mtool\u{1b}[0m: read() → ok"),
        "{show}"
    );
    let branch = always(&["branch", "s1"]);
    // The current line (its tip not committed yet) marked and named in
    // bold green.
    assert!(
        branch.starts_with("\u{1b}[1m\u{1b}[32m*\u{1b}[0m \u{1b}[1m\u{1b}[32m(uncommitted)"),
        "{branch}"
    );
    let verify = always(&["verify", "s1"]);
    assert!(
        verify.starts_with("s1: \u{1b}[31muncommitted_node\u{1b}[0m: "),
        "{verify}"
    );
}
