//! The `history/` directory: the catalog of node files as their names tell,
//! and reading nodes by payload.
//!
//! Listing a large `history/` is slow (13 ms for 15,000 names on ext4), so the
//! catalog is cached in `.git/git-session/catalog`: one line per node,
//! `<id>\t<seq>\t<letter>\t<file>`, in seq order, appended by `append` under
//! the session lock. `catalog.stamp` holds `<history/ mtime ns> <catalog
//! length>` as of our last write; when `history/` changed since (another
//! writer, a crash between node and catalog), the cache is rebuilt from the
//! directory. Queries search the raw bytes, so an append does not parse it,
//! and a large catalog is mapped, not copied: reading 500 KB (15,000 nodes)
//! into fresh memory cost an append 120 page faults, about 0.5 ms.

use std::io::Write;
use std::path::Path;

use bstr::ByteSlice;

use crate::error::{Error, IoContext, Result};

use super::mapped::Bytes;
use super::paths::{SessionDir, TEMP_PREFIX, parse_node_file_name};
use super::schema::{Node, read_bounded};

const HEADER: &str = "git-session catalog v1\n";

/// One node file as its name tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    pub letter: char,
    pub id: String,
    pub file: String,
}

/// All node files of a session, in seq order.
#[derive(Debug, Default)]
pub struct Catalog {
    /// `HEADER` then one line per node, sorted by seq.
    text: Bytes,
    /// Files in `history/` whose names are not node names.
    pub foreign: Vec<String>,
    /// Ids that more than one file claims (known after a directory read).
    pub duplicate_ids: Vec<String>,
    /// True when `history/` changed outside our appends since the last commit
    /// (this catalog was read from the directory, now or by an earlier
    /// command): a full comparison with the index is owed.
    pub full_diff: bool,
    /// The ids of a catalog kept between `batch` requests ([`kept`]).
    ids: Option<std::sync::Arc<kept::Ids>>,
}

fn line_of(e: &Entry) -> String {
    format!("{}\t{}\t{}\t{}\n", e.id, e.seq, e.letter, e.file)
}

fn parse_line(line: &[u8]) -> Option<Entry> {
    let line = std::str::from_utf8(line).ok()?;
    let mut f = line.split('\t');
    let id = f.next()?;
    let seq = f.next()?.parse().ok()?;
    let letter = f.next()?.chars().next()?;
    let file = f.next()?;
    Some(Entry {
        seq,
        letter,
        id: id.into(),
        file: file.into(),
    })
}

fn mtime_ns(path: &Path) -> Option<i128> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    Some(md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128)
}

impl Catalog {
    /// The catalog from the cache when it is current, else from the directory,
    /// and then the cache is rewritten (a failure to cache is not an error).
    /// The caller holds the session lock (shared or exclusive): cache writes
    /// never race an append.
    pub fn load(sd: &SessionDir) -> Result<Catalog> {
        Self::load_inner(sd, true)
    }

    /// Like [`Catalog::load`] without writing the cache (no lock needed).
    pub fn peek(sd: &SessionDir) -> Result<Catalog> {
        Self::load_inner(sd, false)
    }

    /// The catalog from the directory, never trusting the cache: for a
    /// repair (`backfill`, `verify --fix`). The stamp cannot see another
    /// program (the Python store) that writes `history/` in the instant of
    /// an append, within one tick of the file system's clock or between the
    /// append's write and its look at the directory's time; a cache that
    /// then disagrees with the directory is rewritten, with the full
    /// comparison with the index owed. The caller holds the session lock.
    pub fn load_listed(sd: &SessionDir) -> Result<Catalog> {
        let history = sd.history();
        if let Some(cached) = Self::from_cache(sd, &history, true)
            && files_of(&cached) == files_of(&Self::read(&history)?)
        {
            return Ok(cached);
        }
        Self::listed(sd, true)
    }

    fn load_inner(sd: &SessionDir, write: bool) -> Result<Catalog> {
        if let Some(c) = Self::from_cache(sd, &sd.history(), write) {
            return Ok(c);
        }
        Self::listed(sd, write)
    }

