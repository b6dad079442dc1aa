//! Secrets in what a session holds: the scanner `push`, `secrets scan` and
//! the `redact = on-write` setting share.
//!
//! A scan looks at every string of a node (output, input, metadata, at any
//! depth), of `meta.json`, and at attachment files, with gitleaks' default
//! rules ([`rules`]). A finding never carries the secret out of this
//! module: it names where it is, the rule, a masked fragment
//! (`sk-ant-…f3a9`) and a fingerprint, the first 16 hex digits of the
//! SHA-1 of the rule and the value, the same on every run and machine.

pub mod redact;
pub mod rules;
pub mod session;

use rules::Rules;
use serde_json::Value;

/// What the secrets scanner refuses (`git_session::secrets::…`).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SecretsError {
    /// A line of the allow-list (or an `--allow`) that is no fingerprint;
    /// `masked` is it masked, as it may be a secret pasted by mistake.
    /// A usage error (exit 2).
    #[error("`{masked}` is not a fingerprint")]
    #[diagnostic(
        code(git_session::secrets::bad_fingerprint),
        help(
            "a fingerprint is the 16 hex digits a finding shows (`git-session secrets scan`); check `{}` and `--allow`",
            allow_file.display()
        )
    )]
    BadFingerprint {
        masked: String,
        allow_file: std::path::PathBuf,
    },
}

/// One secret found in one string (its `Debug` leaves the value out).
#[derive(Clone, PartialEq)]
pub struct Hit {
    pub rule: &'static str,
    /// The secret's byte range in the text.
    pub start: usize,
    pub end: usize,
    pub fingerprint: String,
    pub masked: String,
    /// The secret itself: for a redaction in this process, never printed.
    pub(crate) value: String,
}

impl std::fmt::Debug for Hit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hit")
            .field("rule", &self.rule)
            .field("start", &self.start)
            .field("end", &self.end)
            .field("fingerprint", &self.fingerprint)
            .field("masked", &self.masked)
            .finish_non_exhaustive()
    }
}

/// The stable name of a secret: rule and value hashed, 16 hex digits.
pub fn fingerprint(rule: &str, secret: &[u8]) -> String {
    let mut bytes = Vec::with_capacity(rule.len() + 1 + secret.len());
    bytes.extend_from_slice(rule.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(secret);
    crate::git::sha1_hex(&bytes)[..16].to_string()
}

/// A fragment of `secret` that says which it is without giving it away: a
/// few leading characters (a key's well-known prefix, at most a quarter of
/// it) and the last four of a long one.
pub fn mask(secret: &[u8]) -> String {
    let text = String::from_utf8_lossy(secret);
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let head = (n / 4).min(7);
    let tail = if n >= 24 { 4 } else { 0 };
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[n - tail..]);
    crate::out::in_one_line(&out).into_owned()
}

/// Whether a file's bytes look binary (a NUL in the first 8,000, as git
/// decides): not text a secret was written into.
pub fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}

/// What replaces a secret in a redacted node.
pub fn replacement(rule: &str, fingerprint: &str) -> String {
    format!("[REDACTED:{rule}:{fingerprint}]")
}

