//! How objects are written: loose (one file per object) through gix's loose
//! store, or, in bulk mode (backfill, migrate, redact, sync's transfer
//! repository), as one pack through gix's pack writer (`FromEntriesIter`,
//! then `Bundle::write_to_directory` for the index). Background
//! maintenance rolls loose objects up into packs (`super::maintenance`).
//! Every object of a session repository is written here; a project's
//! repository is written through gix too (`super::project`).
//!
//! The commits written are also kept in memory, so that this process reads
//! them back without a lookup.
//!
//! The durability rule for a run's loose objects: gix never syncs, so when
//! durability is on ([`atomic::durable`]) [`SessionRepo::sync_objects`]
//! makes every object file written durable before any ref that can reach
//! them moves: on ext4 and xfs with one flush after the write-out of each
//! (as git's `core.fsyncMethod=batch`, with the write-out waited for), on
//! any other file system one `fsync` each ([`make_durable`]). A crash before
//! that leaves unreachable objects, which git ignores and `gc` expires. A
//! bulk pack is synced whole when written.

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

/// The zlib level of a session's loose objects: none (stored blocks). A
/// turn's objects are small JSON files and a 3,000-entry tree, loose only
/// until background packing rolls them up (compressed); compressing the
/// tree cost 0.9 ms of a 9 ms `commit-turn` at 3,000 nodes on ext4.
const LOOSE_COMPRESSION: gix::zlib::Compression = gix::zlib::Compression::NONE;

/// The zlib level of a large file streamed into an object
/// ([`stream_loose`]): git's `core.looseCompression` default.
const STREAM_COMPRESSION: gix::zlib::Compression = gix::zlib::Compression::BEST_SPEED;