    /// The directory listed; with `write`, the cache rewritten from it.
    fn listed(sd: &SessionDir, write: bool) -> Result<Catalog> {
        let history = sd.history();
        // The stamp is taken before listing: a file added meanwhile makes the
        // next load rebuild again.
        let stamp = mtime_ns(&history);
        let c = Self::read(&history)?;
        if let Some(m) = stamp
            && write
            && sd.private_dir().is_dir()
            && c.foreign.iter().all(|f| !f.contains(['\t', '\n']))
        {
            let mut text = c.text.to_vec();
            for f in &c.foreign {
                text.extend_from_slice(format!("\t{f}\n").as_bytes());
            }
            let _ = write_cache(sd, &text, m, true);
        }
        Ok(c)
    }

    /// The cache when current; `keep`: kept for the next `batch` request
    /// (a load under the session lock, on the way to an append or a
    /// commit; not a peek, which may pass over many sessions once).
    fn from_cache(sd: &SessionDir, history: &Path, keep: bool) -> Option<Catalog> {
        let (stamp, mut file, state) = current_stamp(sd, history)?;
        let path = sd.catalog_file();
        if let Some((text, ids)) = kept::get(&path, state) {
            return Some(Catalog {
                text: Bytes::Shared(text),
                foreign: Vec::new(),
                duplicate_ids: Vec::new(),
                full_diff: stamp.full,
                ids: Some(ids),
            });
        }
        let len = stamp.len;
        let text = super::mapped::read(&mut file, len).ok()?;
        // A cache that is not UTF-8 throughout is damaged: rebuilt, never
        // read line by line around the damage.
        if text.len() as u64 != len
            || !text.starts_with(HEADER.as_bytes())
            || std::str::from_utf8(&text).is_err()
        {
            return None;
        }
        // Foreign lines start with a tab (no id). Usually there are none,
        // and the text is the catalog as it is (no copy of a large session's
        // lines on every append).
        let mut foreign = Vec::new();
        let mut ids = None;
        let text = if text.find(b"\n\t").is_some() {
            let mut nodes = Vec::with_capacity(text.len());
            for line in text.split_inclusive(|b| *b == b'\n') {
                match line.strip_prefix(b"\t") {
                    Some(f) => {
                        let f = f.strip_suffix(b"\n").unwrap_or(f);
                        foreign.push(String::from_utf8_lossy(f).into_owned());
                    }
                    None => nodes.extend_from_slice(line),
                }
            }
            Bytes::Owned(nodes)
        } else {
            match keep.then(|| kept::put(path, state, &text)).flatten() {
                Some((shared, kept_ids)) => {
                    ids = Some(kept_ids);
                    Bytes::Shared(shared)
                }
                None => text,
            }
        };
        Some(Catalog {
            text,
            foreign,
            duplicate_ids: Vec::new(),
            full_diff: stamp.full,
            ids,
        })
    }

