//! `serde_json::Value`s of the core's types, made without a serializer of their own.
//!
//! `serde_json::to_value` compiles a second serializer for every type it is given (and every type
//! inside it), beside the one that writes the type as text, which the wasm holds anyway: the
//! core writes every answer as text. [`value_of`] makes the same `Value` by writing the text and
//! reading it back; [`tag_of`] reads the tag of an internally tagged enum (`"kind": "file"`)
//! without writing the rest. The pretty writer is a second serializer too: [`pretty_text`]
//! writes the compact text and indents it as `serde_json::to_string_pretty` would have.

use std::fmt;

use serde::ser::{self, Impossible, Serialize, Serializer};
use serde_json::Value;

/// What `serde_json::to_value(value)` makes, for a type the core writes as text: the same
/// numbers, strings and maps (a `Value`'s map is sorted either way).
pub(crate) fn value_of<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    serde_json::from_str(&serde_json::to_string(value)?)
}

/// What `serde_json::to_string_pretty(value)` writes: the compact text, indented by [`indent`].
pub(crate) fn pretty_text<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string(value).map(|compact| indent(&compact))
}

/// serde_json's pretty form of compact JSON text: two spaces a level, a line for every item and
/// field, `": "` after a key, `[]` and `{}` for empty ones. Strings are copied as they are.
fn indent(compact: &str) -> String {
    let bytes = compact.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 2);
    let mut depth = 0;
    let (mut in_string, mut escaped) = (false, false);
    let line = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    };
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        i += 1;
        if in_string {
            out.push(byte);
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => {
                in_string = true;
                out.push(byte);
            }
            b'[' | b'{' if matches!(bytes.get(i), Some(b']' | b'}')) => {
                out.extend_from_slice(&[byte, bytes[i]]);
                i += 1;
            }
            b'[' | b'{' => {
                depth += 1;
                out.push(byte);
                line(&mut out, depth);
            }
            b']' | b'}' => {
                depth -= 1;
                line(&mut out, depth);
                out.push(byte);
            }
            b',' => {
                out.push(byte);
                line(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(byte),
        }
    }
    String::from_utf8(out).expect("indenting keeps the text UTF-8")
}

/// The value of the tag `name` an internally tagged enum writes (serde writes it first), if
/// `value` is one.
pub(crate) fn tag_of<T: Serialize + ?Sized>(value: &T, name: &str) -> Option<String> {
    let mut tag = None;
    // The serializer stops after the first field: the error is how it stops.
    let _ = value.serialize(TagOf {
        name,
        tag: &mut tag,
    });
    tag
}

impl super::Reply {
    /// The reply's kind as the driver writes it (`"file"`, `"created"`…), for protocol errors:
    /// its tag, read by [`tag_of`].
    pub fn kind(&self) -> String {
        tag_of(self, "kind").unwrap_or_else(|| "?".into())
    }
}

/// Stops a [`TagOf`]: after the tag, or at anything that is not a tagged enum.
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("not a tag")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// Writes nothing but a struct's first field, when it is named `name` and is a string: where
/// serde puts an internally tagged enum's tag.
struct TagOf<'a> {
    name: &'a str,
    tag: &'a mut Option<String>,
}

/// The first field's value, when it is a string.
struct Text<'a>(&'a mut Option<String>);

impl<'a> ser::SerializeStruct for TagOf<'a> {
    type Ok = ();
    type Error = Stop;

    fn serialize_field<T>(&mut self, key: &'static str, value: &T) -> Result<(), Stop>
    where
        T: Serialize + ?Sized,
    {
        if key == self.name {
            let _ = value.serialize(Text(self.tag));
        }
        Err(Stop)
    }

    fn end(self) -> Result<(), Stop> {
        Err(Stop)
    }
}

/// Refuses every shape but the ones given by name, in the `Serializer`s below.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<(), Stop> {
            Err(Stop)
        })*
    };
}

/// The compound shapes a [`TagOf`] or [`Text`] refuses.
macro_rules! refuse_compounds {
    () => {
        type SerializeSeq = Impossible<(), Stop>;
        type SerializeTuple = Impossible<(), Stop>;
        type SerializeTupleStruct = Impossible<(), Stop>;
        type SerializeTupleVariant = Impossible<(), Stop>;
        type SerializeMap = Impossible<(), Stop>;
        type SerializeStructVariant = Impossible<(), Stop>;

        refuse! {
            serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32);
            serialize_i64(i64); serialize_u8(u8); serialize_u16(u16); serialize_u32(u32);
            serialize_u64(u64); serialize_f32(f32); serialize_f64(f64); serialize_char(char);
            serialize_bytes(&[u8]); serialize_none(); serialize_unit();
            serialize_unit_struct(&'static str);
            serialize_unit_variant(&'static str, u32, &'static str);
        }

        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Stop> {
            Err(Stop)
        }

        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: &T,
        ) -> Result<(), Stop> {
            Err(Stop)
        }

        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<(), Stop> {
            Err(Stop)
        }

        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Stop> {
            Err(Stop)
        }

        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Stop> {
            Err(Stop)
        }

        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Stop> {
            Err(Stop)
        }

        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Stop> {
            Err(Stop)
        }

        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Stop> {
            Err(Stop)
        }

        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Stop> {
            Err(Stop)
        }
    };
}