/// How this process writes objects to one repository.
pub(super) struct Writer {
    loose: gix::odb::loose::Store,
    objects_dir: PathBuf,
    /// Loose objects written and not yet made durable
    /// ([`SessionRepo::sync_objects`]).
    written: Vec<ObjectId>,
    written_ids: HashSet<ObjectId>,
    /// The objects written by this process, loose or into a bulk pack: how
    /// many, and the loose ones' bytes.
    written_since_packing: (u64, u64),
    /// The commits written by this process (a few per run).
    commits: Vec<(ObjectId, Vec<u8>)>,
    /// Bulk mode: objects collected and written as packs.
    bulk: Option<Bulk>,
    /// `.keep` files of the packs written in bulk mode, removed once refs
    /// point into them.
    keeps: Vec<PathBuf>,
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

/// One zlib compressor (gix's) for many pack entries, reset between them:
/// gix's `Entry::from_data` makes a new one per object.
pub struct Compressor(gix::zlib::stream::deflate::Compress);

impl Default for Compressor {
    fn default() -> Self {
        Compressor(gix::zlib::stream::deflate::Compress::new(
            gix::zlib::Compression::BEST_SPEED,
        ))
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
        use gix::zlib::{Status, stream::deflate::FlushCompress};
        self.0.reset();
        let mut out = vec![0u8; data.len() / 2 + 64];
        let (start_in, start_out) = (self.0.total_in(), self.0.total_out());
        loop {
            let read = (self.0.total_in() - start_in) as usize;
            let written = (self.0.total_out() - start_out) as usize;
            if written == out.len() {
                out.resize(out.len() * 2, 0);
            }
            match self
                .0
                .compress(&data[read..], &mut out[written..], FlushCompress::Finish)
            {
                Ok(Status::StreamEnd) => break,
                Ok(_) => {}
                Err(e) => return Err(format!("compress an object: {e}")),
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

/// The loose store of the objects directory `objects`, writing at
/// `compression`.
fn loose_store(objects: &Path, compression: gix::zlib::Compression) -> gix::odb::loose::Store {
    gix::odb::loose::Store::at_opts(
        objects,
        gix::hash::Kind::Sha1,
        gix::odb::loose::Options {
            compression,
            ..Default::default()
        },
    )
}

impl Writer {
    pub(super) fn new(git_dir: &Path) -> Writer {
        let objects_dir = git_dir.join("objects");
        Writer {
            loose: loose_store(&objects_dir, LOOSE_COMPRESSION),
            objects_dir,
            written: Vec::new(),
            written_ids: HashSet::new(),
            written_since_packing: (0, 0),
            commits: Vec::new(),
            bulk: None,
            keeps: Vec::new(),
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

    /// Loose object `id`, read through gix's loose store and checked
    /// against its id; `None` when it is not loose here, or is not what its
    /// name says (the caller then reads it through the repository, which
    /// reports it).
    pub(super) fn read_loose(&self, id: &ObjectId) -> Option<(gix::objs::Kind, Vec<u8>)> {
        let mut buf = Vec::new();
        let data = self.loose.try_find(id, &mut buf).ok()??;
        let actual = gix::objs::compute_hash(gix::hash::Kind::Sha1, data.kind, data.data).ok()?;
        (actual == *id).then(|| (data.kind, data.data.to_vec()))
    }
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
        // A loose file of this id written by an earlier run counts, unless
        // it is empty (what a power cut can leave of an object whose data
        // never reached the disk): then it is written again.
        if self.objects.written_ids.contains(&id)
            || std::fs::metadata(self.objects.loose.object_path(&id))
                .is_ok_and(|m| m.is_file() && m.len() > 0)
        {
            return Ok(id);
        }
        write_one(&self.objects.loose, kind, &buf, id)
            .io("write an object into", &self.objects.objects_dir)?;
        self.objects.note_loose(id, buf.len() as u64);
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
        self.objects.note_loose(id, written);
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

    /// Write what is still in memory (the bulk pack) and apply the
    /// durability rule to the loose objects written (the module's doc): so
    /// that no ref can ever point at a missing object after a crash.
    pub fn sync_objects(&mut self) -> Result<()> {
        self.flush_pack()?;
        crate::out::trace("objects: written");
        let written = std::mem::take(&mut self.objects.written);
        self.objects.written_ids.clear();
        if atomic::durable() {
            let paths: Vec<PathBuf> = written
                .iter()
                .map(|id| self.objects.loose.object_path(id))
                .collect();
            make_durable(&self.objects.objects_dir, &paths)?;
        }
        Ok(())
    }
}

impl Writer {
    /// Count loose object `id`, of `len` bytes on disk, as written by this
    /// run.
    fn note_loose(&mut self, id: ObjectId, len: u64) {
        if self.written_ids.insert(id) {
            self.written.push(id);
            self.written_since_packing.0 += 1;
            self.written_since_packing.1 += len;
        }
    }
}

/// Make the object files at `paths` (in `objects`), just written, durable
/// before any ref can reach them.
///
/// On ext4 and xfs, with one flush: the write-out of every file is started
/// (`sync_file_range` WRITE), then waited for (WAIT_BEFORE, WRITE,
/// WAIT_AFTER: the data is on the disk, its cache not flushed), then one
/// `fsync` of the last forces the file system's journal, which holds every
/// file's creation, size and rename (both log them in order; ext4 in its
/// default `data=ordered` mode writes a file's data before the metadata
/// that names it) and flushes the disk's cache. On any other file system
/// (btrfs logs only the file an `fsync` names; a network file system
/// promises less), each file is synced, then its fan-out directory and
/// `objects/`.
fn make_durable(objects: &Path, paths: &[PathBuf]) -> Result<()> {
    let Some((last, rest)) = paths.split_last() else {
        return Ok(());
    };
    if !journal_orders_data(objects) {
        let mut dirs = HashSet::new();
        for p in paths {
            std::fs::File::open(p)
                .and_then(|f| f.sync_data())
                .io("sync", p)?;
            dirs.insert(p.parent().expect("a fan-out directory").to_path_buf());
        }
        for d in dirs {
            atomic::sync_dir(&d)?;
        }
        return atomic::sync_dir(objects);
    }
    let files = rest
        .iter()
        .map(|p| {
            let f = std::fs::File::open(p).io("sync", p)?;
            write_out(&f, false).io("sync", p)?;
            Ok((p, f))
        })
        .collect::<Result<Vec<_>>>()?;
    for (p, f) in &files {
        write_out(f, true).io("sync", p)?;
    }
    std::fs::File::open(last)
        .and_then(|f| f.sync_all())
        .io("sync", last)
}

/// Whether the file system of `dir` is one whose journal makes a batch of
/// written-out files durable with one `fsync` ([`make_durable`]): ext4 or
/// xfs.
#[cfg(target_os = "linux")]
fn journal_orders_data(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const EXT4: i64 = 0xEF53;
    const XFS: i64 = 0x5846_5342;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path and `buf` a zeroed statfs that
    // the call fills in.
    let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut buf) } != 0 {
        return false;
    }
    matches!(buf.f_type as i64, EXT4 | XFS)
}

#[cfg(not(target_os = "linux"))]
fn journal_orders_data(_dir: &Path) -> bool {
    false
}

/// Start the write-out of `file`'s dirty pages; with `wait`, wait until
/// every page written out so far is on the disk (its cache not flushed).
#[cfg(target_os = "linux")]
fn write_out(file: &std::fs::File, wait: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let flags = if wait {
        libc::SYNC_FILE_RANGE_WAIT_BEFORE
            | libc::SYNC_FILE_RANGE_WRITE
            | libc::SYNC_FILE_RANGE_WAIT_AFTER
    } else {
        libc::SYNC_FILE_RANGE_WRITE
    };
    // SAFETY: a plain system call on an open descriptor; no memory is passed.
    let r = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, flags) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn write_out(_file: &std::fs::File, _wait: bool) -> std::io::Result<()> {
    Ok(())
}

/// Refuse to write into the fan-out directory `dir` when it is a link (or
/// anything but a directory): it would take the object out of the
/// repository.
fn refuse_linked_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if !m.is_dir() => Err(std::io::Error::other(format!(
            "`{}` is not a directory (a link?); nothing was written through it",
            dir.display()
        ))),
        _ => Ok(()),
    }
}

/// The I/O error at the root of gix's error `e` (its kind says what to do:
/// a full disk, a permission), else `e` as one.
fn io_error(e: gix::error::Error) -> std::io::Error {
    match e.downcast_any_ref::<std::io::Error>() {
        Some(io) => std::io::Error::new(io.kind(), io.to_string()),
        None => std::io::Error::other(format!("{e:#}")),
    }
}

/// Write one loose object through gix's loose store, `id` being the hash
/// of `kind` and `data`.
fn write_one(
    loose: &gix::odb::loose::Store,
    kind: gix::objs::Kind,
    data: &[u8],
    id: ObjectId,
) -> std::io::Result<()> {
    use gix::objs::Write as _;
    let path = loose.object_path(&id);
    let dir = path.parent().expect("a fan-out directory");
    let mut attempts = 0;
    loop {
        refuse_linked_dir(dir)?;
        match loose.write_buf_with_known_id(kind, data, id) {
            Ok(_) => break,
            // Background `git prune-packed` removes a fan-out directory
            // once its objects are packed, possibly between gix's `mkdir`
            // and `rename`: as git does, try again.
            Err(_) if attempts < 8 && !dir.exists() => attempts += 1,
            Err(e) => return Err(io_error(e)),
        }
    }
    atomic::crash_point("object-written");
    Ok(())
}

/// The file at `path`, read for exactly `size` bytes: a read past its end,
/// or one that finds it longer, is an error and marks it `changed`.
struct Exactly {
    file: std::fs::File,
    left: u64,
    changed: std::rc::Rc<std::cell::Cell<bool>>,
}

impl std::io::Read for Exactly {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            if self.file.read(&mut [0u8; 1])? == 0 {
                return Ok(0);
            }
            self.changed.set(true);
            return Err(std::io::Error::other("the file grew while it was read"));
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..want])?;
        if n == 0 && want > 0 {
            self.changed.set(true);
            return Err(std::io::Error::other("the file shrank while it was read"));
        }
        self.left -= n as u64;
        atomic::crash_point("object-streamed-part");
        Ok(n)
    }
}

