//! The index for listing: `index.json` parsed into [`ListRow`]s (the known
//! fields only, borrowing from the file's bytes) with the journal applied
//! line by line, no map per row or per line.

use std::collections::BTreeMap;
use std::io::Read;

use crate::error::{IoContext, Result};
use crate::layout::atomic;
use crate::layout::paths::StateDir;

use super::{Field, JOURNALED_AT, Row, applies, index_written_at, read_index_bytes};

/// An index row as `list` reads it: the known fields only, no map per row
/// (parsing 10,000 rows as open maps costs several times more). Any JSON
/// value is accepted in each field; readers interpret it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ListRow<'a> {
    #[serde(borrow)]
    pub id: Field<'a>,
    #[serde(borrow)]
    pub status: Field<'a>,
    #[serde(borrow)]
    pub pinned: Field<'a>,
    #[serde(borrow)]
    pub archived: Field<'a>,
    #[serde(borrow)]
    pub unread: Field<'a>,
    #[serde(borrow)]
    pub agent_id: Field<'a>,
    #[serde(borrow)]
    pub title: Field<'a>,
    #[serde(borrow)]
    pub created_at: Field<'a>,
    #[serde(borrow)]
    pub updated_at: Field<'a>,
    #[serde(borrow)]
    pub source: Field<'a>,
    #[serde(borrow)]
    pub channel: Field<'a>,
    #[serde(borrow)]
    pub account_id: Field<'a>,
    #[serde(borrow)]
    pub peer_display: Field<'a>,
    #[serde(borrow)]
    pub peer_id: Field<'a>,
    #[serde(borrow)]
    pub group: Field<'a>,
    #[serde(skip_serializing_if = "Field::is_null")]
    #[serde(borrow)]
    pub preview: Field<'a>,
}

impl<'a> ListRow<'a> {
    /// The field named `key`, if the list has one: the index's fields and `preview`.
    fn field(key: &str) -> Option<&'static str> {
        crate::layout::schema::INDEX_FIELDS
            .into_iter()
            .chain(["preview"])
            .find(|f| *f == key)
    }

    fn set(&mut self, key: &str, v: Field<'a>) {
        match key {
            "id" => self.id = v,
            "status" => self.status = v,
            "pinned" => self.pinned = v,
            "archived" => self.archived = v,
            "unread" => self.unread = v,
            "agent_id" => self.agent_id = v,
            "title" => self.title = v,
            "created_at" => self.created_at = v,
            "updated_at" => self.updated_at = v,
            "source" => self.source = v,
            "channel" => self.channel = v,
            "account_id" => self.account_id = v,
            "peer_display" => self.peer_display = v,
            "peer_id" => self.peer_id = v,
            "group" => self.group = v,
            "preview" => self.preview = v,
            _ => {}
        }
    }

    pub fn from_row(row: Row) -> ListRow<'a> {
        let mut r = ListRow::default();
        for (k, v) in row {
            r.set(&k, v.into());
        }
        r
    }

    pub fn str<'b>(v: &'b Field<'_>) -> &'b str {
        v.as_str().unwrap_or("")
    }

    pub fn flag(v: &Field<'_>) -> bool {
        v.as_bool().unwrap_or(false)
    }
}

/// `index.json`'s bytes as [`load_list`] read them: the rows borrow their
/// strings from them, so the caller keeps this while it uses the rows and
/// both go at the end of its command (a `batch` process lists many times).
#[derive(Debug, Default)]
pub struct ListText(Option<crate::layout::mapped::Bytes>);

/// The index for listing: `index.json` parsed into [`ListRow`]s with the
/// journal folded in, the rows borrowing from `text`. `None` when
/// `index.json` is missing or corrupt.
pub fn load_list<'a>(
    state: &StateDir,
    text: &'a mut ListText,
) -> Result<Option<BTreeMap<String, Box<ListRow<'a>>>>> {
    let Some(bytes) = read_index_bytes(state)? else {
        return Ok(None);
    };
    let bytes: &'a [u8] = text.0.insert(bytes);
    // Boxed: the rows are moved around while the map is built and sorted.
    // Validated as UTF-8 once, not string by string; the rows are collected
    // in file order (sorted, as written here) and the map built in one pass.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(None);
    };
    let Ok(Pairs(pairs)) = serde_json::from_str::<Pairs<Box<ListRow>>>(text) else {
        return Ok(None);
    };
    let mut rows: BTreeMap<String, Box<ListRow>> = pairs.into_iter().collect();
    let written = index_written_at(state);
    let jpath = state.index_journal();
    if let Ok(mut f) = atomic::open_read(&jpath) {
        f.lock_shared().io("lock", &jpath)?;
        let mut journal = Vec::new();
        f.read_to_end(&mut journal).io("read", &jpath)?;
        for line in journal.split(|b| *b == b'\n') {
            // Empty and torn lines are skipped, as in `journal_rows`.
            let Ok(ListPatch {
                id: Some(id),
                deleted,
                fields,
                at,
            }) = serde_json::from_slice::<ListPatch>(line)
            else {
                continue;
            };
            if !deleted && !applies(at, written) {
                continue;
            }
            if deleted {
                rows.remove(&id);
                continue;
            }
            let entry = rows.entry(id).or_default();
            for (k, v) in fields {
                entry.set(k, v.into_owned());
            }
        }
    }
    Ok(Some(rows))
}

