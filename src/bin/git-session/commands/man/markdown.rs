//! Markdown to roff for the topic pages written under `doc/`: headings,
//! paragraphs, code blocks, lists, tables (tbl), inline code, emphasis, links.

use pulldown_cmark::{Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

/// A whole page: `.TH`, NAME with `summary`, then the Markdown's sections.
pub fn page(name: &str, section: u8, summary: &str, markdown: &str) -> String {
    let mut r = Roff {
        out: format!(
            ".TH {name} {section} \"\" \"git-session\" \"git-session manual\"\n.SH NAME\n{name} \\- {}\n",
            escape(summary)
        ),
        ..Roff::default()
    };
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        r.event(event);
    }
    r.out
}

/// Roff text: backslashes as `\e`, dashes as `\-`.
fn escape(s: &str) -> String {
    // A grave accent as roff's `\(ga`: a bare one may print as a quote.
    s.replace('\\', "\\e")
        .replace('-', "\\-")
        .replace('`', "\\(ga")
}

#[derive(Default)]
struct Roff {
    out: String,
    /// The fonts of the open inline spans, innermost last.
    fonts: Vec<char>,
    /// The open lists, innermost last: the next number, none for bullets.
    lists: Vec<Option<u64>>,
    /// The list item just opened has no block yet.
    item_fresh: bool,
    /// The open links' targets (none: show no target).
    links: Vec<Option<String>>,
    /// Level-1 heading text is set in upper case.
    upper: bool,
    /// The rows of the table being read, and where its open cell starts.
    rows: Vec<Vec<String>>,
    cell: usize,
}

impl Roff {
    /// Text as it is, each line that would start with `.` or `'` (a
    /// request) led by `\&`.
    fn text(&mut self, s: &str) {
        for line in s.split_inclusive('\n') {
            if self.out.ends_with('\n') && line.starts_with(['.', '\'']) {
                self.out.push_str("\\&");
            }
            self.out.push_str(&escape(line));
        }
    }

    fn line(&mut self, request: &str) {
        if !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.out.push_str(request);
        self.out.push('\n');
    }

    fn font(&mut self, f: Option<char>) {
        match f {
            Some(f) => self.fonts.push(f),
            None => _ = self.fonts.pop(),
        }
        let now = self.fonts.last().copied().unwrap_or('R');
        self.out.push_str(&format!("\\f{now}"));
    }

    /// A block starts: a paragraph break, or inside a list item the item
    /// itself (its first block) or an indented paragraph.
    fn block(&mut self) {
        if self.lists.is_empty() {
            self.line(".PP");
        } else if !std::mem::take(&mut self.item_fresh) {
            self.line(".IP \"\" 2");
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) if self.upper => self.text(&t.to_uppercase()),
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::Code(c) => {
                self.font(Some('B'));
                self.out.push_str(&escape(&c));
                self.font(None);
            }
            Event::SoftBreak => self.out.push('\n'),
            Event::HardBreak => self.line(".br"),
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph => self.block(),
            Tag::Heading { level, .. } => {
                self.upper = level == HeadingLevel::H1;
                let macro_ = if self.upper { ".SH" } else { ".SS" };
                self.line(&format!("{macro_} \""));
                self.out.pop(); // the heading's text follows on the same line
            }
            Tag::CodeBlock(_) => {
                self.block();
                self.line(".RS 4\n.nf");
            }
            Tag::List(first) => {
                if !self.lists.is_empty() {
                    self.line(".RS 2");
                }
                self.lists.push(first);
            }
            Tag::Item => {
                let mark = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. 4", *n - 1)
                    }
                    _ => "\\(bu 2".to_string(),
                };
                self.line(&format!(".IP {mark}"));
                self.item_fresh = true;
            }
            Tag::Emphasis => self.font(Some('I')),
            Tag::Strong => self.font(Some('B')),
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => {
                let man = dest_url.starts_with("man/") || link_type == LinkType::Autolink;
                self.links.push((!man).then(|| dest_url.to_string()));
            }
            Tag::Table(_) => self.block(),
            Tag::TableHead | Tag::TableRow => self.rows.push(Vec::new()),
            Tag::TableCell => {
                self.out.push('\n'); // a cell's lines start lines, `\&` where needed
                self.cell = self.out.len();
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) => {
                self.upper = false;
                self.out.push_str("\"\n");
            }
            TagEnd::CodeBlock => self.line(".fi\n.RE"),
            TagEnd::List(_) => {
                self.lists.pop();
                if !self.lists.is_empty() {
                    self.line(".RE");
                }
            }
            TagEnd::Emphasis | TagEnd::Strong => self.font(None),
            TagEnd::Link => {
                if let Some(Some(url)) = self.links.pop() {
                    self.text(&format!(" <{url}>"));
                }
            }
            TagEnd::TableCell => {
                let cell = self.out.split_off(self.cell);
                self.out.pop();
                if let Some(row) = self.rows.last_mut() {
                    row.push(cell.trim().to_string());
                }
            }
            TagEnd::Table => self.table(),
            _ => {}
        }
    }

    /// The table read: tbl, boxed, every cell a text block (they wrap), the
    /// first row in bold, the last column as wide as the page allows.
    fn table(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        let cols = rows.first().map_or(0, Vec::len);
        // Narrow cells are set ragged, and their words left whole.
        self.line(".nh\n.na\n.TS\nallbox tab(\t);");
        let format = |f: &str| vec![f; cols].join(" ");
        self.line(&format("lb"));
        self.line(&format!("{}x.", format("l")));
        for row in rows {
            let cells: Vec<String> = row.iter().map(|c| format!("T{{\n{c}\nT}}")).collect();
            self.line(&cells.join("\t"));
        }
        self.line(".TE\n.ad\n.hy \\n[HY]\n.sp");
    }
}

