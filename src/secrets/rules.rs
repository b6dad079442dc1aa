//! The rules a scan applies: gitleaks' default set (`gitleaks.json`, made
//! from gitleaks' `config/gitleaks.toml` by `scripts/secret-rules.py`; MIT,
//! see `LICENSE-gitleaks`) and this tool's own for credentialed URLs.
//!
//! A rule is looked at only when one of its keywords is in the text (one
//! Aho-Corasick pass over it), and its regex is compiled the first time
//! that happens: a scan of a turn's few nodes compiles a handful of the
//! 218 rules, not all of them.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use std::sync::OnceLock;

/// The rule set of this process ([`Rules::get`]).
static RULES: OnceLock<Rules> = OnceLock::new();

/// gitleaks' rules as data.
const GITLEAKS: &str = include_str!("gitleaks.json");

/// This tool's own rules: what gitleaks leaves to path- or language-
/// specific rules, a password in a URL's user info (`postgres://app:…@db`,
/// `https://user:…@host`): the shape of connection strings and DSNs.
const OWN: &str = r#"[
 {"id": "credentialed-url",
  "regex": "(?i)\\b[a-z][a-z0-9+.-]{1,30}://[^\\s/:@'\"`<>]{1,128}:([^\\s/@'\"`<>]{3,256})@[a-z0-9\\[][a-z0-9.:\\]-]*",
  "keywords": ["://"],
  "allow": [{"regexes": ["(?i)^(?:\\$\\{?[a-z_][a-z0-9_]*\\}?|%[a-z_]+%|\\{\\{[^}]*\\}\\}|<[^>]*>|\\[[^\\]]*\\]|\\*+|x+|\\.+|password|passwd|pass|pwd|secret|changeme|token|your[_-]?password|\\$[0-9]|postgres|mysql|root|admin|guest|test|user|redis|example|default)$"],
             "target": "secret"}]}
]"#;

#[derive(Deserialize)]
struct Source {
    global: AllowSource,
    rules: Vec<RuleSource>,
}

#[derive(Deserialize)]
struct RuleSource {
    id: String,
    regex: String,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    group: usize,
    #[serde(default)]
    entropy: Option<f64>,
    #[serde(default)]
    allow: Vec<AllowSource>,
}

#[derive(Deserialize, Default)]
struct AllowSource {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
}

/// What an allow-list's regexes are matched against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    Secret,
    Match,
    Line,
}

/// An allow-list: a finding any of whose regexes matches its target, or
/// whose secret holds a stopword, is no finding.
pub struct Allow {
    sources: Vec<String>,
    regexes: OnceLock<Vec<Regex>>,
    pub target: Target,
    /// Lower case.
    stopwords: Vec<String>,
}

/// One rule.
pub struct Rule {
    pub id: String,
    source: String,
    regex: OnceLock<Option<Regex>>,
    /// The capture group holding the secret; 0: the first group that
    /// matched, else the whole match.
    pub group: usize,
    /// A secret at or under this Shannon entropy is no finding.
    pub entropy: Option<f64>,
    pub allow: Vec<Allow>,
}

/// Every rule, and the keyword automaton that picks the ones a text needs.
pub struct Rules {
    pub rules: Vec<Rule>,
    pub global: Allow,
    keywords: AhoCorasick,
    /// For each keyword pattern, the rules it wakes.
    woken: Vec<Vec<usize>>,
    /// Rules without keywords: looked at always.
    always: Vec<usize>,
}

fn compile(source: &str) -> Result<Regex, regex::Error> {
    // Go's regexp, which the rules are written for, is ASCII for `\w`,
    // `\s`, `\b` and case folding: so is this.
    RegexBuilder::new(source)
        .unicode(false)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
}

/// Why `source` does not compile (for the rule-set test).
pub fn compile_error(source: &str) -> Option<String> {
    compile(source).err().map(|e| e.to_string())
}

impl Allow {
    fn from(a: AllowSource) -> Allow {
        Allow {
            sources: a.regexes,
            regexes: OnceLock::new(),
            target: match a.target.as_deref() {
                Some("match") => Target::Match,
                Some("line") => Target::Line,
                _ => Target::Secret,
            },
            stopwords: a.stopwords.into_iter().map(|s| s.to_lowercase()).collect(),
        }
    }

    fn regexes(&self) -> &[Regex] {
        // A rule that does not compile is dropped by the test of the rule
        // set; one that got past it allows nothing rather than failing.
        self.regexes.get_or_init(|| {
            self.sources
                .iter()
                .filter_map(|s| compile(s).ok())
                .collect()
        })
    }

    /// Whether this list allows a finding of `secret`, matched as `whole`
    /// in a line `line`.
    pub fn allows(&self, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        if !target.is_empty() && self.regexes().iter().any(|r| r.is_match(target)) {
            return true;
        }
        if self.stopwords.is_empty() || secret.is_empty() {
            return false;
        }
        use bstr::ByteSlice;
        let lower = secret.to_ascii_lowercase();
        self.stopwords.iter().any(|w| lower.contains_str(w))
    }
}

