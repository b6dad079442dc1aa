//! The index, read through gix's reader and written by our encoder of
//! gix's format (gix's writer for what it does not cover), and its entries
//! edited: stat data from the file system, staged entries applied (for
//! session repos and users' project repos alike; a project's index is
//! written by gix).
//!
//! A new index is written to a temp file of ours ([`SessionRepo::prepare_index`])
//! and put in place once the refs have moved ([`SessionRepo::commit_index`]),
//! holding git's `index.lock` only for the rename.

use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

use super::SessionRepo;
use crate::error::{IoContext, Result};
use crate::layout::atomic;
use crate::layout::lock::{Backoff, GIT_LOCK_WAIT};

/// What git stores for a working-tree file: its bytes, or a symlink's target.
pub fn read_worktree(path: &Path, md: &std::fs::Metadata) -> Result<Vec<u8>> {
    if md.file_type().is_symlink() {
        Ok(std::fs::read_link(path)
            .io("read the link", path)?
            .as_os_str()
            .as_encoded_bytes()
            .to_vec())
    } else {
        atomic::read(path).io("read", path)
    }
}

/// A file to add or update in the index.
pub struct Staged {
    pub path: Vec<u8>,
    pub id: gix::ObjectId,
    pub(super) mode: gix::index::entry::Mode,
    pub(super) stat: gix::index::entry::Stat,
}

impl Staged {
    /// The file at `path` (relative, `/`-separated) as `md` describes it,
    /// its content being blob `id`.
    pub fn new(path: Vec<u8>, md: &std::fs::Metadata, id: gix::ObjectId) -> Staged {
        Staged {
            path,
            id,
            mode: mode_of(md),
            stat: stat_of(md),
        }
    }

    /// A regular file at `path` whose content is blob `id`, with no stat
    /// data: the file on disk never matches it, so the next sweep hashes
    /// the file again (a commit's content that is not the file's now).
    pub fn unstatted(path: Vec<u8>, id: gix::ObjectId) -> Staged {
        Staged {
            path,
            id,
            mode: gix::index::entry::Mode::FILE,
            stat: gix::index::entry::Stat::default(),
        }
    }
}

/// A repository's index (gix's, behind this type: outside `src/git/` no
/// gix type is named).
pub struct Index(pub(super) gix::index::File);

/// What the index holds for one path.
#[derive(Clone, Copy)]
pub struct IndexEntry {
    pub id: gix::ObjectId,
    mode: gix::index::entry::Mode,
    stat: gix::index::entry::Stat,
}

impl IndexEntry {
    /// Whether the entry's stat data and mode describe the file as it is
    /// (then its content need not be read).
    pub fn matches(&self, md: &std::fs::Metadata) -> bool {
        self.stat == stat_of(md) && self.mode == mode_of(md)
    }

    /// Whether the entry's stat data describes the file as it is.
    pub fn stat_matches(&self, md: &std::fs::Metadata) -> bool {
        self.stat == stat_of(md)
    }

    /// Whether `staged` has this entry's content and mode.
    pub fn same_content(&self, staged: &Staged) -> bool {
        self.id == staged.id && self.mode == staged.mode
    }
}

impl Index {
    /// The entry at `path` (stage 0).
    pub fn entry(&self, path: &[u8]) -> Option<IndexEntry> {
        self.0.entry_by_path(path.as_bstr()).map(|e| IndexEntry {
            id: e.id,
            mode: e.mode,
            stat: e.stat,
        })
    }

    pub fn contains(&self, path: &[u8]) -> bool {
        self.0.entry_by_path(path.as_bstr()).is_some()
    }

    /// Every entry's path and id, in index order.
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], gix::ObjectId)> {
        self.0
            .entries()
            .iter()
            .map(|e| (e.path(&self.0).as_bytes(), e.id))
    }

    /// Add or update `staged` ([`apply`]).
    pub fn apply(&mut self, staged: Vec<Staged>) {
        apply(&mut self.0, staged);
    }

    /// Remove the entries at `paths`.
    pub fn remove(&mut self, paths: &std::collections::HashSet<Vec<u8>>) {
        remove(&mut self.0, paths);
    }
}

