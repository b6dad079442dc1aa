//! The only module that names gix types: create a session repo, write blobs,
//! trees and commits in-process, move refs with compare-and-swap, keep the
//! index, walk history. git itself is only run for background maintenance.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::FullName;

pub mod index_edit;
mod pack;
pub mod project;
mod refs;

use crate::error::{Error, IoContext, Result};
use crate::layout::{SessionDir, atomic};

pub use gix::ObjectId as Oid;

/// The SHA-1 of `bytes` in hex (a project id is derived from its path's).
pub fn sha1_hex(bytes: &[u8]) -> String {
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(bytes);
    h.try_finalize().expect("sha1 of a buffer").to_string()
}
pub use gix::index::State as IndexState;

pub const DEFAULT_NAME: &str = "OpenProgram";
pub const DEFAULT_EMAIL: &str = "openprogram@local";
pub const MAIN: &str = "main";

/// Repo-local config pinned at init so a user's global settings cannot break
/// or slow session commits (SPEC §2.3).
const PINNED_CONFIG: &str = "\
[core]
\thooksPath = /dev/null
\tfsmonitor = false
\tuntrackedCache = false
\tautocrlf = false
\tsymlinks = true
[commit]
\tgpgSign = false
[tag]
\tgpgSign = false
[index]
\tskipHash = true
[user]
\tname = OpenProgram
\temail = openprogram@local
";

/// Kind of a tree entry, from an index entry's mode.
fn tree_kind(mode: gix::index::entry::Mode) -> gix::objs::tree::EntryKind {
    use gix::index::entry::Mode;
    use gix::objs::tree::EntryKind;
    if mode.contains(Mode::SYMLINK) && !mode.contains(Mode::FILE) {
        EntryKind::Link
    } else if mode == Mode::COMMIT {
        EntryKind::Commit
    } else if mode == Mode::FILE_EXECUTABLE {
        EntryKind::BlobExecutable
    } else {
        EntryKind::Blob
    }
}

/// Where HEAD stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Short branch name when HEAD is attached (`main`, `retry-…`).
    pub branch: Option<String>,
    /// The commit HEAD resolves to (None while unborn).
    pub commit: Option<ObjectId>,
}

/// The one stale-lock policy. Under the session's exclusive lock no
/// git-session holds a lock in the session repository, and git holds a
/// ref lock for milliseconds: a ref lock (or our index.lock) older than
/// this was left by a process that died, and is removed. A lock of any
/// other kind, or another program's index.lock, is only reported, and only
/// once it is older than [`FOREIGN_LOCK`].
pub const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(2);
/// When `verify` reports a lock git-session did not make.
pub const FOREIGN_LOCK: std::time::Duration = std::time::Duration::from_secs(60);

/// What a commit says, decoded.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    pub message: String,
    pub time: i64,
}

/// A reference move in one transaction.
#[derive(Debug, Clone)]
pub enum RefUpdate {
    /// Move branch `name` from `old` to `new` (compare-and-swap).
    Advance {
        branch: String,
        old: ObjectId,
        new: ObjectId,
        message: String,
    },
    /// Create branch `name` at `new`; it must not exist.
    Create {
        branch: String,
        new: ObjectId,
        message: String,
    },
    /// Point HEAD at branch `name` (symbolic).
    AttachHead { branch: String },
    /// Point HEAD at a commit (detached).
    DetachHead { commit: ObjectId },
}

pub struct SessionRepo {
    /// Opened on first use ([`Self::repo`]): a turn reads its refs, its
    /// index and, from the commit cache, its tip commit without it, and
    /// opening a repository with gix costs about half a millisecond.
    gix: std::cell::OnceCell<gix::Repository>,
    refs: gix::refs::file::Store,
    /// What a turn reads from the repository's own config.
    config: OwnConfig,
    pub dir: PathBuf,
    git_dir: PathBuf,
    /// Loose objects this process wrote (each synced as it was written):
    /// their directories are synced before any ref moves.
    written: Vec<ObjectId>,
    /// The thread writing large objects.
    offload: Option<Offload>,
    /// Bulk mode (backfill): objects collected and written as packs.
    bulk: Option<Bulk>,
    /// `.keep` files of packs written in bulk mode, removed once refs point
    /// into them.
    keeps: Vec<PathBuf>,
    /// Small objects waiting to be written as this turn's pack.
    turn: Vec<(gix::objs::Kind, ObjectId, Vec<u8>)>,
    turn_ids: HashSet<ObjectId>,
    /// The last commits written here, kept in `commit_cache_file`.
    new_commits: Vec<(ObjectId, Vec<u8>)>,
    /// The commits of `commit_cache_file`, read on first use.
    cached_commits: std::cell::OnceCell<Vec<(ObjectId, Vec<u8>)>>,
}

/// Commits kept in the commit cache.
const CACHED_COMMITS: usize = 4;

/// Objects waiting to be written as one pack.
#[derive(Default)]
struct Bulk {
    objects: Vec<(gix::objs::Kind, Vec<u8>)>,
    ids: HashSet<ObjectId>,
    bytes: usize,
}

/// A pack is written once this much object data is waiting.
const BULK_FLUSH_BYTES: usize = 64 * 1024 * 1024;

/// The pack data stream of `objects` (version 2, no deltas).
fn encode_pack(objects: &[(gix::objs::Kind, Vec<u8>)]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut out =
        Vec::with_capacity(objects.iter().map(|(_, d)| d.len() / 2 + 16).sum::<usize>() + 32);
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    for (kind, data) in objects {
        pack::push_entry_header(&mut out, *kind, data.len());
        let mut z =
            gix::zlib::stream::deflate::Write::new(&mut out, gix::zlib::Compression::BEST_SPEED);
        z.write_all(data)?;
        z.flush()?;
    }
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(&out);
    let digest = h
        .try_finalize()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    out.extend_from_slice(digest.as_bytes());
    Ok(out)
}

