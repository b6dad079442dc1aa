//! The branches of a conversation: the DAG's tips, each with the git
//! branches that end at it, and the one the session is on. `export` shows
//! them as its branch switcher; `diff --branch` and `export --branch` find
//! one by name.

use crate::error::Result;
use crate::git::SessionRepo;
use crate::layout::history::Catalog;
use crate::layout::schema::{Meta, Node};

use super::Dag;

/// One line of the conversation: a tip of the DAG.
#[derive(Debug, Clone)]
pub struct Branch {
    /// Its git branches' names, or a description of a tip no branch ends at.
    pub label: String,
    /// The git branches that end at it (none for a tip not committed yet).
    pub names: Vec<String>,
    /// Its tip node.
    pub tip: String,
    pub turns: u64,
    pub last_activity: f64,
}

/// The DAG's tips, with the git branches that end at each (as `branch`
/// lists them), most recent first; and the one the session is on: the tip
/// its head is, else the one HEAD's branch ends at, else the latest tip
/// whose line holds the head.
pub fn branches(
    meta: &Meta,
    nodes: &[Node],
    catalog: &Catalog,
    repo: Option<&SessionRepo>,
) -> Result<(Vec<Branch>, usize)> {
    let dag = Dag::new(nodes);
    let tips = dag.tips();
    let (git_branches, head) = match repo {
        Some(r) => (r.branches()?, r.head()?.branch),
        None => (Vec::new(), None),
    };
    let files: Vec<(u64, String)> = tips
        .iter()
        .map(|t| {
            let file = catalog.get(&t.id).map(|e| e.file).unwrap_or_default();
            (t.seq.max(0) as u64, file)
        })
        .collect();
    let as_refs: Vec<(u64, &str)> = files.iter().map(|(s, f)| (*s, f.as_str())).collect();
    let ends = match repo {
        Some(r) => crate::mirror::tips_of_branches(r, &git_branches, &as_refs)?,
        None => Vec::new(),
    };
    let mut out: Vec<Branch> = Vec::new();
    for (ti, tip) in tips.iter().enumerate() {
        let names: Vec<String> = git_branches
            .iter()
            .zip(&ends)
            .filter(|(_, e)| **e == Some(ti))
            .map(|((b, _), _)| b.clone())
            .collect();
        let chain = dag.chain(&tip.id);
        let last_activity = nodes
            .iter()
            .filter(|n| n.id == tip.id || n.caller == tip.id)
            .map(|n| n.created_at)
            .fold(tip.created_at, f64::max);
        out.push(Branch {
            label: match names.is_empty() {
                true => format!("uncommitted line ending at {}", tip.id),
                false => names.join(", "),
            },
            names,
            tip: tip.id.clone(),
            turns: Dag::turns(&chain).len() as u64,
            last_activity,
        });
    }
    out.sort_by(|a, b| {
        b.last_activity
            .total_cmp(&a.last_activity)
            .then(a.tip.cmp(&b.tip))
    });
    // The line the session is on, as `show` and `branch` see it: the tip
    // its head is (a line not committed yet, which no git branch names),
    // else HEAD's branch, else the latest line that holds the head.
    let view = super::view_tip(meta, &dag);
    let at_view = view
        .as_deref()
        .and_then(|v| out.iter().position(|b| b.tip == v));
    let on_head = head.and_then(|h| out.iter().position(|b| b.names.contains(&h)));
    let holding_view = view.and_then(|v| {
        out.iter()
            .position(|b| b.tip == v || dag.chain(&b.tip).iter().any(|n| n.id == v))
    });
    Ok((out, at_view.or(on_head).or(holding_view).unwrap_or(0)))
}

/// The branch `name` names in `session`'s `branches`: a git branch that
/// ends at it, or its tip's node id; else [`ViewError::NoSuchBranch`] with
/// the branches there are.
pub fn branch_named(session: &str, branches: &[Branch], name: &str) -> Result<usize> {
    branches
        .iter()
        .position(|b| b.names.iter().any(|n| n == name))
        .or_else(|| branches.iter().position(|b| b.tip == name))
        .ok_or_else(|| {
            super::ViewError::NoSuchBranch {
                session: session.to_string(),
                name: name.to_string(),
                branches: branches.iter().map(|b| b.label.clone()).collect(),
            }
            .into()
        })
}
