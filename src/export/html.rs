//! Pages as self-contained HTML: the style inline, no script, nothing
//! fetched; every string from the record escaped ([`esc`]).

use std::fmt::Write as _;

use super::model::{Agent, Conversation, Item, Kind, Session, Turn};
use super::site::{ProjectPage, Row};
use super::{Links, skip_reason, url_segment, when};
use crate::git::patch::CommitPatch;

const STYLE: &str = include_str!("style.css");

/// `s` escaped for HTML text and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole document around `body`.
fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"git-session export\">\n<title>{}</title>\n\
<style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        esc(title)
    )
}

fn footer() -> String {
    format!(
        "<footer>Exported by git-session {} · self-contained: no script, nothing fetched</footer>\n",
        env!("CARGO_PKG_VERSION")
    )
}

fn status(s: &str) -> String {
    let class: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    format!(
        "<span class=\"status status-{class}\">{}</span>",
        esc(if s.is_empty() { "idle" } else { s })
    )
}

/// The page of one branch of a session.
pub fn session_page(s: &Session, conv: &Conversation, links: &Links) -> String {
    let mut b = String::new();
    b.push_str("<div class=\"page\">\n<nav class=\"crumbs\">");
    if let Some(index) = &links.index {
        let _ = write!(b, "<a href=\"{}\">All sessions</a> › ", esc(index));
    }
    if let Some(p) = &s.project {
        match &links.project {
            Some(href) => {
                let _ = write!(b, "<a href=\"{}\">{}</a> › ", esc(href), esc(&p.name));
            }
            None => {
                let _ = write!(b, "{} › ", esc(&p.name));
            }
        }
    }
    let _ = writeln!(b, "<span class=\"mono\">{}</span></nav>", esc(&s.id));
    let _ = writeln!(b, "<h1>{}</h1>", esc(&s.title));
    let _ = write!(b, "<p class=\"meta\">{}", status(&s.status));
    if s.archived {
        b.push_str("<span>archived</span>");
    }
    if !s.source.is_empty() {
        let _ = write!(b, "<span>source {}</span>", esc(&s.source));
    }
    let _ = write!(b, "<span>created {}</span>", esc(&when(s.created_at)));
    let _ = write!(b, "<span>updated {}</span>", esc(&when(s.updated_at)));
    let n = conv.turns.len();
    let _ = writeln!(
        b,
        "<span>{n} turn{} on this branch</span></p>",
        if n == 1 { "" } else { "s" }
    );
    switcher(&mut b, s, conv.branch, links);
    if conv.turns.len() > 1 {
        b.push_str("<nav class=\"jump\">Turns:");
        for t in &conv.turns {
            let _ = write!(b, " <a href=\"#turn-{0}\">{0}</a>", t.number);
        }
        b.push_str("</nav>\n");
    }
    b.push_str("<main>\n");
    for i in &conv.before {
        item(&mut b, i, links);
    }
    if conv.turns.is_empty() {
        b.push_str("<p class=\"empty\">No turn on this branch yet.</p>\n");
    }
    let total = conv.turns.len();
    for (k, t) in conv.turns.iter().enumerate() {
        let prev = (k > 0).then(|| conv.turns[k - 1].number);
        let next = conv.turns.get(k + 1).map(|t| t.number);
        turn(&mut b, s, t, total, (prev, next), links);
    }
    b.push_str("</main>\n");
    b.push_str(&footer());
    b.push_str("</div>\n");
    document(&format!("{} · git-session", s.title), &b)
}

/// The branch switcher: every branch of the session, the shown one marked,
/// the others linked to their pages (when the export has them).
fn switcher(b: &mut String, s: &Session, shown: usize, links: &Links) {
    if s.branches.len() < 2 {
        return;
    }
    b.push_str(
        "<nav class=\"branches\" aria-label=\"branches\"><span class=\"label\">Branch:</span>",
    );
    for (i, br) in s.branches.iter().enumerate() {
        let label = format!(
            "{}<span class=\"n\">{} turn{}</span>",
            esc(&br.label),
            br.turns,
            if br.turns == 1 { "" } else { "s" }
        );
        match links.branches.get(i).cloned().flatten() {
            _ if i == shown => {
                let _ = write!(
                    b,
                    " <span class=\"branch current\" aria-current=\"page\">{label}</span>"
                );
            }
            Some(href) => {
                let _ = write!(
                    b,
                    " <a class=\"branch\" href=\"{}\">{label}</a>",
                    esc(&href)
                );
            }
            None => {
                let _ = write!(
                    b,
                    " <span class=\"branch\" title=\"export with --branch to see it\">{label}</span>"
                );
            }
        }
    }
    b.push_str("</nav>\n");
}

