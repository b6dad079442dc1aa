//! `append`: write one node (SPEC §5.2).
//!
//! Reads: meta.json, the names in `history/`. Writes: one node file, meta.json
//! (head, `updated_at`), one index journal row; with `--attach`, files under
//! `workdir/attachments/`. Locks: the session, exclusive. Prints: id and seq.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::context::Ctx;
use git_session::error::{Error, IoContext, Result, Usage, exit};
use git_session::layout::schema::{self, MAX_FILE_BYTES, Meta, Node};
use git_session::layout::{atomic, lock, registry};
use git_session::store::{self, Created, NewNode};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    User,
    /// An assistant reply (stored as `llm`, which is accepted too)
    #[value(alias = "llm")]
    Assistant,
    /// A tool call and its result (stored as `code`, which is accepted too)
    #[value(alias = "code")]
    Tool,
}

impl Role {
    /// The name node files carry (`user`, `llm`, `code`).
    pub fn stored(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "llm",
            Role::Tool => "code",
        }
    }
}

/// Append one node to a session's DAG.
///
/// Defaults make scripting easy: a user node and an assistant node continue
/// the head (the turn's user message, then its latest reply), a tool node is
/// called by the head (the turn's latest reply, or its user message before
/// any reply) and leaves the head where it is. A
/// reply that answers the turn's user message again is `--regenerate`.
/// Prints `<id> <seq>`.
#[derive(Debug, clap::Args)]
pub struct AppendArgs {
    /// Session id
    pub session: String,
    /// Role of the node
    #[arg(long, value_enum, default_value_t = Role::User)]
    pub role: Role,
    /// Node id [default: generated]
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Previous node of the conversation [default: the head]; an earlier node starts a retry; `ROOT` for a first turn
    #[arg(long, value_name = "ID")]
    pub predecessor: Option<String>,
    /// An assistant reply that answers the turn's user message again: a sibling of the turn's first reply, committed on a retry branch
    #[arg(long, conflicts_with = "predecessor")]
    pub regenerate: bool,
    /// Node that invoked this one (for tool calls)
    #[arg(long, value_name = "ID")]
    pub caller: Option<String>,
    /// Model id (assistant) or tool name (tool)
    #[arg(long, value_name = "N")]
    pub name: Option<String>,
    /// The node's text
    #[arg(long, value_name = "T", group = "content")]
    pub text: Option<String>,
    /// Read the node's text from a file (`-` for stdin)
    #[arg(long, value_name = "F", group = "content")]
    pub file: Option<PathBuf>,
    /// Read a whole node as JSON from stdin (id, role, name, input, output, caller, predecessor, reads, metadata)
    #[arg(long, group = "content")]
    pub json_node: bool,
    /// Tool arguments as JSON
    #[arg(long, value_name = "JSON")]
    pub input: Option<String>,
    /// Copy a file into workdir/attachments/ and record it in the node
    #[arg(long, value_name = "PATH")]
    pub attach: Vec<PathBuf>,
    /// Create the session when missing, atomically with this first node
    #[arg(long)]
    pub create: bool,
    #[command(flatten)]
    pub init: CreateArgs,
}

/// Options used with `--create`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// With --create: agent id
    #[arg(long, value_name = "A", requires = "create")]
    pub agent: Option<String>,
    /// With --create: title
    #[arg(long, value_name = "T", requires = "create")]
    pub title: Option<String>,
    /// With --create: source
    #[arg(long, value_name = "S", requires = "create")]
    pub source: Option<String>,
}

fn read_limited(mut r: impl Read, what: &std::path::Path) -> Result<String> {
    let mut buf = Vec::new();
    r.by_ref()
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut buf)
        .io("read", what)?;
    if buf.len() as u64 > MAX_FILE_BYTES {
        return Err(Usage::InputTooLarge {
            path: what.to_path_buf(),
        }
        .into());
    }
    String::from_utf8(buf).map_err(|_| {
        Usage::NotUtf8 {
            path: what.to_path_buf(),
        }
        .into()
    })
}

