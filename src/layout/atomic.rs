//! Atomic file writes (SPEC §4): temp file in the same directory, fsync,
//! rename, fsync the directory. A crash leaves the old or the new file, and at
//! worst a temp file with the [`TEMP_PREFIX`](super::TEMP_PREFIX) that `verify` reports.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

use crate::error::{IoContext, Result};

/// `GIT_SESSION_FSYNC=0` turns fsync off (tests, benchmarks of the floor).
pub fn durable() -> bool {
    static DURABLE: OnceLock<bool> = OnceLock::new();
    *DURABLE.get_or_init(|| {
        !matches!(
            std::env::var("GIT_SESSION_FSYNC").as_deref(),
            Ok("0") | Ok("false") | Ok("no") | Ok("off")
        )
    })
}

/// fsync a directory so that a rename or a new entry inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    if durable() {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .io("sync the directory", dir)?;
    }
    Ok(())
}

/// Test-only crash points (`GIT_SESSION_CRASH_AT=<name>`, or `<name>#<n>`
/// for its n-th occurrence in one process): the process aborts at once, as
/// a kill -9 would, so tests can prove every write step is recoverable.
pub fn crash_point(name: &str) {
    use std::sync::Mutex;
    static SEEN: Mutex<Vec<(String, usize)>> = Mutex::new(Vec::new());
    let Some(at) = std::env::var_os("GIT_SESSION_CRASH_AT") else {
        return;
    };
    let at = at.to_string_lossy();
    let (want, nth) = match at.split_once('#') {
        Some((w, n)) => (w, n.parse::<usize>().unwrap_or(1)),
        None => (&*at, 1),
    };
    if want != name {
        return;
    }
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let count = match seen.iter_mut().find(|(n, _)| n == name) {
        Some((_, c)) => {
            *c += 1;
            *c
        }
        None => {
            seen.push((name.to_string(), 1));
            1
        }
    };
    if count == nth {
        std::process::abort();
    }
}

/// `opts` that refuse to open a symlink in the file's place (`O_NOFOLLOW`):
/// for every file the tool rewrites in place or appends to, so that a link
/// planted there never leads a write out of the state dir (SPEC §4). A
/// file replaced by a rename needs none: the rename replaces the link.
///
/// `O_NONBLOCK` as well: a FIFO planted there fails or reads empty at once
/// instead of blocking with the locks held (for a regular file the flag
/// changes nothing).
pub fn no_follow(opts: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
}

