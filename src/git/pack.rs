//! One turn's objects as one pack: a `.pack` and its version-2 `.idx`,
//! written here rather than as a loose file (and often a new directory) per
//! object.
//!
//! A turn writes about six small objects. Each loose object is a new file,
//! and creating a file is the dearest thing a turn does on a disk: on ext4
//! without a journal, the inode allocator skips every inode freed in the
//! last seconds to minutes, one by one, so a create took 0.1–0.35 ms here
//! against 10 µs on tmpfs. Two files per turn instead of six to twelve.
//!
//! Background packing (`git repack --geometric -F`) rolls the small packs
//! up and compresses their objects, stored here uncompressed.

use gix::ObjectId;

/// Pack type number of an object kind.
fn type_number(kind: gix::objs::Kind) -> u8 {
    match kind {
        gix::objs::Kind::Commit => 1,
        gix::objs::Kind::Tree => 2,
        gix::objs::Kind::Blob => 3,
        gix::objs::Kind::Tag => 4,
    }
}

/// The entry header: type and size, 4 then 7 bits per byte.
pub(super) fn push_entry_header(out: &mut Vec<u8>, kind: gix::objs::Kind, len: usize) {
    let mut size = len;
    let mut byte = (type_number(kind) << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
}

/// Append the concatenation of `parts` as one zlib stream of stored
/// (uncompressed) blocks.
///
/// Not compressed: setting up a deflate stream, or even resetting one,
/// clears its tables, and with compression that cost about 0.25 ms a turn
/// here, more than writing the files. The objects are short-lived this way:
/// background packing rolls the turns' packs up with `-F`, which compresses
/// them (a plain repack would copy a stored entry as it is).
pub(super) fn push_stored_zlib(out: &mut Vec<u8>, parts: &[&[u8]]) {
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

fn sha1(data: &[u8]) -> std::io::Result<ObjectId> {
    let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
    h.update(data);
    h.try_finalize()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// A pack and its index, ready to be written.
pub struct Encoded {
    pub pack: Vec<u8>,
    pub idx: Vec<u8>,
    /// The pack's checksum, which names both files.
    pub checksum: ObjectId,
}

/// Encode `objects` (kind, id, data; ids unique) as a version-2 pack without
/// deltas, and its version-2 index.
pub fn encode(objects: &[(gix::objs::Kind, ObjectId, Vec<u8>)]) -> std::io::Result<Encoded> {
    let mut pack = Vec::with_capacity(
        32 + objects
            .iter()
            .map(|(_, _, d)| d.len() + d.len() / 8192 + 16)
            .sum::<usize>(),
    );
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    // (id, crc32 of the whole entry, offset)
    let mut entries: Vec<(ObjectId, u32, u64)> = Vec::with_capacity(objects.len());
    for (kind, id, data) in objects {
        let start = pack.len();
        push_entry_header(&mut pack, *kind, data.len());
        push_stored_zlib(&mut pack, &[data]);
        entries.push((*id, zlib_rs::crc32::crc32(0, &pack[start..]), start as u64));
    }
    let checksum = sha1(&pack)?;
    pack.extend_from_slice(checksum.as_bytes());

    entries.sort_unstable_by_key(|e| e.0);
    let n = entries.len();
    let mut idx = Vec::with_capacity(8 + 256 * 4 + n * (20 + 4 + 4) + 40);
    idx.extend_from_slice(b"\xfftOc");
    idx.extend_from_slice(&2u32.to_be_bytes());
    let mut fanout = [0u32; 256];
    for (id, _, _) in &entries {
        fanout[id.as_bytes()[0] as usize] += 1;
    }
    let mut total = 0u32;
    for count in fanout {
        total += count;
        idx.extend_from_slice(&total.to_be_bytes());
    }
    for (id, _, _) in &entries {
        idx.extend_from_slice(id.as_bytes());
    }
    for (_, crc, _) in &entries {
        idx.extend_from_slice(&crc.to_be_bytes());
    }
    // Offsets past 2 GiB go to the table of 8-byte offsets.
    let mut large: Vec<u64> = Vec::new();
    for (_, _, offset) in &entries {
        let small = if *offset < 0x8000_0000 {
            *offset as u32
        } else {
            large.push(*offset);
            0x8000_0000 | (large.len() - 1) as u32
        };
        idx.extend_from_slice(&small.to_be_bytes());
    }
    for offset in large {
        idx.extend_from_slice(&offset.to_be_bytes());
    }
    idx.extend_from_slice(checksum.as_bytes());
    let idx_checksum = sha1(&idx)?;
    idx.extend_from_slice(idx_checksum.as_bytes());
    Ok(Encoded {
        pack,
        idx,
        checksum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::tests::git;

    fn object(kind: gix::objs::Kind, data: &[u8]) -> (gix::objs::Kind, ObjectId, Vec<u8>) {
        let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data).unwrap();
        (kind, id, data.to_vec())
    }

    /// git reads the pack and its index back: every object, by id, with the
    /// checksums git computes itself (`verify-pack`, `index-pack`).
    #[test]
    fn git_reads_back_every_object_of_a_pack_written_here() {
        let dir = tempfile::tempdir().unwrap();
        assert!(git(dir.path(), &["init", "-q"]).status.success());
        let mut objects = vec![
            object(gix::objs::Kind::Blob, b""),
            object(gix::objs::Kind::Blob, b"hello\n"),
            // Sizes around the header's 4- and 11-bit steps, and one
            // that does not compress.
            object(gix::objs::Kind::Blob, &[b'a'; 15]),
            object(gix::objs::Kind::Blob, &[b'b'; 16]),
            object(gix::objs::Kind::Blob, &vec![b'c'; 2048]),
            object(
                gix::objs::Kind::Blob,
                &(0..70_000u32)
                    .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                    .collect::<Vec<_>>(),
            ),
        ];
        let blob = objects[1].1;
        let mut tree = b"100644 hello\0".to_vec();
        tree.extend_from_slice(blob.as_bytes());
        objects.push(object(gix::objs::Kind::Tree, &tree));
        let commit = format!(
            "tree {}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nm\n",
            objects.last().unwrap().1
        );
        objects.push(object(gix::objs::Kind::Commit, commit.as_bytes()));

        let e = encode(&objects).unwrap();
        let pack_dir = dir.path().join(".git/objects/pack");
        let base = pack_dir.join(format!("pack-{}", e.checksum));
        std::fs::write(base.with_extension("pack"), &e.pack).unwrap();
        std::fs::write(base.with_extension("idx"), &e.idx).unwrap();

        let verify = git(
            dir.path(),
            &[
                "verify-pack",
                "-v",
                base.with_extension("idx").to_str().unwrap(),
            ],
        );
        assert!(verify.status.success(), "{verify:?}");
        // index-pack computes its own index from the pack: the same bytes.
        let again = dir.path().join("again.idx");
        let index_pack = git(
            dir.path(),
            &[
                "index-pack",
                "-o",
                again.to_str().unwrap(),
                base.with_extension("pack").to_str().unwrap(),
            ],
        );
        assert!(index_pack.status.success(), "{index_pack:?}");
        assert_eq!(std::fs::read(&again).unwrap(), e.idx);
        for (kind, id, data) in &objects {
            let t = git(dir.path(), &["cat-file", "-t", &id.to_string()]);
            assert_eq!(String::from_utf8_lossy(&t.stdout).trim(), kind.to_string());
            let c = git(
                dir.path(),
                &["cat-file", &kind.to_string(), &id.to_string()],
            );
            assert_eq!(&c.stdout, data, "{kind} {id}");
        }
        let fsck = git(dir.path(), &["fsck", "--strict", "--no-dangling"]);
        assert!(fsck.status.success(), "{fsck:?}");
    }

    /// The header of an entry: type in bits 4–6, the size 4 bits then 7
    /// bits at a time, continuation in the top bit.
    #[test]
    fn entry_headers_encode_sizes_in_four_then_seven_bit_groups() {
        let header = |kind, len| {
            let mut v = Vec::new();
            push_entry_header(&mut v, kind, len);
            v
        };
        assert_eq!(header(gix::objs::Kind::Blob, 0), [0x30]);
        assert_eq!(header(gix::objs::Kind::Blob, 15), [0x3f]);
        assert_eq!(header(gix::objs::Kind::Commit, 16), [0x90, 0x01]);
        assert_eq!(header(gix::objs::Kind::Tree, 2047), [0xaf, 0x7f]);
        assert_eq!(header(gix::objs::Kind::Tree, 2048), [0xa0, 0x80, 0x01]);
    }
}
