//! Pages as Markdown (CommonMark, as code hosts render it): a heading per
//! turn, tool calls folded in `<details>` with their input and output in
//! fenced blocks, the agent commit's diff in a ```diff block.
//!
//! A message's own Markdown is kept (a reply is usually written in it),
//! made harmless first ([`prose`]): its raw HTML is shown as text, and a
//! message that would run on into what follows it (an unclosed fence) is
//! shown whole in a fenced block. Every other string from the record is
//! escaped ([`inline`]).

use std::fmt::Write as _;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::model::{Agent, Conversation, Item, Kind, Session, Turn};
use super::site::{ProjectPage, Row};
use super::{Links, skip_reason, url_segment, when};
use crate::git::patch::CommitPatch;

/// `s` as inline Markdown that renders as exactly `s` (on one line): the
/// characters that can start markup inside a line backslash-escaped (and
/// any punctuation at its start, where it could start a block), line
/// breaks as spaces.
pub fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.chars().enumerate() {
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            // Where it could start a block: a list, a quote, a heading…
            '-' | '+' | '=' | '.' | ')' | ':' if i == 0 => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` for the inside of an HTML element on one line (a `<summary>`):
/// `&`, `<` and `>` escaped (quotes need none there).
fn html_line(s: &str) -> String {
    crate::session::one_line(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `text` in a fenced code block (a fence longer than any run of
/// backticks inside), tagged `lang`.
pub fn fenced(text: &str, lang: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let mut out = format!("{fence}{lang}\n{text}");
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

/// A message's Markdown made harmless: its raw HTML written as text (`<`
/// as `&lt;`), and, when it would still run on past its end (a fence it
/// opens and never closes), the whole message as a fenced block.
pub fn prose(text: &str) -> String {
    let mut html_at = Vec::new();
    for (e, range) in Parser::new(text).into_offset_iter() {
        if matches!(e, Event::Html(_) | Event::InlineHtml(_)) {
            html_at.extend(
                text[range.clone()]
                    .match_indices('<')
                    .map(|(i, _)| range.start + i),
            );
        }
    }
    let mut out = String::with_capacity(text.len() + 8 * html_at.len());
    let mut last = 0;
    for at in html_at {
        if at < last {
            continue;
        }
        out.push_str(&text[last..at]);
        out.push_str("&lt;");
        last = at + 1;
    }
    out.push_str(&text[last..]);
    if ends_closed(&out) {
        out
    } else {
        fenced(text, "text")
    }
}

/// Whether a paragraph after `md` (and a blank line) stands on its own, at
/// the top of the document: nothing in `md` is left open.
fn ends_closed(md: &str) -> bool {
    const MARK: &str = "gitsessionendofmessage";
    let probe = format!("{md}\n\n{MARK}\n");
    let mut depth = 0usize;
    let mut found = false;
    for e in Parser::new(&probe) {
        match e {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Text(t) if t.as_ref() == MARK => found = depth == 1,
            _ => {}
        }
    }
    found
}

/// The page of one branch of a session.
pub fn session_page(s: &Session, conv: &Conversation, links: &Links) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "# {}\n", inline(&s.title));
    let mut facts = vec![
        format!("`{}`", s.id),
        format!(
            "status {}",
            inline(if s.status.is_empty() {
                "idle"
            } else {
                &s.status
            })
        ),
    ];
    if s.archived {
        facts.push("archived".into());
    }
    if !s.source.is_empty() {
        facts.push(format!("source {}", inline(&s.source)));
    }
    facts.push(format!("created {}", inline(&when(s.created_at))));
    facts.push(format!("updated {}", inline(&when(s.updated_at))));
    let n = conv.turns.len();
    facts.push(format!(
        "{n} turn{} on this branch",
        if n == 1 { "" } else { "s" }
    ));
    let _ = writeln!(b, "{}\n", facts.join(" · "));
    let mut nav = Vec::new();
    if let Some(index) = &links.index {
        nav.push(format!("[All sessions]({index})"));
    }
    if let Some(p) = &s.project {
        nav.push(match &links.project {
            Some(href) => format!("project [{}]({href})", inline(&p.name)),
            None => format!("project {}", inline(&p.name)),
        });
    }
    if !nav.is_empty() {
        let _ = writeln!(b, "{}\n", nav.join(" · "));
    }
    if s.branches.len() > 1 {
        let shown: Vec<String> = s
            .branches
            .iter()
            .enumerate()
            .map(|(i, br)| {
                let turns = format!("{} turn{}", br.turns, if br.turns == 1 { "" } else { "s" });
                match links.branches.get(i).cloned().flatten() {
                    _ if i == conv.branch => format!("**{}** ({turns}, shown)", inline(&br.label)),
                    Some(href) => format!("[{}]({href}) ({turns})", inline(&br.label)),
                    None => format!("{} ({turns})", inline(&br.label)),
                }
            })
            .collect();
        let _ = writeln!(b, "Branches: {}\n", shown.join(" · "));
    }
    if conv.turns.len() > 1 {
        let jump: Vec<String> = conv
            .turns
            .iter()
            .map(|t| format!("[{0}](#turn-{0})", t.number))
            .collect();
        let _ = writeln!(b, "Turns: {}\n", jump.join(" "));
    }
    for i in &conv.before {
        item(&mut b, i, links);
    }
    if conv.turns.is_empty() {
        b.push_str("*No turn on this branch yet.*\n\n");
    }
    let total = conv.turns.len();
    for (k, t) in conv.turns.iter().enumerate() {
        let prev = (k > 0).then(|| conv.turns[k - 1].number);
        let next = conv.turns.get(k + 1).map(|t| t.number);
        turn(&mut b, s, t, total, (prev, next), links);
    }
    b
}

fn turn(
    b: &mut String,
    s: &Session,
    t: &Turn,
    total: usize,
    (prev, next): (Option<u64>, Option<u64>),
    links: &Links,
) {
    let _ = writeln!(b, "---\n\n<a id=\"turn-{}\"></a>\n", t.number);
    let _ = writeln!(
        b,
        "## Turn {} / {total}{}\n",
        t.number,
        if t.in_progress { " (in progress)" } else { "" }
    );
    let mut line = vec![
        match prev {
            Some(p) => format!("[← prev turn](#turn-{p})"),
            None => "← prev turn".into(),
        },
        match next {
            Some(n) => format!("[next turn →](#turn-{n})"),
            None => "next turn →".into(),
        },
        inline(&when(t.time)),
    ];
    if let Some(c) = &t.commit {
        line.push(format!("session commit `{}`", &c[..c.len().min(10)]));
    }
    let _ = writeln!(b, "{}\n", line.join(" · "));
    if t.in_progress {
        b.push_str("*In progress: the transcript has not closed this turn yet.*\n\n");
    }
    for i in &t.items {
        item(b, i, links);
    }
    for a in &t.agent {
        agent(b, a, links.project.as_deref());
    }
    if t.agent.is_empty() && s.project.is_some() && !t.in_progress {
        b.push_str("*No agent commit recorded for this turn.*\n\n");
    }
}

fn item(b: &mut String, i: &Item, links: &Links) {
    // A tool call of the conversation's reply stands as it is; a call
    // made by a call is quoted under it, a level for each.
    let quote = "> ".repeat(i.depth.saturating_sub(1));
    let quote = quote.as_str();
    match i.kind {
        Kind::Record => {
            let _ = writeln!(
                b,
                "> **record {}** · {}\n>\n> {}\n",
                inline(&i.name),
                inline(&when(i.time)),
                inline(&i.text)
            );
            if let Some(summary) = &i.summary {
                let _ = writeln!(
                    b,
                    "<details>\n<summary>summary</summary>\n\n{}\n\n</details>\n",
                    prose(summary).trim_end()
                );
            }
        }
        Kind::Tool => {
            let mut body = format!(
                "<details>\n<summary>tool: {} — {}</summary>\n\n",
                html_line(if i.name.is_empty() { "tool" } else { &i.name }),
                html_line(super::cut_masked(
                    &crate::session::one_line(if i.input.is_empty() {
                        &i.text
                    } else {
                        &i.input
                    }),
                    80
                ))
            );
            if !i.input.is_empty() {
                let lang = if i.input.starts_with(['{', '[']) {
                    "json"
                } else {
                    "text"
                };
                let _ = write!(body, "input:\n\n{}\n", fenced(&i.input, lang));
                left_out(&mut body, i.input_left_out);
            }
            let _ = write!(body, "output:\n\n{}\n", fenced(&i.text, "text"));
            left_out(&mut body, i.text_left_out);
            attachments(&mut body, i, links);
            body.push_str("</details>\n\n");
            if let Some(why) = &i.stopped {
                let _ = writeln!(body, "*stopped here: {}*\n", inline(why));
            }
            push_quoted(b, &body, quote);
        }
        Kind::User | Kind::Assistant => {
            let who = match i.kind {
                Kind::User => "user".to_string(),
                _ if i.name.is_empty() => "assistant".to_string(),
                _ => format!("assistant · {}", inline(&i.name)),
            };
            let mut body = format!("**{who}** · {}\n\n", inline(&when(i.time)));
            if i.text.trim().is_empty() && !i.calls.is_empty() {
                let _ = writeln!(
                    body,
                    "*calls {}*\n",
                    inline(&crate::session::tool_summary(&i.calls))
                );
            } else if !i.text.trim().is_empty() {
                let _ = writeln!(body, "{}\n", prose(&i.text).trim_end());
            }
            attachments(&mut body, i, links);
            if let Some(why) = &i.stopped {
                let _ = writeln!(body, "*stopped here: {}*\n", inline(why));
            }
            push_quoted(b, &body, quote);
        }
    }
}

/// The note under a tool's input or output cut at the page's limit.
fn left_out(b: &mut String, bytes: usize) {
    if bytes > 0 {
        let _ = writeln!(b, "*{}*\n", inline(&super::left_out(bytes)));
    }
}

/// `body` appended, each line after `quote` (a sub-call's nodes are
/// quoted under the reply that made them).
fn push_quoted(b: &mut String, body: &str, quote: &str) {
    if quote.is_empty() {
        b.push_str(body);
        return;
    }
    for l in body.lines() {
        b.push_str(quote.trim_end());
        if !l.is_empty() {
            b.push(' ');
            b.push_str(l);
        }
        b.push('\n');
    }
    b.push('\n');
}

fn attachments(b: &mut String, i: &Item, links: &Links) {
    for a in &i.attachments {
        let size = a.size.map(|n| format!(" ({n} bytes)")).unwrap_or_default();
        match (&links.attachments, &a.file) {
            (Some(dir), Some(file)) => {
                let _ = writeln!(
                    b,
                    "- attachment [{}]({dir}{}){size}",
                    inline(&a.name),
                    url_segment(file)
                );
            }
            _ => {
                let _ = writeln!(b, "- attachment {}{size}", inline(&a.name));
            }
        }
    }
    if !i.attachments.is_empty() {
        b.push('\n');
    }
}

fn agent(b: &mut String, a: &Agent, project_href: Option<&str>) {
    match a {
        Agent::Skipped { project, reason } => {
            let _ = writeln!(
                b,
                "**No agent commit** in project {}: {} (`{}`)\n",
                project_ref(project, project_href),
                inline(skip_reason(reason)),
                inline(reason).replace('`', "")
            );
        }
        Agent::Commit {
            project,
            sha,
            paths,
            patch,
        } => {
            let _ = writeln!(
                b,
                "**Agent commit** `{}` in project {}\n",
                &sha[..sha.len().min(10)],
                project_ref(project, project_href)
            );
            match patch {
                Some(p) => commit_body(b, p),
                None => {
                    let _ = writeln!(
                        b,
                        "The project's repository does not have it here; the turn recorded: {}\n",
                        inline(&paths.join(", "))
                    );
                }
            }
        }
    }
}

