//! git-session: entity memory on git. Every agent session is a git repository
//! with one commit per turn. Arrows point down: `commands` → `mirror` →
//! `session`, `layout`, `git`, `out`.

pub mod backfill;
pub mod cli;
pub mod commands;
pub mod context;
pub mod error;
pub mod git;
pub mod import;
pub mod layout;
pub mod lifecycle;
pub mod migrate;
pub mod mirror;
pub mod out;
pub mod project;
pub mod read;
pub mod relocate;
pub mod secrets;
pub mod session;
pub mod store;
pub mod sync;
pub mod verify;
pub mod view;