    /// List the directory (no cache).
    pub fn read(history: &Path) -> Result<Catalog> {
        let mut entries = Vec::new();
        let mut foreign = Vec::new();
        let rd = match std::fs::read_dir(history) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Catalog {
                    text: Bytes::Owned(HEADER.into()),
                    full_diff: true,
                    ..Default::default()
                });
            }
            Err(e) => return Err(e).io("list", history),
        };
        for de in rd {
            let de = de.io("list", history)?;
            let name = de.file_name();
            let Some(name) = name.to_str() else {
                foreign.push(name.to_string_lossy().into_owned());
                continue;
            };
            if name.starts_with(TEMP_PREFIX) {
                continue;
            }
            match parse_node_file_name(name) {
                Some((seq, letter, id)) => entries.push(Entry {
                    seq,
                    letter,
                    id: id.to_string(),
                    file: name.to_string(),
                }),
                None => foreign.push(name.to_string()),
            }
        }
        entries.sort_by(|a, b| a.seq.cmp(&b.seq).then_with(|| a.file.cmp(&b.file)));
        let mut seen = std::collections::HashSet::with_capacity(entries.len());
        let mut duplicate_ids = Vec::new();
        let mut text = String::with_capacity(HEADER.len() + entries.len() * 40);
        text.push_str(HEADER);
        for e in &entries {
            if !seen.insert(e.id.as_str()) {
                duplicate_ids.push(e.id.clone());
            }
            text.push_str(&line_of(e));
        }
        foreign.sort();
        Ok(Catalog {
            text: Bytes::Owned(text.into_bytes()),
            foreign,
            duplicate_ids,
            full_diff: true,
            ids: None,
        })
    }

    fn node_lines(&self) -> impl DoubleEndedIterator<Item = &[u8]> {
        let body = &self.text[HEADER.len().min(self.text.len())..];
        body.strip_suffix(b"\n")
            .unwrap_or(body)
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
    }

    /// Every node, in seq order.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = Entry> + '_ {
        self.node_lines().filter_map(parse_line)
    }

    /// Nodes from the newest back.
    pub fn rev_entries(&self) -> impl Iterator<Item = Entry> + '_ {
        self.node_lines().rev().filter_map(parse_line)
    }

    pub fn get(&self, id: &str) -> Option<Entry> {
        if id.is_empty() || id.contains(['\t', '\n']) {
            return None;
        }
        if self.ids.as_ref().is_some_and(|ids| !ids.may_hold(id)) {
            return None;
        }
        let needle = format!("\n{id}\t");
        // The header ends with a newline, so every node line follows one.
        // The nodes asked for are mostly the latest ones: the last 16 KiB
        // first, then the rest (forward searches both; a reverse search has
        // no vectorized prefilter and is slower over a whole large catalog).
        let text = &self.text[..];
        let tail = text.len().saturating_sub(16 * 1024);
        let at = match text[tail..].find(needle.as_bytes()) {
            Some(i) => tail + i,
            None => text[..(tail + needle.len()).min(text.len())].find(needle.as_bytes())?,
        } + 1;
        let end = self.text[at..]
            .find_byte(b'\n')
            .map_or(self.text.len(), |e| at + e);
        parse_line(&self.text[at..end])
    }

    pub fn contains(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    pub fn max_seq(&self) -> Option<u64> {
        self.rev_entries().next().map(|e| e.seq)
    }

    /// The latest node whose letter is one of `letters`: the last line
    /// holding `\t<letter>\t` (only the letter field can: ids hold no tab
    /// and seqs are digits), searched for as in [`Catalog::get`], and only
    /// that line parsed: the last 16 KiB first, then windows four times
    /// larger each, back to the start, so the search costs what lies after
    /// that node. (A session with no such node, only tool nodes say, is
    /// searched whole at every append.)
    pub fn latest(&self, letters: &str) -> Option<Entry> {
        let text = &self.text[..];
        let last_in = |from: usize, to: usize| -> Option<usize> {
            letters
                .chars()
                .filter_map(|c| {
                    let needle = format!("\t{c}\t");
                    let to = (to + needle.len() - 1).min(text.len());
                    text[from..to].find_iter(needle.as_bytes()).last()
                })
                .max()
                .map(|at| from + at)
        };
        let (mut to, mut window) = (text.len(), 16 * 1024);
        let at = loop {
            let from = to.saturating_sub(window);
            if let Some(at) = last_in(from, to) {
                break at;
            }
            if from == 0 {
                return None;
            }
            (to, window) = (from, window * 4);
        };
        let start = text[..at].rfind_byte(b'\n').map_or(0, |i| i + 1);
        let end = text[at..].find_byte(b'\n').map_or(text.len(), |e| at + e);
        parse_line(&text[start..end])
    }

    /// The first node whose letter is one of `letters`.
    pub fn first(&self, letters: &str, except: &str) -> Option<Entry> {
        self.node_lines()
            .filter_map(parse_line)
            .find(|e| letters.contains(e.letter) && e.id != except)
    }

    pub fn len(&self) -> usize {
        self.node_lines().count()
    }

    pub fn is_empty(&self) -> bool {
        self.text.len() <= HEADER.len()
    }
}

