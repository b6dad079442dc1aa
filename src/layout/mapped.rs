//! Reading a whole file that may be large: mapped rather than copied.
//!
//! On this kind of machine (a small VM) a page fault on fresh memory costs
//! about 6 µs: reading the 3.6 MB `index.json` of 10,000 sessions into a
//! buffer cost 885 of them, more than 5 ms. A mapping of the page cache with
//! the pages populated at once costs a fraction of that.

use std::fs::File;
use std::io::Read;

/// A file's bytes: read into memory, or mapped when large.
#[derive(Debug)]
pub enum Bytes {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
    /// Kept by this process between `batch` requests (see `history`).
    Shared(std::sync::Arc<Vec<u8>>),
}

impl Default for Bytes {
    fn default() -> Bytes {
        Bytes::Owned(Vec::new())
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
            Bytes::Shared(v) => v,
        }
    }
}

/// From this size on, a file is mapped rather than read (a mapping costs
/// two system calls more than a read, and saves a page fault per 4 KiB).
pub const MAP_FROM: u64 = 64 * 1024;

/// The whole of `file`, whose length is `len`.
///
/// Only for files that are replaced by a rename or appended to, never
/// truncated or rewritten in place (a mapping of a file cut short faults):
/// the catalog cache, `index.json`. An append made after the mapping is not
/// seen (the caller knows the length it wants).
pub fn read(file: &mut File, len: u64) -> std::io::Result<Bytes> {
    if len >= MAP_FROM {
        // SAFETY: see above; every writer of these files renames a complete
        // new file into place or appends past the mapped length.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(len as usize)
                .populate()
                .map(&*file)
        }?;
        Ok(Bytes::Mapped(map))
    } else {
        let mut v = Vec::with_capacity(len as usize);
        file.take(len).read_to_end(&mut v)?;
        Ok(Bytes::Owned(v))
    }
}