impl Rule {
    /// The compiled regex; `None` for one this engine cannot compile.
    pub fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| compile(&self.source).ok())
            .as_ref()
    }

    /// The regex source, for the test that every rule compiles.
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl Rules {
    /// The rule set, built once per process.
    pub fn get() -> &'static Rules {
        RULES.get_or_init(Rules::build)
    }

    /// Build the rule set on a thread of its own, when this process has
    /// not yet: a one-shot `commit-turn` scans its turn once the commit is
    /// made, and the half millisecond the build takes is spent meanwhile,
    /// while the commit waits for the disk. [`Rules::get`] waits for it.
    pub fn warm_in_background() {
        if RULES.get().is_none() {
            std::thread::spawn(|| {
                Rules::get();
            });
        }
    }

    fn build() -> Rules {
        let gitleaks: Source = serde_json::from_str(GITLEAKS).expect("gitleaks.json is valid");
        let own: Vec<RuleSource> = serde_json::from_str(OWN).expect("own rules are valid");
        let mut rules = Vec::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut woken: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        for r in gitleaks.rules.into_iter().chain(own) {
            let i = rules.len();
            if r.keywords.is_empty() {
                always.push(i);
            }
            for k in &r.keywords {
                let k = k.to_ascii_lowercase();
                match patterns.iter().position(|p| *p == k) {
                    Some(p) => woken[p].push(i),
                    None => {
                        patterns.push(k);
                        woken.push(vec![i]);
                    }
                }
            }
            rules.push(Rule {
                id: r.id,
                source: r.regex,
                regex: OnceLock::new(),
                group: r.group,
                entropy: r.entropy,
                allow: r.allow.into_iter().map(Allow::from).collect(),
            });
        }
        // Lower-case keywords, matched in a lower-cased copy of the text (as
        // ASCII case-insensitive matching would, the keywords being ASCII),
        // by the automaton that is quickest to build: a one-shot
        // `commit-turn` builds it for a turn's few kilobytes, where a
        // case-insensitive contiguous one took 2.7 times as long to build
        // (0.46 against 0.17 ms) and its faster search gained nothing.
        let keywords = AhoCorasickBuilder::new()
            .kind(Some(AhoCorasickKind::NoncontiguousNFA))
            .build(&patterns)
            .expect("keywords build");
        Rules {
            rules,
            global: Allow::from(gitleaks.global),
            keywords,
            woken,
            always,
        }
    }

    /// Rule `i`'s id, for as long as the process runs.
    pub fn id(i: usize) -> &'static str {
        &Rules::get().rules[i].id
    }

    /// The rules whose keywords `text` holds (or that have none), in rule
    /// order.
    pub fn wanted(&self, text: &[u8]) -> Vec<usize> {
        let mut wanted = vec![false; self.rules.len()];
        for &i in &self.always {
            wanted[i] = true;
        }
        let mut left = self.woken.len();
        let mut seen = vec![false; self.woken.len()];
        let lower = text.to_ascii_lowercase();
        for m in self.keywords.find_overlapping_iter(&lower) {
            let p = m.pattern().as_usize();
            if !seen[p] {
                seen[p] = true;
                for &i in &self.woken[p] {
                    wanted[i] = true;
                }
                left -= 1;
                if left == 0 {
                    break;
                }
            }
        }
        (0..self.rules.len()).filter(|&i| wanted[i]).collect()
    }
}

/// Shannon entropy of `s` in bits per character, as gitleaks computes it
/// (over characters, divided by the length in bytes).
pub fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let text = String::from_utf8_lossy(s);
    let mut counts: std::collections::HashMap<char, usize> = Default::default();
    for c in text.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let inv = 1.0 / s.len() as f64;
    counts
        .values()
        .map(|&n| {
            let f = n as f64 * inv;
            -f * f.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keyword pass lower-cases the text as ASCII: right only while
    /// every keyword is ASCII.
    #[test]
    fn keywords_are_ascii_and_matched_in_any_case() {
        let gitleaks: Source = serde_json::from_str(GITLEAKS).unwrap();
        let own: Vec<RuleSource> = serde_json::from_str(OWN).unwrap();
        let odd: Vec<&String> = gitleaks
            .rules
            .iter()
            .chain(&own)
            .flat_map(|r| &r.keywords)
            .filter(|k| !k.is_ascii())
            .collect();
        assert!(odd.is_empty(), "{odd:?}");
        let rules = Rules::get();
        let lower = rules.wanted(b"export github_token=... aws akia postgres://u:p@h");
        assert!(!lower.is_empty());
        let upper = rules.wanted(b"EXPORT GITHUB_TOKEN=... AWS AKIA POSTGRES://U:P@H");
        assert_eq!(lower, upper);
        let mixed = rules.wanted(b"Export GitHub_Token=... Aws Akia Postgres://u:p@h");
        assert_eq!(lower, mixed);
        assert!(rules.wanted(b"nothing to see here").len() < lower.len());
    }
}
