//! The one object-writing path: loose objects (one file per object, as git
//! writes them) or, in bulk mode (backfill, migrate), one pack written by
//! gix's pack writer (`FromEntriesIter`, then `Bundle::write_to_directory`
//! for the index). Background maintenance rolls loose objects up into packs
//! (`super::maintenance`).
//!
//! Loose objects are written on a second thread while this one goes on
//! (most of a run's cost on a slow file system is creating files), once a
//! run has written [`INLINE_OBJECTS`] on this one: a turn's few objects
//! cost less written here than a thread's start and end. The commits
//! written are also kept in memory, so that this process reads them back
//! before the thread is done. They are encoded by hand
//! ([`write_loose`]): the one hand-written piece, for the measured reason
//! given there; gix's loose store does the same work when
//! `GIT_SESSION_LOOSE_WRITER=gix`, which the benchmark compares.
//!
//! The durability rule, for both: gix never syncs, so when durability is on
//! ([`atomic::durable`]) every object file written, its directory and
//! `objects/` are synced by [`SessionRepo::sync_objects`] before any ref
//! that can reach them moves. A crash before that leaves unreachable
//! objects, which git ignores and `gc` expires.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::SessionRepo;
use crate::error::{IoContext, Result};
use crate::layout::atomic;

/// A pack is written once this much object data is waiting.
const BULK_FLUSH_BYTES: usize = 64 * 1024 * 1024;

/// Files larger than this are committed streamed ([`stream_loose`]):
/// compressed as they are read, never whole in memory.
pub const STREAM_BLOB_BYTES: u64 = 8 * 1024 * 1024;

/// Loose objects a run writes on its own thread before it starts the
/// writer thread. A turn writes about ten (its nodes, meta.json, two trees,
/// the commit); a thread for them cost more than it saved: in one run of
/// 300 turns at 300 nodes through `batch`, 1.10 ms of CPU a turn in the
/// process and 2.4 ms on the machine with the thread, 0.91 ms and 1.3 ms
/// without (`bench/batch.py --cpu-turns 300`, alternating builds), and a
/// one-shot `commit-turn` on disk was no slower.
const INLINE_OBJECTS: usize = 64;

/// How this process writes objects to one repository.
pub(super) struct Writer {
    loose: gix::odb::loose::Store,
    objects_dir: PathBuf,
    /// Loose objects written (here or by the writer thread) and not yet
    /// synced ([`SessionRepo::sync_objects`]).
    written: Vec<ObjectId>,
    written_ids: HashSet<ObjectId>,
    /// The objects written by this process, loose or into a bulk pack: how
    /// many, and the loose ones' bytes.
    written_since_packing: (u64, u64),
    /// The thread writing loose objects, started once [`INLINE_OBJECTS`]
    /// were written here.
    thread: Option<WriterThread>,
    /// The commits written by this process (a few per run).
    commits: Vec<(ObjectId, Vec<u8>)>,
    /// Bulk mode: objects collected and written as packs.
    bulk: Option<Bulk>,
    /// `.keep` files of the packs written in bulk mode, removed once refs
    /// point into them.
    keeps: Vec<PathBuf>,
    /// For [`Writer::read_loose`].
    inflate: std::cell::RefCell<gix::zlib::Decompress>,
}

/// Objects waiting to be written as one pack, each compressed as it came.
#[derive(Default)]
struct Bulk {
    objects: Vec<Compressed>,
    ids: HashSet<ObjectId>,
    bytes: usize,
    compressor: Option<Compressor>,
}

/// An object ready for a pack: its kind, id, size and zlib stream.
pub struct Compressed {
    kind: gix::objs::Kind,
    id: ObjectId,
    size: usize,
    zlib: Vec<u8>,
}

/// One zlib compressor for many objects, with small tables: a compressor
/// of the usual size (gix's, as `Entry::from_data` makes one per object)
/// clears 256 KiB on every reset, which was a quarter of a bulk copy's
/// time; session objects are small JSON files, for which a 4 KiB window
/// compresses as well.
pub struct Compressor(zlib_rs::Deflate);

