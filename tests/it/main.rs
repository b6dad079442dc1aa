//! Integration tests: the binary run as a process on temp dirs, checked with
//! real git.

mod attacks;
mod backfill;
mod bad_input;
mod batch;
mod color;
mod complete;
mod concurrency;
mod core;
mod crash;
mod diff;
mod docs;
mod env;
mod export;
mod faults;
mod hostile;
mod import;
mod import_codex;
mod import_hooks;
mod interop;
mod legacy;
mod live;
mod migrate;
mod newcomer;
mod projects;
mod read;
mod real;
mod records;
mod registry;
mod secrets;
mod snapshots;
mod sync;
mod timetravel;
mod trust;
mod turns;
mod verify;
