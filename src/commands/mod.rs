//! One file per subcommand: glue only. Each reads like its contract.

pub mod append;
pub mod backfill;
pub mod branch;
pub mod checkout;
pub mod commit_turn;
pub mod demo;
pub mod init;
pub mod log;
pub mod show;
pub mod verify;
