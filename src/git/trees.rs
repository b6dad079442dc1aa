//! Trees from index entries. gix has no `write-tree` (an index to its
//! trees); this is that, about fifty lines, writing through
//! [`super::objects`].

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::SessionRepo;
use crate::error::Result;

/// Kind of a tree entry, from an index entry's mode.
fn tree_kind(mode: gix::index::entry::Mode) -> EntryKind {
    use gix::index::entry::Mode;
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

impl SessionRepo {
    /// Write the trees of every entry of `state` and return the root tree.
    /// Index order is tree order up to the dir/file tie-break, which each
    /// tree's sort settles.
    pub fn write_tree(&mut self, index: &super::index::Index) -> Result<ObjectId> {
        let state = &index.0;
        let items: Vec<(&[u8], EntryKind, ObjectId)> = state
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
        items: &[(&[u8], EntryKind, ObjectId)],
        prefix: usize,
    ) -> Result<ObjectId> {
        let mut buf: Vec<u8> = Vec::with_capacity(items.len() * 64);
        let mut push = |kind: EntryKind, name: &[u8], oid: &ObjectId| {
            buf.extend_from_slice(kind.as_octal_str().as_bytes());
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
}
