//! The writing of a run's plan, under the session's lock: the session
//! (created dated by the transcript's first record), the node files of
//! the closed turns with meta.json as each left it, one mirror run that
//! commits each unit, the uuid rows and the cursor, the turn still open in
//! the pending area ([`crate::layout::pending`]), the index journal row.

use serde_json::Value;

use super::cursor::{Cursor, Cursors, Seed, moved_back, save_base, saved_base, window};
use super::plan::{Fresh, Plan, Target, Written, fresh};
use super::{Agent, Item, Options, Outcome, spill};
use crate::error::Result;
use crate::layout::schema::{self, Meta, Node};
use crate::layout::{SessionDir, StateDir, atomic, lock, registry};
use crate::mirror::{self, CommitOptions};
use crate::store::{self, Created, NewNode, NewSession};

/// Above this many new nodes an import writes its objects as one pack.
const BULK_NODES: usize = 64;

/// Write `plan` into the session `target` names (made first when there is
/// none), under its lock; `out` says what was written.
pub(super) fn write(
    state: &StateDir,
    opts: &Options,
    mut target: Target,
    mut plan: Plan,
    out: &mut Outcome,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    let sd = match target.existing.take() {
        Some(sd) => sd,
        None => create(state, opts, &target, &plan, out)?,
    };
    // Decided under the lock: two imports of one transcript (a hook and a
    // cron job) add each node once.
    let _lock = lock::session(&sd, lock::Kind::Exclusive, opts.locks)?;
    let Fresh {
        items,
        written,
        cursors,
        read_before,
    } = fresh(Some(&sd), std::mem::take(&mut plan.items), &target)?;
    crate::out::trace("import: new items found");
    out.nodes = items.len();
    out.turns = items.iter().filter(|(i, _)| i.starts_turn()).count();
    out.open = plan.open.len();
    let w = Writer {
        state,
        sd: &sd,
        target: &target,
        // `redact = on-write`: nothing below writes a secret.
        redact: state.redacts_on_write(),
    };
    let done = w.commit(items, written, &plan, warn)?;
    if !w.keep_cursor(&mut plan, cursors, read_before)? {
        return Ok(());
    }
    w.keep_open(plan)?;
    if done.meta != done.before || done.preview.is_some() {
        registry::journal_append(
            state,
            &schema::index_row(&done.meta, &target.session, done.preview.as_deref()),
        )?;
    }
    if mirror::maintain_if_due(&sd)? == Some(false) {
        warn("`git` was not found: skipping background packing of the session repo".into());
    }
    Ok(())
}

/// The session for a transcript no session was made of yet, dated by its
/// first record that has a time.
fn create(
    state: &StateDir,
    opts: &Options,
    target: &Target,
    plan: &Plan,
    out: &mut Outcome,
) -> Result<SessionDir> {
    let (items, open, mapped) = (&plan.items, &plan.open, &plan.mapped);
    let spec = NewSession {
        id: target.session.clone(),
        // Set by the first reply written, as every field of a
        // committed meta.json is: by the transcript up to its turn.
        agent_id: None,
        title: None,
        source: Some(target.agent.source().into()),
        work_dir: mapped.cwd.clone(),
        project: bind_to(state, opts.project, mapped.cwd.as_deref())?,
    };
    let first = plan
        .first_time
        .or(items.first().map(|(i, _)| i.created_at))
        .or(open.first().map(|i| i.created_at))
        .unwrap_or(0.0);
    Ok(
        match store::create(state, &spec, None, first, opts.locks)? {
            Created::New(sd) => {
                out.created = true;
                sd
            }
            Created::Existing(sd) => sd,
        },
    )
}

/// The session a run writes into, under its lock.
struct Writer<'a> {
    state: &'a StateDir,
    sd: &'a SessionDir,
    target: &'a Target<'a>,
    /// `redact = on-write`: nothing written holds a secret.
    redact: bool,
}

/// What [`Writer::commit`] left: meta.json before and after, and the
/// preview of the last message written.
struct Committed {
    meta: Meta,
    before: Meta,
    preview: Option<String>,
}