fn write_cache(sd: &SessionDir, text: &[u8], mtime: i128, full: bool) -> std::io::Result<()> {
    let tmp = super::temp_path(&sd.private_dir(), "catalog");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, sd.catalog_file())?;
    write_stamp(sd, mtime, text.len() as u64, full)
}

/// `catalog.stamp`: `<history/ mtime ns> <catalog length> <full diff owed>`.
struct Stamp {
    mtime: i128,
    len: u64,
    full: bool,
}

fn read_stamp(sd: &SessionDir) -> Option<Stamp> {
    let text = crate::layout::atomic::read_to_string(sd.catalog_stamp()).ok()?;
    let mut f = text.split_whitespace();
    Some(Stamp {
        mtime: f.next()?.parse().ok()?,
        len: f.next()?.parse().ok()?,
        full: f.next()? != "0",
    })
}

/// The stamp and the opened catalog when the cache is current: `history/`
/// unchanged since our last write, and the catalog of the length recorded.
fn current_stamp(sd: &SessionDir, history: &Path) -> Option<(Stamp, std::fs::File, kept::State)> {
    let stamp = read_stamp(sd)?;
    if mtime_ns(history)? != stamp.mtime {
        return None;
    }
    let file = crate::layout::atomic::open_read(sd.catalog_file()).ok()?;
    let state = kept::State::of(&file.metadata().ok()?);
    (state.len == stamp.len).then_some((stamp, file, state))
}

/// Catalogs kept between the requests of one `batch` process (see
/// `layout::kept`), so that an append to a large session reads only what it
/// adds, not the whole catalog again.
pub(crate) mod kept {
    use std::cell::RefCell;
    use std::collections::HashSet;
    use std::hash::BuildHasher;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use super::Catalog;
    use crate::layout::kept::Shelf;
    pub use crate::layout::kept::State;
    use crate::layout::mapped::Bytes;

    /// The ids of a kept catalog, as hashes: an id whose hash is not among
    /// them is not in the catalog, so a new id is known new without a
    /// search of the whole text.
    #[derive(Debug, Clone)]
    pub struct Ids {
        hash: foldhash::fast::RandomState,
        set: HashSet<u64, foldhash::fast::RandomState>,
    }

    impl Ids {
        fn of(text: &[u8]) -> Ids {
            let mut ids = Ids {
                hash: Default::default(),
                set: HashSet::default(),
            };
            ids.add(&text[super::HEADER.len().min(text.len())..]);
            ids
        }

        /// Add the ids of `lines` (catalog lines, `<id>\t…\n`).
        fn add(&mut self, lines: &[u8]) {
            for line in lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let id = line.split(|b| *b == b'\t').next().unwrap_or(line);
                self.set.insert(self.hash.hash_one(id));
            }
        }

        /// Whether `id` may be in the catalog (false: it is not).
        pub(super) fn may_hold(&self, id: &str) -> bool {
            self.set.contains(&self.hash.hash_one(id.as_bytes()))
        }
    }

    /// A kept catalog's text and ids.
    type Shared = (Arc<Vec<u8>>, Arc<Ids>);

    thread_local! {
        static KEPT: RefCell<Shelf<Shared>> = const { RefCell::new(Shelf::new()) };
    }

    /// The catalog at `path` when it is kept and its file is in `state`.
    pub(super) fn get(path: &Path, state: State) -> Option<Shared> {
        if !crate::layout::kept::on() {
            return None;
        }
        KEPT.with_borrow(|kept| {
            kept.get(path, state)
                .map(|(text, ids)| (Arc::clone(text), Arc::clone(ids)))
        })
    }

    /// Keep `text`, the catalog at `path` read in `state`; `None` when
    /// catalogs are not kept.
    pub(super) fn put(path: PathBuf, state: State, text: &[u8]) -> Option<Shared> {
        if !crate::layout::kept::on() {
            return None;
        }
        let text = Arc::new(text.to_vec());
        let ids = Arc::new(Ids::of(&text));
        let shared = (Arc::clone(&text), Arc::clone(&ids));
        KEPT.with_borrow_mut(|kept| kept.put(path, state, shared));
        Some((text, ids))
    }

    /// `lines` were appended to the catalog at `path`, read as `catalog`,
    /// which leaves it in `state`: the kept copy follows when it is the one
    /// `catalog` was (no one else wrote between: the caller holds the
    /// session lock), else it is dropped.
    pub(super) fn appended(path: &Path, catalog: Catalog, lines: &[u8], state: State) {
        KEPT.with_borrow_mut(|kept| {
            let Some((kept_state, (text, ids))) = kept.entry(path) else {
                return;
            };
            let same = matches!(&catalog.text, Bytes::Shared(read) if Arc::ptr_eq(read, text));
            if !same || text.len() as u64 + lines.len() as u64 != state.len {
                kept.forget(path);
                return;
            }
            // The caller's copy is gone: text and ids are extended in place.
            drop(catalog);
            Arc::make_mut(text).extend_from_slice(lines);
            Arc::make_mut(ids).add(lines);
            *kept_state = state;
        });
    }
}