impl Default for Compressor {
    fn default() -> Self {
        let mut config = zlib_rs::DeflateConfig::new(1);
        config.window_bits = 12;
        config.mem_level = 2;
        Compressor(zlib_rs::Deflate::new_with_config(config))
    }
}

impl Compressor {
    /// `data` of `kind` as a pack entry.
    pub fn compress(
        &mut self,
        kind: gix::objs::Kind,
        id: ObjectId,
        data: &[u8],
    ) -> std::result::Result<Compressed, String> {
        self.0.reset();
        let mut out = vec![0u8; data.len() / 2 + 64];
        let (start_in, start_out) = (self.0.total_in(), self.0.total_out());
        loop {
            let read = (self.0.total_in() - start_in) as usize;
            let written = (self.0.total_out() - start_out) as usize;
            if written == out.len() {
                out.resize(out.len() * 2, 0);
            }
            match self.0.compress(
                &data[read..],
                &mut out[written..],
                zlib_rs::DeflateFlush::Finish,
            ) {
                Ok(zlib_rs::Status::StreamEnd) => break,
                Ok(_) => {}
                Err(e) => return Err(format!("compress an object: {e:?}")),
            }
        }
        out.truncate((self.0.total_out() - start_out) as usize);
        Ok(Compressed {
            kind,
            id,
            size: data.len(),
            zlib: out,
        })
    }
}

impl Writer {
    pub(super) fn new(git_dir: &Path) -> Writer {
        let objects_dir = git_dir.join("objects");
        Writer {
            // Uncompressed, like [`write_loose`].
            loose: gix::odb::loose::Store::at_opts(
                objects_dir.clone(),
                gix::hash::Kind::Sha1,
                gix::odb::loose::Options {
                    compression: gix::zlib::Compression::NONE,
                    ..Default::default()
                },
            ),
            objects_dir,
            written: Vec::new(),
            written_ids: HashSet::new(),
            written_since_packing: (0, 0),
            thread: None,
            commits: Vec::new(),
            bulk: None,
            keeps: Vec::new(),
            inflate: Default::default(),
        }
    }

