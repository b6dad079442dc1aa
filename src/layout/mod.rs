//! THE CONTRACT: everything two subcommands must agree on about files on disk.
//! State-dir resolution, id rules, typed paths, schema types, atomic writes,
//! locks and their order (registry, then project, then session).

pub mod atomic;
pub mod history;
pub mod ids;
pub mod kept;
pub mod lock;
pub mod mapped;
pub mod migration;
pub mod paths;
pub mod pending;
pub mod projects;
mod refusal;
pub mod registry;
pub mod schema;

pub use paths::{SessionDir, StateDir, TEMP_PREFIX, temp_path};
pub use refusal::Refusal;