/// Write one loose object, `id` being the hash of `kind` and `data`.
///
/// The zlib stream is made of stored (uncompressed) blocks. Setting up a
/// deflate stream zeroes about 460 KB of tables, once per object, which cost
/// more than compressing the object. Loose objects are short-lived: the next
/// background roll-up (every 10 turns) packs and compresses them. The temp
/// file lives in the git dir, where the next commit's stale-temp sweep finds
/// it after a crash.
fn write_loose(
    git_dir: &Path,
    objects: &Path,
    kind: gix::objs::Kind,
    data: &[u8],
    id: ObjectId,
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let header = gix::objs::encode::loose_header(kind, data.len() as u64);
    let mut out = Vec::with_capacity(header.len() + data.len() + 64);
    pack::push_stored_zlib(&mut out, &[&header, data]);

    let hex = id.to_hex().to_string();
    let dir = objects.join(&hex[..2]);
    let tmp = crate::layout::temp_path(git_dir, "obj");
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&tmp)?;
        f.write_all(&out)?;
        if atomic::durable() {
            f.sync_data()?; // here, not by opening it again later
        }
        drop(f);
        atomic::crash_point("object-written");
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        std::fs::rename(&tmp, dir.join(&hex[2..]))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Write `objects` as one pack in `pack_dir`: both files under temp names in
/// the git dir (where the stale-temp sweep finds them after a crash), then
/// the pack and last its index renamed into place, as git does: git only
/// sees a pack through its index.
fn write_pack(
    git_dir: &Path,
    pack_dir: &Path,
    objects: &[(gix::objs::Kind, ObjectId, Vec<u8>)],
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let encoded = pack::encode(objects)?;
    let name = format!("pack-{}", encoded.checksum);
    let tmps = [
        crate::layout::temp_path(git_dir, "pack"),
        crate::layout::temp_path(git_dir, "idx"),
    ];
    let result = (|| {
        for (tmp, data) in tmps.iter().zip([&encoded.pack, &encoded.idx]) {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o444)
                .open(tmp)?;
            f.write_all(data)?;
            if atomic::durable() {
                f.sync_data()?;
            }
        }
        atomic::crash_point("object-written");
        if !pack_dir.is_dir() {
            std::fs::create_dir_all(pack_dir)?;
        }
        std::fs::rename(&tmps[0], pack_dir.join(format!("{name}.pack")))?;
        atomic::crash_point("pack-renamed");
        std::fs::rename(&tmps[1], pack_dir.join(format!("{name}.idx")))?;
        if atomic::durable() {
            std::fs::File::open(pack_dir)?.sync_all()?;
        }
        Ok(())
    })();
    if result.is_err() {
        for tmp in &tmps {
            let _ = std::fs::remove_file(tmp);
        }
    }
    result
}

/// Objects at least this large (a flat `history/` tree of thousands of
/// nodes) are hashed here and written on a second thread, while this one
/// goes on (the commit only needs the id).
const OFFLOAD_BYTES: usize = 64 * 1024;

struct Offload {
    tx: std::sync::mpsc::Sender<(gix::objs::Kind, Vec<u8>, ObjectId)>,
    handle: std::thread::JoinHandle<std::result::Result<(), String>>,
}

/// The new index, written to a temp file of ours and put in place by
/// [`SessionRepo::commit_index`] once the refs have moved.
pub struct PendingIndex {
    tmp: PathBuf,
    index: PathBuf,
}

fn full_branch(name: &str) -> Result<FullName> {
    FullName::try_from(format!("refs/heads/{name}"))
        .map_err(|e| Error::usage(format!("invalid branch name `{name}`: {e}"), None))
}

impl SessionRepo {
    /// Create `.git` in `dir` with branch `main`, the pinned config and an empty
    /// root commit `session init` dated `time`. Returns the root commit.
    pub fn init(dir: &Path, time: f64) -> Result<ObjectId> {
        // Isolated: a user's global `init.defaultBranch` must not rename `main`.
        // Known capabilities: probing would create and delete test files.
        let mac = cfg!(target_os = "macos");
        let repo: gix::Repository = gix::ThreadSafeRepository::init_opts(
            dir,
            gix::create::Kind::WithWorktree,
            gix::create::Options {
                fs_capabilities: Some(gix::fs::Capabilities {
                    precompose_unicode: mac,
                    ignore_case: mac,
                    executable_bit: true,
                    symlink: true,
                }),
                ..Default::default()
            },
            gix::open::Options::isolated(),
        )
        .map_err(|e| Error::git("init the repository", dir, e))?
        .into();
        write_pinned_config(repo.git_dir())?;
        let exclude = repo.git_dir().join("info").join("exclude");
        std::fs::create_dir_all(exclude.parent().expect("info/ has a parent"))
            .io("create", &exclude)?;
        atomic::write(
            &exclude,
            format!(
                "# temporary files of git-session\n{}*\n",
                crate::layout::TEMP_PREFIX
            )
            .as_bytes(),
        )?;
        let mut me = SessionRepo::open(dir)?;
        let tree = me.write(gix::objs::Tree::empty())?;
        let root = me.write_commit(tree, &[], "session init\n", time)?;
        me.sync_objects()?;
        me.update_refs(&[RefUpdate::Create {
            branch: MAIN.into(),
            new: root,
            message: "commit (initial): session init".into(),
        }])?;
        let mut index = gix::index::File::from_state(
            gix::index::State::new(gix::hash::Kind::Sha1),
            me.index_path(),
        );
        me.write_index(&mut index)?;
        let sd = SessionDir::new(dir.to_path_buf());
        std::fs::create_dir_all(sd.private_dir()).io("create", sd.private_dir())?;
        let _ = me.remember_commits(); // only a cache
        sd.write_snapshot(&crate::layout::paths::Snapshot {
            commit: Some(root.to_string()),
            turns: 0,
            pending: None,
        })?;
        Ok(root)
    }