fn project_ref(project: &str, href: Option<&str>) -> String {
    match href {
        Some(h) => format!("[{}]({h})", inline(project)),
        None => inline(project),
    }
}

/// A commit's subject, author, files and folded diff.
pub fn commit_body(b: &mut String, p: &CommitPatch) {
    let _ = writeln!(
        b,
        "{}  \n{} · {}\n",
        inline(p.subject()),
        inline(&p.author),
        inline(&when(p.time as f64))
    );
    for f in &p.files {
        let _ = writeln!(b, "- {} {}", f.status, inline(&f.path));
    }
    let diff = p.unified();
    let (adds, dels) = p.counts();
    let _ = writeln!(
        b,
        "\n<details>\n<summary>diff: {} file{}, +{adds} −{dels}{}</summary>\n\n{}\n</details>\n",
        p.files.len(),
        if p.files.len() == 1 { "" } else { "s" },
        if p.cut {
            " (cut: too long to show whole)"
        } else {
            ""
        },
        fenced(&diff, "diff")
    );
}

fn row(b: &mut String, r: &Row, prefix: &str) {
    let title = match r.has_page {
        true => format!(
            "[**{}**]({prefix}sessions/{}/index.md)",
            inline(&r.title),
            url_segment(&r.id)
        ),
        false => format!("**{}**", inline(&r.title)),
    };
    let mut line = format!(
        "- {}{title} · {} · {}",
        if r.pinned { "📌 " } else { "" },
        inline(if r.status.is_empty() {
            "idle"
        } else {
            &r.status
        }),
        inline(&when(r.updated_at))
    );
    if !r.preview.is_empty() {
        let _ = write!(line, " — {}", inline(&r.preview));
    }
    let _ = writeln!(b, "{line}");
}

