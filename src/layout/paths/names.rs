//! Node file names, in both namings (the layout's and the Python
//! store's), and the closest ids to one that was not found.

/// `{seq:06}-{letter}-{id}.json` (SPEC §2.2).
pub fn node_file_name(seq: u64, letter: char, id: &str) -> String {
    format!("{seq:06}-{letter}-{id}.json")
}

/// How a session's node files are named (SPEC §2.2): the layout's
/// `{seq:06}-{u,a,t}-<id>.json`, or the Python store's
/// `{seq:04}-{u,l,c}-<id>.json`, which that store sorts by name and
/// rebuilds from a node's seq when it rewrites one. A session keeps the
/// naming its files have; a new one takes the state dir's setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Naming {
    #[default]
    Layout,
    Python,
}

impl Naming {
    /// The naming an existing file name shows (the layout's when it shows
    /// neither: see [`Naming::shown_by`]).
    pub fn of(file: &str) -> Naming {
        Naming::shown_by(file).unwrap_or(Naming::Layout)
    }

    /// The naming a node file's name shows: `None` when it fits both (a
    /// `u`, `s` or `x` file past seq 99,999, which both name with six or
    /// more digits) or is no node file.
    pub fn shown_by(file: &str) -> Option<Naming> {
        let (seq, letter, _) = parse_node_file_name(file)?;
        let digits = file.split('-').next().map_or(0, str::len);
        if digits < 6 || matches!(letter, 'l' | 'c') {
            // The layout pads to six digits and writes `u a t x`.
            Some(Naming::Python)
        } else if matches!(letter, 'a' | 't') || seq < 100_000 {
            // The Python store pads to four: six digits below 100,000 are
            // the layout's.
            Some(Naming::Layout)
        } else {
            None
        }
    }

    /// The name node file `file` has in the other naming (`None`: not a
    /// node file, or a letter that does not say the role). A node renamed
    /// to one naming (`verify --fix`, `migrate --node-names`) is held
    /// under its old name by the commits before.
    pub fn other_name(file: &str) -> Option<String> {
        let (seq, letter, id) = parse_node_file_name(file)?;
        let role = match letter {
            'u' => "user",
            'a' | 'l' => "llm",
            't' | 'c' => "code",
            _ => return None,
        };
        let other = match Naming::shown_by(file)? {
            Naming::Layout => Naming::Python,
            Naming::Python => Naming::Layout,
        };
        Some(other.file_name(seq, role, id)).filter(|o| o != file)
    }

    /// The file name of a node with this naming.
    pub fn file_name(self, seq: u64, role: &str, id: &str) -> String {
        match self {
            Naming::Layout => {
                let letter = match role {
                    "user" => 'u',
                    "llm" => 'a',
                    "code" => 't',
                    _ => 'x',
                };
                node_file_name(seq, letter, id)
            }
            Naming::Python => {
                let letter = role
                    .chars()
                    .next()
                    .filter(|c| "ulc".contains(*c))
                    .unwrap_or('x');
                format!("{seq:04}-{letter}-{id}.json")
            }
        }
    }
}

/// What a history file name says: `(seq, letter, id)`. Accepts any padding and
/// the letters `u l c a t s x` (SPEC §2.2).
pub fn parse_node_file_name(name: &str) -> Option<(u64, char, &str)> {
    let stem = name.strip_suffix(".json")?;
    let (digits, rest) = stem.split_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seq: u64 = digits.parse().ok()?;
    let mut chars = rest.chars();
    let letter = chars.next()?;
    if !"ulcatsx".contains(letter) || chars.next() != Some('-') {
        return None;
    }
    let id = &rest[2..];
    if id.is_empty() {
        return None;
    }
    Some((seq, letter, id))
}

/// Up to three of `known` closest to `id` by edit distance (at most a third
/// of its length, and at least 1), nearest first.
/// The help line for an unknown id: the closest of `known` (as clap
/// suggests commands), else where to see them all (`everything`: "`git-session
/// list` shows").
pub fn did_you_mean(id: &str, known: &[String], everything: &str) -> String {
    let close = closest(id, known);
    if close.is_empty() {
        return format!("{everything} them all");
    }
    format!(
        "did you mean {}? ({everything} them all)",
        close
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(" or ")
    )
}

pub fn closest<'a>(id: &str, known: &'a [String]) -> Vec<&'a str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    let limit = (id.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = known
        .iter()
        .map(|k| (distance(id, k), k.as_str()))
        .filter(|(d, k)| *d <= limit && *k != id)
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, k)| k).collect()
}