/// Write the regular file at `path`, `size` bytes when it was looked at, as
/// a loose blob in the objects directory `objects`, streamed through gix's
/// loose store: hashed and compressed as it is read, so a file of any size
/// costs a buffer of memory, as `git add` does with a large file. Returns
/// the blob and the bytes written, or `None` when the file is not `size`
/// bytes long any more (it is being written: the next commit takes it) or
/// not a regular file any more.
pub(crate) fn stream_loose(
    objects: &Path,
    path: &Path,
    size: u64,
) -> std::io::Result<Option<(ObjectId, u64)>> {
    use gix::objs::Write as _;
    let store = loose_store(objects, STREAM_COMPRESSION);
    // The blob's fan-out directory is known only once it is written, and
    // gix writes through a link there: no link may stand for any.
    if let Some(link) = linked_fan_out(objects)? {
        return Err(refuse_linked_dir(&link).unwrap_err());
    }
    let mut attempts = 0;
    loop {
        // A link or a special file now, where a regular file was: changed too.
        let file = match atomic::no_follow(std::fs::OpenOptions::new().read(true)).open(path) {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
            other => other?,
        };
        if !file.metadata()?.is_file() {
            return Ok(None);
        }
        let changed = std::rc::Rc::new(std::cell::Cell::new(false));
        let exactly = Exactly {
            file,
            left: size,
            changed: changed.clone(),
        };
        let mut from = std::io::BufReader::with_capacity(256 * 1024, exactly);
        match store.write_stream(gix::objs::Kind::Blob, size, &mut from) {
            Ok(id) => {
                // Packed and pruned already by background packing: its
                // size then is the file's.
                let written =
                    std::fs::symlink_metadata(store.object_path(&id)).map_or(size, |m| m.len());
                return Ok(Some((id, written)));
            }
            Err(_) if changed.get() => return Ok(None),
            Err(e) => {
                let e = io_error(e);
                // A fan-out directory pruned under the rename, as in
                // [`write_one`]: the file is read again.
                if e.kind() != std::io::ErrorKind::NotFound || attempts >= 3 {
                    return Err(e);
                }
                attempts += 1;
            }
        }
    }
}