pub(super) fn stat_of(md: &std::fs::Metadata) -> gix::index::entry::Stat {
    use std::os::unix::fs::MetadataExt;
    let t = |s: i64, ns: i64| gix::index::entry::stat::Time {
        secs: s as u32,
        nsecs: ns as u32,
    };
    gix::index::entry::Stat {
        mtime: t(md.mtime(), md.mtime_nsec()),
        ctime: t(md.ctime(), md.ctime_nsec()),
        dev: md.dev() as u32,
        ino: md.ino() as u32,
        uid: md.uid(),
        gid: md.gid(),
        size: md.len() as u32,
    }
}

pub(super) fn mode_of(md: &std::fs::Metadata) -> gix::index::entry::Mode {
    use gix::index::entry::Mode;
    use std::os::unix::fs::PermissionsExt;
    if md.file_type().is_symlink() {
        Mode::SYMLINK
    } else if md.permissions().mode() & 0o111 != 0 {
        Mode::FILE_EXECUTABLE
    } else {
        Mode::FILE
    }
}

/// Update existing entries in place (lookups need sorted entries), then push
/// the new ones and sort once.
pub(super) fn apply(index: &mut gix::index::State, staged: Vec<Staged>) {
    let mut new = Vec::new();
    for s in staged {
        match index
            .entry_mut_by_path_and_stage(s.path.as_bstr(), gix::index::entry::Stage::Unconflicted)
        {
            Some(e) => {
                e.id = s.id;
                e.mode = s.mode;
                e.stat = s.stat;
            }
            None => new.push(s),
        }
    }
    if new.is_empty() {
        return;
    }
    // Room for the new paths at once (one copy of the session's paths, not
    // one per doubling).
    let mut backing = index.take_path_backing();
    backing.reserve(new.iter().map(|s| s.path.len()).sum());
    index.return_path_backing(backing);
    for s in new {
        index.dangerously_push_entry(
            s.stat,
            s.id,
            gix::index::entry::Flags::empty(),
            s.mode,
            s.path.as_bstr(),
        );
    }
    index.sort_entries();
}

/// Remove the entries at `paths`.
pub(super) fn remove(index: &mut gix::index::State, paths: &std::collections::HashSet<Vec<u8>>) {
    if !paths.is_empty() {
        index.remove_entries(|_, path, _| paths.contains(path.as_bytes()));
    }
}

/// Whether [`encode_v2`] writes `index` as gix's writer would: an index of
/// version 2 (SHA-1 ids, no entry with extended flags, not sparse), as
/// git-session's are.
fn encodes_v2(index: &gix::index::State) -> bool {
    index.object_hash() == gix::hash::Kind::Sha1
        && !index.is_sparse()
        && !index
            .entries()
            .iter()
            .any(|e| e.flags.contains(gix::index::entry::Flags::EXTENDED))
}