#[cfg(test)]
mod tests {
    use super::page;

    /// The page `md` makes, after its `.TH` line.
    fn body(md: &str) -> String {
        let p = page("git-session-x", 7, "what it is", md);
        let (th, rest) = p.split_once('\n').unwrap();
        assert_eq!(
            th,
            ".TH git-session-x 7 \"\" \"git-session\" \"git-session manual\""
        );
        rest.strip_prefix(".SH NAME\ngit-session-x \\- what it is\n")
            .unwrap()
            .into()
    }

    #[test]
    fn headings_and_inline_fonts() {
        let md = "# On disk\n## Sub\nSee `--json`, *this* [x(1)](man/x.1) or [a](https://x.y).\n";
        let want = ".SH \"ON DISK\"\n.SS \"Sub\"\n.PP\n";
        let text = "See \\fB\\-\\-json\\fR, \\fIthis\\fR x(1) or a <https://x.y>.";
        assert_eq!(body(md), format!("{want}{text}"));
    }

    #[test]
    fn escaping_backslashes_dashes_and_requests() {
        let b = body("a \\\\u{1b} -q\n.hidden\n'quoted\n");
        assert_eq!(b, ".PP\na \\eu{1b} \\-q\n\\&.hidden\n\\&'quoted");
    }

    #[test]
    fn a_grave_accent_in_code_is_an_escape() {
        let b = body("```\nin project `app`\n```\n");
        assert_eq!(b, ".PP\n.RS 4\n.nf\nin project \\(gaapp\\(ga\n.fi\n.RE\n");
    }

    #[test]
    fn code_blocks_keep_their_lines() {
        let b = body("Run:\n\n```sh\ngit-session verify --all   # \\d\n.dot\n```\n");
        let code = "git\\-session verify \\-\\-all   # \\ed\n\\&.dot\n";
        assert_eq!(b, format!(".PP\nRun:\n.PP\n.RS 4\n.nf\n{code}.fi\n.RE\n"));
    }

    #[test]
    fn lists_and_tables() {
        let b =
            body("- **one**: a\n- two\n\n1. x\n2. y\n\n| a | b |\n|---|---|\n| `c\\|d` | .e |\n");
        let lists = ".IP \\(bu 2\n\\fBone\\fR: a\n.IP \\(bu 2\ntwo\n.IP 1. 4\nx\n.IP 2. 4\ny\n";
        let head = ".nh\n.na\n.TS\nallbox tab(\t);\nlb lb\nl lx.\nT{\na\nT}\tT{\nb\nT}\n";
        let row = "T{\n\\fBc|d\\fR\nT}\tT{\n\\&.e\nT}\n.TE\n.ad\n.hy \\n[HY]\n.sp\n";
        assert_eq!(b, format!("{lists}.PP\n{head}{row}"));
    }
}