    /// Open a session repo: its own config is read and checked (no global or
    /// system config, no environment) and its refs are read directly; gix
    /// opens the repository only when an object is read ([`Self::repo`]).
    pub fn open(dir: &Path) -> Result<SessionRepo> {
        let git_dir = dir.join(".git");
        if !git_dir.is_dir() {
            return Err(Error::corrupt(
                dir,
                "the session has no `.git` repository".to_string(),
            ));
        }
        let config = OwnConfig::read(dir, &git_dir)?;
        let refs = gix::refs::file::Store::at(git_dir.clone(), Default::default());
        Ok(SessionRepo {
            gix: std::cell::OnceCell::new(),
            refs,
            config,
            dir: dir.to_path_buf(),
            git_dir,
            written: Vec::new(),
            offload: None,
            bulk: None,
            keeps: Vec::new(),
            turn: Vec::new(),
            turn_ids: HashSet::new(),
            new_commits: Vec::new(),
            cached_commits: std::cell::OnceCell::new(),
        })
    }

    /// The repository opened with gix, for reading objects; opened on first
    /// use, reading only its own config (no global or system config, no
    /// environment).
    pub fn repo(&self) -> Result<&gix::Repository> {
        if let Some(repo) = self.gix.get() {
            return Ok(repo);
        }
        // Slots for pack indices, from one directory listing: by default gix
        // also `stat`s every file there to count them. Room for packs added
        // meanwhile (a background roll-up writes before it deletes).
        let slots = (2 * pack_count(&self.git_dir) + 32).min(i16::MAX as usize) as u16;
        let repo = gix::open_opts(
            &self.dir,
            gix::open::Options::isolated()
                .object_store_slots(gix::odb::store::init::Slots::Given(slots)),
        )
        .map_err(|e| Error::git("open the repository", &self.dir, e))?;
        Ok(self.gix.get_or_init(|| repo))
    }

    fn err(&self, action: &str, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::git(action, &self.dir, e)
    }

    /// The configured identity, `OpenProgram <openprogram@local>` by default.
    pub fn signature(&self, time: f64) -> gix::actor::Signature {
        let name = (self.config.name.clone()).unwrap_or_else(|| DEFAULT_NAME.into());
        let email = (self.config.email.clone()).unwrap_or_else(|| DEFAULT_EMAIL.into());
        gix::actor::Signature {
            name,
            email,
            time: gix::date::Time {
                seconds: time.floor() as i64,
                offset: 0,
            },
        }
    }