impl<'a> Serializer for TagOf<'a> {
    type Ok = ();
    type Error = Stop;
    type SerializeStruct = TagOf<'a>;

    refuse_compounds!();

    fn serialize_str(self, _: &str) -> Result<(), Stop> {
        Err(Stop)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<TagOf<'a>, Stop> {
        Ok(self)
    }
}

impl Serializer for Text<'_> {
    type Ok = ();
    type Error = Stop;
    type SerializeStruct = Impossible<(), Stop>;

    refuse_compounds!();

    fn serialize_str(self, text: &str) -> Result<(), Stop> {
        *self.0 = Some(text.to_string());
        Ok(())
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Stop> {
        Err(Stop)
    }
}

/// A key as a JSON pointer's reference token (RFC 6901: `~` as `~0`, `/` as `~1`).
pub(crate) fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Event, Failure, FailureCode, Outcome, Reply, ResultWord};

    fn replies() -> Vec<Reply> {
        vec![
            Reply::NotModified { date: None },
            Reply::Created { sha: "s".into() },
            Reply::Written {
                sha: "s".into(),
                date: None,
            },
            serde_json::from_value(serde_json::json!({"kind": "http", "status": 404})).unwrap(),
            serde_json::from_value(
                serde_json::json!({"kind": "transport", "sent": true, "message": "reset"}),
            )
            .unwrap(),
        ]
    }

    #[test]
    fn tag_of_is_the_kind_serde_writes() {
        for reply in replies() {
            let written = serde_json::to_value(&reply).unwrap()["kind"].clone();
            assert_eq!(
                tag_of(&reply, "kind").map(Value::String),
                Some(written),
                "{reply:?}"
            );
        }
        let event = Event::Timer { now: 5 };
        assert_eq!(tag_of(&event, "kind").as_deref(), Some("timer"));
        // Not a tagged enum: no tag.
        let failure = Failure::new(FailureCode::Refused, "m".into());
        assert_eq!(tag_of(&failure, "kind"), None);
        assert_eq!(tag_of(&failure, "code").as_deref(), Some("refused"));
        assert_eq!(tag_of("text", "kind"), None);
        assert_eq!(tag_of(&7u32, "kind"), None);
    }

    #[test]
    fn pretty_text_is_serdes_pretty_writer() {
        let values = [
            serde_json::json!({}),
            serde_json::json!([]),
            serde_json::json!({"a": [], "b": {}, "c": [[], {}, [1, [2, {"d": null}]]]}),
            serde_json::json!({"s": "a \"quoted\" [x], {y}: z \\", "t": "\\\"", "u": "é ☃ 𝄞\n\t"}),
            serde_json::json!([true, false, null, -1, 2.5, 1e300, u64::MAX, "", ","]),
            serde_json::json!("top"),
            serde_json::json!(7),
        ];
        for value in &values {
            assert_eq!(
                pretty_text(value).unwrap(),
                serde_json::to_string_pretty(value).unwrap()
            );
        }
        let mut outcome = Outcome::new(ResultWord::Acquired, true, "deploy", "h-1");
        outcome.resource_tags = Some(vec![]);
        assert_eq!(
            pretty_text(&outcome).unwrap(),
            serde_json::to_string_pretty(&outcome).unwrap()
        );
    }

    /// Every state document in the fixtures' replies, written both ways.
    #[test]
    fn pretty_text_writes_the_fixtures_states_as_serde_does() {
        fn contents(value: &Value, found: &mut Vec<String>) {
            match value {
                Value::Object(fields) => {
                    if let Some(Value::String(text)) = fields.get("content") {
                        found.push(text.clone());
                    }
                    fields.values().for_each(|v| contents(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| contents(v, found)),
                _ => {}
            }
        }
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
        let mut states = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let Ok(fixture) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            let mut found = Vec::new();
            contents(&fixture, &mut found);
            for content in found {
                let Ok(state) = serde_json::from_str::<crate::wire::LockState>(&content) else {
                    continue;
                };
                assert_eq!(
                    pretty_text(&state).unwrap(),
                    serde_json::to_string_pretty(&state).unwrap()
                );
                states += 1;
            }
        }
        assert!(states >= 60, "{states} states in the fixtures");
    }

    #[test]
    fn value_of_is_to_value() {
        let mut outcome = Outcome::new(ResultWord::Failed, false, "deploy", "h-1")
            .with_error(Failure::new(FailureCode::Refused, "no \"way\"\n".into()));
        outcome.fence = Some(u64::MAX);
        outcome.wait_ms = Some(0);
        assert_eq!(
            value_of(&outcome).unwrap(),
            serde_json::to_value(&outcome).unwrap()
        );
        for reply in replies() {
            assert_eq!(
                value_of(&reply).unwrap(),
                serde_json::to_value(&reply).unwrap()
            );
        }
    }
}
