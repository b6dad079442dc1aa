//! What a `batch` process keeps between requests: a file's content read
//! or written by this process, used again only while the file is exactly
//! as this process last saw it.
//!
//! Each request still checks what a one-shot command checks; a kept copy
//! then stands in for reading the file only while `fstat` says it is the
//! same file (device and inode: nothing renamed over it) with the same
//! length, modification and change times. Every writer of the files kept
//! (the catalog of node files, the git index) appends to them or renames a
//! new file into place, and each of those moves a time or the inode; a
//! stranger who rewrote one in place within one tick of the clock and kept
//! its length is the one change not seen, as git's own index check does
//! not see it either.

use std::cell::Cell;

/// What `fstat` says of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    dev: u64,
    ino: u64,
    pub len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl State {
    pub fn of(md: &std::fs::Metadata) -> State {
        use std::os::unix::fs::MetadataExt;
        State {
            dev: md.dev(),
            ino: md.ino(),
            len: md.len(),
            mtime: (md.mtime(), md.mtime_nsec()),
            ctime: (md.ctime(), md.ctime_nsec()),
        }
    }

    /// The state of the regular file at `path` (not followed if a link).
    pub fn at(path: &std::path::Path) -> Option<State> {
        let md = std::fs::symlink_metadata(path).ok()?;
        md.is_file().then(|| State::of(&md))
    }
}

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
}

/// Keep files between requests from now on, on this thread (`batch`).
pub fn keep_between_requests() {
    ON.set(true);
}

/// Whether this thread keeps files between requests.
pub fn on() -> bool {
    ON.get()
}