fn write_stamp(sd: &SessionDir, mtime: i128, len: u64, full: bool) -> std::io::Result<()> {
    super::atomic::overwrite(
        &sd.catalog_stamp(),
        format!("{mtime} {len} {}\n", u8::from(full)).as_bytes(),
    )
}

/// After a commit that compared all of `history/` with the index: the cache
/// (if still current) no longer owes a full comparison.
pub fn mark_diffed(sd: &SessionDir) {
    if let Some(st) = read_stamp(sd)
        && mtime_ns(&sd.history()) == Some(st.mtime)
    {
        let _ = write_stamp(sd, st.mtime, st.len, false);
    }
}

/// The files a catalog names: node files and foreign ones.
fn files_of(c: &Catalog) -> std::collections::HashSet<String> {
    c.entries()
        .map(|e| e.file)
        .chain(c.foreign.iter().cloned())
        .collect()
}

/// When the cache would be trusted (its stamp matches `history/`) but names
/// other files than `listed`, the directory as read: how many node files it
/// misses and how many it names that are gone. Another program wrote
/// `history/` in the instant of an append ([`Catalog::load_listed`]).
pub fn stale_cache(sd: &SessionDir, listed: &Catalog) -> Option<(usize, usize)> {
    let cached = files_of(&Catalog::from_cache(sd, &sd.history(), false)?);
    let listed = files_of(listed);
    (cached != listed).then(|| {
        (
            listed.difference(&cached).count(),
            cached.difference(&listed).count(),
        )
    })
}

/// Before a node file enters `history/`: the stamp stops matching until
/// [`record`] writes it again. Without this, a writer killed between the
/// two would leave a stamp that still matches when the directory's time did
/// not move (a second write within one tick of the file-system clock), and
/// the next writer would miss the node (and could write its id twice).
/// Written in place: no file is created.
pub fn invalidate(sd: &SessionDir) {
    if sd.catalog_stamp().exists() {
        let _ = super::atomic::overwrite(&sd.catalog_stamp(), b"0 0 1\n");
    }
}

/// Record nodes just written to `history/`, in seq order (the caller holds
/// the session lock and loaded `catalog` in this process, so the cache is
/// current): their lines appended to the cache, and the stamp written once.
pub fn record(sd: &SessionDir, catalog: Catalog, entries: &[Entry]) -> Result<()> {
    let path = sd.catalog_file();
    let lines: String = entries.iter().map(line_of).collect();
    let state = (|| {
        let mut f =
            super::atomic::no_follow(std::fs::OpenOptions::new().append(true)).open(&path)?;
        f.write_all(lines.as_bytes())?;
        Ok::<_, std::io::Error>(kept::State::of(&f.metadata()?))
    })();
    let full_diff = catalog.full_diff;
    match (state, mtime_ns(&sd.history())) {
        (Ok(state), Some(m)) => {
            kept::appended(&path, catalog, lines.as_bytes(), state);
            // A stale stamp only costs a rebuild; it is never trusted wrongly,
            // because both the length and the directory time must match.
            let _ = write_stamp(sd, m, state.len, full_diff);
        }
        _ => {
            let _ = std::fs::remove_file(sd.catalog_stamp());
        }
    }
    Ok(())
}

