//! The journal of an `export --all` under way: before it writes a file of
//! the site, the export appends the file's path here, one line of JSON (an
//! array of paths) per batch. The manifest, written first, says the export
//! is under way; a run killed before it wrote the manifest anew leaves both,
//! and the next run adopts every path the journal lists (it rewrites those
//! it still makes and removes the others), then finishes the export.

use std::io::Write as _;
use std::path::Path;

use crate::error::{IoContext, Result};
use crate::layout::atomic;

/// The journal's file name in the output directory.
pub const JOURNAL: &str = ".git-session-export.journal";

/// The journal of this run, open for appending.
pub struct Journal {
    file: std::fs::File,
    path: std::path::PathBuf,
}

impl Journal {
    /// The journal of `dir`, made anew (empty): what an earlier run listed
    /// is in the manifest by now.
    pub fn start(dir: &Path) -> Result<Journal> {
        let path = dir.join(JOURNAL);
        // A FIFO there would block the open; a link is refused by it too.
        atomic::refuse_unsafe(&path)?;
        let file = atomic::no_follow(
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true),
        )
        .open(&path)
        .io("create", &path)?;
        Ok(Journal { file, path })
    }

    /// Record that the files `rels` are about to be written.
    pub fn record(&mut self, rels: &[&str]) -> Result<()> {
        if rels.is_empty() {
            return Ok(());
        }
        let mut line = serde_json::to_vec(rels).expect("paths serialize");
        line.push(b'\n');
        self.file.write_all(&line).io("write", &self.path)?;
        if atomic::durable() {
            self.file.sync_data().io("sync", &self.path)?;
        }
        Ok(())
    }

    /// The export is over (its manifest written): the journal goes.
    pub fn finish(self) -> Result<()> {
        drop(self.file);
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).io("remove", &self.path),
            _ => Ok(()),
        }
    }
}

/// The paths the journal in `dir` lists: every whole line's (the last one
/// may be torn: the run was killed writing it, before any of its files).
pub fn recorded(dir: &Path) -> Vec<String> {
    let Ok(Some(bytes)) = atomic::read_if_present(&dir.join(JOURNAL)) else {
        return Vec::new();
    };
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Vec<String>>(l).ok())
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_last_line_lists_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::start(dir.path()).unwrap();
        j.record(&["index.html", "sessions/s1/index.html"]).unwrap();
        j.record(&[]).unwrap();
        drop(j);
        let path = dir.path().join(JOURNAL);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("[\"sessions/s2/in");
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            recorded(dir.path()),
            vec!["index.html", "sessions/s1/index.html"]
        );
        Journal::start(dir.path()).unwrap().finish().unwrap();
        assert!(recorded(dir.path()).is_empty() && !path.exists());
    }
}