    fn serialize(&self, object: &impl gix::objs::WriteTo) -> Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(object.size() as usize);
        object
            .write_to(&mut buf)
            .io("serialize an object for", &self.dir)?;
        Ok(buf)
    }

    fn write(&mut self, object: impl gix::objs::WriteTo) -> Result<ObjectId> {
        let buf = self.serialize(&object)?;
        self.write_raw(object.kind(), buf)
    }

    pub fn write_blob(&mut self, data: Vec<u8>) -> Result<ObjectId> {
        self.write_raw(gix::objs::Kind::Blob, data)
    }

    /// Write the trees of every entry of `state` and return the root tree.
    /// Index order is tree order up to the dir/file tie-break, which each
    /// tree's sort settles.
    pub fn write_tree(&mut self, state: &IndexState) -> Result<ObjectId> {
        let items: Vec<(&[u8], gix::objs::tree::EntryKind, ObjectId)> = state
            .entries()
            .iter()
            .filter(|e| e.stage() == gix::index::entry::Stage::Unconflicted)
            .map(|e| (e.path(state).as_bytes(), tree_kind(e.mode), e.id))
            .collect();
        self.write_dir(&items, 0)
    }

    /// Serialize one tree straight from index entries (index order is git's
    /// tree order: a directory `x/` sorts exactly where its paths do) and
    /// write it; subtrees first.
    fn write_dir(
        &mut self,
        items: &[(&[u8], gix::objs::tree::EntryKind, ObjectId)],
        prefix: usize,
    ) -> Result<ObjectId> {
        use gix::objs::tree::EntryKind;
        fn mode(kind: EntryKind) -> &'static [u8] {
            match kind {
                EntryKind::Tree => b"40000",
                EntryKind::Blob => b"100644",
                EntryKind::BlobExecutable => b"100755",
                EntryKind::Link => b"120000",
                EntryKind::Commit => b"160000",
            }
        }
        let mut buf: Vec<u8> = Vec::with_capacity(items.len() * 64);
        let mut push = |kind: EntryKind, name: &[u8], oid: &ObjectId| {
            buf.extend_from_slice(mode(kind));
            buf.push(b' ');
            buf.extend_from_slice(name);
            buf.push(0);
            buf.extend_from_slice(oid.as_bytes());
        };
        let mut i = 0;
        while i < items.len() {
            let rest = &items[i].0[prefix..];
            if let Some(pos) = rest.find_byte(b'/') {
                let name = &rest[..pos];
                let mut j = i + 1;
                while j < items.len() {
                    let r = &items[j].0[prefix..];
                    if r.len() > pos && &r[..pos] == name && r[pos] == b'/' {
                        j += 1;
                    } else {
                        break;
                    }
                }
                let oid = self.write_dir(&items[i..j], prefix + pos + 1)?;
                push(EntryKind::Tree, name, &oid);
                i = j;
            } else {
                push(items[i].1, rest, &items[i].2);
                i += 1;
            }
        }
        self.write_raw(gix::objs::Kind::Tree, buf)
    }

    /// Write an already serialized object; large ones go to the writer thread.
    fn write_raw(&mut self, kind: gix::objs::Kind, buf: Vec<u8>) -> Result<ObjectId> {
        let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, &buf)
            .map_err(|e| self.err("hash an object", e))?;
        if let Some(bulk) = &self.bulk {
            let known = bulk.ids.contains(&id) || self.repo()?.objects.exists_without_refresh(&id);
            let bulk = self.bulk.as_mut().expect("in bulk mode");
            if !known {
                bulk.ids.insert(id);
                bulk.bytes += buf.len();
                bulk.objects.push((kind, buf));
                if bulk.bytes >= BULK_FLUSH_BYTES {
                    self.flush_pack()?;
                }
            }
            return Ok(id);
        }
        if buf.len() < OFFLOAD_BYTES {
            // Into this turn's pack, unchecked: an object that exists already
            // is only written twice, which git allows, and looking it up
            // would cost more than writing it.
            if self.turn_ids.insert(id) {
                self.turn.push((kind, id, buf));
            }
            return Ok(id);
        }
        // Large objects are written loose, on the writer thread, and not
        // looked up first either (a lookup lists and searches every pack).
        self.offload_tx().send((kind, buf, id)).map_err(|_| {
            Error::git(
                "hand an object to the writer thread",
                &self.dir,
                "the thread is gone",
            )
        })?;
        self.written.push(id);
        Ok(id)
    }

    /// Write the small objects collected so far: one loose object, or a pack
    /// of them all (two files instead of one or two per object).
    fn write_turn(&mut self) -> Result<()> {
        let objects = std::mem::take(&mut self.turn);
        self.turn_ids.clear();
        let git_dir = self.git_dir.clone();
        let objects_dir = git_dir.join("objects");
        match objects.as_slice() {
            [] => {}
            [(kind, id, data)] => {
                write_loose(&git_dir, &objects_dir, *kind, data, *id)
                    .map_err(|e| self.err("write an object", e))?;
                self.written.push(*id);
            }
            _ => write_pack(&git_dir, &objects_dir.join("pack"), &objects)
                .map_err(|e| self.err("write a pack", e))?,
        }
        Ok(())
    }

    pub fn write_commit(
        &mut self,
        tree: ObjectId,
        parents: &[ObjectId],
        message: &str,
        time: f64,
    ) -> Result<ObjectId> {
        let sig = self.signature(time);
        let commit = gix::objs::Commit {
            tree,
            parents: parents.iter().copied().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        let buf = self.serialize(&commit)?;
        let id = self.write_raw(gix::objs::Kind::Commit, buf.clone())?;
        if self.new_commits.len() == CACHED_COMMITS {
            self.new_commits.remove(0);
        }
        self.new_commits.push((id, buf));
        Ok(id)
    }

    /// `.git/git-session/commits`: the last commits written, as id, length
    /// and the commit itself. The next process reads the tip it builds on
    /// from here instead of the object database, which would list and
    /// search every pack. The hash of each entry is checked on use, so a
    /// stale, torn or foreign file is never believed, only skipped.
    fn commit_cache_file(&self) -> PathBuf {
        self.git_dir.join("git-session").join("commits")
    }

    /// Record the commits written by this process in the commit cache (in
    /// place: no new file per turn).
    pub fn remember_commits(&mut self) -> Result<()> {
        if self.new_commits.is_empty() {
            return Ok(());
        }
        let mut out = Vec::new();
        for (id, data) in &self.new_commits {
            out.extend_from_slice(format!("{id} {}\n", data.len()).as_bytes());
            out.extend_from_slice(data);
            out.push(b'\n');
        }
        let path = self.commit_cache_file();
        atomic::overwrite(&path, &out).io("write", &path)
    }

    /// Commit `id` from the commit cache, if it is there and hashes to `id`.
    fn cached_commit(&self, id: ObjectId) -> Option<&[u8]> {
        if let Some((_, data)) = self.new_commits.iter().find(|(c, _)| *c == id) {
            return Some(data);
        }
        let cached = self.cached_commits.get_or_init(|| {
            let Ok(text) = crate::layout::atomic::read(self.commit_cache_file()) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            let mut rest = text.as_slice();
            while let Some(nl) = rest.find_byte(b'\n') {
                let Some((id, len)) = std::str::from_utf8(&rest[..nl])
                    .ok()
                    .and_then(|h| h.split_once(' '))
                    .and_then(|(id, len)| {
                        Some((
                            ObjectId::from_hex(id.as_bytes()).ok()?,
                            len.parse::<usize>().ok()?,
                        ))
                    })
                else {
                    break;
                };
                let Some(data) = rest.get(nl + 1..nl + 1 + len) else {
                    break;
                };
                out.push((id, data.to_vec()));
                rest = rest.get(nl + 2 + len..).unwrap_or_default();
            }
            out
        });
        cached
            .iter()
            .find(|(c, data)| {
                *c == id
                    && gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Commit, data)
                        .is_ok_and(|h| h == id)
            })
            .map(|(_, data)| data.as_slice())
    }

    fn offload_tx(&mut self) -> &std::sync::mpsc::Sender<(gix::objs::Kind, Vec<u8>, ObjectId)> {
        let git_dir = self.git_dir.clone();
        let objects = git_dir.join("objects");
        &self
            .offload
            .get_or_insert_with(|| {
                let (tx, rx) = std::sync::mpsc::channel::<(gix::objs::Kind, Vec<u8>, ObjectId)>();
                let handle = std::thread::spawn(move || {
                    for (kind, buf, id) in rx {
                        write_loose(&git_dir, &objects, kind, &buf, id)
                            .map_err(|e| e.to_string())?;
                    }
                    Ok(())
                });
                Offload { tx, handle }
            })
            .tx
    }

    /// From now on, collect objects and write them as packs (one file pair
    /// instead of a loose file and often a directory per object).
    pub fn begin_bulk(&mut self) {
        self.bulk.get_or_insert_with(Bulk::default);
    }

    fn flush_pack(&mut self) -> Result<()> {
        let Some(bulk) = self.bulk.as_mut() else {
            return Ok(());
        };
        if bulk.objects.is_empty() {
            return Ok(());
        }
        let objects = std::mem::take(&mut bulk.objects);
        bulk.bytes = 0;
        let stream = encode_pack(&objects).io("encode a pack for", &self.dir)?;
        let pack_dir = self.git_dir.join("objects").join("pack");
        std::fs::create_dir_all(&pack_dir).io("create", &pack_dir)?;
        let outcome = gix::odb::pack::Bundle::write_to_directory(
            &mut std::io::Cursor::new(stream),
            Some(&pack_dir),
            &mut gix::progress::Discard,
            &std::sync::atomic::AtomicBool::new(false),
            None::<gix::odb::Cache<gix::odb::store::Handle<std::rc::Rc<gix::odb::Store>>>>,
            gix::hash::Kind::Sha1,
            gix::odb::pack::bundle::write::Options {
                thread_limit: Some(1),
                ..Default::default()
            },
        )
        .map_err(|e| self.err("write a pack", e))?;
        if atomic::durable() {
            for p in [&outcome.data_path, &outcome.index_path]
                .into_iter()
                .flatten()
            {
                std::fs::File::open(p)
                    .and_then(|f| f.sync_all())
                    .io("sync", p)?;
            }
            atomic::sync_dir(&pack_dir)?;
        }
        self.keeps.extend(outcome.keep_path);
        Ok(())
    }

    /// Let gc see the packs written in bulk mode (refs point into them now).
    pub fn release_packs(&mut self) {
        for k in self.keeps.drain(..) {
            let _ = std::fs::remove_file(k);
        }
    }

    /// Wait for the writer thread: every object handed to it is on disk.
    pub fn finish_writes(&mut self) -> Result<()> {
        if let Some(Offload { tx, handle }) = self.offload.take() {
            drop(tx);
            match handle.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(Error::git("write an object", &self.dir, e)),
                Err(_) => {
                    return Err(Error::git(
                        "write an object",
                        &self.dir,
                        "the writer thread panicked",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Write what is still in memory (this turn's pack, the bulk pack), wait
    /// for the writer thread, and fsync the directories of the loose objects
    /// (packs sync their own), so that no ref can ever point at a missing
    /// object after a crash.
    pub fn sync_objects(&mut self) -> Result<()> {
        self.write_turn()?;
        self.finish_writes()?;
        self.flush_pack()?;
        let written = std::mem::take(&mut self.written);
        if atomic::durable() && !written.is_empty() {
            let objects = self.git_dir.join("objects");
            let dirs: HashSet<PathBuf> = written
                .iter()
                .map(|id| objects.join(&id.to_hex().to_string()[..2]))
                .collect();
            for d in dirs {
                atomic::sync_dir(&d)?;
            }
            atomic::sync_dir(&objects)?;
        }
        Ok(())
    }

    /// Apply all `updates` in one transaction (locks all refs first, then
    /// commits; a changed ref fails the compare-and-swap).
    pub fn update_refs(&self, updates: &[RefUpdate]) -> Result<()> {
        use refs::{Edit, Expect, Value};
        let mut edits = Vec::with_capacity(updates.len());
        for u in updates {
            edits.push(match u {
                RefUpdate::Advance {
                    branch,
                    old,
                    new,
                    message,
                } => Edit {
                    name: full_branch(branch)?.to_string(),
                    value: Value::Object(*new),
                    expect: Expect::Object(*old),
                    message: message.clone(),
                },
                RefUpdate::Create {
                    branch,
                    new,
                    message,
                } => Edit {
                    name: full_branch(branch)?.to_string(),
                    value: Value::Object(*new),
                    expect: Expect::Absent,
                    message: message.clone(),
                },
                RefUpdate::AttachHead { branch } => Edit {
                    name: "HEAD".into(),
                    value: Value::Symbolic(full_branch(branch)?.to_string()),
                    expect: Expect::Any,
                    message: String::new(),
                },
                RefUpdate::DetachHead { commit } => Edit {
                    name: "HEAD".into(),
                    value: Value::Object(*commit),
                    expect: Expect::Any,
                    message: "checkout".into(),
                },
            });
        }
        let sig = self.signature(crate::out::now());
        let log_all = self.config.log_all;
        let opts = refs::Options {
            committer: &format!("{} <{}>", sig.name, sig.email),
            time: sig.time.seconds,
            log_all,
            // A live git holds a ref lock for milliseconds.
            lock_timeout: std::time::Duration::from_secs(3),
        };
        let git_dir = &self.git_dir;
        let what = "move a reference (another writer changed it?)";
        match refs::apply(git_dir, &edits, &opts) {
            Ok(()) => Ok(()),
            Err(first) => {
                // A ref lock left by a git-session that was killed mid-update
                // (we hold the session's exclusive lock): clear it, retry once.
                if self.stale_ref_locks() == 0 {
                    return Err(self.err(what, first));
                }
                self.clear_stale_locks();
                refs::apply(git_dir, &edits, &opts).map_err(|e| self.err(what, e))
            }
        }
    }

    pub fn head(&self) -> Result<Head> {
        use gix::refs::Target;
        let head = self
            .refs
            .try_find("HEAD")
            .map_err(|e| self.err("read HEAD", e))?
            .ok_or_else(|| self.err("read HEAD", "the repository has no HEAD"))?;
        Ok(match head.target {
            Target::Object(id) => Head {
                branch: None,
                commit: Some(id),
            },
            Target::Symbolic(name) => Head {
                branch: Some(name.shorten().to_str_lossy().into_owned()),
                commit: self.ref_target(name.as_bstr())?,
            },
        })
    }

    /// What the reference `name` names, following symbolic references; `None`
    /// when there is no such reference (an unborn branch). Our refs name
    /// commits directly: no object is read to peel them.
    fn ref_target(&self, name: &gix::bstr::BStr) -> Result<Option<ObjectId>> {
        use gix::refs::Target;
        let what = "resolve a reference";
        let mut name = name.to_owned();
        for _ in 0..5 {
            let Some(r) = self
                .refs
                .try_find(name.as_bstr())
                .map_err(|e| self.err(what, e))?
            else {
                return Ok(None);
            };
            match r.target {
                Target::Object(id) => return Ok(Some(id)),
                Target::Symbolic(next) => name = next.as_bstr().to_owned(),
            }
        }
        Err(self.err(what, format!("`{name}`: symbolic references nest too deep")))
    }

    /// The commit a local branch points to.
    pub fn branch_tip(&self, branch: &str) -> Result<Option<ObjectId>> {
        let name = full_branch(branch)?;
        self.ref_target(name.as_bstr())
    }

    /// Every local branch: `(short name, tip)`, sorted by name.
    pub fn branches(&self) -> Result<Vec<(String, ObjectId)>> {
        use gix::refs::Target;
        let what = "list branches";
        let platform = self.refs.iter().map_err(|e| self.err(what, e))?;
        let prefix = b"refs/heads/"
            .try_into()
            .map_err(|e| self.err(what, Box::new(e)))?;
        let mut out = Vec::new();
        for r in platform.prefixed(prefix).map_err(|e| self.err(what, e))? {
            let r = r.map_err(|e| self.err("read a branch", e))?;
            let name = r.name.shorten().to_str_lossy().into_owned();
            let tip = match r.target {
                Target::Object(id) => Some(id),
                Target::Symbolic(next) => self.ref_target(next.as_bstr()).ok().flatten(),
            };
            if let Some(id) = tip {
                out.push((name, id));
            }
        }
        out.sort();
        Ok(out)
    }

    pub fn commit_info(&self, id: ObjectId) -> Result<CommitInfo> {
        let found;
        let data = match self.cached_commit(id) {
            Some(data) => data,
            None => {
                found = self
                    .repo()?
                    .find_commit(id)
                    .map_err(|e| self.err(&format!("read commit {id}"), e))?;
                &found.data
            }
        };
        let decoded = gix::objs::CommitRef::from_bytes(data, gix::hash::Kind::Sha1)
            .map_err(|e| self.err(&format!("decode commit {id}"), e))?;
        Ok(CommitInfo {
            id,
            tree: decoded.tree(),
            parents: decoded.parents().collect(),
            message: decoded.message.to_str_lossy().into_owned(),
            time: decoded.committer().map(|c| c.seconds()).unwrap_or(0),
        })
    }

    /// Read the index; an unreadable index is rebuilt from `commit`'s tree.
    pub fn read_index(&self) -> Result<gix::index::File> {
        gix::index::File::at_or_default(
            self.index_path(),
            gix::hash::Kind::Sha1,
            true,
            Default::default(),
        )
        .map_err(|e| self.err("read the index", e))
    }

    /// An index that mirrors `tree`, with empty stat data (every file is
    /// re-hashed once by the next sweep).
    pub fn index_from_tree(&self, tree: ObjectId) -> Result<gix::index::File> {
        self.repo()?
            .index_from_tree(&tree)
            .map_err(|e| self.err("build the index from a tree", e))
    }

    /// Write the index (through [`Self::prepare_index`] and
    /// [`Self::commit_index`], so that a crash never leaves a lock of git's).
    pub fn write_index(&self, index: &mut gix::index::File) -> Result<()> {
        let pending = self.prepare_index(index)?;
        self.commit_index(pending)
    }

    /// Write `index` to a temp file of ours in `.git/`; [`Self::commit_index`]
    /// puts it in place once the refs have moved.
    pub fn prepare_index(&self, index: &mut gix::index::File) -> Result<PendingIndex> {
        index.remove_tree();
        index.remove_resolve_undo();
        let target = self.index_path();
        let tmp = crate::layout::temp_path(&self.git_dir, "index");
        let bytes = match index_edit::encode_plain(index) {
            Some(b) => b,
            None => {
                let opts = gix::index::write::Options {
                    skip_hash: true,
                    ..Default::default()
                };
                let mut b = Vec::new();
                index
                    .write_to(&mut b, opts)
                    .map_err(|e| self.err("write the index", e))?;
                b
            }
        };
        let pending = PendingIndex { tmp, index: target };
        let written = std::fs::write(&pending.tmp, &bytes).io("write", &pending.tmp);
        if let Err(e) = written {
            let _ = std::fs::remove_file(&pending.tmp);
            return Err(e);
        }
        Ok(pending)
    }

    /// Put a prepared index in place, holding git's `index.lock` for just the
    /// rename (git busy means back off; its lock is never deleted).
    ///
    /// The lock is a hard link to the prepared file itself (taken with
    /// `link`, which fails like O_EXCL when git holds it), and the prepared
    /// file is then renamed over the index: no extra file is created, and a
    /// kill at any moment leaves either no lock or one that shares its inode
    /// with our temp file or with the index ([`index_lock_is_ours`]).
    pub fn commit_index(&self, pending: PendingIndex) -> Result<()> {
        let lock = pending.index.with_extension("lock");
        let mut attempts = 0;
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
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 250 => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
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

    /// Remove temp files of ours left in `.git/` by a crash (the caller holds
    /// the session's exclusive lock, so none is in use), our marked
    /// index.lock, and stale ref locks ([`STALE_LOCK`]).
    pub fn clear_stale_temps(&self) {
        self.clear_stale_locks();
        self.clear_our_temps();
    }

    /// How many ref locks are stale ([`STALE_LOCK`]).
    fn stale_ref_locks(&self) -> usize {
        let git = &self.git_dir;
        std::iter::once(git.join("HEAD.lock"))
            .chain(
                walkdir::WalkDir::new(git.join("refs"))
                    .into_iter()
                    .flatten()
                    .map(|e| e.into_path())
                    .filter(|p| p.extension().is_some_and(|x| x == "lock")),
            )
            .filter(|l| {
                std::fs::metadata(l)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age >= STALE_LOCK)
            })
            .count()
    }

    /// Our marked index.lock, and stale ref locks ([`STALE_LOCK`]). The
    /// caller holds the session's exclusive lock.
    pub fn clear_stale_locks(&self) {
        let git = &self.git_dir;
        let index_lock = git.join("index.lock");
        if index_lock_is_ours(&index_lock) {
            let _ = std::fs::remove_file(&index_lock);
        }
        let mut ref_locks = vec![git.join("HEAD.lock")];
        for e in walkdir::WalkDir::new(git.join("refs"))
            .into_iter()
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "lock") {
                ref_locks.push(e.into_path());
            }
        }
        for l in ref_locks {
            let old = std::fs::metadata(&l)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age >= STALE_LOCK);
            if old {
                let _ = std::fs::remove_file(&l);
            }
        }
    }

    fn clear_our_temps(&self) {
        if let Ok(rd) = std::fs::read_dir(&self.git_dir) {
            for e in rd.flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with(crate::layout::TEMP_PREFIX)
                {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    /// The entries of one tree: (name, mode as octal number, id).
    pub fn tree_entries(&self, tree: ObjectId) -> Result<Vec<(String, u32, ObjectId)>> {
        let t = self
            .repo()?
            .find_tree(tree)
            .map_err(|e| self.err(&format!("read tree {tree}"), e))?;
        let decoded = t
            .decode()
            .map_err(|e| self.err(&format!("decode tree {tree}"), e))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| {
                (
                    e.filename.to_str_lossy().into_owned(),
                    e.mode.value() as u32,
                    e.oid.to_owned(),
                )
            })
            .collect())
    }

    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    fn index_path(&self) -> PathBuf {
        self.git_dir.join("index")
    }

    /// Whether the object database has `id` (`false` when the repository
    /// cannot be opened).
    pub fn object_exists(&self, id: ObjectId) -> bool {
        self.repo().is_ok_and(|r| r.has_object(id))
    }

    /// The bytes of blob `id`.
    pub fn read_blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        let blob = self
            .repo()?
            .find_blob(id)
            .map_err(|e| self.err(&format!("read blob {id}"), e))?;
        Ok(blob.data.clone())
    }

    /// Every commit in the object database, reachable or not (`verify`
    /// looks there for turns whose branch was deleted or moved).
    pub fn every_commit(&self) -> Result<Vec<ObjectId>> {
        let repo = self.repo()?;
        let what = "list the object database";
        let mut out: Vec<ObjectId> = Vec::new();
        for id in repo.objects.iter().map_err(|e| self.err(what, e))? {
            let id = id.map_err(|e| self.err(what, e))?;
            if repo
                .find_header(id)
                .is_ok_and(|h| h.kind() == gix::objs::Kind::Commit)
            {
                out.push(id);
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Ids of the entries of `tree` at `dir` (a path like `history`), if present.
    pub fn tree_entry(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        let t = self
            .repo()?
            .find_tree(tree)
            .map_err(|e| self.err("read a tree", e))?;
        let found = t
            .lookup_entry_by_path(path)
            .map_err(|e| self.err("look up a tree entry", e))?;
        Ok(found.map(|e| e.object_id()))
    }
}

/// Replace `git_dir/config` with the tool's own: the repository basics and
/// the pinned settings (no hooks, no fsmonitor, no signing). A session
/// repo's config is never taken from a stranger (`migrate`, `init`).
pub fn write_pinned_config(git_dir: &Path) -> Result<()> {
    let text = format!(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n{PINNED_CONFIG}"
    );
    atomic::write(&git_dir.join("config"), text.as_bytes())
}

/// Whether an `index.lock` was left by a git-session process that died (the
/// caller holds the session's exclusive lock, so none is alive): ours is a
/// second name of our prepared index or of the index itself (git's lock is
/// a file of its own), or, from older versions, a file with this mark.
pub fn index_lock_is_ours(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    const OLD_MARK: &[u8] = b"git-session index lock\n";
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.nlink() > 1)
        || crate::layout::atomic::read(path).is_ok_and(|b| b == OLD_MARK)
}

/// The id git gives `data` as a blob.
pub fn blob_id(data: &[u8]) -> ObjectId {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, data)
        .expect("sha1 hashing of a buffer cannot fail")
}

/// What a turn reads from a session repository's own config (sessions are
/// opened isolated: no global or system config, no environment, no
/// includes).
struct OwnConfig {
    /// `user.name` and `user.email`.
    name: Option<gix::bstr::BString>,
    email: Option<gix::bstr::BString>,
    /// Whether ref updates are logged: `core.logAllRefUpdates` is true in a
    /// non-bare repo unless set otherwise; `always` logs every ref, ours
    /// included.
    log_all: bool,
}

impl OwnConfig {
    /// Read `git_dir/config`, checking that it makes `dir` the work tree as
    /// gix would see it: a bare repository, or one whose `core.worktree` is
    /// elsewhere, is not a session's.
    fn read(dir: &Path, git_dir: &Path) -> Result<OwnConfig> {
        let path = git_dir.join("config");
        let bytes = match crate::layout::atomic::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).io("read", &path),
        };
        let config = gix::config::File::from_bytes_no_includes(
            &bytes,
            gix::config::file::Metadata::from(gix::config::Source::Local),
            Default::default(),
        )
        .map_err(|e| Error::corrupt(&path, format!("the config does not parse: {e}")))?;
        let elsewhere = || Error::corrupt(dir, "the `.git` here belongs to another work tree");
        if matches!(config.boolean("core.bare"), Ok(Some(true))) {
            return Err(elsewhere());
        }
        if let Some(worktree) = config.string("core.worktree") {
            let worktree = gix::path::from_bstring(worktree)
                .ok()
                .and_then(|w| git_dir.join(w).canonicalize().ok());
            if worktree.is_none() || worktree != dir.canonicalize().ok() {
                return Err(elsewhere());
            }
        }
        let log_all = config.string("core.logAllRefUpdates").is_none_or(|v| {
            !matches!(
                v.to_str_lossy().to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "0"
            )
        });
        Ok(OwnConfig {
            name: config.string("user.name"),
            email: config.string("user.email"),
            log_all,
        })
    }
}

/// Packs in `git_dir` (one directory listing, no `stat` per file).
fn pack_count(git_dir: &Path) -> usize {
    std::fs::read_dir(git_dir.join("objects/pack")).map_or(0, |rd| {
        rd.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().as_encoded_bytes().ends_with(b".idx"))
        })
        .count()
    })
}