    /// Commit `id` as this process wrote it, or as a loose object (no pack
    /// is searched, and the repository need not be opened).
    pub(super) fn find_commit<'a>(
        &'a self,
        id: ObjectId,
        buf: &'a mut Vec<u8>,
    ) -> Option<&'a [u8]> {
        if let Some((_, data)) = self.commits.iter().find(|(c, _)| *c == id) {
            return Some(data);
        }
        match self.loose.try_find(&id, buf) {
            Ok(Some(data)) if data.kind == gix::objs::Kind::Commit => Some(data.data),
            _ => None,
        }
    }

    /// Where object `id` is, or would be, stored loose.
    pub(super) fn loose_path(&self, id: &ObjectId) -> std::path::PathBuf {
        self.loose.object_path(id)
    }

    /// Whether `id` is written, or about to be, by this process.
    pub(super) fn pending(&self, id: &ObjectId) -> bool {
        self.written_ids.contains(id) || self.bulk.as_ref().is_some_and(|b| b.ids.contains(id))
    }

    /// Loose object `id`, read with one `read` (gix maps each loose file,
    /// which costs more than the read for objects this small) and checked
    /// against its id; `None` when it is not loose here (or is not what its
    /// name says: the caller then reads it through gix, which reports it).
    ///
    /// A file that one read returns whole needs no second read to see its
    /// end: its zlib stream says where it ends. Only a stream cut short
    /// (a short read, or a truncated file) has the rest read.
    pub(super) fn read_loose(&self, id: &ObjectId) -> Option<(gix::objs::Kind, Vec<u8>)> {
        use std::io::Read;
        const FIRST: usize = atomic::FIRST_READ;
        let mut file = atomic::open_read(self.loose.object_path(id)).ok()?;
        let mut bytes = vec![0u8; FIRST];
        let n = atomic::read_once(&mut file, &mut bytes).ok()?;
        bytes.truncate(n);
        if n < FIRST
            && let Some(found) = self.inflate_loose(&bytes, id)
        {
            return Some(found);
        }
        let before = bytes.len();
        file.read_to_end(&mut bytes).ok()?;
        if bytes.len() == before && n < FIRST {
            return None;
        }
        self.inflate_loose(&bytes, id)
    }

    /// The object whose loose file holds `bytes`, if they are one whole
    /// zlib stream of an object that hashes to `id`.
    fn inflate_loose(&self, bytes: &[u8], id: &ObjectId) -> Option<(gix::objs::Kind, Vec<u8>)> {
        use gix::zlib::{FlushDecompress, Status};
        let mut z = self.inflate.borrow_mut();
        z.reset();
        let mut out = vec![0u8; (bytes.len() * 2).max(512)];
        loop {
            let (read, written) = (z.total_in() as usize, z.total_out() as usize);
            if written == out.len() {
                out.resize(out.len() * 2, 0);
            }
            match z.decompress(&bytes[read..], &mut out[written..], FlushDecompress::Finish) {
                Ok(Status::StreamEnd) => break,
                Ok(_)
                    if z.total_in() as usize == bytes.len()
                        && z.total_out() as usize == written =>
                {
                    return None;
                }
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        out.truncate(z.total_out() as usize);
        let (kind, size, header) = gix::objs::decode::loose_header(&out).ok()?;
        let data = out.get(header..header + size as usize)?.to_vec();
        let actual = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, &data).ok()?;
        (actual == *id).then_some((kind, data))
    }

    /// Write a loose object: here while the run has written fewer than
    /// [`INLINE_OBJECTS`], else on the writer thread (a failure there is
    /// reported by [`Writer::finish`]).
    fn send(
        &mut self,
        kind: gix::objs::Kind,
        buf: Vec<u8>,
        id: ObjectId,
    ) -> std::result::Result<(), String> {
        if self.thread.is_none() && self.written.len() < INLINE_OBJECTS {
            return write_one(&self.loose, kind, &buf, id);
        }
        let thread = self.thread.get_or_insert_with(|| {
            let loose = self.loose.clone();
            let (tx, rx) = std::sync::mpsc::channel::<(gix::objs::Kind, Vec<u8>, ObjectId)>();
            let handle = std::thread::spawn(move || {
                for (kind, buf, id) in rx {
                    write_one(&loose, kind, &buf, id)?;
                    atomic::crash_point("object-written-by-thread");
                }
                Ok(())
            });
            WriterThread { tx, handle }
        });
        if thread.tx.send((kind, buf, id)).is_err() {
            // The thread stopped at a failure: that is the error.
            return Err(self.finish().err().unwrap_or_default());
        }
        Ok(())
    }

    /// Wait for the writer thread: every object handed to it is on disk.
    fn finish(&mut self) -> std::result::Result<(), String> {
        let Some(WriterThread { tx, handle }) = self.thread.take() else {
            return Ok(());
        };
        drop(tx);
        handle
            .join()
            .unwrap_or_else(|_| Err("the writer thread panicked".into()))
    }
}

impl Drop for Writer {
    /// A run that ends early (an error before `sync_objects`) still waits
    /// for its writer thread: no write outlives the session lock.
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

struct WriterThread {
    tx: std::sync::mpsc::Sender<(gix::objs::Kind, Vec<u8>, ObjectId)>,
    handle: std::thread::JoinHandle<std::result::Result<(), String>>,
}

impl SessionRepo {
    fn serialize(&self, object: &impl gix::objs::WriteTo) -> Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(object.size() as usize);
        object
            .write_to(&mut buf)
            .io("serialize an object for", &self.dir)?;
        Ok(buf)
    }

    pub(super) fn write(&mut self, object: impl gix::objs::WriteTo) -> Result<ObjectId> {
        let buf = self.serialize(&object)?;
        self.write_raw(object.kind(), buf)
    }

