//! The session's commits as the planner and the read layer see them
//! ([`plan::History`]): each decoded once.

use std::collections::HashMap;

use super::plan;
use crate::error::Result;
use crate::git::{Head, Oid, SessionRepo};
use crate::session::Trailers;

/// The session's commits, as a plan reads them ([`plan::History`]): each
/// read once, with its tree and time for the read layer.
pub(super) struct Commits<'a> {
    repo: &'a SessionRepo,
    cache: HashMap<Oid, Decoded>,
}

/// What [`Commits`] keeps of a commit.
pub(super) struct Decoded {
    pub(super) parents: Vec<Oid>,
    pub(super) trailers: Trailers,
    pub(super) tree: Oid,
    pub(super) time: i64,
}

impl<'a> Commits<'a> {
    pub(super) fn new(repo: &'a SessionRepo) -> Self {
        Commits {
            repo,
            cache: HashMap::new(),
        }
    }

    pub(super) fn decoded(&mut self, id: Oid) -> Result<&Decoded> {
        if !self.cache.contains_key(&id) {
            let info = self.repo.commit_info(id)?;
            let trailers = Trailers::parse(&info.message);
            self.cache.insert(
                id,
                Decoded {
                    parents: info.parents,
                    trailers,
                    tree: info.tree,
                    time: info.time,
                },
            );
        }
        Ok(&self.cache[&id])
    }
}

impl plan::History for Commits<'_> {
    fn commit(&mut self, id: Oid) -> Result<(Vec<Oid>, Trailers)> {
        let d = self.decoded(id)?;
        Ok((d.parents.clone(), d.trailers.clone()))
    }

    /// A node's file under either naming: the commits before a session's
    /// files were renamed to one naming hold the old names.
    fn tree_holds(&mut self, id: Oid, files: &[&str]) -> Result<Vec<bool>> {
        let tree = self.decoded(id)?.tree;
        let others: Vec<Option<String>> = files
            .iter()
            .map(|f| crate::layout::paths::Naming::other_name(f))
            .collect();
        let mut names: Vec<&str> = files.to_vec();
        names.extend(others.iter().flatten().map(String::as_str));
        let held = self
            .repo
            .dir_holds(tree, crate::layout::paths::HISTORY, &names)?;
        let mut alt = held[files.len()..].iter();
        Ok(files
            .iter()
            .zip(&others)
            .enumerate()
            .map(|(i, (_, o))| held[i] | (o.is_some() && *alt.next().unwrap_or(&false)))
            .collect())
    }
}

/// HEAD's commit and every branch tip.
pub(super) fn every_tip(repo: &SessionRepo) -> Result<Vec<Oid>> {
    tips_of(repo, &repo.head()?)
}

/// `head`'s commit and every branch tip.
pub(super) fn tips_of(repo: &SessionRepo, head: &Head) -> Result<Vec<Oid>> {
    let mut tips: Vec<Oid> = head.commit.into_iter().collect();
    for (_, t) in repo.branches()? {
        if !tips.contains(&t) {
            tips.push(t);
        }
    }
    Ok(tips)
}