/// Packs from which background maintenance runs `git gc` whatever is due:
/// rolling up has not kept up (git failed, or was missing for a while).
const GC_AT_PACKS: usize = 50;

/// What background maintenance does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maintenance {
    /// Roll the turns' small packs (and any loose objects) up into one,
    /// keeping the packs' sizes a geometric progression: the work follows
    /// the new packs, not the session's size.
    RollUp,
    /// `git gc`: everything into one pack, refs packed, unreachable objects
    /// (a crashed turn's pack) expired.
    Full,
}

/// The git command of `kind` for a session repo (SPEC §2.3).
///
/// Not `git gc --auto`: it counts loose objects from a sample of
/// `objects/17` and knows nothing of many small packs.
fn maintenance_args(git_dir: &Path, kind: Maintenance) -> &'static [&'static str] {
    if kind == Maintenance::Full || pack_count(git_dir) >= GC_AT_PACKS {
        &["gc", "--quiet"]
    } else {
        // -F: compress the objects, which turns store uncompressed.
        &["repack", "-d", "-l", "-q", "-F", "--geometric=2"]
    }
}

/// `.git/git-session/maintenance.lock` of the session repo in `dir`.
fn maintenance_lock(dir: &Path) -> PathBuf {
    dir.join(".git")
        .join("git-session")
        .join("maintenance.lock")
}

