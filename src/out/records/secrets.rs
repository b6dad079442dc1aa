//! The records of `secrets scan` and `redact` (and the secrets `push`
//! withholds).

use schemars::JsonSchema;
use serde::Serialize;

use super::SkippedSession;

/// `secrets scan`, `push`: a secret a session holds, told without its value.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Secret {
    /// The session id.
    pub session: String,
    /// The file in the session repository (`history/<seq>-<r>-<id>.json`, `meta.json`,
    /// `workdir/attachments/<name>`); a blob id when the file's name is not known.
    pub path: String,
    /// The node's id, for a node file; null otherwise.
    pub node: Option<String>,
    /// Where in the file: a JSON field (`output`, `input.command`, `metadata.x[0]`); empty
    /// for a file read as text.
    pub field: String,
    /// The rule that found it (gitleaks' rule ids, and `credentialed-url`).
    pub rule: String,
    /// A fragment that tells which secret it is without giving it away (`sk-ant-…f3a9`).
    pub masked: String,
    /// 16 hex digits of the SHA-1 of rule and value: the same on every run and machine;
    /// what `--allow`, the allow-list file and `redact --fingerprint` name.
    pub fingerprint: String,
    /// Let through by `<state>/secrets-allow` or `--allow`.
    pub allowed: bool,
}

/// `redact`: what one redaction did.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Redacted {
    /// The session id.
    pub session: String,
    /// Secrets replaced (distinct fingerprints; each finding is a `secret` record before).
    pub secrets: usize,
    /// Commits written again.
    pub commits: usize,
    /// Each branch moved to its rewritten tip.
    pub branches: Vec<RedactedBranch>,
    /// Files on disk rewritten, relative to the session directory.
    pub files: Vec<String>,
    /// The ref prefix the history before is kept under (`refs/redacted/<time>/`); null when
    /// no commit held a secret.
    pub backup: Option<String>,
    /// The `context/redact` record node's id.
    pub record: Option<String>,
    /// The record's commit; null when it waits for the next turn's.
    pub record_commit: Option<String>,
    /// `--dry-run`: nothing was changed.
    pub dry_run: bool,
}

/// A branch `redact` moved.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RedactedBranch {
    pub branch: String,
    /// The tip before (kept under the backup ref).
    pub old: String,
    /// The rewritten tip.
    pub new: String,
}

/// `secrets scan`: the run, last.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SecretsSummary {
    /// Sessions scanned.
    pub sessions: usize,
    /// Sessions holding a secret not allowed.
    pub sessions_with_secrets: usize,
    /// Findings, allowed ones included.
    pub findings: usize,
    /// Findings let through by the allow-list or `--allow`.
    pub allowed: usize,
    /// Sessions that could not be read, with the reason.
    pub skipped: Vec<SkippedSession>,
}