/// Rewrite a node file in place (atomically), keeping the catalog cache
/// current: the name does not change, only the directory's time does.
pub fn rewrite(sd: &SessionDir, e: &Entry, bytes: &[u8]) -> Result<()> {
    let history = sd.history();
    // Only the stamp is needed: the catalog's content does not change.
    let current = current_stamp(sd, &history).map(|(st, ..)| st.full);
    super::atomic::write(&history.join(&e.file), bytes)?;
    if let Some(full) = current
        && let Some(m) = mtime_ns(&history)
        && let Ok(md) = std::fs::metadata(sd.catalog_file())
    {
        let _ = write_stamp(sd, m, md.len(), full);
    }
    Ok(())
}

/// The user node that starts the session's latest turn, if any.
pub fn latest_turn_start(sd: &SessionDir, catalog: &Catalog) -> Option<Node> {
    catalog
        .rev_entries()
        .filter(|e| e.letter == 'u')
        .filter_map(|e| read_node(&sd.history(), &e).ok())
        .find(|n| n.starts_turn())
}

/// Parse one node file; the name must agree with the payload's id.
pub fn read_node(history: &Path, entry: &Entry) -> Result<Node> {
    let path = history.join(&entry.file);
    let bytes = read_bounded(&path)?;
    let node = Node::parse(&bytes).map_err(|r| Error::corrupt(&path, r))?;
    if node.id != entry.id {
        return Err(Error::corrupt(
            &path,
            format!(
                "the file name says id `{}` but the node says `{}`",
                entry.id, node.id
            ),
        ));
    }
    Ok(node)
}