fn node_from_args(args: &AppendArgs) -> Result<NewNode> {
    let role = args.role.stored();
    let mut node = NewNode {
        role: role.into(),
        ..Default::default()
    };
    if args.json_node {
        let obj = json_node_from_stdin()?;
        apply_json_node(&mut node, obj)?;
    } else if let Some(f) = &args.file {
        node.output = Value::String(text_of_file(f)?);
    } else {
        node.output = Value::String(args.text.clone().unwrap_or_default());
    }
    if let Some(i) = &args.input {
        node.input = tool_input(i)?;
    }
    // A user message with nothing in it is a mistake, not a turn.
    if !args.json_node
        && args.file.is_none()
        && args.text.is_none()
        && args.role == Role::User
        && args.attach.is_empty()
    {
        return Err(Usage::NoMessage.into());
    }
    if args.id.is_some() {
        node.id = args.id.clone();
    }
    if let Some(p) = &args.predecessor {
        node.predecessor = Some(Some(p.clone()));
    }
    node.regenerate = args.regenerate;
    if let Some(c) = &args.caller {
        node.caller = Some(c.clone());
    }
    if args.name.is_some() {
        node.name = args.name.clone();
    }
    node.attach = args.attach.clone();
    Ok(node)
}

/// `--json-node`: the JSON object on stdin.
fn json_node_from_stdin() -> Result<Map<String, Value>> {
    let text = read_limited(
        std::io::Cursor::new(
            git_session::out::read_input(MAX_FILE_BYTES + 1).io("read", "<stdin>")?,
        ),
        std::path::Path::new("<stdin>"),
    )?;
    let Value::Object(obj) = serde_json::from_str::<Value>(&text)
        .map_err(|e| Usage::JsonNodeNotJson { why: e.to_string() })?
    else {
        return Err(Usage::JsonNodeNotObject.into());
    };
    Ok(obj)
}

/// `--json-node`: the fields of `obj` set on `node` (`seq` is assigned
/// here; what is not a field of a node is kept as it is).
fn apply_json_node(node: &mut NewNode, mut obj: Map<String, Value>) -> Result<()> {
    let s = |v: Value, k: &'static str| -> Result<String> {
        match v {
            Value::String(s) => Ok(s),
            _ => Err(Usage::JsonNodeField {
                field: k,
                must_be: "a string",
            }
            .into()),
        }
    };
    if let Some(r) = obj.remove("role") {
        node.role = match s(r, "role")?.as_str() {
            "user" => "user".into(),
            "llm" | "assistant" => "llm".into(),
            "code" | "tool" => "code".into(),
            other => {
                return Err(Usage::JsonNodeRole {
                    role: other.to_string(),
                }
                .into());
            }
        };
    }
    if let Some(v) = obj.remove("id") {
        node.id = Some(s(v, "id")?);
    }
    if let Some(v) = obj.remove("predecessor") {
        node.predecessor = Some(match v {
            Value::Null => None,
            v => Some(s(v, "predecessor")?),
        });
    }
    if let Some(v) = obj.remove("caller") {
        node.caller = Some(match v {
            Value::Null => String::new(),
            v => s(v, "caller")?,
        });
    }
    if let Some(v) = obj.remove("name") {
        node.name = Some(match v {
            Value::Null => String::new(),
            v => s(v, "name")?,
        });
    }
    node.input = obj.remove("input").unwrap_or(Value::Null);
    node.output = obj.remove("output").unwrap_or(Value::Null);
    if let Some(v) = obj.remove("reads") {
        node.reads = serde_json::from_value(v).map_err(|_| Usage::JsonNodeField {
            field: "reads",
            must_be: "a list of node ids",
        })?;
    }
    match obj.remove("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => node.metadata = m,
        Some(_) => {
            return Err(Usage::JsonNodeField {
                field: "metadata",
                must_be: "an object",
            }
            .into());
        }
    }
    if let Some(v) = obj.remove("created_at") {
        node.created_at = Some(v.as_f64().ok_or(Usage::JsonNodeField {
            field: "created_at",
            must_be: "a number",
        })?);
    }
    obj.remove("seq"); // assigned here
    node.extra = obj;
    Ok(())
}