/// Write the bytes gix's writer makes of `index` ([`encodes_v2`]) with no
/// extension and no trailing hash (the pinned `index.skipHash`).
///
/// Hand-written rather than gix's `File::write_to`, whose `Entry::write_to`
/// makes 15 `write_all` calls an entry through a `dyn Write` (a counting
/// wrapper without a `write_all` of its own): 2.3× this at 3,000 nodes and
/// 2.7× at 15,000 (7 ms of a 22 ms `commit-turn` on tmpfs). Measured in one
/// run, alternating turns, by
/// `python3 bench/commit_turn.py --sizes 3000,15000 --turns 40 --compare-writer index`
/// (figures in git-session-performance(7)). The upstream-shaped fix:
/// in gix-index, assemble an entry's fixed 62 bytes in an array and write
/// them with one call, and give `CountBytes` a `write_all` that forwards.
fn encode_v2(index: &gix::index::State, out: &mut impl std::io::Write) -> std::io::Result<()> {
    use gix::index::entry::Flags;
    let kept = || {
        index
            .entries()
            .iter()
            .filter(|e| !e.flags.contains(Flags::REMOVE))
    };
    let count = u32::try_from(kept().count()).map_err(std::io::Error::other)?;
    out.write_all(b"DIRC")?;
    out.write_all(&2u32.to_be_bytes())?;
    out.write_all(&count.to_be_bytes())?;
    const NULS: [u8; 8] = [0; 8];
    for e in kept() {
        let path = e.path(index);
        let st = &e.stat;
        let mut head = [0u8; 62];
        let words = [
            st.ctime.secs,
            st.ctime.nsecs,
            st.mtime.secs,
            st.mtime.nsecs,
            st.dev,
            st.ino,
            e.mode.bits(),
            st.uid,
            st.gid,
            st.size,
        ];
        for (i, w) in words.iter().enumerate() {
            head[i * 4..i * 4 + 4].copy_from_slice(&w.to_be_bytes());
        }
        head[40..60].copy_from_slice(e.id.as_bytes());
        let path_len = path.len().min(Flags::PATH_LEN.bits() as usize) as u16;
        head[60..62].copy_from_slice(&(e.flags.to_storage().bits() | path_len).to_be_bytes());
        out.write_all(&head)?;
        out.write_all(path)?;
        // A NUL, then NULs up to a multiple of 8 bytes for the entry.
        let len = head.len() + path.len();
        out.write_all(&NULS[..((len + 8) & !7) - len])?;
    }
    out.write_all(&[0u8; 20])
}

/// `index` (version 2, as [`encodes_v2`] asks) written to `out` by
/// [`encode_v2`], or by gix's writer with the same options: what
/// `examples/index_writer.rs` times for `bench/commit_turn.py
/// --compare-writer index`, the measured reason for the encoder.
#[doc(hidden)]
pub fn encode_for_comparison(
    index: &gix::index::State,
    with_gix: bool,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    if with_gix {
        let opts = gix::index::write::Options {
            skip_hash: true,
            ..Default::default()
        };
        index
            .write_to(out, opts)
            .map(|_| ())
            .map_err(std::io::Error::other)
    } else {
        encode_v2(index, out)
    }
}

/// The new index, written to a temp file of ours and put in place by
/// [`SessionRepo::commit_index`] once the refs have moved.
pub struct PendingIndex {
    tmp: PathBuf,
    index: PathBuf,
}

/// Whether an `index.lock` was left by a git-session process that died (the
/// caller holds the session's exclusive lock, so none is alive): ours is a
/// second name of our prepared index or of the index itself (git's lock is
/// a file of its own), or, from older versions, a file with this mark.
pub fn index_lock_is_ours(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    const OLD_MARK: &[u8] = b"git-session index lock\n";
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.nlink() > 1)
        || atomic::read(path).is_ok_and(|b| b == OLD_MARK)
}

impl SessionRepo {
    pub(super) fn index_path(&self) -> PathBuf {
        self.git_dir.join("index")
    }

    /// The index for a commit: the one this process wrote last when the
    /// file is still exactly that one (`batch`, [`Self::keep_index`]), else
    /// read ([`Self::read_index`]).
    pub fn take_index(&self) -> Result<Index> {
        match kept::take(&self.index_path()) {
            Some(file) => Ok(Index(file)),
            None => self.read_index(),
        }
    }