fn groups(b: &mut String, rows: &[&Row], projects: &[ProjectPage], level: &str) {
    let mut order: Vec<Option<&str>> = Vec::new();
    for r in rows {
        if !order.contains(&r.project.as_deref()) {
            order.push(r.project.as_deref());
        }
    }
    for pid in order {
        match pid.and_then(|id| projects.iter().find(|p| p.project.id == id)) {
            Some(p) => {
                let _ = writeln!(
                    b,
                    "{level} [{}](projects/{}.md)\n",
                    inline(&p.project.name),
                    url_segment(&p.project.id)
                );
            }
            None => {
                let _ = writeln!(b, "{level} No project\n");
            }
        }
        for r in rows.iter().filter(|r| r.project.as_deref() == pid) {
            row(b, r, "");
        }
        b.push('\n');
    }
}

/// The site's index: sessions by project, most recent first, archived
/// ones apart.
pub fn index_page(rows: &[Row], projects: &[ProjectPage]) -> String {
    let live: Vec<&Row> = rows.iter().filter(|r| !r.archived).collect();
    let archived: Vec<&Row> = rows.iter().filter(|r| r.archived).collect();
    let mut b = String::from("# Sessions\n\n");
    let _ = writeln!(
        b,
        "{} · {} archived · {}\n",
        super::count(rows.len(), "session"),
        archived.len(),
        super::count(projects.len(), "project")
    );
    groups(&mut b, &live, projects, "##");
    if !archived.is_empty() {
        b.push_str("## Archived\n\n");
        groups(&mut b, &archived, projects, "###");
    }
    b
}