impl Writer<'_> {
    /// The new nodes and meta.json, then one mirror run: one commit per
    /// unit.
    fn commit(
        &self,
        items: Vec<(Item, bool)>,
        written: Vec<Written>,
        plan: &Plan,
        warn: &mut dyn FnMut(String),
    ) -> Result<Committed> {
        let (sd, key, redact) = (self.sd, self.target.key(), self.redact);
        // A pack for many commits; a hook's turn or two as loose
        // objects, as `commit-turn` writes them (a pack costs more).
        let bulk = items.len() > BULK_NODES;
        let latest = items.iter().map(|(i, _)| i.created_at).fold(0.0, f64::max);
        let preview = items
            .iter()
            .rev()
            .find(|(i, _)| i.role == "user")
            .and_then(|(i, _)| i.output.as_str())
            .map(|text| {
                if redact {
                    schema::preview(&crate::secrets::redact_str(text))
                } else {
                    schema::preview(text)
                }
            });
        let before = Meta::read(&sd.meta())?;
        // An import of this transcript cut short: meta.json goes on from where
        // that one began, over the nodes it wrote.
        let (mut meta, written) = match saved_base(sd, key) {
            Some((base, _)) => (moved_back(before.clone(), &base), written),
            None => (before.clone(), Vec::new()),
        };
        let saving = !items.is_empty() || !written.is_empty();
        if saving {
            save_base(sd, key, Some((&meta, plan.finish)))?;
        }
        // Every new node, then one mirror run: one commit per unit (each dated
        // by its nodes, its meta.json as it stood after its last node), their
        // objects in one pack.
        let mut metas: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut split_before: Vec<u64> = Vec::new();
        // The attachments each node names, committed with it.
        let mut attached: Vec<(u64, String)> = Vec::new();
        let mut updated = meta.f64("updated_at").unwrap_or(0.0);
        // meta.json after each node, as it moves: the same for the nodes an
        // import cut short wrote (read again) as for those written now.
        let mut after = |meta: &mut Meta, n: &Node, start: bool| {
            if start {
                split_before.push(n.seq as u64);
            }
            updated = updated.max(n.created_at);
            meta.set("updated_at", updated);
            follow(meta, n);
            metas.push((n.seq as u64, meta.to_json()));
            attached.extend(
                spill::named(&n.metadata)
                    .into_iter()
                    .map(|p| (n.seq as u64, p)),
            );
        };
        for Written { node: n, start, .. } in &written {
            store::moved(&mut meta, n, n.created_at.max(0.0));
            after(&mut meta, n, *start);
        }
        if !items.is_empty() {
            let mut starts = Vec::with_capacity(items.len());
            let nodes = self.new_nodes(items, &mut starts)?;
            let mut k = 0;
            store::append_all_with(sd, &mut meta, nodes, &mut |meta, n| {
                after(meta, n, starts[k]);
                k += 1;
            })?;
            crate::out::trace("import: nodes written");
        }
        if meta != before {
            atomic::write(&sd.meta(), &meta.to_json())?;
        }
        mirror::commit_pending(
            sd,
            &self.target.session,
            &CommitOptions {
                // (Never the clock: with `nodes_only`, every commit is dated
                // by its nodes.)
                now: latest,
                bulk,
                metas,
                split_before,
                attached: attached
                    .into_iter()
                    .map(|(seq, p)| (seq, p.into_bytes()))
                    .collect(),
                interrupted: plan.interrupted,
                nodes_only: true,
                ..Default::default()
            },
            &mut |_| Ok(()),
            warn,
        )?;
        if saving {
            save_base(sd, key, None)?;
        }
        Ok(Committed {
            meta,
            before,
            preview,
        })
    }

    /// The nodes `items` are written as (each with its time), and in
    /// `starts` whether each starts a commit.
    fn new_nodes(
        &self,
        items: Vec<(Item, bool)>,
        starts: &mut Vec<bool>,
    ) -> Result<Vec<(NewNode, f64)>> {
        let (sd, redact) = (self.sd, self.redact);
        let (agent, foreign) = (self.target.agent, self.target.foreign());
        let naming = self.state.naming_for(sd);
        items
            .into_iter()
            .map(|(item, start)| {
                starts.push(start);
                let time = item.created_at.max(0.0);
                let mut new = node(agent, item, foreign);
                new.naming = naming;
                // Secrets go before the long strings are stored apart.
                if redact {
                    crate::secrets::redact_node_values(
                        &mut [&mut new.input, &mut new.output],
                        &mut [&mut new.metadata, &mut new.extra],
                    );
                }
                // Too big for a node file: its long strings are stored
                // once, whole, beside it.
                spill::fit(sd, &mut new)?;
                Ok((new, time))
            })
            .collect()
    }

    /// The uuid rows of the records read and the cursor: where the next
    /// run starts. `false` when another run read more of the transcript
    /// (this one waited for the lock): its cursor and pending turn stay.
    fn keep_cursor(
        &self,
        plan: &mut Plan,
        mut cursors: Cursors,
        read_before: usize,
    ) -> Result<bool> {
        let (sd, key, agent, path) = (
            self.sd,
            self.target.key(),
            self.target.agent,
            self.target.path,
        );
        let (from, next, end) = (plan.from, plan.next, plan.end);
        let mapped = &mut plan.mapped;
        // (Read whole, every row is known again: rows of a session imported
        // before rows were kept are written too.)
        let rows_from = if from.1 == 0 { 0 } else { read_before };
        Seed::append(sd, &mapped.index, rows_from, next.0)?;
        // Codex: the state to go on from, if the mapping knows it there (else
        // the next run reads the rollout whole).
        let state = match agent {
            Agent::ClaudeCode => None,
            Agent::Codex if next == end => mapped.state_end.take(),
            // The state before line `next`: the last change at or before it.
            Agent::Codex => mapped
                .states
                .iter()
                .take_while(|(l, _)| *l <= next.0)
                .last()
                .map(|(_, s)| s.clone()),
        }
        .map(|s| serde_json::to_value(s).expect("a state serialises"));
        let bytes = (agent == Agent::ClaudeCode || state.is_some()).then_some(next.1);
        let cursor = Cursor {
            lines: next.0,
            bytes,
            state,
            path: std::path::absolute(path)
                .ok()
                .map(|p| p.to_string_lossy().into_owned()),
        };
        // A run that read the transcript before another one read more of it
        // (it waited for the lock) leaves that one's cursor and pending turn.
        let behind = read_before > next.0 && window(path, cursors.0.get(key)).1 > 0;
        if behind {
            return Ok(false);
        }
        if cursors.0.get(key) != Some(&cursor) {
            cursors.0.insert(key.to_string(), cursor);
            cursors.write(sd)?;
        }
        Ok(true)
    }

    /// The turn still open, whole, outside `history/`, and the records
    /// after the last node.
    fn keep_open(&self, plan: Plan) -> Result<()> {
        let (agent, foreign, redact) = (self.target.agent, self.target.foreign(), self.redact);
        // The turn still open, whole, outside `history/`.
        let mut open_nodes: Vec<Node> = plan
            .open
            .into_iter()
            .map(|item| pending_node(agent, item, foreign))
            .collect();
        let mut kept: Vec<Value> = plan.trailing.iter().map(|l| l.kept(foreign)).collect();
        if redact {
            for n in &mut open_nodes {
                crate::secrets::redact_node_values(
                    &mut [&mut n.input, &mut n.output],
                    &mut [&mut n.metadata, &mut n.extra],
                );
            }
            crate::secrets::redact_node_values(&mut kept.iter_mut().collect::<Vec<_>>(), &mut []);
        }
        crate::layout::pending::write(
            self.sd,
            self.target.key(),
            self.target.path,
            plan.next.0,
            &open_nodes,
            &kept,
        )
    }
}

