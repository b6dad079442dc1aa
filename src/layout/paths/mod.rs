//! State-directory resolution (SPEC §1) and every path of the on-disk layout.
//! No other module spells a file name.

use std::path::{Path, PathBuf};

use super::ids;

/// Prefix of every temporary file this tool writes; `verify` reports leftovers,
/// and session commits never include them.
pub const TEMP_PREFIX: &str = ".gs-tmp-";

/// Past this size the hook log is moved to [`StateDir::hook_log_older`]
/// (replacing it) and begun anew.
pub const HOOK_LOG_BYTES: u64 = 1 << 20;

/// A session's metadata file, relative to its directory.
pub const META: &str = "meta.json";
/// The directory of a session's node files, relative to its directory.
pub const HISTORY: &str = "history";
/// The agent's working directory of a session, relative to its directory.
pub const WORKDIR: &str = "workdir";
/// Where `append --attach` copies files, relative to [`WORKDIR`].
pub const ATTACHMENTS: &str = "attachments";
/// Every entry a session directory may hold (SPEC §2).
pub const SESSION_ENTRIES: &[&str] = &[META, HISTORY, WORKDIR, "context", "large_nodes", ".git"];

/// Whether `rel` (relative to a session directory) is its repository's
/// own to this place, never copied to another: `.git/config`, its hooks,
/// our private directory and the session lock.
pub fn is_local_to_repo(rel: &Path) -> bool {
    let git = Path::new(".git");
    rel == git.join("config")
        || rel.starts_with(git.join("hooks"))
        || rel.starts_with(git.join("git-session"))
        || rel == git.join("git-session.lock")
}

/// Whether `rel` (relative to a session directory) is a place of the
/// layout that must be a directory or a file, never a link: `.git/` and
/// everything below it, meta.json, `history/`, `workdir/` and its
/// attachments.
pub fn is_layout_place(rel: &Path) -> bool {
    rel.starts_with(".git")
        || [
            Path::new(META),
            Path::new(HISTORY),
            Path::new(WORKDIR),
            &Path::new(WORKDIR).join(ATTACHMENTS),
        ]
        .contains(&rel)
}
/// How the paths of node files start, relative to the session directory.
pub const HISTORY_PREFIX: &str = "history/";

/// The path of node file `file` relative to the session directory (as the
/// git tree and index name it).
pub fn history_entry(file: &str) -> String {
    format!("{HISTORY_PREFIX}{file}")
}

/// Whether a file name is `.git` as git (and `git fsck --strict`, which
/// rejects it as `hasDotgit`) sees it: any case, trailing dots or spaces, or
/// the 8.3 short name `git~1`. Such an entry is never committed.
pub fn is_dotgit(name: &[u8]) -> bool {
    let mut n = name.to_ascii_lowercase();
    while n.last().is_some_and(|b| *b == b'.' || *b == b' ') {
        n.pop();
    }
    n == b".git" || n == b"git~1"
}

/// A fresh temporary path of ours in `dir`: `.gs-tmp-<label>.<random>`
/// (sweeps after a crash find our temps by the prefix).
pub fn temp_path(dir: &Path, label: &str) -> PathBuf {
    dir.join(format!("{TEMP_PREFIX}{label}.{}", ids::generate("")))
}

mod names;
mod session;
mod state;

pub use names::*;
pub use session::*;
pub use state::*;