/// The line of `text` around `start..end`.
fn line_of(text: &[u8], start: usize, end: usize) -> &[u8] {
    let from = text[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let to = text[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| end + i);
    &text[from..to]
}

/// Every secret in `text`, by position. Where two rules find the same
/// bytes, the specific one is kept over the generic `generic-api-key`, and
/// an overlap of two keeps the first.
pub fn scan_text(text: &[u8]) -> Vec<Hit> {
    let rules = Rules::get();
    let mut hits: Vec<Hit> = Vec::new();
    for i in rules.wanted(text) {
        let rule = &rules.rules[i];
        let Some(regex) = rule.regex() else {
            continue;
        };
        for caps in regex.captures_iter(text) {
            let whole = caps.get(0).expect("group 0");
            let secret = if rule.group > 0 {
                caps.get(rule.group)
            } else {
                caps.iter().skip(1).flatten().find(|m| !m.is_empty())
            }
            .unwrap_or(whole);
            // gitleaks trims line breaks off a match.
            let (mut s, mut e) = (secret.start(), secret.end());
            while s < e && matches!(text[s], b'\n' | b'\r') {
                s += 1;
            }
            while e > s && matches!(text[e - 1], b'\n' | b'\r') {
                e -= 1;
            }
            if s == e {
                continue;
            }
            let value = &text[s..e];
            if rule.entropy.is_some_and(|t| rules::entropy(value) <= t) {
                continue;
            }
            let line = line_of(text, whole.start(), whole.end());
            let whole_bytes = &text[whole.start()..whole.end()];
            if rules.global.allows(value, whole_bytes, line)
                || rule
                    .allow
                    .iter()
                    .any(|a| a.allows(value, whole_bytes, line))
            {
                continue;
            }
            hits.push(Hit {
                rule: Rules::id(i),
                start: s,
                end: e,
                fingerprint: fingerprint(&rule.id, value),
                masked: mask(value),
                value: String::from_utf8_lossy(value).into_owned(),
            });
        }
    }
    // Specific rules first, then by position; drop what overlaps a kept hit.
    hits.sort_by_key(|h| {
        (
            h.rule == "generic-api-key",
            h.start,
            std::cmp::Reverse(h.end),
        )
    });
    let mut kept: Vec<Hit> = Vec::new();
    for h in hits {
        if !kept.iter().any(|k| h.start < k.end && k.start < h.end) {
            kept.push(h);
        }
    }
    kept.sort_by_key(|h| h.start);
    kept
}

/// `text` with every hit replaced by its [`replacement`].
pub fn redact_text(text: &str, hits: &[Hit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for h in hits {
        // A hit's bounds are byte offsets of an ASCII-folded match: keep
        // them on character boundaries.
        let (mut s, mut e) = (h.start, h.end);
        while !text.is_char_boundary(s) {
            s -= 1;
        }
        while !text.is_char_boundary(e) {
            e += 1;
        }
        if s < at {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(&replacement(h.rule, &h.fingerprint));
        at = e;
    }
    out.push_str(&text[at..]);
    out
}

/// A secret in a JSON document: the field it is in, as a path
/// (`output`, `input.command`, `metadata.attachments[0].name`).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub field: String,
    pub hit: Hit,
}

/// Every secret in the strings of `v` (object keys are names, not looked
/// at).
pub fn scan_json(v: &mut Value) -> Vec<Found> {
    let mut out = Vec::new();
    strings(v, &mut String::new(), None, &mut |field, key, s| {
        out.extend(scan_member(key, s).into_iter().map(|hit| Found {
            field: field.to_string(),
            hit,
        }));
    });
    out
}

/// Replace every secret in the strings of `v`, in place; the hits, by
/// field.
pub fn redact_json(v: &mut Value) -> Vec<Found> {
    redact_json_where(v, &|_| true)
}

/// [`redact_json`] of the hits `masked` says yes to (the others are left
/// as they are, and not returned).
pub fn redact_json_where(v: &mut Value, masked: &dyn Fn(&Hit) -> bool) -> Vec<Found> {
    let mut out = Vec::new();
    strings(v, &mut String::new(), None, &mut |field, key, s| {
        let mut hits = scan_member(key, s);
        hits.retain(|h| masked(h));
        if !hits.is_empty() {
            *s = redact_text(s, &hits);
            out.extend(hits.into_iter().map(|hit| Found {
                field: field.to_string(),
                hit,
            }));
        }
    });
    out
}

/// The secrets of a string; one that is an object member's value is read
/// with its name before it (`password: "…"`), as it stands in a file, so
/// that the rules for assignments (`generic-api-key`) see the name. Offsets
/// are the value's.
fn scan_member(key: Option<&str>, value: &str) -> Vec<Hit> {
    let Some(key) = key else {
        return scan_text(value.as_bytes());
    };
    let prefix = format!("{key}: \"");
    let text = format!("{prefix}{value}\"");
    let (from, to) = (prefix.len(), prefix.len() + value.len());
    scan_text(text.as_bytes())
        .into_iter()
        .filter(|h| h.start >= from && h.end <= to)
        .map(|mut h| {
            h.start -= from;
            h.end -= from;
            h
        })
        .collect()
}

/// Each string of `v` at any depth, with its field path
/// (`metadata.attachments[0].name`) and, for an object member, its name.
fn strings(
    v: &mut Value,
    path: &mut String,
    key: Option<&str>,
    f: &mut dyn FnMut(&str, Option<&str>, &mut String),
) {
    match v {
        Value::String(s) => f(path, key, s),
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                strings(item, path, None, f);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (k, item) in map.iter_mut() {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                strings(item, path, Some(k), f);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// `text` with every secret replaced.
pub fn redact_str(text: &str) -> String {
    redact_text(text, &scan_text(text.as_bytes()))
}

/// Replace every secret in a node's values and maps, in place (`redact =
/// on-write`); how many were replaced.
pub fn redact_node_values(
    values: &mut [&mut Value],
    maps: &mut [&mut serde_json::Map<String, Value>],
) -> usize {
    let mut n = 0;
    for v in values.iter_mut() {
        n += redact_json(v).len();
    }
    for m in maps.iter_mut() {
        let mut v = Value::Object(std::mem::take(*m));
        n += redact_json(&mut v).len();
        if let Value::Object(back) = v {
            **m = back;
        }
    }
    n
}

/// A file's bytes with every secret replaced, when it is text (UTF-8
/// without NUL); binary files as they are.
pub fn redact_file(data: Vec<u8>) -> Vec<u8> {
    if is_binary(&data) {
        return data;
    }
    match String::from_utf8(data) {
        Ok(text) => {
            let hits = scan_text(text.as_bytes());
            if hits.is_empty() {
                text.into_bytes()
            } else {
                redact_text(&text, &hits).into_bytes()
            }
        }
        Err(e) => e.into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        let bad: Vec<String> = Rules::get()
            .rules
            .iter()
            .filter(|r| r.regex().is_none())
            .map(|r| format!("{}: {:?}", r.id, rules::compile_error(r.source())))
            .collect();
        assert!(bad.is_empty(), "{bad:#?}");
    }

    #[test]
    fn masks_keep_the_prefix_and_the_tail_only() {
        assert_eq!(
            mask(b"sk-ant-api03-abcdefghijklmnopqrstuvwxyzf3a9"),
            "sk-ant-…f3a9"
        );
        assert_eq!(mask(b"hunter22"), "hu…");
        assert_eq!(mask(b"ab"), "…");
    }

    #[test]
    fn fingerprints_are_stable() {
        assert_eq!(fingerprint("r", b"v"), fingerprint("r", b"v"));
        assert_ne!(fingerprint("r", b"v"), fingerprint("s", b"v"));
        assert_eq!(fingerprint("r", b"v").len(), 16);
    }

    #[test]
    fn redaction_replaces_the_secret_alone() {
        let text = "export GITHUB_TOKEN=ghp_R8x2Kq7ZmP4tW9vB3nL6cY1hJ5dF0gS2aE8u # mine";
        let hits = scan_text(text.as_bytes());
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].rule, "github-pat");
        let out = redact_text(text, &hits);
        assert_eq!(
            out,
            format!(
                "export GITHUB_TOKEN=[REDACTED:github-pat:{}] # mine",
                hits[0].fingerprint
            )
        );
        assert!(scan_text(out.as_bytes()).is_empty(), "{out}");
    }

    #[test]
    fn a_member_is_read_with_its_name() {
        let mut v: Value = serde_json::json!({"env": {"DB_PASSWORD": "Zq8vT2mK9pLxR4wN7bYc"}});
        let found = scan_json(&mut v);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].field, "env.DB_PASSWORD");
        assert_eq!(found[0].hit.rule, "generic-api-key");
        redact_json(&mut v);
        assert!(
            v["env"]["DB_PASSWORD"]
                .as_str()
                .unwrap()
                .starts_with("[REDACTED:generic-api-key:")
        );
    }

    #[test]
    fn placeholders_in_urls_are_not_secrets() {
        for url in [
            "postgres://user:${DB_PASSWORD}@db.internal/app",
            "https://user:password@example.com",
            "https://x-access-token:<token>@github.com/o/r",
        ] {
            assert!(scan_text(url.as_bytes()).is_empty(), "{url}");
        }
        let real = scan_text(b"postgres://app:Zq8vT2mK9pLx@db.internal:5432/app");
        assert_eq!(real.len(), 1);
        assert_eq!(real[0].rule, "credentialed-url");
    }
}