    /// After [`Self::commit_index`] of `index`: keep it for the next
    /// [`Self::take_index`] in this process (`batch` only). Only an index
    /// that reads back as it is in memory is kept: written by
    /// [`encode_v2`], no extension, no flag that is not stored.
    pub fn keep_index(&self, index: Index) {
        use gix::index::entry::Flags;
        let state = &index.0;
        // Stored flags only (so no EXTENDED one: what `encodes_v2` asks
        // of the entries), in one pass over them.
        let stored = Flags::STAGE_MASK | Flags::ASSUME_VALID;
        if crate::layout::kept::on()
            && state.object_hash() == gix::hash::Kind::Sha1
            && !state.is_sparse()
            && state.tree().is_none()
            && state.link().is_none()
            && state.resolve_undo().is_none()
            && state.untracked().is_none()
            && state.fs_monitor().is_none()
            && state.entries().iter().all(|e| stored.contains(e.flags))
        {
            kept::put(self.index_path(), index.0);
        }
    }

    /// Read the index (an empty one when there is none).
    pub fn read_index(&self) -> Result<Index> {
        gix::index::File::at_or_default(
            self.index_path(),
            gix::hash::Kind::Sha1,
            true,
            Default::default(),
        )
        .map(Index)
        .map_err(|e| self.err("read the index", e))
    }

    /// An index that mirrors `tree`, with empty stat data (every file is
    /// re-hashed once by the next sweep).
    pub fn index_from_tree(&self, tree: gix::ObjectId) -> Result<Index> {
        self.repo()?
            .index_from_tree(&tree)
            .map(Index)
            .map_err(|e| self.err("build the index from a tree", e))
    }

    /// Write the index (through [`Self::prepare_index`] and
    /// [`Self::commit_index`], so that a crash never leaves a lock of git's).
    pub fn write_index(&self, index: &mut Index) -> Result<()> {
        let pending = self.prepare_index(index)?;
        self.commit_index(pending)
    }

    /// Write `index` ([`encode_v2`], else gix's writer; no trailing hash:
    /// the pinned `index.skipHash`) to a temp file of ours in `.git/`;
    /// [`Self::commit_index`] puts it in place once the refs have moved.
    pub fn prepare_index(&self, index: &mut Index) -> Result<PendingIndex> {
        let index = &mut index.0;
        // A tree cache would be written stale (gitoxide#2421).
        index.remove_tree();
        index.remove_resolve_undo();
        // gix's writer for what ours does not write.
        let ours = encodes_v2(index);
        let pending = PendingIndex {
            tmp: crate::layout::temp_path(&self.git_dir, "index"),
            index: self.index_path(),
        };
        // Streamed through one small buffer: a whole large index built in
        // memory first costs a page fault every 4 KiB.
        let written = (|| -> Result<()> {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&pending.tmp)
                .io("create", &pending.tmp)?;
            let mut out = std::io::BufWriter::with_capacity(64 * 1024, file);
            if ours {
                encode_v2(index, &mut out).io("write", &pending.tmp)?;
            } else {
                let opts = gix::index::write::Options {
                    skip_hash: true,
                    ..Default::default()
                };
                index
                    .write_to(&mut out, opts)
                    .map_err(|e| self.err("write the index", e))?;
            }
            out.into_inner()
                .map_err(|e| e.into_error())
                .io("write", &pending.tmp)?;
            Ok(())
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&pending.tmp);
            return Err(e);
        }
        Ok(pending)
    }

    /// Put a prepared index in place, holding git's `index.lock` for just the
    /// rename (git busy means back off for [`GIT_LOCK_WAIT`]; its lock is
    /// never deleted). The protocol of `super::index_lock`, under the
    /// session's lock.
    ///
    /// The lock is a hard link to the prepared file itself (taken with
    /// `link`, which fails like O_EXCL when git holds it), and the prepared
    /// file is then renamed over the index: no extra file is created, and a
    /// kill at any moment leaves either no lock or one that shares its inode
    /// with our temp file or with the index ([`index_lock_is_ours`]).
    pub fn commit_index(&self, pending: PendingIndex) -> Result<()> {
        let lock = pending.index.with_extension("lock");
        let mut backoff = Backoff::new(GIT_LOCK_WAIT);
        let taken = loop {
            match std::fs::hard_link(&pending.tmp, &lock) {
                Ok(()) => break Ok(()),
                Err(e)
                    if e.kind() == std::io::ErrorKind::AlreadyExists
                        && index_lock_is_ours(&lock) =>
                {
                    let _ = std::fs::remove_file(&lock);
                }
                // git's own lock: git is busy; back off, never delete it.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && backoff.pause() => {}
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = taken {
            let _ = std::fs::remove_file(&pending.tmp);
            return Err(e).io(
                "take git's index lock (is git running in the session?)",
                &lock,
            );
        }
        atomic::crash_point("index-locked");
        let renamed = std::fs::rename(&pending.tmp, &pending.index).io("replace", &pending.index);
        atomic::crash_point("index-replaced");
        let _ = std::fs::remove_file(&lock);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&pending.tmp);
        }
        renamed
    }

    /// Drop a prepared index (the commit did not happen).
    pub fn abandon_index(&self, pending: PendingIndex) {
        let _ = std::fs::remove_file(&pending.tmp);
    }
}

