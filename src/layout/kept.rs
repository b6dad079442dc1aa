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
use std::path::{Path, PathBuf};

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
    pub fn at(path: &Path) -> Option<State> {
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

/// The files of one kind a thread keeps: the few sessions a batch works on
/// at once, most recent first, each with the state its file was in.
pub struct Shelf<T> {
    items: Vec<(PathBuf, State, T)>,
}

impl<T> Default for Shelf<T> {
    fn default() -> Shelf<T> {
        Shelf::new()
    }
}

impl<T> Shelf<T> {
    /// Sessions a batch works on at once.
    const AT_MOST: usize = 4;

    pub const fn new() -> Shelf<T> {
        Shelf { items: Vec::new() }
    }

    /// What is kept for `path`, while its file is in `state`.
    pub fn get(&self, path: &Path, state: State) -> Option<&T> {
        self.items
            .iter()
            .find(|(p, s, _)| p == path && *s == state)
            .map(|(.., v)| v)
    }

    /// What is kept for `path` and the state it was kept in, to change
    /// both.
    pub fn entry(&mut self, path: &Path) -> Option<(&mut State, &mut T)> {
        self.items
            .iter_mut()
            .find(|(p, ..)| p == path)
            .map(|(_, s, v)| (s, v))
    }

    /// Take out what is kept for `path`: `Some` when its file is in `state`.
    pub fn take(&mut self, path: &Path, state: Option<State>) -> Option<T> {
        let at = self.items.iter().position(|(p, ..)| p == path)?;
        let (_, kept, value) = self.items.remove(at);
        (Some(kept) == state).then_some(value)
    }

    /// Keep `value` for `path`, whose file is in `state`.
    pub fn put(&mut self, path: PathBuf, state: State, value: T) {
        self.items.retain(|(p, ..)| *p != path);
        self.items.insert(0, (path, state, value));
        self.items.truncate(Self::AT_MOST);
    }

    /// Forget what is kept for `path`.
    pub fn forget(&mut self, path: &Path) {
        self.items.retain(|(p, ..)| p != path);
    }
}