fn turn(
    b: &mut String,
    s: &Session,
    t: &Turn,
    total: usize,
    (prev, next): (Option<u64>, Option<u64>),
    links: &Links,
) {
    let _ = writeln!(
        b,
        "<section class=\"turn{}\" id=\"turn-{}\">",
        if t.in_progress { " in-progress" } else { "" },
        t.number
    );
    b.push_str("<div class=\"turn-head\">");
    match prev {
        Some(p) => {
            let _ = write!(
                b,
                "<a class=\"nav prev\" href=\"#turn-{p}\">← prev turn</a>"
            );
        }
        None => b.push_str("<span class=\"nav prev off\">← prev turn</span>"),
    }
    let _ = write!(
        b,
        "<h2>Turn {} / {total}{}</h2>",
        t.number,
        if t.in_progress { " (in progress)" } else { "" }
    );
    match next {
        Some(n) => {
            let _ = write!(
                b,
                "<a class=\"nav next\" href=\"#turn-{n}\">next turn →</a>"
            );
        }
        None => b.push_str("<span class=\"nav next off\">next turn →</span>"),
    }
    b.push_str("</div>\n");
    let _ = write!(b, "<p class=\"turn-meta\">{}", esc(&when(t.time)));
    if let Some(c) = &t.commit {
        let _ = write!(
            b,
            " · session commit <code title=\"{}\">{}</code>",
            esc(c),
            esc(&c[..c.len().min(10)])
        );
    }
    b.push_str("</p>\n");
    if t.in_progress {
        b.push_str("<p class=\"in-progress\">In progress: the transcript has not closed this turn yet.</p>\n");
    }
    for i in &t.items {
        item(b, i, links);
    }
    for a in &t.agent {
        agent(b, a, links.project.as_deref());
    }
    if t.agent.is_empty() && s.project.is_some() && !t.in_progress {
        b.push_str("<div class=\"agent none\">No agent commit recorded for this turn.</div>\n");
    }
    b.push_str("</section>\n");
}

fn item(b: &mut String, i: &Item, links: &Links) {
    let indent = if i.depth > 0 {
        format!(" style=\"margin-left:{}em\"", (i.depth.min(6) as f32) * 1.5)
    } else {
        String::new()
    };
    match i.kind {
        Kind::Record => {
            let _ = write!(
                b,
                "<div class=\"record\" id=\"node-{}\"{indent}><b>{}</b>: <span class=\"text\">{}</span> <time>{}</time>",
                esc(&i.id),
                esc(&i.name),
                esc(&i.text),
                esc(&when(i.time))
            );
            if let Some(summary) = &i.summary {
                let _ = write!(
                    b,
                    "<details class=\"summary\"><summary>summary</summary><div class=\"summary-text\">{}</div></details>",
                    esc(summary)
                );
            }
            b.push_str("</div>\n");
        }
        Kind::Tool => {
            let line = crate::session::one_line(if i.input.is_empty() {
                &i.text
            } else {
                &i.input
            });
            let preview = super::cut_masked(&line, 90);
            let _ = write!(
                b,
                "<details class=\"tool\" id=\"node-{}\"{indent}><summary><span class=\"tn\">{}</span><span class=\"pv\">{}</span></summary>\n<div class=\"io\">",
                esc(&i.id),
                esc(if i.name.is_empty() { "tool" } else { &i.name }),
                esc(preview)
            );
            if !i.input.is_empty() {
                let _ = write!(
                    b,
                    "<h4>input</h4><pre class=\"input\">{}</pre>",
                    esc(&i.input)
                );
                left_out(b, i.input_left_out);
            }
            let _ = write!(
                b,
                "<h4>output</h4><pre class=\"output\">{}</pre>",
                esc(&i.text)
            );
            left_out(b, i.text_left_out);
            attachments(b, i, links);
            b.push_str("</div></details>\n");
            // Outside the fold: where the user stopped the agent shows.
            if let Some(why) = &i.stopped {
                let _ = writeln!(
                    b,
                    "<div class=\"stopped\"{indent}>stopped here: {}</div>",
                    esc(why)
                );
            }
        }
        Kind::User | Kind::Assistant => {
            let (class, who) = match i.kind {
                Kind::User => ("user", "user".to_string()),
                _ if i.name.is_empty() => ("assistant", "assistant".to_string()),
                _ => ("assistant", format!("assistant · {}", i.name)),
            };
            let _ = write!(
                b,
                "<div class=\"msg {class}\" id=\"node-{}\"{indent}><div class=\"who\"><b>{}</b><time>{}</time></div>",
                esc(&i.id),
                esc(&who),
                esc(&when(i.time))
            );
            if i.text.trim().is_empty() && !i.calls.is_empty() {
                let _ = write!(
                    b,
                    "<div class=\"calls\">calls {}</div>",
                    esc(&crate::session::tool_summary(&i.calls))
                );
            } else {
                let _ = write!(b, "<div class=\"text\">{}</div>", esc(&i.text));
            }
            attachments(b, i, links);
            if let Some(why) = &i.stopped {
                let _ = write!(b, "<div class=\"stopped\">stopped here: {}</div>", esc(why));
            }
            b.push_str("</div>\n");
        }
    }
}

