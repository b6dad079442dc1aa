//! [`Field`]: one field of an index row as `list` reads it, in 24 bytes.

use serde_json::Value;

/// One field of an index row as `list` reads it: any JSON value, held in
/// 24 bytes (a `serde_json::Value` takes 72, and `list` holds 16 per row for
/// every session). It writes back out as the same JSON.
///
/// A string without escapes is borrowed from the bytes parsed (no allocation
/// per string: at 10,000 rows, 60,000 of them).
#[derive(Debug, Clone, Default)]
pub enum Field<'a> {
    #[default]
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(Box<str>),
    Borrowed(&'a str),
    /// An array or an object: rare in an index row, kept as it is.
    Other(Box<Value>),
}

impl<'a> Field<'a> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Field::Str(s) => Some(s),
            Field::Borrowed(s) => Some(s),
            _ => None,
        }
    }

    /// The same value, owning its string.
    pub fn into_owned(self) -> Field<'static> {
        match self {
            Field::Null => Field::Null,
            Field::Bool(b) => Field::Bool(b),
            Field::Num(n) => Field::Num(n),
            Field::Str(s) => Field::Str(s),
            Field::Borrowed(s) => Field::Str(s.into()),
            Field::Other(v) => Field::Other(v),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Field::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Field::Num(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Field::Null)
    }
}

/// Equal when the JSON is: a borrowed string equals an owned one.
impl PartialEq for Field<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Field::Null, Field::Null) => true,
            (Field::Bool(a), Field::Bool(b)) => a == b,
            (Field::Num(a), Field::Num(b)) => a == b,
            (Field::Other(a), Field::Other(b)) => a == b,
            _ => matches!((self.as_str(), other.as_str()), (Some(a), Some(b)) if a == b),
        }
    }
}

impl From<Value> for Field<'_> {
    fn from(v: Value) -> Self {
        match v {
            Value::Null => Field::Null,
            Value::Bool(b) => Field::Bool(b),
            Value::Number(n) => Field::Num(n),
            Value::String(s) => Field::Str(s.into_boxed_str()),
            other => Field::Other(Box::new(other)),
        }
    }
}

/// Any JSON value: the index is written by other programs too.
impl schemars::JsonSchema for Field<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AnyValue".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The value as index.json holds it: normally a string, number or boolean"
        })
    }
}

impl serde::Serialize for Field<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Field::Null => s.serialize_unit(),
            Field::Bool(b) => s.serialize_bool(*b),
            Field::Num(n) => n.serialize(s),
            Field::Str(t) => s.serialize_str(t),
            Field::Borrowed(t) => s.serialize_str(t),
            Field::Other(v) => v.serialize(s),
        }
    }
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Field<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Field<'a>, D::Error> {
        use serde::Deserialize;
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Any<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Any<'a> {
            type Value = Field<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Null)
            }
            fn visit_none<E>(self) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Null)
            }
            fn visit_bool<E>(self, b: bool) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Bool(b))
            }
            fn visit_u64<E>(self, n: u64) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Num(n.into()))
            }
            fn visit_i64<E>(self, n: i64) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Num(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> std::result::Result<Field<'a>, E> {
                Ok(serde_json::Number::from_f64(n).map_or(Field::Null, Field::Num))
            }
            fn visit_borrowed_str<E>(self, t: &'de str) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Borrowed(t))
            }
            fn visit_str<E>(self, t: &str) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Str(t.into()))
            }
            fn visit_string<E>(self, t: String) -> std::result::Result<Field<'a>, E> {
                Ok(Field::Str(t.into_boxed_str()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                a: A,
            ) -> std::result::Result<Field<'a>, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(a)).map(Field::from)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> std::result::Result<Field<'a>, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(a)).map(Field::from)
            }
        }
        d.deserialize_any(Any(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_writes_back_the_json_it_read() {
        for json in [
            r#"null"#,
            r#"true"#,
            r#"17"#,
            r#"-3"#,
            r#"1796009999.0"#,
            r#"1.5e-7"#,
            r#""text with \"quotes\" and \u00e9""#,
            r#""plain text, é""#,
            r#"[1,{"a":null}]"#,
            r#"{"nested":{"b":[true]}}"#,
        ] {
            let field: Field = serde_json::from_str(json).unwrap();
            let value: Value = serde_json::from_str(json).unwrap();
            assert_eq!(
                serde_json::to_string(&field).unwrap(),
                serde_json::to_string(&value).unwrap(),
                "{json}"
            );
            // A string without escapes is borrowed, one with escapes owned.
            assert_eq!(
                matches!(field, Field::Borrowed(_)),
                json.starts_with('"') && !json.contains('\\'),
                "{json}"
            );
            assert_eq!(field, Field::from(value.clone()), "{json}");
            assert_eq!(field.into_owned(), Field::from(value), "{json}");
        }
        assert!(std::mem::size_of::<Field>() <= 24);
    }
}
