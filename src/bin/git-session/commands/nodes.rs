//! `nodes`, `cat`: one session's nodes as stored, with their provenance
//! (SPEC §5.18).
//!
//! Reads: the catalog, the node files asked for, the commits that hold
//! them (by their trailers, from each tip back only as far as needed; by
//! their trees, each read once, for commits without trailers).
//! Writes: nothing. Locks: the session, shared. Prints: one `session_node`
//! record per node (`cat`: the file itself).

use std::io::Write;

use crate::context::Ctx;
use git_session::error::{Result, Usage, exit};
use git_session::layout::lock;
use git_session::out::records::SessionNode;
use git_session::read;

/// Print a session's nodes with seq above N, in seq order, every branch,
/// each with its provenance: project, session, node id, seq, the turn
/// commit that holds it (null while uncommitted) and its time.
///
/// An ingest job keeps the highest seq it has seen and asks again with
/// `--after-seq` it: every node is handed out exactly once, however many
/// processes append meanwhile (seqs only grow).
#[derive(Debug, clap::Args)]
pub struct NodesArgs {
    /// Session id
    pub session: String,
    /// Only nodes with a seq above N [default: every node]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub after_seq: Option<i64>,
    /// At most N nodes (the lowest seqs first)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// The ingestion time the records carry (unix seconds) [default: now]
    #[arg(long, value_name = "T")]
    pub ingestion_time: Option<f64>,
}

/// Print one node as stored: the node file's JSON, byte for byte (with
/// `--json`, a `session_node` record with its provenance).
#[derive(Debug, clap::Args)]
pub struct CatArgs {
    /// Session id
    pub session: String,
    /// Node id
    pub node: String,
}

/// The project a session is bound to (`default` when none).
pub fn project_of(ctx: &Ctx, session: &str) -> String {
    let (of, _) = git_session::lifecycle::projects(&ctx.state);
    of.get(session)
        .map_or_else(|| "default".to_string(), |(id, _)| id.clone())
}

/// The widest node id column: a longer id shifts its own line only.
pub const ID_WIDTH: usize = 24;

/// The width of the node id column for `ids`: the longest, up to
/// [`ID_WIDTH`].
pub fn id_width<'a>(ids: impl Iterator<Item = &'a str>) -> usize {
    ids.map(|id| id.chars().count())
        .max()
        .unwrap_or(0)
        .min(ID_WIDTH)
}

/// The human line of a node record, its id padded to `id_width`.
pub fn line(r: &SessionNode, id_width: usize) -> String {
    let text = r
        .node
        .get("output")
        .map(git_session::layout::schema::value_text)
        .unwrap_or_default();
    format!(
        "{:>5} {:<id_width$} {:<9} {} {}",
        r.seq,
        r.node_id,
        r.role,
        r.commit
            .as_deref()
            .map_or("-------", |c| &c[..7.min(c.len())]),
        git_session::session::cut(&git_session::session::one_line(&text), 100)
    )
}

pub fn ingestion_time(t: Option<f64>) -> Result<f64> {
    match t {
        Some(t) if !t.is_finite() => Err(Usage::IngestionTime { value: t }.into()),
        Some(t) => Ok(t),
        None => Ok(git_session::out::now()),
    }
}

pub fn run(ctx: &Ctx, args: NodesArgs) -> Result<u8> {
    let at = ingestion_time(args.ingestion_time)?;
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
    let nodes = read::session_nodes(&sd, args.after_seq.unwrap_or(-1), args.limit)?;
    let project = project_of(ctx, &args.session);
    let width = id_width(nodes.entries().iter().map(|e| e.id.as_str()));
    nodes.each_record(&sd, &args.session, &project, at, |r| {
        ctx.out.record(&r);
        ctx.out.line(line(&r, width));
        Ok(())
    })?;
    // The turn a transcript has not closed yet: named for a person, never
    // handed out as a record (it has no seq until it is written).
    for open in git_session::layout::pending::unwritten(&sd).values() {
        for n in open.nodes() {
            ctx.out.line(format!(
                "{:>5} {:<width$} {:<9} in progress {}",
                "-",
                git_session::out::in_one_line(&n.id),
                git_session::out::in_one_line(&n.role),
                git_session::session::cut(&git_session::session::one_line(&n.text()), 100)
            ));
        }
    }
    Ok(exit::OK)
}

pub fn cat(ctx: &Ctx, args: CatArgs) -> Result<u8> {
    let sd = ctx.state.find_session(&args.session)?;
    let _lock = ctx.lock_session(&sd, lock::Kind::Shared)?;
    let node = read::find_node(&sd, &args.session, &args.node)?;
    if ctx.out.json {
        let project = project_of(ctx, &args.session);
        let at = git_session::out::now();
        let commit = read::commits_of(&sd, std::slice::from_ref(&node.entry))?
            .pop()
            .flatten();
        ctx.out
            .record(&read::record_of(node, commit, &args.session, &project, at));
        return Ok(exit::OK);
    }
    let bytes = &node.bytes;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    if !bytes.ends_with(b"\n") {
        let _ = out.write_all(b"\n");
    }
    Ok(exit::OK)
}