/// Open a file of the layout for reading without ever blocking on it: a
/// FIFO planted where a registry file or a meta.json belongs reads empty at
/// once (and then does not parse) instead of hanging the command.
pub fn open_read(path: impl AsRef<Path>) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// [`open_read`], all of it.
///
/// Most files of the layout (a meta.json, a stamp, a loose object) are
/// small: the first read, into 8 KiB, holds all of one, and the next says
/// it ended. Only a file that fills it has its size and position asked for,
/// to read the rest at once (`read_to_end` alone asks every file: two
/// system calls of a small file's six).
pub fn read(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = open_read(path)?;
    let mut bytes = vec![0u8; FIRST_READ];
    let mut filled = 0;
    while filled < FIRST_READ {
        match read_once(&mut file, &mut bytes[filled..])? {
            0 => {
                bytes.truncate(filled);
                return Ok(bytes);
            }
            n => filled += n,
        }
    }
    // `read_to_end` sizes the rest from the file's length.
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What a first read of a file of the layout asks for: all of most of them.
pub const FIRST_READ: usize = 8 * 1024;

/// One `read` into `buf`, again when a signal interrupted it: how many
/// bytes it gave (0 at the end).
pub fn read_once(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// [`read`] as UTF-8 text.
pub fn read_to_string(path: impl AsRef<Path>) -> std::io::Result<String> {
    String::from_utf8(read(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Refuse `path` when it is a symlink (a directory the layout names, a
/// session's `history/`, `workdir/`, `.git/`, must be the session's own) or
/// a special file (a FIFO, socket or device where the layout has a file).
pub fn refuse_unsafe(path: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(super::Refusal::Symlink {
            path: path.to_path_buf(),
            help: "git-session never writes through a link inside a session or the state dir; \
                   replace it with the directory or file it stands for",
        }
        .into()),
        // Opening a FIFO would block with the locks held; a socket or a
        // device is no file of the layout either.
        Ok(m)
            if {
                let t = m.file_type();
                t.is_fifo() || t.is_socket() || t.is_block_device() || t.is_char_device()
            } =>
        {
            Err(super::Refusal::SpecialFile {
                path: path.to_path_buf(),
            }
            .into())
        }
        _ => Ok(()),
    }
}

/// The bytes of a file of the layout that may not exist yet (`None`), its
/// directory and itself checked first by [`refuse_unsafe`]: never read
/// through a link or from a special file (a link to `/dev/zero` would be
/// read until memory ran out, a FIFO would block the reader).
pub fn read_if_present(path: &Path) -> Result<Option<Vec<u8>>> {
    if let Some(dir) = path.parent() {
        refuse_unsafe(dir)?;
    }
    refuse_unsafe(path)?;
    match read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).io("read", path),
    }
}

/// Write `bytes` to `path` atomically.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_with_mode(path, bytes, 0o644)
}

/// Write `bytes` to `path` atomically, creating it with `mode`.
pub fn write_with_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    // A bare file name (`cursor.json`) lives in the working directory.
    let dir = match path.parent() {
        Some(d) if d.as_os_str().is_empty() => Path::new("."),
        Some(d) => d,
        None => panic!("an atomic write always targets a file in a directory"),
    };
    let name = path
        .file_name()
        .expect("an atomic write always targets a named file")
        .to_string_lossy();
    let tmp = super::temp_path(dir, &name);
    let result = (|| {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(mode);
        }
        let mut f = opts.open(&tmp).io("create a temporary file", &tmp)?;
        f.write_all(bytes).io("write", &tmp)?;
        if durable() {
            f.sync_all().io("sync", &tmp)?;
        }
        drop(f);
        crash_point("before-rename");
        std::fs::rename(&tmp, path).io("replace", path)?;
        crash_point("after-rename");
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Rewrite a small marker file in place: no new file and no freed block (on
/// some filesystems freeing a block costs a discard request, and every new
/// inode a scan past the recently freed ones). Not atomic: the content is
/// written first and the file cut to length after, so a reader sees the
/// new content followed, at worst, by a tail of the old one. Only for files
/// whose readers take the fields they need from the start and ignore the
/// rest, and for which a torn file costs a rebuild, never a wrong answer.
pub fn overwrite(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = no_follow(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(path)?;
    f.write_all_at(bytes, 0)?;
    f.set_len(bytes.len() as u64)
}

/// Create `path` with `bytes`, failing if it exists (an O_EXCL publish through
/// a temp file and `link`, so the file never appears half-written).
pub fn create_new(path: &Path, bytes: &[u8]) -> Result<bool> {
    let dir = path
        .parent()
        .expect("a node file always lives in a directory");
    let name = path.file_name().expect("named").to_string_lossy();
    let tmp = super::temp_path(dir, &name);
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .io("create a temporary file", &tmp)?;
        f.write_all(bytes).io("write", &tmp)?;
        if durable() {
            f.sync_all().io("sync", &tmp)?;
        }
        drop(f);
        crash_point("before-rename");
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(e).io("publish", path),
        }
        crash_point("after-rename");
        Ok(true)
    })();
    let _ = std::fs::remove_file(&tmp);
    if matches!(result, Ok(true)) {
        sync_dir(dir)?;
    }
    result
}

#[cfg(test)]
mod tests {
    /// Every size reads back whole: empty, small, around the first read's
    /// 8 KiB, and large; a FIFO reads empty without blocking.
    #[test]
    fn read_gives_the_whole_file_at_every_size() {
        let dir = tempfile::tempdir().unwrap();
        for len in [0usize, 1, 100, 8191, 8192, 8193, 16384, 100_000, 1 << 20] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let p = dir.path().join(format!("f{len}"));
            std::fs::write(&p, &bytes).unwrap();
            assert_eq!(super::read(&p).unwrap(), bytes, "{len} bytes");
        }
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(super::read(&fifo).unwrap(), b"");
        assert!(super::read(dir.path().join("missing")).is_err());
    }
}