/// A fan-out directory of `objects` that is not a directory (a link), if
/// any.
fn linked_fan_out(objects: &Path) -> std::io::Result<Option<PathBuf>> {
    for e in std::fs::read_dir(objects)? {
        let e = e?;
        let name = e.file_name();
        let fan_out = name.len() == 2 && name.as_encoded_bytes().iter().all(u8::is_ascii_hexdigit);
        if fan_out && !e.file_type()?.is_dir() {
            return Ok(Some(e.path()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

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

    /// A loose object reads back whole at any size (one zlib block and
    /// several); one under another's name, or cut short, is not read.
    #[test]
    fn a_loose_object_reads_back_only_under_its_own_name_and_whole() {
        for len in [0usize, 1, 65_536, 200_000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let id = crate::git::blob_id(&data);
            let dir = tempfile::tempdir().unwrap();
            let objects = dir.path().join("objects");
            std::fs::create_dir(&objects).unwrap();
            let writer = Writer::new(dir.path());
            write_one(&writer.loose, gix::objs::Kind::Blob, &data, id).unwrap();
            let (kind, back) = writer.read_loose(&id).expect("read back");
            assert_eq!(kind, gix::objs::Kind::Blob);
            assert!(back == data, "{len} bytes read back");
            let path = writer.loose_path(&id);
            let other = crate::git::blob_id(b"something else");
            std::fs::create_dir_all(writer.loose_path(&other).parent().unwrap()).unwrap();
            std::fs::copy(&path, writer.loose_path(&other)).unwrap();
            assert!(
                writer.read_loose(&other).is_none(),
                "an object under another's name"
            );
            let whole = std::fs::read(&path).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
            assert!(writer.read_loose(&id).is_none(), "cut, {len} bytes");
            // Only the object and the copy: no temp file in objects/.
            assert_eq!(std::fs::read_dir(&objects).unwrap().count(), 2, "{len}");
        }
    }

    /// An empty loose file (what a power cut can leave of an object whose
    /// data never reached the disk) is not taken for the object: writing
    /// the object again replaces it.
    #[test]
    fn an_empty_loose_file_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        SessionRepo::init(dir.path(), 1_700_000_000.0).unwrap();
        let mut repo = SessionRepo::open(dir.path()).unwrap();
        let id = repo.write_blob(b"a node".to_vec()).unwrap();
        repo.sync_objects().unwrap();
        let path = repo.loose_path(id);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&path, b"").unwrap();
        let mut again = SessionRepo::open(dir.path()).unwrap();
        assert_eq!(again.write_blob(b"a node".to_vec()).unwrap(), id);
        again.sync_objects().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
        let out = git(dir.path(), &["cat-file", "blob", &id.to_string()]);
        assert_eq!(out.stdout, b"a node");
    }

    /// A link planted for a fan-out directory is not written through.
    #[test]
    fn no_object_is_written_through_a_linked_fan_out_directory() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let objects = dir.path().join("objects");
        std::fs::create_dir(&objects).unwrap();
        let writer = Writer::new(dir.path());
        let data = b"an object".to_vec();
        let id = crate::git::blob_id(&data);
        let fan_out = writer.loose_path(&id).parent().unwrap().to_path_buf();
        std::os::unix::fs::symlink(outside.path(), &fan_out).unwrap();
        let err = write_one(&writer.loose, gix::objs::Kind::Blob, &data, id).unwrap_err();
        assert!(
            err.to_string().contains("is not a directory (a link?)"),
            "{err}"
        );
        let file = dir.path().join("big.bin");
        std::fs::write(&file, &data).unwrap();
        let err = stream_loose(&objects, &file, data.len() as u64).unwrap_err();
        assert!(err.to_string().contains("(a link?)"), "{err}");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
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