/// The note under a tool's input or output cut at the page's limit.
fn left_out(b: &mut String, bytes: usize) {
    if bytes > 0 {
        let _ = write!(b, "<p class=\"cut\">{}</p>", esc(&super::left_out(bytes)));
    }
}

fn attachments(b: &mut String, i: &Item, links: &Links) {
    if i.attachments.is_empty() {
        return;
    }
    b.push_str("<ul class=\"attachments\">");
    for a in &i.attachments {
        let size = a.size.map(|n| format!(" ({n} bytes)")).unwrap_or_default();
        match (&links.attachments, &a.file) {
            (Some(dir), Some(file)) => {
                let _ = write!(
                    b,
                    "<li><a href=\"{}{}\">{}</a>{}</li>",
                    esc(dir),
                    esc(&url_segment(file)),
                    esc(&a.name),
                    esc(&size)
                );
            }
            _ => {
                let _ = write!(b, "<li>{}{}</li>", esc(&a.name), esc(&size));
            }
        }
    }
    b.push_str("</ul>");
}

/// A turn's agent commit (or why there is none).
fn agent(b: &mut String, a: &Agent, project_href: Option<&str>) {
    match a {
        Agent::Skipped { project, reason } => {
            let _ = writeln!(
                b,
                "<div class=\"agent skipped\">No agent commit in project {}: {} (<code>{}</code>)</div>",
                project_ref(project, project_href),
                esc(skip_reason(reason)),
                esc(reason)
            );
        }
        Agent::Commit {
            project,
            sha,
            paths,
            patch,
        } => {
            let _ = write!(
                b,
                "<div class=\"agent commit\"><div>Agent commit <code title=\"{}\">{}</code> in project {}</div>",
                esc(sha),
                esc(&sha[..sha.len().min(10)]),
                project_ref(project, project_href)
            );
            match patch {
                Some(p) => commit_body(b, p),
                None => {
                    let _ = write!(
                        b,
                        "<p class=\"by\">The project's repository does not have it here; the turn recorded {} path{}: {}</p>",
                        paths.len(),
                        if paths.len() == 1 { "" } else { "s" },
                        esc(&paths.join(", "))
                    );
                }
            }
            b.push_str("</div>\n");
        }
    }
}

fn project_ref(project: &str, href: Option<&str>) -> String {
    match href {
        Some(h) => format!("<a href=\"{}\">{}</a>", esc(h), esc(project)),
        None => format!("<code>{}</code>", esc(project)),
    }
}

