//! `schema`: the JSON Schema of the records (SPEC §5.17), generated from
//! the record types in `out::records`, as git-session-json(7) is.
//!
//! Reads: nothing. Writes: nothing. Prints: the schema, pretty.

use std::io::Write;

use crate::context::Ctx;
use git_session::error::{Result, exit};

/// Print the JSON Schema (draft 2020-12) of one `--json` output line.
///
/// Every record any command prints under `--json` (and `batch`) is one of
/// the schema's `oneOf` alternatives, `{"type": <kind>, "data": {...}}`;
/// git-session-json(7) describes the same records. Generate client types
/// from it, or validate what you read.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {}

pub fn run(_ctx: &Ctx, _args: SchemaArgs) -> Result<u8> {
    let text = serde_json::to_string_pretty(&git_session::out::records::schema())
        .expect("the schema serializes");
    let _ = writeln!(std::io::stdout().lock(), "{text}");
    Ok(exit::OK)
}