    pub fn write_blob(&mut self, data: Vec<u8>) -> Result<ObjectId> {
        self.write_raw(gix::objs::Kind::Blob, data)
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
        self.objects.commits.push((id, buf));
        Ok(id)
    }

    /// Write an already serialized object: loose (skipped when it is loose
    /// already, as an unchanged subtree is), or into the bulk pack.
    pub(super) fn write_raw(&mut self, kind: gix::objs::Kind, buf: Vec<u8>) -> Result<ObjectId> {
        let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, &buf)
            .map_err(|e| self.err("hash an object", e))?;
        if self.objects.bulk.is_some() {
            let known = self
                .objects
                .bulk
                .as_ref()
                .is_some_and(|b| b.ids.contains(&id))
                || self.repo()?.objects.exists_without_refresh(&id);
            if !known {
                self.push_bulk(kind, id, buf)?;
            }
            return Ok(id);
        }
        if self.objects.written_ids.contains(&id) || self.objects.loose.contains(&id) {
            return Ok(id);
        }
        let len = buf.len() as u64;
        if let Err(e) = self.objects.send(kind, buf, id) {
            return Err(self.err("write an object", e));
        }
        self.objects.written_ids.insert(id);
        self.objects.written.push(id);
        self.objects.written_since_packing.0 += 1;
        self.objects.written_since_packing.1 += len;
        Ok(id)
    }

    /// Write the file at `path` (a regular file of `size` bytes) as a blob
    /// without reading it into memory ([`stream_loose`]): loose, in bulk
    /// mode too. `None` when the file changed size meanwhile.
    pub fn write_blob_streamed(&mut self, path: &Path, size: u64) -> Result<Option<ObjectId>> {
        let Some((id, written)) =
            stream_loose(&self.objects.objects_dir, path, size).io("commit", path)?
        else {
            return Ok(None);
        };
        if self.objects.written_ids.insert(id) {
            self.objects.written.push(id);
            self.objects.written_since_packing.0 += 1;
            self.objects.written_since_packing.1 += written;
        }
        Ok(Some(id))
    }

    /// The objects this process wrote, loose or in bulk: how many, and the
    /// loose ones' bytes (what background packing rolls up).
    pub fn written_since_packing(&self) -> (u64, u64) {
        self.objects.written_since_packing
    }

    /// Add an object to the bulk pack unless it is there already (not
    /// looked up in the repository: see `copy`).
    pub(super) fn push_bulk(
        &mut self,
        kind: gix::objs::Kind,
        id: ObjectId,
        buf: Vec<u8>,
    ) -> Result<()> {
        let bulk = self.objects.bulk.get_or_insert_with(Bulk::default);
        if bulk.ids.contains(&id) {
            return Ok(());
        }
        let c = bulk
            .compressor
            .get_or_insert_with(Compressor::default)
            .compress(kind, id, &buf);
        let c = c.map_err(|e| self.err("write an object", e))?;
        self.push_compressed(c)
    }

    /// Add an object compressed elsewhere (another thread) to the bulk
    /// pack unless it is there already.
    pub fn push_compressed(&mut self, c: Compressed) -> Result<()> {
        let bulk = self.objects.bulk.get_or_insert_with(Bulk::default);
        if bulk.ids.insert(c.id) {
            bulk.bytes += c.size;
            self.objects.written_since_packing.0 += 1;
            bulk.objects.push(c);
            if bulk.bytes >= BULK_FLUSH_BYTES {
                self.flush_pack()?;
            }
        }
        Ok(())
    }

    /// From now on, collect objects and write them as packs (one file pair
    /// instead of a loose file and often a directory per object).
    pub fn begin_bulk(&mut self) {
        self.objects.bulk.get_or_insert_with(Bulk::default);
    }

    /// Write the bulk objects collected so far as one pack, through gix.
    fn flush_pack(&mut self) -> Result<()> {
        use gix_pack::data::output;
        let Some(bulk) = self.objects.bulk.as_mut() else {
            return Ok(());
        };
        if bulk.objects.is_empty() {
            return Ok(());
        }
        let objects = std::mem::take(&mut bulk.objects);
        bulk.bytes = 0;
        let entries: Vec<output::Entry> = objects
            .into_iter()
            .map(|c| output::Entry {
                id: c.id,
                kind: output::entry::Kind::Base(c.kind),
                decompressed_size: c.size,
                compressed_data: c.zlib,
            })
            .collect();
        let count = entries.len() as u32;
        let mut stream = output::bytes::FromEntriesIter::new(
            std::iter::once(Ok(entries)),
            Vec::new(),
            count,
            gix_pack::data::Version::V2,
            gix::hash::Kind::Sha1,
        );
        for step in stream.by_ref() {
            step.map_err(|e| self.err("encode a pack", e))?;
        }
        let stream = stream.into_write();
        let pack_dir = self.objects.objects_dir.join("pack");
        std::fs::create_dir_all(&pack_dir).io("create", &pack_dir)?;
        let outcome = gix_pack::Bundle::write_to_directory(
            &mut std::io::Cursor::new(stream),
            Some(&pack_dir),
            &mut gix::progress::Discard,
            &std::sync::atomic::AtomicBool::new(false),
            None::<gix::odb::Cache<gix::odb::store::Handle<std::rc::Rc<gix::odb::Store>>>>,
            gix::hash::Kind::Sha1,
            gix_pack::bundle::write::Options {
                thread_limit: None,
                ..Default::default()
            },
        )
        .map_err(|e| self.err("write a pack", e))?;
        atomic::crash_point("pack-written");
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
        self.objects.keeps.extend(outcome.keep_path);
        Ok(())
    }

    /// Let gc see the packs written in bulk mode (refs point into them now).
    pub fn release_packs(&mut self) {
        for k in self.objects.keeps.drain(..) {
            let _ = std::fs::remove_file(k);
        }
    }

    /// Write what is still in memory (the bulk pack), wait for the writer
    /// thread, and apply the
    /// durability rule to the loose objects written: each file, its
    /// directory and `objects/` synced, so that no ref can ever point at a
    /// missing object after a crash.
    pub fn sync_objects(&mut self) -> Result<()> {
        self.flush_pack()?;
        if let Err(e) = self.objects.finish() {
            return Err(self.err("write an object", e));
        }
        crate::out::trace("objects: written");
        let written = std::mem::take(&mut self.objects.written);
        self.objects.written_ids.clear();
        if atomic::durable() && !written.is_empty() {
            let mut dirs = HashSet::new();
            for id in &written {
                let path = self.objects.loose.object_path(id);
                std::fs::File::open(&path)
                    .and_then(|f| f.sync_data())
                    .io("sync", &path)?;
                dirs.insert(path.parent().expect("a fan-out directory").to_path_buf());
            }
            for d in dirs {
                atomic::sync_dir(&d)?;
            }
            atomic::sync_dir(&self.objects.objects_dir)?;
        }
        Ok(())
    }
}