/// Wait for a background packing run of the session repo in `dir` to end,
/// and keep the next one from starting while the returned file is open (it
/// is skipped). `None` when the session has no lock file (it never had a
/// run), or it cannot be locked.
pub fn hold_maintenance(dir: &Path) -> Option<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(maintenance_lock(dir))
        .ok()?;
    f.lock().ok()?;
    Some(f)
}

/// What [`spawn_maintenance`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spawned {
    Started,
    /// The previous run is still going: this one is skipped.
    Busy,
    /// No `git` to run (a warning, not an error).
    NoGit,
}

/// The git CLI for a repository whose config is not trusted (SPEC §4): no
/// system or global config, and the settings that run programs forced off
/// on the command line, which wins over the repository's config and its
/// includes: no hooks, no fsmonitor, no pager, no alternate-refs command.
pub fn untrusted_git(dir: &Path) -> std::process::Command {
    let mut c = std::process::Command::new("git");
    c.arg("-C").arg(dir);
    for setting in [
        "core.hooksPath=/dev/null",
        "core.fsmonitor=false",
        "core.pager=cat",
        "core.alternateRefsCommand=",
        "core.sshCommand=false",
        "gc.auto=0",
        "maintenance.auto=false",
    ] {
        c.arg("-c").arg(setting);
    }
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_CONFIG")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .env_remove("GIT_EXEC_PATH");
    c
}