/// meta.json after node `n` of an import: the agent is the first reply's
/// model (a session is made with the default agent, `main`, for the first
/// prefix of a transcript to make it may hold no reply yet), the title
/// (unless a person gave one) the first message.
fn follow(meta: &mut Meta, n: &Node) {
    if n.role == "llm"
        && meta
            .str("agent_id")
            .is_none_or(|a| a.is_empty() || a == crate::store::DEFAULT_AGENT)
        && let Some(model) = n.metadata.get("model").and_then(Value::as_str)
    {
        meta.set("agent_id", model);
    }
    if n.role == "user"
        && n.is_top_level()
        && meta.title().is_empty()
        && !meta.flag("_user_titled")
        && let Some(text) = n.output.as_str()
    {
        let title = crate::session::title_from_text(text);
        if !title.is_empty() {
            meta.set("title", title);
            meta.set("_auto_titled", true);
        }
    }
}

/// A node of the turn still open, as it would be written (no seq yet).
fn pending_node(agent: Agent, item: Item, transcript: Option<&str>) -> Node {
    let new = node(agent, item, transcript);
    Node {
        id: new.id.unwrap_or_default(),
        created_at: new.created_at.unwrap_or(0.0),
        seq: 0,
        role: new.role,
        name: new.name.unwrap_or_default(),
        input: new.input,
        output: new.output,
        caller: new.caller.unwrap_or_default(),
        predecessor: new.predecessor.flatten(),
        reads: Vec::new(),
        metadata: new.metadata,
        extra: Default::default(),
        python_keys: false,
    }
}

/// The project a new session is bound to: `--project`, else the registered
/// project whose directory is the transcript's `cwd`.
fn bind_to(state: &StateDir, project: Option<&str>, cwd: Option<&str>) -> Result<Option<String>> {
    if let Some(key) = project {
        return Ok(Some(crate::project::get(state, key)?.id).filter(|p| p != "default"));
    }
    let Some(cwd) = cwd else { return Ok(None) };
    let projects = crate::layout::projects::read(state)?;
    Ok(crate::layout::projects::find(&projects, cwd)
        .filter(|p| p.id != "default" && !p.path_missing())
        .map(|p| p.id))
}

/// The node an item is written as.
fn node(agent: Agent, item: Item, transcript: Option<&str>) -> NewNode {
    let mut metadata = item.metadata;
    metadata.insert("source".into(), agent.source().into());
    metadata.insert(
        "source_records".into(),
        Value::Array(item.lines.iter().map(|l| l.kept(transcript)).collect()),
    );
    NewNode {
        role: item.role.into(),
        id: Some(item.id),
        predecessor: Some(item.predecessor),
        caller: item.caller,
        name: item.name,
        input: item.input,
        output: item.output,
        metadata,
        created_at: Some(item.created_at),
        ..Default::default()
    }
}