/// Write one loose object ([`write_loose`], or through gix's loose store
/// when `GIT_SESSION_LOOSE_WRITER=gix`, which the benchmark compares).
fn write_one(
    loose: &gix::odb::loose::Store,
    kind: gix::objs::Kind,
    data: &[u8],
    id: ObjectId,
) -> std::result::Result<(), String> {
    use gix::objs::Write as _;
    static WITH_GIX: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let with_gix = *WITH_GIX
        .get_or_init(|| std::env::var_os("GIT_SESSION_LOOSE_WRITER").is_some_and(|w| w == "gix"));
    if with_gix {
        loose
            .write_buf_with_known_id(kind, data, id)
            .map_err(|e| e.to_string())?;
    } else {
        write_loose(loose.path(), kind, data, id).map_err(|e| e.to_string())?;
    }
    atomic::crash_point("object-written");
    Ok(())
}

/// Write one loose object, `id` being the hash of `kind` and `data`: a temp
/// file of ours in the git dir (where the stale-temp sweep finds it after a
/// crash), renamed into its fan-out directory.
///
/// Hand-written rather than gix's `loose::Store::write_buf`, which writes
/// the same object through a zlib stream: even
/// at `Compression::NONE` a stream is set up per object (its tables
/// allocated and cleared) and the file goes through `tempfile`, which cost
/// about 0.2 ms an object here, 1.5 ms of a 2.5 ms `commit-turn` on tmpfs.
/// Measured in one run, alternating turns, by
/// `python3 bench/commit_turn.py --sizes 300,3000 --turns 40 --compare-writer loose`
/// (figures in the README's Performance section). The upstream-shaped fix:
/// at `Compression::NONE`, have gix-odb emit stored blocks without a
/// deflate stream.
fn write_loose(
    objects: &Path,
    kind: gix::objs::Kind,
    data: &[u8],
    id: ObjectId,
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let header = gix::objs::encode::loose_header(kind, data.len() as u64);
    let mut out = Vec::with_capacity(header.len() + data.len() + 64);
    push_stored_zlib(&mut out, &[&header, data]);
    let tmp = object_temp(objects);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&tmp)?;
        f.write_all(&out)?;
        drop(f);
        publish_loose(objects, &tmp, id)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A temp file of ours for an object, in the git dir (where the stale-temp
/// sweep finds it after a crash).
fn object_temp(objects: &Path) -> PathBuf {
    crate::layout::temp_path(objects.parent().unwrap_or(objects), "obj")
}

/// Move the finished object file `tmp` to its place as object `id`.
fn publish_loose(objects: &Path, tmp: &Path, id: ObjectId) -> std::io::Result<()> {
    let hex = id.to_hex().to_string();
    let dir = objects.join(&hex[..2]);
    // Background `git prune-packed` removes a fan-out directory once its
    // objects are packed, possibly between our `mkdir` and `rename`: as
    // git does, make it again and retry.
    let mut attempts = 0;
    loop {
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            // A link planted in place of a fan-out directory would take
            // the object out of the repository.
            Err(_) if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) => {
                return Err(std::io::Error::other(format!(
                    "`{}` is not a directory (a link?); nothing was written through it",
                    dir.display()
                )));
            }
            _ => {}
        }
        match std::fs::rename(tmp, dir.join(&hex[2..])) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempts < 8 && tmp.exists() => {
                attempts += 1;
            }
            other => return other,
        }
    }
}

