//! `update`, `archive`, `unarchive`: change a session's list fields (SPEC
//! §5.8) without touching `updated_at`.
//!
//! Reads and writes: meta.json, one index journal row. Locks: the session,
//! exclusive. Prints: with `--json`, one `session_updated` record holding the
//! id and only the fields that changed.

use crate::context::Ctx;
use git_session::error::{Result, Usage, exit};
use git_session::lifecycle::{self, Changes};

/// Change a session's title, pin, status, read state or group.
///
/// A title given here counts as typed by the user (`_user_titled`): automatic
/// titling leaves it alone. `updated_at` never moves (only appends are
/// activity), so the list order stays.
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    /// Session id
    pub session: String,
    /// New title (empty: clear it, and let automatic titling name it again)
    #[arg(long, value_name = "T")]
    pub title: Option<String>,
    /// Pin it to the top of a UI's list
    #[arg(long, conflicts_with = "unpin")]
    pub pin: bool,
    /// Take the pin off
    #[arg(long)]
    pub unpin: bool,
    /// idle, running, needs_input (or needs-input), done, failed or interrupted
    #[arg(long, value_name = "S")]
    pub status: Option<String>,
    /// Mark as read
    #[arg(long, conflicts_with = "unread")]
    pub read: bool,
    /// Mark as unread
    #[arg(long)]
    pub unread: bool,
    /// Group name (empty: no group)
    #[arg(long, value_name = "G")]
    pub group: Option<String>,
}

/// Archive a session: hidden from `list`, fully readable, reversible.
#[derive(Debug, clap::Args)]
pub struct ArchiveArgs {
    /// Session id
    pub session: String,
}

/// Bring an archived session back into `list`.
#[derive(Debug, clap::Args)]
pub struct UnarchiveArgs {
    /// Session id
    pub session: String,
}

fn apply(ctx: &Ctx, id: &str, changes: Changes) -> Result<u8> {
    let changed = lifecycle::update(&ctx.state, id, &changes, ctx.locks)?;
    if !changed.is_empty() {
        // Every reader of the layout sees the change in index.json.
        git_session::layout::registry::fold(&ctx.state, ctx.locks)?;
    }
    ctx.out.record(&git_session::out::records::SessionUpdated {
        session: id.into(),
        changed: changed.clone(),
    });
    if changed.is_empty() {
        ctx.out.note(format!("session `{id}` unchanged"));
    } else {
        ctx.out
            .line(format!("updated {id}: {}", describe(&changed).join(", ")));
    }
    Ok(exit::OK)
}

/// The changed fields as a person reads them: `unarchived`, `pinned`,
/// `status needs_input`, `title "New"`; the bookkeeping keys (`_…`) left out.
fn describe(changed: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    use serde_json::Value;
    changed
        .iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, v)| match (k.as_str(), v) {
            ("pinned", Value::Bool(b)) => if *b { "pinned" } else { "unpinned" }.to_string(),
            ("archived", Value::Bool(b)) => if *b { "archived" } else { "unarchived" }.to_string(),
            ("unread", Value::Bool(b)) => if *b { "unread" } else { "read" }.to_string(),
            (k, Value::String(s)) => format!("{k} {s:?}"),
            (k, Value::Null) => format!("{k} cleared"),
            (k, v) => format!("{k} {v}"),
        })
        .collect()
}

pub fn run(ctx: &Ctx, a: UpdateArgs) -> Result<u8> {
    let changes = Changes {
        title: a.title,
        pinned: (a.pin || a.unpin).then_some(a.pin),
        status: a.status,
        unread: (a.read || a.unread).then_some(a.unread),
        group: a.group,
        archived: None,
    };
    if changes.title.is_none()
        && changes.pinned.is_none()
        && changes.status.is_none()
        && changes.unread.is_none()
        && changes.group.is_none()
    {
        return Err(Usage::NothingToUpdate.into());
    }
    apply(ctx, &a.session, changes)
}

pub fn archive(ctx: &Ctx, session: &str, archived: bool) -> Result<u8> {
    apply(
        ctx,
        session,
        Changes {
            archived: Some(archived),
            ..Default::default()
        },
    )
}