/// A project's page: its sessions and the agent commits in its repository.
pub fn project_page(p: &ProjectPage, rows: &[Row]) -> String {
    let mut b = format!("# {}\n\n", inline(&p.project.name));
    let _ = writeln!(
        b,
        "`{}` · {} · {} · auto-commit {}\n\n[All sessions](../index.md)\n\n## Sessions\n",
        p.project.id,
        inline(&p.path),
        inline(&p.project.status),
        if p.project.auto_commit { "on" } else { "off" }
    );
    for r in rows
        .iter()
        .filter(|r| r.project.as_deref() == Some(&p.project.id))
    {
        row(&mut b, r, "../");
    }
    b.push_str("\n## Agent commits\n\n");
    if p.commits.is_empty() {
        b.push_str("*No agent commit in this project's repository.*\n\n");
    }
    for c in &p.commits {
        let r = c;
        let session = match rows.iter().any(|x| x.id == r.session && x.has_page) {
            true => format!(
                "[{}](../sessions/{}/index.md)",
                inline(&r.session),
                url_segment(&r.session)
            ),
            false => inline(&r.session),
        };
        let turn = r.turn.map(|t| format!(", turn {t}")).unwrap_or_default();
        let _ = writeln!(
            b,
            "### `{}` · session {session}{turn}\n",
            &r.commit[..r.commit.len().min(10)]
        );
        match &c.patch {
            Some(patch) => commit_body(&mut b, patch),
            None => {
                let _ = writeln!(b, "{}\n", inline(&r.subject));
            }
        }
    }
    b
}

/// The text of `md` as a reader sees it: its text and code, line breaks
/// kept (for tests).
pub fn rendered_text(md: &str) -> String {
    let mut out = String::new();
    for e in Parser::new(md) {
        match e {
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::SoftBreak | Event::HardBreak => out.push('\n'),
            Event::End(TagEnd::Paragraph | TagEnd::CodeBlock | TagEnd::Heading(_)) => {
                out.push('\n')
            }
            Event::Start(Tag::Item) => out.push('\n'),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_text_renders_as_itself() {
        let s = "*not bold* [x](y) <b>&amp; `c` #1 \\";
        assert_eq!(rendered_text(&inline(s)).trim_end(), s);
    }

    #[test]
    fn raw_html_in_a_message_is_text_and_a_lone_fence_is_contained() {
        let hostile = "hi </details><script>alert(1)</script>\n\n<div>x</div>";
        let md = prose(hostile);
        assert!(
            !Parser::new(&md).any(|e| matches!(e, Event::Html(_) | Event::InlineHtml(_))),
            "{md}"
        );
        assert!(rendered_text(&md).contains("</details><script>alert(1)</script>"));
        let open = "look:\n```\nfn main() {}";
        let md = prose(open);
        assert!(ends_closed(&md), "{md}");
        assert_eq!(prose("plain *words*"), "plain *words*");
        assert!(fenced("a ``` b", "").starts_with("````\n"));
    }
}