/// Start packing in the background (see `maintenance_args`), one run at a
/// time per session: the run holds `.git/git-session/maintenance.lock`,
/// handed to git as its stdin, so that the lock lives exactly as long as git
/// and the commands git starts, whatever becomes of this process. Without
/// it, runs that take longer than the turns between them pile up and
/// compete for the same packs.
pub fn spawn_maintenance(dir: &Path, kind: Maintenance) -> Spawned {
    let git_dir = dir.join(".git");
    let Ok(lock) = crate::layout::atomic::no_follow(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(maintenance_lock(dir)) else {
        return Spawned::Busy; // no private dir: nothing to maintain yet
    };
    if lock.try_lock().is_err() {
        return Spawned::Busy;
    }
    match untrusted_git(dir)
        .args(maintenance_args(&git_dir, kind))
        .stdin(lock)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(_) => Spawned::Started,
        Err(_) => Spawned::NoGit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The git CLI, without the system's or the user's config.
    pub(super) fn git(dir: &Path, args: &[&str]) -> std::process::Output {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs")
    }

    #[test]
    fn loose_objects_of_every_size_read_back_with_git() {
        let dir = tempfile::tempdir().unwrap();
        assert!(git(dir.path(), &["init", "-q"]).status.success());
        let git_dir = dir.path().join(".git");
        let objects = git_dir.join("objects");
        // Empty, one byte, around one stored block (65,535 bytes with the
        // header), and several blocks.
        for len in [0usize, 1, 65_520, 65_535, 65_536, 200_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &data)
                .unwrap();
            write_loose(&git_dir, &objects, gix::objs::Kind::Blob, &data, id).unwrap();
            let out = git(dir.path(), &["cat-file", "blob", &id.to_string()]);
            assert!(
                out.status.success(),
                "{len}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.stdout, data, "{len} bytes read back");
        }
        let fsck = git(dir.path(), &["fsck", "--strict", "--no-dangling"]);
        assert!(
            fsck.status.success(),
            "{}",
            String::from_utf8_lossy(&fsck.stderr)
        );
        // No temp file is left behind.
        let temps = std::fs::read_dir(&git_dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(crate::layout::TEMP_PREFIX)
            })
            .count();
        assert_eq!(temps, 0);
    }

    /// The commit cache answers for the commits it holds, and only when they
    /// hash to their id: a torn, stale or forged file is read around.
    #[test]
    fn the_commit_cache_is_believed_only_when_it_hashes_right() {
        let dir = tempfile::tempdir().unwrap();
        let root = SessionRepo::init(dir.path(), 1_700_000_000.0).unwrap();
        let cache = dir.path().join(".git/git-session/commits");
        // init cached its root commit.
        let text = std::fs::read(&cache).unwrap();
        assert!(text.starts_with(format!("{root} ").as_bytes()));
        let message = |repo: &SessionRepo, id| repo.commit_info(id).unwrap().message;
        assert_eq!(
            message(&SessionRepo::open(dir.path()).unwrap(), root),
            "session init\n"
        );

        // A commit that is in no pack, only in the cache, is read from there.
        let other = format!(
            "tree {}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nonly cached\n",
            gix::ObjectId::empty_tree(gix::hash::Kind::Sha1)
        );
        let other_id = gix::objs::compute_hash(
            gix::hash::Kind::Sha1,
            gix::objs::Kind::Commit,
            other.as_bytes(),
        )
        .unwrap();
        let mut with_other = format!("{other_id} {}\n{other}\n", other.len()).into_bytes();
        with_other.extend_from_slice(&text);
        std::fs::write(&cache, &with_other).unwrap();
        let repo = SessionRepo::open(dir.path()).unwrap();
        assert_eq!(message(&repo, other_id), "only cached\n");
        assert_eq!(message(&repo, root), "session init\n");

        // The same entry with its bytes changed is not believed; the root,
        // cut short, is read from the object database.
        let forged = String::from_utf8(with_other.clone())
            .unwrap()
            .replace("only cached", "only forged");
        let torn = &text[..text.len() - 10];
        std::fs::write(&cache, [forged.as_bytes(), torn].concat()).unwrap();
        let repo = SessionRepo::open(dir.path()).unwrap();
        assert!(repo.commit_info(other_id).is_err());
        assert_eq!(message(&repo, root), "session init\n");
        std::fs::write(&cache, b"garbage").unwrap();
        assert_eq!(
            message(&SessionRepo::open(dir.path()).unwrap(), root),
            "session init\n"
        );
    }
}
