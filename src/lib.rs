//! git-session: entity memory on git. Every agent session is a git repository
//! with one commit per turn.
//!
//! This library is the domain and its foundation; the command side lives in
//! the binary (`src/bin/git-session/`: `cli` the clap definition, `context`
//! the `Ctx` its global flags ask for, `commands` one file a command: parse,
//! call the domain with explicit inputs, print). The library cannot name
//! the binary, so the compiler keeps that line. The layers, top down; a
//! module names only modules of its own layer or below:
//!
//! - **the domain**, which takes a state dir, options and a printer:
//!   [`mirror`] (commit the turns), [`store`] (write nodes), [`import`]
//!   (Claude Code and Codex transcripts), [`sync`] (push, fetch, clone),
//!   [`verify`], [`secrets`], [`project`], [`relocate`], [`lifecycle`],
//!   [`migrate`], [`backfill`], [`demo`] (the sample sessions), [`read`]
//!   and [`view`] (the record read back), and [`export`] (the record as
//!   pages a person reads);
//! - **the foundation**: [`session`] (nodes and their DAG), [`layout`] (the
//!   on-disk contract: paths, atomic writes, the lock policy, registries),
//!   [`git`] (every git operation, through gix), [`out`] (records and
//!   printing), [`child`] (a user's command run in a process group of its
//!   own: the one place signals are handled) and [`error`].

pub mod backfill;
pub mod child;
pub mod demo;
pub mod error;
pub mod export;
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
