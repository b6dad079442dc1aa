//! Id rules of SPEC §1: checked before any path is built from an id.

use crate::error::{Result, Usage};

const MAX_ID: usize = 128;

fn check_charset(what: &'static str, id: &str) -> Result<()> {
    let bad = |reason| {
        Err(Usage::InvalidId {
            what,
            value: id.escape_debug().to_string(),
            reason,
        }
        .into())
    };
    if id.is_empty() {
        return bad("it is empty");
    }
    if id.len() > MAX_ID {
        return bad("it is longer than 128 characters");
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return bad("it holds a character outside [A-Za-z0-9._-]");
    }
    if id.starts_with('.') || id.starts_with('-') {
        return bad("it starts with `.` or `-`");
    }
    Ok(())
}

/// The names `sessions/` holds beside its session directories (SPEC §1,
/// the reference store's §1.2): a session of one of these names would take
/// a registry's place. Compared without regard to ASCII case, as a file
/// system that ignores case (macOS's default) compares them.
const RESERVED_SESSION_IDS: [&str; 4] =
    ["projects", "index.json", "index.journal", "locations.json"];

/// Whether `name` is one of [`RESERVED_SESSION_IDS`] (in any case).
pub fn is_reserved_session_id(name: &str) -> bool {
    RESERVED_SESSION_IDS
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name))
}

/// A session id: 1–128 of `[A-Za-z0-9._-]`, not starting with `.`/`-`, not
/// one of [`RESERVED_SESSION_IDS`] in any case.
pub fn session_id(id: &str) -> Result<()> {
    check_charset("session id", id)?;
    if is_reserved_session_id(id) {
        return Err(Usage::InvalidId {
            what: "session id",
            value: id.into(),
            reason: "it is the name of `sessions/projects/` or of a registry file in `sessions/` \
                     (`index.json`, `index.journal`, `locations.json`), in any case",
        }
        .into());
    }
    Ok(())
}

/// A node id: the same character rules (it becomes part of a file name).
pub fn node_id(id: &str) -> Result<()> {
    check_charset("node id", id)?;
    // `ROOT` is the sentinel predecessor of a first turn, never a node.
    if id == super::schema::ROOT {
        return Err(Usage::InvalidId {
            what: "node id",
            value: id.into(),
            reason: "`ROOT` is reserved (the predecessor of a session's first turn)",
        }
        .into());
    }
    Ok(())
}

/// A project id: `default` or `proj_` + hex.
pub fn project_id(id: &str) -> Result<()> {
    let ok = id == "default"
        || id.strip_prefix("proj_").is_some_and(|hex| {
            !hex.is_empty() && hex.len() <= 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())
        });
    if ok {
        Ok(())
    } else {
        Err(Usage::InvalidId {
            what: "project id",
            value: id.escape_debug().to_string(),
            reason: "project ids are `default` or `proj_` followed by hex digits",
        }
        .into())
    }
}

/// A fresh random id: `prefix` + 12 hex digits.
pub fn generate(prefix: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState is seeded from the OS per process; mix in time, pid and a counter.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("{prefix}{:012x}", h.finish() & 0xffff_ffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids() {
        for ok in [
            "a",
            "s1",
            "A.b_c-d",
            "index.json2",
            "projects-x",
            &"x".repeat(128),
        ] {
            session_id(ok).unwrap();
        }
        for bad in [
            "",
            ".hidden",
            "-flag",
            "a/b",
            "..",
            "../x",
            "projects",
            "Projects",
            "index.json",
            "INDEX.JOURNAL",
            "locations.json",
            "sp ace",
            "é",
            &"x".repeat(129),
        ] {
            assert!(session_id(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn project_ids() {
        project_id("default").unwrap();
        project_id("proj_2027fdfd").unwrap();
        for bad in ["proj_", "proj_xyz", "other", "proj_../x"] {
            assert!(project_id(bad).is_err());
        }
    }

    #[test]
    fn generated_ids_are_valid_and_distinct() {
        let a = generate("s_");
        let b = generate("s_");
        assert_ne!(a, b);
        session_id(&a).unwrap();
        assert_eq!(a.len(), 14);
    }
}