/// Write the regular file at `path`, `size` bytes when it was looked at, as
/// a loose blob streamed: hashed and compressed as it is read (zlib's
/// fastest level, git's `core.looseCompression`), so a file of any size
/// costs a buffer of memory, as `git add` does with a large file. Returns
/// the blob and the bytes written, or `None` when the file is not `size`
/// bytes long any more (it is being written: the next commit takes it) or
/// not a regular file any more.
pub(crate) fn stream_loose(
    objects: &Path,
    path: &Path,
    size: u64,
) -> std::io::Result<Option<(ObjectId, u64)>> {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    // A link or a special file now, where a regular file was: changed too.
    let mut src = match atomic::no_follow(std::fs::OpenOptions::new().read(true)).open(path) {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        other => other?,
    };
    if !src.metadata()?.is_file() {
        return Ok(None);
    }
    let tmp = object_temp(objects);
    let result = (|| {
        let out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&tmp)?;
        let mut z = gix::zlib::stream::deflate::Write::new(out, gix::zlib::Compression::BEST_SPEED);
        let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
        let header = gix::objs::encode::loose_header(gix::objs::Kind::Blob, size);
        hasher.update(&header);
        z.write_all(&header)?;
        let mut buf = vec![0u8; 256 * 1024];
        let mut left = size;
        while left > 0 {
            let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let n = src.read(&mut buf[..want])?;
            if n == 0 {
                return Ok(None); // shorter now
            }
            hasher.update(&buf[..n]);
            z.write_all(&buf[..n])?;
            left -= n as u64;
            atomic::crash_point("object-streamed-part");
        }
        if src.read(&mut buf[..1])? != 0 {
            return Ok(None); // longer now
        }
        z.flush()?;
        let written = z.into_inner().metadata()?.len();
        let id = hasher.try_finalize().map_err(std::io::Error::other)?;
        publish_loose(objects, &tmp, id)?;
        Ok(Some((id, written)))
    })();
    if !matches!(result, Ok(Some(_))) {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Append to `out` the zlib stream of the concatenated `parts` as stored
/// (uncompressed) blocks, as zlib writes it at level 0.
fn push_stored_zlib(out: &mut Vec<u8>, parts: &[&[u8]]) {
    const BLOCK: usize = u16::MAX as usize;
    let total: usize = parts.iter().map(|p| p.len()).sum();
    out.reserve(2 + total + 5 * total.div_ceil(BLOCK).max(1) + 4);
    out.extend_from_slice(&[0x78, 0x01]); // deflate, 32 KiB window, no dictionary
    let mut adler = adler2::Adler32::new();
    for p in parts {
        adler.write_slice(p);
    }
    // Blocks of up to 65,535 bytes, taken across the parts; an empty input
    // is one empty final block.
    let mut part = 0;
    let mut at = 0;
    let mut left = total;
    loop {
        let len = left.min(BLOCK);
        left -= len;
        out.push(u8::from(left == 0)); // BFINAL on the last; BTYPE 00: stored
        out.extend_from_slice(&(len as u16).to_le_bytes());
        out.extend_from_slice(&(!(len as u16)).to_le_bytes());
        let mut need = len;
        while need > 0 {
            let p = parts[part];
            let take = need.min(p.len() - at);
            out.extend_from_slice(&p[at..at + take]);
            need -= take;
            at += take;
            if at == p.len() {
                part += 1;
                at = 0;
            }
        }
        if left == 0 {
            break;
        }
    }
    out.extend_from_slice(&adler.checksum().to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::tests::git;

    fn fsck(dir: &Path) {
        let out = git(dir, &["fsck", "--strict", "--no-dangling"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A streamed blob is the file's blob (as gix reads it back); a file
    /// shorter or longer than it was is no blob, and no temp file is left.
    #[test]
    fn a_streamed_blob_is_the_files_and_a_changed_file_none() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path().join("objects");
        std::fs::create_dir(&objects).unwrap();
        let data: Vec<u8> = (0..700_000usize).map(|i| (i * 7 % 251) as u8).collect();
        let file = dir.path().join("big.bin");
        std::fs::write(&file, &data).unwrap();
        let len = data.len() as u64;
        for wrong in [len - 1, len + 1] {
            assert!(
                stream_loose(&objects, &file, wrong).unwrap().is_none(),
                "{wrong}"
            );
        }
        let (id, written) = stream_loose(&objects, &file, len).unwrap().expect("a blob");
        assert_eq!(id, crate::git::blob_id(&data));
        let store = gix::odb::loose::Store::at(&objects, gix::hash::Kind::Sha1);
        assert_eq!(
            written,
            std::fs::metadata(store.object_path(&id)).unwrap().len()
        );
        assert!(written < len, "compressed");
        let mut buf = Vec::new();
        let found = store.try_find(&id, &mut buf).unwrap().expect("the object");
        assert!(found.data == data.as_slice());
        // Only the object: no temp file in the git dir or in objects/.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        assert_eq!(std::fs::read_dir(&objects).unwrap().count(), 1);
        // A link (the file replaced by one since it was looked at) is not
        // followed.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(stream_loose(&objects, &link, len).unwrap().is_none());
    }

    /// The hand-written loose encoder's objects read back through gix's
    /// loose store, at every block boundary, and leave no temp file.
    #[test]
    fn gix_reads_what_the_loose_encoder_writes() {
        for len in [0usize, 1, 65_520, 65_535, 65_536, 200_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let id = crate::git::blob_id(&data);
            let dir = tempfile::tempdir().unwrap();
            let objects = dir.path().join("objects");
            std::fs::create_dir(&objects).unwrap();
            write_loose(&objects, gix::objs::Kind::Blob, &data, id).unwrap();
            let store = gix::odb::loose::Store::at(&objects, gix::hash::Kind::Sha1);
            let mut buf = Vec::new();
            let found = store.try_find(&id, &mut buf).unwrap().expect("the object");
            assert_eq!(found.kind, gix::objs::Kind::Blob);
            assert!(found.data == data.as_slice(), "{len} bytes read back");
            // And by this process's own reader, which checks the id.
            let writer = Writer::new(dir.path());
            let (kind, back) = writer.read_loose(&id).expect("read back");
            assert_eq!(kind, gix::objs::Kind::Blob);
            assert!(back == data, "{len} bytes read back");
            let other = crate::git::blob_id(b"something else");
            std::fs::create_dir_all(store.object_path(&other).parent().unwrap()).unwrap();
            std::fs::copy(store.object_path(&id), store.object_path(&other)).unwrap();
            assert!(
                writer.read_loose(&other).is_none(),
                "an object under another's name"
            );
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "{len}");
        }
    }

    /// A loose file whose stream one read holds, one that takes more
    /// (past the first 8 KiB), and either cut short: the whole object, or
    /// none.
    #[test]
    fn a_loose_object_reads_whole_at_any_size_and_not_at_all_when_cut() {
        let mut x: u64 = 1;
        let noise: Vec<u8> = (0..50_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        for data in [b"small".to_vec(), noise] {
            let id = crate::git::blob_id(&data);
            let dir = tempfile::tempdir().unwrap();
            let objects = dir.path().join("objects");
            std::fs::create_dir(&objects).unwrap();
            write_loose(&objects, gix::objs::Kind::Blob, &data, id).unwrap();
            let writer = Writer::new(dir.path());
            let path = writer.loose.object_path(&id);
            let whole = std::fs::read(&path).unwrap();
            let (_, back) = writer.read_loose(&id).expect("read back");
            assert!(back == data, "{} bytes", data.len());
            std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
            assert!(
                writer.read_loose(&id).is_none(),
                "cut, {} bytes",
                data.len()
            );
        }
    }

    #[test]
    fn objects_written_loose_and_in_bulk_read_back_with_git() {
        let dir = tempfile::tempdir().unwrap();
        SessionRepo::init(dir.path(), 1_700_000_000.0).unwrap();
        let sizes = [0usize, 1, 65_535, 200_000];
        let blob = |len: usize, salt: usize| -> Vec<u8> {
            (0..len).map(|i| ((i * 7 + salt) % 251) as u8).collect()
        };
        for bulk in [false, true] {
            let mut repo = SessionRepo::open(dir.path()).unwrap();
            if bulk {
                repo.begin_bulk();
            }
            let ids: Vec<_> = sizes
                .iter()
                .map(|&len| repo.write_blob(blob(len, bulk as usize)).unwrap())
                .collect();
            // The same object twice is written once.
            repo.write_blob(blob(1, bulk as usize)).unwrap();
            repo.sync_objects().unwrap();
            repo.release_packs();
            for (&len, id) in sizes.iter().zip(&ids) {
                let out = git(dir.path(), &["cat-file", "blob", &id.to_string()]);
                assert!(
                    out.status.success(),
                    "{len}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(
                    out.stdout,
                    blob(len, bulk as usize),
                    "{len} bytes read back"
                );
            }
            let packs = std::fs::read_dir(dir.path().join(".git/objects/pack")).map_or(0, |rd| {
                rd.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
                    .count()
            });
            assert_eq!(packs, bulk as usize, "bulk mode writes one pack");
        }
        fsck(dir.path());
        // No temp file is left behind.
        let objects = dir.path().join(".git/objects");
        let temps: Vec<_> = walkdir::WalkDir::new(&objects)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.') || n.starts_with("tmp"))
            .collect();
        assert!(temps.is_empty(), "{temps:?}");
    }
}