/// The indexes a `batch` process wrote, kept for its next commits (see
/// `layout::kept`): a commit at 15,000 nodes reads 600 KB of index
/// otherwise.
mod kept {
    use std::cell::RefCell;
    use std::path::{Path, PathBuf};

    use crate::layout::kept::{Shelf, State};

    thread_local! {
        static KEPT: RefCell<Shelf<gix::index::File>> = const { RefCell::new(Shelf::new()) };
    }

    /// The index kept for `path` when the file there is still the one
    /// written (taken: the caller changes it and writes it anew).
    pub(super) fn take(path: &Path) -> Option<gix::index::File> {
        if !crate::layout::kept::on() {
            return None;
        }
        let now = State::at(path);
        KEPT.with_borrow_mut(|kept| kept.take(path, now))
    }

    /// Keep `file`, just renamed into place at `path`.
    pub(super) fn put(path: PathBuf, file: gix::index::File) {
        if let Some(state) = State::at(&path) {
            KEPT.with_borrow_mut(|kept| kept.put(path, state, file));
        }
    }
}

#[cfg(test)]
mod tests {
    use gix::index::entry::{Flags, Mode, Stat, stat::Time};
    use proptest::prelude::*;

    /// (path, stat words, id byte, mode, flags) of one entry.
    type Spec = (Vec<u8>, [u32; 10], u8, u8, u32);

    fn state_of(specs: &[Spec]) -> gix::index::State {
        let mut state = gix::index::State::new(gix::hash::Kind::Sha1);
        for (path, w, id, mode, flags) in specs {
            let t = |s, n| Time { secs: s, nsecs: n };
            let stat = Stat {
                ctime: t(w[0], w[1]),
                mtime: t(w[2], w[3]),
                dev: w[4],
                ino: w[5],
                uid: w[6],
                gid: w[7],
                size: w[8],
            };
            let mode = [
                Mode::FILE,
                Mode::FILE_EXECUTABLE,
                Mode::SYMLINK,
                Mode::COMMIT,
            ][*mode as usize % 4];
            let id = gix::ObjectId::from_bytes_or_panic(&[*id; 20]);
            state.dangerously_push_entry(
                stat,
                id,
                Flags::from_bits_retain(*flags),
                mode,
                gix::bstr::BStr::new(path),
            );
        }
        state.sort_entries();
        state
    }

    fn with_gix(state: gix::index::State) -> Vec<u8> {
        let file = gix::index::File::from_state(state, "index");
        let mut out = Vec::new();
        let opts = gix::index::write::Options {
            skip_hash: true,
            ..Default::default()
        };
        file.write_to(&mut out, opts).unwrap();
        out
    }