/// A commit's subject, author, files and folded diff.
pub fn commit_body(b: &mut String, p: &CommitPatch) {
    let _ = write!(
        b,
        "<p class=\"subject\">{}</p><p class=\"by\">{} · {}</p><ul class=\"files\">",
        esc(p.subject()),
        esc(&p.author),
        esc(&when(p.time as f64))
    );
    for f in &p.files {
        let _ = write!(
            b,
            "<li><span class=\"st st-{0}\">{0}</span> {1}</li>",
            f.status,
            esc(&f.path)
        );
    }
    b.push_str("</ul>");
    let diff = p.unified();
    let (adds, dels) = p.counts();
    let _ = write!(
        b,
        "<details class=\"diff\"><summary>diff: {} file{}, +{adds} −{dels}{}</summary><pre class=\"diff\">",
        p.files.len(),
        if p.files.len() == 1 { "" } else { "s" },
        if p.cut {
            " (cut: too long to show whole)"
        } else {
            ""
        }
    );
    for l in diff.lines() {
        let class = if l.starts_with("diff --git") || l.starts_with("+++") || l.starts_with("---") {
            "file"
        } else if l.starts_with("@@") {
            "hunk"
        } else if l.starts_with('+') {
            "add"
        } else if l.starts_with('-') {
            "del"
        } else {
            "ctx"
        };
        let _ = write!(b, "<span class=\"{class}\">{}\n</span>", esc(l));
    }
    b.push_str("</pre></details>");
}

/// A session row of the index or a project page, linked to its page.
fn row(b: &mut String, r: &Row, prefix: &str) {
    let title = format!(
        "<span{}>{}</span>{}",
        if r.pinned { " class=\"pin\"" } else { "" },
        esc(&r.title),
        status(&r.status)
    );
    let body = format!(
        "<div class=\"t\">{title}</div><div class=\"p\">{}</div><div class=\"w\">{}{}</div>",
        esc(if r.preview.is_empty() {
            "—"
        } else {
            &r.preview
        }),
        esc(&when(r.updated_at)),
        if r.source.is_empty() {
            String::new()
        } else {
            format!(" · {}", esc(&r.source))
        }
    );
    match r.has_page {
        true => {
            let _ = writeln!(
                b,
                "<li><a href=\"{prefix}sessions/{}/index.html\">{body}</a></li>",
                esc(&url_segment(&r.id))
            );
        }
        false => {
            let _ = writeln!(b, "<li><a>{body}</a></li>");
        }
    }
}

/// Rows grouped by project, each group under its project's name.
fn groups(b: &mut String, rows: &[&Row], projects: &[ProjectPage], prefix: &str) {
    let mut order: Vec<Option<&str>> = Vec::new();
    for r in rows {
        if !order.contains(&r.project.as_deref()) {
            order.push(r.project.as_deref());
        }
    }
    for pid in order {
        b.push_str("<section class=\"group\"><h2>");
        match pid.and_then(|id| projects.iter().find(|p| p.project.id == id)) {
            Some(p) => {
                let _ = write!(
                    b,
                    "<a href=\"{prefix}projects/{}.html\">{}</a>",
                    esc(&url_segment(&p.project.id)),
                    esc(&p.project.name)
                );
            }
            None => b.push_str("No project"),
        }
        b.push_str("</h2>\n<ul class=\"rows\">\n");
        for r in rows.iter().filter(|r| r.project.as_deref() == pid) {
            row(b, r, prefix);
        }
        b.push_str("</ul></section>\n");
    }
}