/// Parse every node, in payload `seq` order; a file that does not parse is
/// skipped with a warning (SPEC §2.2).
pub fn read_all(history: &Path, catalog: &Catalog, warn: &mut dyn FnMut(String)) -> Vec<Node> {
    let mut nodes: Vec<Node> = catalog
        .entries()
        .filter_map(|e| match read_node(history, &e) {
            Ok(n) => Some(n),
            Err(err) => {
                warn(format!(
                    "skipping `{}`: {err}",
                    history.join(&e.file).display()
                ));
                None
            }
        })
        .collect();
    nodes.sort_by_key(|n| n.seq);
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_over_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path().join("history");
        std::fs::create_dir(&h).unwrap();
        for f in [
            "000002-a-u.json",
            "000001-u-a-u.json",
            "0010-t-x.json",
            "notes.txt",
            "000003-u-ROOT.json",
        ] {
            std::fs::write(h.join(f), "{}").unwrap();
        }
        let c = Catalog::read(&h).unwrap();
        assert_eq!(c.len(), 4);
        assert_eq!(c.foreign, vec!["notes.txt"]);
        // `u` is an id here and also a letter: only the id field matches.
        assert_eq!(c.get("u").unwrap().file, "000002-a-u.json");
        assert_eq!(c.get("a-u").unwrap().seq, 1);
        assert!(!c.contains("a") && !c.contains("x.json") && !c.contains(""));
        assert_eq!(c.max_seq(), Some(10));
        assert_eq!(c.latest("u").unwrap().id, "ROOT");
        assert_eq!(c.first("u", "ROOT").unwrap().id, "a-u");
        assert_eq!(
            c.entries().map(|e| e.seq).collect::<Vec<_>>(),
            [1, 2, 3, 10]
        );
    }

    /// `latest` finds what a walk back over every entry finds: in the tail
    /// searched first, before it, across the boundary, and nothing.
    #[test]
    fn latest_is_the_last_entry_of_its_letters() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path().join("history");
        std::fs::create_dir(&h).unwrap();
        for seq in 1..=3000u64 {
            // One `c` early (outside the last 16 KiB), `t` runs, `a` sparse.
            let letter = match seq {
                7 => "c",
                s if s % 97 == 0 => "a",
                s if s % 3 == 0 => "u",
                _ => "t",
            };
            let f = format!("{seq:06}-{letter}-{letter}{seq}.json");
            std::fs::write(h.join(f), "{}").unwrap();
        }
        let c = Catalog::read(&h).unwrap();
        for letters in ["u", "a", "al", "t", "c", "ct", "x", "", "ua"] {
            let walked = c.rev_entries().find(|e| letters.contains(e.letter));
            assert_eq!(c.latest(letters), walked, "letters {letters:?}");
        }
        // The only `c` line's letter field cut by the tail's start, and by
        // the start of the next window back (64 KiB before it).
        let base = format!("{HEADER}c1\t1\tc\t000001-c-c1.json\n");
        let at = HEADER.len() + "c1\t1".len();
        for (split, back) in [(1, 16), (2, 16), (1, 80), (2, 80)] {
            let want = at + split + back * 1024;
            let mut t = base.clone();
            let mut seq = 2;
            while want - t.len() > 64 {
                t.push_str(&format!("t{seq}\t{seq}\tt\tf\n"));
                seq += 1;
            }
            let head = format!("t{seq}\t{seq}\tt\t");
            let pad = want - t.len() - head.len() - 1;
            t.push_str(&format!("{head}{}\n", "f".repeat(pad)));
            assert_eq!(t.len(), want);
            let part = Catalog {
                text: Bytes::Owned(t.into_bytes()),
                ..Default::default()
            };
            assert_eq!(part.latest("c").map(|e| e.id), Some("c1".into()));
        }
        // Every line as the last of its letter.
        let text = c.text.to_vec();
        for cut in (HEADER.len()..text.len()).step_by(997) {
            let end = text[..cut].rfind_byte(b'\n').unwrap() + 1;
            let part = Catalog {
                text: Bytes::Owned(text[..end].to_vec()),
                ..Default::default()
            };
            for letters in ["u", "a", "c", "t"] {
                let walked = part.rev_entries().find(|e| letters.contains(e.letter));
                assert_eq!(part.latest(letters), walked, "cut {cut}, {letters:?}");
            }
        }
    }

    use crate::layout::paths::test_session as session;

    /// Under `batch`, a catalog read or written by this process is used
    /// again while its file is as this process left it, and read afresh
    /// once anyone else appends to it or renames another over it.
    #[test]
    fn a_kept_catalog_is_used_only_while_its_file_is_unchanged() {
        let (dir, sd) = session();
        let node = |seq: u64, id: &str| {
            let e = Entry {
                seq,
                letter: 'u',
                id: id.into(),
                file: format!("{seq:06}-u-{id}.json"),
            };
            std::fs::write(sd.history().join(&e.file), "{}").unwrap();
            e
        };
        node(1, "u1");
        Catalog::load(&sd).unwrap(); // lists the directory, writes the cache
        crate::layout::kept::keep_between_requests();
        let shared = |c: &Catalog| matches!(c.text, Bytes::Shared(_));
        assert!(
            !shared(&Catalog::peek(&sd).unwrap()),
            "a peek keeps nothing"
        );
        let first = Catalog::load(&sd).unwrap();
        assert!(shared(&first), "read from the cache, and kept");
        let again = Catalog::load(&sd).unwrap();
        assert!(shared(&again) && again.get("u1").is_some());
        drop(first);
        // This process appends: the kept copy follows.
        invalidate(&sd);
        let e2 = node(2, "u2");
        record(&sd, again, &[e2]).unwrap();
        let after = Catalog::load(&sd).unwrap();
        assert!(shared(&after));
        assert_eq!(*after.text, *Catalog::read(&sd.history()).unwrap().text);
        // Its ids follow too: the one just added is found, a new one is not.
        assert!(after.ids.is_some());
        assert!(after.contains("u1") && after.contains("u2") && !after.contains("u7"));
        // Another process appends (its line and its stamp): read afresh.
        let e3 = node(3, "u3");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(sd.catalog_file())
            .unwrap();
        f.write_all(line_of(&e3).as_bytes()).unwrap();
        drop(f);
        let len = std::fs::metadata(sd.catalog_file()).unwrap().len();
        write_stamp(&sd, mtime_ns(&sd.history()).unwrap(), len, after.full_diff).unwrap();
        drop(after);
        let fresh = Catalog::load(&sd).unwrap();
        assert_eq!(fresh.get("u3").map(|e| e.seq), Some(3), "not the kept copy");
        // Another catalog of the same length renamed over it: read afresh.
        let text = fresh.text.to_vec().replace(b"u3\t3", b"u9\t3");
        drop(fresh);
        let tmp = dir.path().join("other");
        std::fs::write(&tmp, &text).unwrap();
        std::fs::rename(&tmp, sd.catalog_file()).unwrap();
        let renamed = Catalog::load(&sd).unwrap();
        assert!(renamed.get("u9").is_some() && renamed.get("u3").is_none());
    }

    #[test]
    fn a_rewritten_node_keeps_the_cache_current() {
        let (_dir, sd) = session();
        std::fs::write(sd.history().join("000001-u-u1.json"), "{}").unwrap();
        let c = Catalog::load(&sd).unwrap();
        let e = c.get("u1").unwrap();
        // The directory's time moves on; the stamp follows it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        rewrite(&sd, &e, b"{\"id\":\"u1\"}").unwrap();
        let cached = Catalog::from_cache(&sd, &sd.history(), true).expect("still current");
        assert_eq!(cached.get("u1"), Some(e.clone()));
        assert_eq!(cached.full_diff, c.full_diff);
        // A stamp that no longer matches the catalog's length is not trusted.
        std::fs::write(sd.catalog_file(), "git-session catalog v1\n").unwrap();
        rewrite(&sd, &e, b"{}").unwrap();
        assert!(Catalog::from_cache(&sd, &sd.history(), true).is_none());
    }

    #[test]
    fn the_cache_reads_back_what_the_directory_holds() {
        // 2 nodes: read; 3,000 nodes: past MAP_FROM, mapped.
        for (n, foreign) in [(2, false), (2, true), (3000, false), (3000, true)] {
            let (_dir, sd) = session();
            let h = sd.history();
            for seq in 1..=n {
                let letter = if seq % 2 == 1 { "u" } else { "a" };
                let f = format!("{seq:06}-{letter}-{letter}{seq}.json");
                std::fs::write(h.join(f), "{}").unwrap();
            }
            if foreign {
                std::fs::write(h.join("notes.txt"), "").unwrap();
            }
            let listed = Catalog::load(&sd).unwrap();
            let size = std::fs::metadata(sd.catalog_file()).unwrap().len();
            assert_eq!(size >= super::super::mapped::MAP_FROM, n > 2);
            let cached = Catalog::from_cache(&sd, &h, true).expect("the cache is current");
            assert_eq!(
                matches!(cached.text, Bytes::Mapped(_)),
                n > 2 && !foreign,
                "a large catalog without foreign lines is mapped"
            );
            assert_eq!(*cached.text, *listed.text);
            assert_eq!(cached.foreign, listed.foreign);
            assert_eq!(cached.foreign.is_empty(), !foreign);
            assert_eq!(cached.get("a2").unwrap().seq, 2);
            assert_eq!(cached.len(), n as usize);
            assert_eq!(cached.max_seq(), Some(n));
            assert_eq!(cached.latest("u").unwrap().seq, n - 1 + n % 2);
            assert!(!cached.contains("a1") && !cached.contains(&format!("u{n}")));
            // Every node is found, in the tail searched first, the rest, and
            // across the boundary between them.
            for e in listed.entries() {
                assert_eq!(cached.get(&e.id).as_ref(), Some(&e));
            }
            // An append past the mapping's end is seen by the next load.
            let e = Entry {
                seq: n + 1,
                letter: 'u',
                id: "late".into(),
                file: format!("{:06}-u-late.json", n + 1),
            };
            std::fs::write(h.join(&e.file), "{}").unwrap();
            record(&sd, cached, std::slice::from_ref(&e)).unwrap();
            let again = Catalog::from_cache(&sd, &h, true).expect("the cache is still current");
            assert_eq!(again.max_seq(), Some(n + 1));
            assert_eq!(again.get("late").unwrap(), e);
            assert_eq!(again.len(), n as usize + 1);
        }
    }
}