    fn spec() -> impl Strategy<Value = Spec> {
        // Paths long enough to overflow the 12-bit length field too; flags
        // of every kind but EXTENDED (stage, assume-valid, in-memory ones,
        // REMOVE among them).
        let path = prop_oneof![
            4 => proptest::collection::vec(b'a'..=b'z', 1..40),
            1 => proptest::collection::vec(b'a'..=b'c', 4090..4100),
        ];
        let flags =
            any::<u32>().prop_map(|f| f & !(Flags::EXTENDED.bits() | Flags::PATH_LEN.bits()));
        (path, any::<[u32; 10]>(), any::<u8>(), any::<u8>(), flags)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn the_encoder_writes_what_gix_writes(specs in proptest::collection::vec(spec(), 0..60)) {
            let state = state_of(&specs);
            prop_assert!(super::encodes_v2(&state));
            let mut ours = Vec::new();
            super::encode_v2(&state, &mut ours).unwrap();
            prop_assert_eq!(ours, with_gix(state));
        }
    }

    /// Under `batch`, the index a commit wrote is used for the next one
    /// while the file is still that one, and is what reading it gives.
    #[test]
    fn a_kept_index_is_the_file_while_the_file_is_unchanged() {
        use super::{Index, SessionRepo};
        let dir = tempfile::tempdir().unwrap();
        SessionRepo::init(dir.path(), 1.0).unwrap();
        let repo = SessionRepo::open(dir.path()).unwrap();
        crate::layout::kept::keep_between_requests();
        let index = |specs: &[Spec]| {
            Index(gix::index::File::from_state(
                state_of(specs),
                repo.index_path(),
            ))
        };
        let one: Vec<Spec> = vec![(b"history/a".to_vec(), [7; 10], 1, 0, 0)];
        let mut two = one.clone();
        two.push((
            b"history/b".to_vec(),
            [8; 10],
            2,
            1,
            Flags::ASSUME_VALID.bits(),
        ));
        let paths = |i: &Index| i.entries().map(|(p, _)| p.to_vec()).collect::<Vec<_>>();
        let rows = |i: &Index| {
            i.0.entries()
                .iter()
                .map(|e| (e.path(&i.0).to_vec(), e.id, e.stat, e.mode, e.flags))
                .collect::<Vec<_>>()
        };
        // Kept after its write, it is the file as read.
        let mut written = index(&two);
        repo.write_index(&mut written).unwrap();
        repo.keep_index(written);
        let kept = repo.take_index().unwrap();
        assert_eq!(rows(&kept), rows(&repo.read_index().unwrap()));
        // Used from memory while the file is unchanged (a copy that is not
        // the file shows it), and once only.
        repo.write_index(&mut index(&one)).unwrap();
        repo.keep_index(index(&two));
        assert_eq!(paths(&repo.take_index().unwrap()).len(), 2, "from memory");
        assert_eq!(
            paths(&repo.take_index().unwrap()).len(),
            1,
            "taken: the file"
        );
        // Not once the file was replaced, by anyone.
        repo.keep_index(index(&two));
        repo.write_index(&mut index(&one)).unwrap();
        assert_eq!(
            paths(&repo.take_index().unwrap()).len(),
            1,
            "replaced: the file"
        );
        // Not kept when memory holds what the file would not.
        let mut flagged = two.clone();
        flagged[0].4 = Flags::UPTODATE.bits();
        repo.keep_index(index(&flagged));
        assert_eq!(paths(&repo.take_index().unwrap()).len(), 1, "not kept");
    }

    #[test]
    fn an_index_it_cannot_write_is_left_to_gix() {
        let mut specs: Vec<Spec> = vec![(b"a".to_vec(), [1; 10], 1, 0, 0)];
        assert!(super::encodes_v2(&state_of(&specs)));
        specs.push((b"b".to_vec(), [2; 10], 2, 0, Flags::EXTENDED.bits()));
        assert!(!super::encodes_v2(&state_of(&specs)));
    }
}