/// The site's index: the sessions as a sidebar (most recent first, grouped
/// by project, archived ones apart) beside the projects.
pub fn index_page(rows: &[Row], projects: &[ProjectPage]) -> String {
    let live: Vec<&Row> = rows.iter().filter(|r| !r.archived).collect();
    let archived: Vec<&Row> = rows.iter().filter(|r| r.archived).collect();
    let mut b =
        String::from("<div class=\"layout\">\n<aside class=\"sidebar\">\n<h1>Sessions</h1>\n");
    groups(&mut b, &live, projects, "");
    if live.is_empty() {
        b.push_str("<p class=\"empty\" style=\"padding:0 16px\">No sessions.</p>\n");
    }
    if !archived.is_empty() {
        let _ = writeln!(
            b,
            "<details class=\"archived\"><summary>Archived ({})</summary>",
            archived.len()
        );
        groups(&mut b, &archived, projects, "");
        b.push_str("</details>\n");
    }
    b.push_str(
        "</aside>\n<div class=\"main\"><div class=\"page\">\n<h1>Sessions and projects</h1>\n",
    );
    let _ = writeln!(
        b,
        "<p class=\"meta\"><span>{}</span><span>{} archived</span><span>{}</span></p>",
        super::count(rows.len(), "session"),
        archived.len(),
        super::count(projects.len(), "project")
    );
    b.push_str("<h2>Projects</h2>\n<div class=\"cards\">\n");
    for p in projects {
        let _ = writeln!(
            b,
            "<div class=\"card\"><h3><a href=\"projects/{}.html\">{}</a></h3><div class=\"meta\"><span class=\"mono\">{}</span></div><div>{} · {}</div></div>",
            esc(&url_segment(&p.project.id)),
            esc(&p.project.name),
            esc(&p.path),
            super::count(p.sessions, "session"),
            super::count(p.commits.len(), "agent commit")
        );
    }
    if projects.is_empty() {
        b.push_str("<p class=\"empty\">No project is registered.</p>\n");
    }
    b.push_str("</div>\n<h2>Latest sessions</h2>\n<ul class=\"rows\" style=\"margin-top:8px\">\n");
    for r in live.iter().take(10) {
        row(&mut b, r, "");
    }
    b.push_str("</ul>\n");
    b.push_str(&footer());
    b.push_str("</div></div>\n</div>\n");
    document("Sessions · git-session", &b)
}

/// A project's page: its sessions and the agent commits in its repository.
pub fn project_page(p: &ProjectPage, rows: &[Row]) -> String {
    let mut b = String::from("<div class=\"page\">\n");
    let _ = writeln!(
        b,
        "<nav class=\"crumbs\"><a href=\"../index.html\">All sessions</a> › project</nav>\n<h1>{}</h1>",
        esc(&p.project.name)
    );
    let _ = writeln!(
        b,
        "<p class=\"meta\"><span class=\"mono\">{}</span><span class=\"mono\">{}</span><span>{}</span><span>auto-commit {}</span></p>",
        esc(&p.project.id),
        esc(&p.path),
        esc(&p.project.status),
        if p.project.auto_commit { "on" } else { "off" }
    );
    b.push_str(
        "<h2>Sessions</h2>\n<ul class=\"rows card\" style=\"padding:4px 0;margin:10px 0 24px\">\n",
    );
    let mine: Vec<&Row> = rows
        .iter()
        .filter(|r| r.project.as_deref() == Some(&p.project.id))
        .collect();
    for r in &mine {
        row(&mut b, r, "../");
    }
    if mine.is_empty() {
        b.push_str("<li class=\"empty\" style=\"padding:6px 16px\">No session.</li>\n");
    }
    b.push_str("</ul>\n<h2>Agent commits</h2>\n");
    if p.commits.is_empty() {
        b.push_str("<p class=\"empty\">No agent commit in this project's repository.</p>\n");
    }
    for c in &p.commits {
        let r = c;
        let _ = write!(
            b,
            "<div class=\"agent commit\"><div><code title=\"{}\">{}</code> · ",
            esc(&r.commit),
            esc(&r.commit[..r.commit.len().min(10)])
        );
        let linked = rows.iter().any(|x| x.id == r.session && x.has_page);
        match linked {
            true => {
                let _ = write!(
                    b,
                    "session <a href=\"../sessions/{}/index.html\">{}</a>",
                    esc(&url_segment(&r.session)),
                    esc(&r.session)
                );
            }
            false => {
                let _ = write!(b, "session <code>{}</code>", esc(&r.session));
            }
        }
        if let Some(t) = r.turn {
            let _ = write!(b, ", turn {t}");
        }
        b.push_str("</div>");
        match &c.patch {
            Some(patch) => commit_body(&mut b, patch),
            None => {
                let _ = write!(b, "<p class=\"subject\">{}</p>", esc(&r.subject));
            }
        }
        b.push_str("</div>\n");
    }
    b.push_str(&footer());
    b.push_str("</div>\n");
    document(&format!("{} · git-session", p.project.name), &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_is_escaped() {
        assert_eq!(
            esc("</details><script>alert('x' & \"y\")</script>"),
            "&lt;/details&gt;&lt;script&gt;alert(&#39;x&#39; &amp; &quot;y&quot;)&lt;/script&gt;"
        );
    }
}