/// `--file`: the text of `f` (`-` for stdin).
fn text_of_file(f: &Path) -> Result<String> {
    let text = if f.as_os_str() == "-" {
        read_limited(
            std::io::Cursor::new(
                git_session::out::read_input(MAX_FILE_BYTES + 1).io("read", "<stdin>")?,
            ),
            std::path::Path::new("<stdin>"),
        )?
    } else {
        let file = std::fs::File::open(f).io("read", f)?;
        read_limited(file, f)?
    };
    Ok(text)
}

/// `--input`: the tool's arguments, one JSON value.
fn tool_input(i: &str) -> Result<Value> {
    serde_json::from_str(i).map_err(|e| Usage::InputJson { why: e.to_string() }.into())
}

fn report(ctx: &Ctx, session: &str, node: &Node) {
    ctx.out.record(&git_session::out::records::NodeAppended {
        session: session.into(),
        id: node.id.clone(),
        seq: node.seq,
        role: git_session::out::records::role_name(&node.role).into(),
        predecessor: node.predecessor.clone(),
        caller: Some(node.caller.clone()).filter(|c| !c.is_empty()),
    });
    ctx.out.line(format!("{} {}", node.id, node.seq));
}

pub fn run(ctx: &Ctx, args: AppendArgs) -> Result<u8> {
    git_session::layout::ids::session_id(&args.session)?;
    let mut new = node_from_args(&args)?;
    new.redact = ctx.state.redacts_on_write();
    let now = git_session::out::now();
    let sd = match ctx.state.find_session(&args.session) {
        Ok(sd) => sd,
        Err(Error::SessionNotFound { .. }) if args.create => {
            new.naming = ctx.state.naming();
            let spec = git_session::store::NewSession {
                id: args.session.clone(),
                agent_id: args.init.agent.clone(),
                title: args.init.title.clone(),
                source: args.init.source.clone(),
                work_dir: None,
                project: None,
            };
            match store::create(&ctx.state, &spec, Some(new.clone()), now, ctx.locks)? {
                Created::New(sd) => {
                    let catalog = git_session::layout::history::Catalog::read(&sd.history())?;
                    let entry = catalog
                        .entries()
                        .next()
                        .expect("created with its first node");
                    let node = git_session::layout::history::read_node(&sd.history(), &entry)?;
                    report(ctx, &args.session, &node);
                    return Ok(exit::OK);
                }
                Created::Existing(sd) => sd,
            }
        }
        // Appending is the one place where creating is the likely wish.
        Err(Error::SessionNotFound { id, state, help }) => {
            return Err(Error::SessionNotFound {
                help: format!("{help}; `--create` makes a new session `{id}` with this node"),
                id,
                state,
            });
        }
        Err(e) => return Err(e),
    };
    let node = {
        let _lock = ctx.lock_session(&sd, lock::Kind::Exclusive)?;
        new.naming = ctx.state.naming_for(&sd);
        let mut meta = Meta::read(&sd.meta())?;
        let node = store::append(&sd, &mut meta, new, now)?;
        atomic::write(&sd.meta(), &meta.to_json())?;
        atomic::crash_point("append-before-registry");
        let preview =
            (node.role == "user" && node.is_top_level()).then(|| schema::preview(&node.text()));
        // A bare append: the row may wait for the command that ends the turn.
        registry::journal_append_lagging(
            &ctx.state,
            &schema::index_row(&meta, &args.session, preview.as_deref()),
        )?;
        node
    };
    // Lock order (registry before session) holds: the session lock is released here.
    registry::fold_if_large(&ctx.state)?;
    report(ctx, &args.session, &node);
    Ok(exit::OK)
}
