//! `diff` (issue 53): what a range of turns added to the conversation, and
//! the agent's commits those turns recorded in the project, each as `git
//! show` prints it. Real git is the oracle: the patches are compared with
//! what git prints of the same commits.

use crate::env::TestEnv;

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The hunks the library writes for an edit are the ones `git diff`
/// writes (its default algorithm, heuristics and function lines), on
/// random edits of code-like text full of repeated lines, where diff
/// algorithms disagree most.
#[test]
fn the_hunks_of_an_edit_are_the_ones_git_writes() {
    let env = TestEnv::new();
    let dir = env.tmp.path();
    let words = [
        "}",
        "{",
        "",
        "fn a() {",
        "    x += 1;",
        "    return;",
        "let y = 2;",
        "// c",
        "if z {",
        "} else {",
        "\tindented",
        "_private: u8,",
    ];
    let mut rng = Rng(0x5eed_0053);
    for case in 0..200 {
        let n = 1 + rng.below(80);
        let a: Vec<&str> = (0..n).map(|_| words[rng.below(words.len())]).collect();
        let mut b = a.clone();
        for _ in 0..1 + rng.below(12) {
            let i = rng.below(b.len() + 1);
            match rng.below(3) {
                0 if i < b.len() => {
                    b.remove(i);
                }
                1 => b.insert(i, words[rng.below(words.len())]),
                _ if i < b.len() => b[i] = words[rng.below(words.len())],
                _ => {}
            }
        }
        let (a, mut b) = (a.join("\n") + "\n", b.join("\n") + "\n");
        if case % 7 == 0 {
            b.pop();
        }
        std::fs::write(dir.join("a"), &a).unwrap();
        std::fs::write(dir.join("b"), &b).unwrap();
        let out = env.git_in(dir, &["diff", "--no-index", "--no-color", "a", "b"]);
        let git: String = String::from_utf8(out.stdout)
            .unwrap()
            .split_inclusive('\n')
            .skip_while(|l| !l.starts_with("@@"))
            .collect();
        assert_eq!(
            git_session::git::patch::unified(a.as_bytes(), b.as_bytes()),
            git,
            "case {case}:\n{a}\n---\n{b}"
        );
    }
}
