//! One file per subcommand: glue only. Each reads like its contract.

pub mod append;
pub mod backfill;
pub mod batch;
pub mod begin_turn;
pub mod branch;
pub mod checkout;
pub mod commit_turn;
pub mod delete;
pub mod demo;
pub mod feed;
pub mod gc_shells;
pub mod grep;
pub mod init;
pub mod list;
pub mod log;
pub mod man;
pub mod migrate;
pub mod nodes;
pub mod project;
pub mod recover;
pub mod relocate;
pub mod schema;
pub mod show;
pub mod title;
pub mod update;
pub mod verify;