/// For unit tests: a session directory with its `history/` and private
/// dir, in a temp dir (kept alive by the first value).
#[cfg(test)]
pub(crate) fn test_session() -> (tempfile::TempDir, SessionDir) {
    let dir = tempfile::tempdir().unwrap();
    let sd = SessionDir::new(dir.path().to_path_buf());
    std::fs::create_dir_all(sd.private_dir()).unwrap();
    std::fs::create_dir(sd.history()).unwrap();
    (dir, sd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which naming a name shows, and its name in the other: a `u` file
    /// past seq 99,999 has one name in both, which shows neither.
    #[test]
    fn a_name_shows_its_naming_unless_both_name_it_so() {
        for (name, shown, other) in [
            (
                "000003-u-x.json",
                Some(Naming::Layout),
                Some("0003-u-x.json"),
            ),
            (
                "000004-a-x.json",
                Some(Naming::Layout),
                Some("0004-l-x.json"),
            ),
            (
                "000005-t-x.json",
                Some(Naming::Layout),
                Some("0005-c-x.json"),
            ),
            (
                "0003-u-x.json",
                Some(Naming::Python),
                Some("000003-u-x.json"),
            ),
            (
                "0004-l-x.json",
                Some(Naming::Python),
                Some("000004-a-x.json"),
            ),
            (
                "12345-c-x.json",
                Some(Naming::Python),
                Some("012345-t-x.json"),
            ),
            ("123456-u-x.json", None, None),
            ("1234567-u-x.json", None, None),
            (
                "123456-a-x.json",
                Some(Naming::Layout),
                Some("123456-l-x.json"),
            ),
            (
                "123456-l-x.json",
                Some(Naming::Python),
                Some("123456-a-x.json"),
            ),
            ("000007-x-x.json", Some(Naming::Layout), None),
            ("notes.txt", None, None),
        ] {
            assert_eq!(Naming::shown_by(name), shown, "{name}");
            assert_eq!(Naming::other_name(name).as_deref(), other, "{name}");
        }
    }

    #[test]
    fn the_places_a_copy_leaves_out_or_refuses_as_links() {
        let local = [
            ".git/config",
            ".git/hooks/pre-commit",
            ".git/git-session/catalog",
            ".git/git-session.lock",
        ];
        let shared = [
            ".git/HEAD",
            ".git/objects/ab/cd",
            "meta.json",
            "history/000001-u-a.json",
            "workdir/x",
        ];
        for p in local {
            assert!(is_local_to_repo(Path::new(p)), "{p}");
        }
        for p in shared {
            assert!(!is_local_to_repo(Path::new(p)), "{p}");
        }
        let places = [
            ".git",
            ".git/objects",
            "meta.json",
            "history",
            "workdir",
            "workdir/attachments",
        ];
        let others = [
            "history/000001-u-a.json",
            "workdir/notes.md",
            "context",
            "meta.json.bak",
        ];
        for p in places {
            assert!(is_layout_place(Path::new(p)), "{p}");
        }
        for p in others {
            assert!(!is_layout_place(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn node_names_round_trip_and_legacy() {
        assert_eq!(node_file_name(7, 'u', "u1"), "000007-u-u1.json");
        assert_eq!(
            parse_node_file_name("000007-u-u1.json"),
            Some((7, 'u', "u1"))
        );
        assert_eq!(
            parse_node_file_name("0002-l-u1_reply.json"),
            Some((2, 'l', "u1_reply"))
        );
        assert_eq!(
            parse_node_file_name("12345-c-a-b.json"),
            Some((12345, 'c', "a-b"))
        );
        for bad in [
            "x.json",
            "0001-q-a.json",
            "0001-u-.json",
            "-u-a.json",
            "0001-u-a.txt",
            "0001-ua.json",
        ] {
            assert_eq!(parse_node_file_name(bad), None, "{bad}");
        }
    }

    /// Each entry of `.git/` and of the private dir the check lists is
    /// refused as a link (to a file or a directory) and as a FIFO; a file
    /// or directory of its own kind passes, and so does a link of a name
    /// the check does not look at.
    #[test]
    fn a_link_or_fifo_at_any_checked_entry_is_refused() {
        let names = [
            ".git/git-session",
            ".git/git-session.lock",
            ".git/objects",
            ".git/refs",
            ".git/logs",
            ".git/HEAD",
            ".git/config",
            ".git/index",
            ".git/packed-refs",
            ".git/git-session/snapshot",
            ".git/git-session/catalog",
            ".git/git-session/catalog.stamp",
            ".git/git-session/baseline.json",
            ".git/git-session/import.lines",
            ".git/git-session/import.uuids",
            ".git/git-session/maintenance.lock",
        ];
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("file"), b"x").unwrap();
        for name in names {
            for planted in ["link to a file", "link to a directory", "fifo"] {
                let (_tmp, sd) = test_session();
                let p = sd.dir.join(name);
                let _ = std::fs::remove_dir_all(&p);
                let _ = std::fs::remove_file(&p);
                match planted {
                    "link to a file" => {
                        std::os::unix::fs::symlink(elsewhere.path().join("file"), &p).unwrap()
                    }
                    "link to a directory" => {
                        std::os::unix::fs::symlink(elsewhere.path(), &p).unwrap()
                    }
                    _ => {
                        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
                        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                    }
                }
                let err = sd.check_links().expect_err(&format!("{name}: {planted}"));
                let said = err.to_string();
                assert!(
                    said.contains(name.rsplit('/').next().unwrap()),
                    "{name}: {said}"
                );
            }
        }
        let (_tmp, sd) = test_session();
        for dir in [".git/objects", ".git/refs/heads", ".git/logs"] {
            std::fs::create_dir_all(sd.dir.join(dir)).unwrap();
        }
        for file in [
            ".git/HEAD",
            ".git/config",
            ".git/index",
            ".git/git-session/catalog",
        ] {
            std::fs::write(sd.dir.join(file), b"").unwrap();
        }
        std::os::unix::fs::symlink(elsewhere.path(), sd.dir.join(".git/description")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), sd.private_dir().join("notes")).unwrap();
        sd.check_links().unwrap();
    }

    #[test]
    fn nearest_ids_first() {
        let known: Vec<String> = ["s1", "s2", "refactor", "feature"].map(String::from).into();
        assert_eq!(closest("s11", &known), vec!["s1"]);
        assert_eq!(closest("refactr", &known), vec!["refactor"]);
        assert!(closest("zzzzzz", &known).is_empty());
    }
}