/// A JSON object's entries in file order (a later duplicate key wins once
/// they are collected into a map, as with a map deserialized directly).
struct Pairs<T>(Vec<(String, T)>);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Pairs<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Entries<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Entries<T> {
            type Value = Pairs<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Pairs<T>, A::Error> {
                let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(kv) = a.next_entry()? {
                    v.push(kv);
                }
                Ok(Pairs(v))
            }
        }
        d.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A journal line as `list` reads it: the list's fields it sets (null
/// included) and whether it deletes the row. Other keys are skipped
/// unparsed, and no map is built per line (the journal can hold a
/// thousand lines between folds).
struct ListPatch<'a> {
    id: Option<String>,
    deleted: bool,
    fields: Vec<(&'static str, Field<'a>)>,
    at: Option<f64>,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for ListPatch<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Lines<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Lines<'a> {
            type Value = ListPatch<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an index row")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<ListPatch<'a>, A::Error> {
                let mut p = ListPatch {
                    id: None,
                    deleted: false,
                    fields: Vec::with_capacity(16),
                    at: None,
                };
                while let Some(key) = m.next_key::<String>()? {
                    match ListRow::field(&key) {
                        Some(name) => {
                            let v: Field = m.next_value()?;
                            if name == "id" {
                                p.id = v.as_str().map(str::to_owned);
                            }
                            p.fields.push((name, v));
                        }
                        None if key == "_deleted" => {
                            p.deleted = m.next_value::<Field>()?.as_bool() == Some(true);
                        }
                        None if key == JOURNALED_AT => {
                            p.at = m.next_value::<Field>()?.as_f64();
                        }
                        None => {
                            m.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(p)
            }
        }
        d.deserialize_map(Lines(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::layout::registry::{apply_journal, read_index_file};

    #[test]
    fn pairs_keep_file_order_and_the_last_duplicate_wins_in_a_map() {
        let Pairs(p) = serde_json::from_str::<Pairs<u32>>(r#"{"b":1,"a":2,"b":3}"#).unwrap();
        assert_eq!(p, [("b".into(), 1), ("a".into(), 2), ("b".into(), 3)]);
        let m: BTreeMap<String, u32> = p.into_iter().collect();
        let direct: BTreeMap<String, u32> = serde_json::from_str(r#"{"b":1,"a":2,"b":3}"#).unwrap();
        assert_eq!(m, direct);
        assert!(serde_json::from_str::<Pairs<u32>>("[1]").is_err());
    }

    /// `list` reads the journal its own way (no map per line): it must see
    /// what folding the journal into the index would give.
    #[test]
    fn the_list_reads_the_journal_as_the_fold_does() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir {
            root: dir.path().to_path_buf(),
        };
        std::fs::create_dir_all(state.sessions()).unwrap();
        let index = r#"{"a":{"id":"a","title":"A","group":"g","preview":"p","x":1},
            "b":{"id":"b","title":"B"},"c":{"id":"c","title":"C"}}"#;
        std::fs::write(state.index_json(), index).unwrap();
        let journal = concat!(
            "{\"id\":\"a\",\"title\":\"A2\",\"group\":null,\"unknown\":{\"deep\":[1,2]}}\n",
            "{\"id\":\"b\",\"_deleted\":true}\n",
            "{\"id\":\"d\",\"status\":\"running\",\"t\\u0069tle\":\"escaped key\"}\n",
            "{\"title\":\"no id\"}\n",
            "[1,2]\n",
            "\n",
            "{\"id\":\"c\",\"_deleted\":false,\"pinned\":true,\"preview\":\"q\"}\n",
            "{\"id\":\"a\",\"updated_at\":5.5,\"ti",
        );
        std::fs::write(state.index_journal(), journal).unwrap();
        let listed: Vec<(String, String)> = load_list(&state, &mut ListText::default())
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|(id, r)| (id, serde_json::to_string(&r).unwrap()))
            .collect();
        let mut folded = read_index_file(&state).unwrap().unwrap();
        apply_journal(&mut folded, journal.as_bytes(), None);
        let folded: Vec<(String, String)> = folded
            .into_iter()
            .map(|(id, row)| (id, serde_json::to_string(&ListRow::from_row(row)).unwrap()))
            .collect();
        assert_eq!(listed, folded);
        assert_eq!(listed.len(), 3, "{listed:?}");
        assert!(listed[0].1.contains(r#""title":"A2""#) && listed[0].1.contains(r#""group":null"#));
        assert!(
            listed[2].1.contains(r#""title":"escaped key""#),
            "{listed:?}"
        );
    }
}
