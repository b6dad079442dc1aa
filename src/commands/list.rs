//! `list`: sessions from the registry (SPEC §5.8), newest activity first.
//!
//! Reads: index.json and its journal, projects.json (no per-session reads,
//! except to self-heal a session the index lacks). Writes: index.json only
//! when it was missing, corrupt or incomplete. Locks: the registry, briefly,
//! for those writes. Prints: one row per session.

use serde_json::Value;

use crate::cli::Ctx;
use crate::error::{Result, exit};
use crate::lifecycle;

/// List sessions, most recently active first (archived ones hidden).
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only archived sessions
    #[arg(long, conflicts_with = "include_archived")]
    pub archived: bool,
    /// Archived sessions too
    #[arg(long)]
    pub include_archived: bool,
    /// Only this agent's sessions
    #[arg(long, value_name = "A")]
    pub agent: Option<String>,
    /// Only sessions from this source (cli, web, a channel…)
    #[arg(long, value_name = "S")]
    pub source: Option<String>,
    /// Only sessions of this project (id or name)
    #[arg(long, value_name = "P")]
    pub project: Option<String>,
    /// Only sessions with this status
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    /// At most N rows
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Skip the first N rows
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,
}

fn s<'a>(row: &'a serde_json::Map<String, Value>, k: &str) -> &'a str {
    row.get(k).and_then(Value::as_str).unwrap_or("")
}

pub fn run(ctx: &Ctx, args: ListArgs) -> Result<u8> {
    let index = lifecycle::load_rows(&ctx.state, ctx.locks)?;
    let (project_of, _) = lifecycle::projects(&ctx.state);
    let mut rows: Vec<_> = index
        .into_iter()
        .filter(|(_, r)| {
            let archived = r.get("archived").and_then(Value::as_bool).unwrap_or(false);
            if args.archived {
                archived
            } else {
                args.include_archived || !archived
            }
        })
        .filter(|(_, r)| args.agent.as_deref().is_none_or(|a| s(r, "agent_id") == a))
        .filter(|(_, r)| args.source.as_deref().is_none_or(|a| s(r, "source") == a))
        .filter(|(_, r)| args.status.as_deref().is_none_or(|a| s(r, "status") == a))
        .filter(|(id, _)| {
            args.project
                .as_deref()
                .is_none_or(|p| match project_of.get(id) {
                    Some((pid, name)) => pid == p || name == p,
                    None => p == "default",
                })
        })
        .collect();
    let updated = |r: &serde_json::Map<String, Value>| {
        r.get("updated_at").and_then(Value::as_f64).unwrap_or(0.0)
    };
    rows.sort_by(|(ia, a), (ib, b)| updated(b).total_cmp(&updated(a)).then_with(|| ia.cmp(ib)));
    for (id, mut row) in rows
        .into_iter()
        .skip(args.offset)
        .take(args.limit.unwrap_or(usize::MAX))
    {
        let (pid, pname) = project_of
            .get(&id)
            .cloned()
            .unwrap_or_else(|| ("default".into(), "default".into()));
        row.insert("project_id".into(), pid.into());
        row.insert("project".into(), pname.clone().into());
        ctx.out.record("session", &row);
        let title = match s(&row, "title") {
            "" => "(untitled)",
            t => t,
        };
        // A channel session shows its source as a prefix; its title is untouched.
        let prefix = match (s(&row, "channel"), s(&row, "source")) {
            ("", _) => String::new(),
            (_, "") => String::new(),
            (_, src) => format!("[{src}] "),
        };
        let flags = format!(
            "{}{}",
            if row.get("pinned").and_then(Value::as_bool) == Some(true) {
                "📌 "
            } else {
                ""
            },
            if row.get("unread").and_then(Value::as_bool) == Some(true) {
                "● "
            } else {
                ""
            }
        );
        ctx.out.line(format!(
            "{id:<16} {}  {:<11} {flags}{prefix}{title}  — {}",
            crate::out::short_time(updated(&row)),
            s(&row, "status"),
            s(&row, "preview"),
        ));
    }
    Ok(exit::OK)
}
