//! Internally tagged enums (`{"kind": "start", "now": 1}`) read without serde's buffering.
//!
//! serde's derive reads an internally tagged enum by buffering the whole object into its private
//! `Content` tree, then reading the variant from that tree. Every type inside such an enum then
//! has a second deserializer compiled, for `Content`, beside the one for `serde_json::Value`
//! that the wasm binding reads everything through: about a tenth of the shipped wasm.
//!
//! [`tagged!`] declares the enum once. Its `Serialize` is serde's derive, unchanged. Its
//! `Deserialize` reads a `Value`, takes the tag out ([`read`]), and hands the tag and the rest
//! to a derived twin of the enum that is externally tagged (serde's `remote`, so it builds the
//! real enum): the twin reads the variant's fields with the crate's own reader
//! ([`super::de::Doc`]), the same as every other type. For an object it accepts the same JSON
//! as serde's internally tagged derive and fails with the same messages: a missing tag is
//! ``missing field `kind` ``, an unknown one ``unknown variant `x`, expected one of …``, a unit
//! variant ignores other fields. Anything that is no object is refused as ``invalid type: …,
//! expected internally tagged enum Event``, an array too: serde would also take
//! `["start", 5]`, the tag and then the fields in order, which was never a documented input
//! (`super::de` refuses structs as arrays for the same reason). Read straight from text, an
//! error in the tag has no position (the tag is read after the whole value).

use std::convert::Infallible;
use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, VariantAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Error, Map, Value};

use super::de::Doc;

/// Declares an internally tagged enum whose `Deserialize` goes through [`read`]. Written as the
/// derive would be, less `Deserialize`: doc comments, `#[derive(..., Serialize)]`, then
/// `#[serde(tag = "...", rename_all = "...")]`, then `#[name = "..."]` (the enum's name as text:
/// the twin's `remote` needs it, and serde's messages name the enum by it), then the enum.
macro_rules! tagged {
    (
        $(#[doc = $doc:tt])*
        #[derive($($derive:tt)*)]
        #[serde(tag = $tag:tt, rename_all = $case:tt)]
        #[name = $text:tt]
        $vis:vis enum $name:ident { $($body:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[derive($($derive)*)]
        #[serde(tag = $tag, rename_all = $case)]
        $vis enum $name { $($body)* }

        const _: () = {
            /// The enum's twin, externally tagged: it reads one variant from a tag and the rest,
            /// and makes the enum itself.
            #[derive(::serde::Deserialize)]
            #[serde(remote = $text, rename_all = $case)]
            #[allow(dead_code)]
            enum Twin { $($body)* }

            impl<'de> ::serde::Deserialize<'de> for $name {
                fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    $crate::wire::tagged::read(
                        d,
                        $tag,
                        concat!("internally tagged enum ", $text),
                        Twin::deserialize,
                    )
                }
            }
        };
    };
}

pub(crate) use tagged;

/// Reads a tagged value: the tag out of the object (or, as serde allows, the first item of an
/// array), then `variant` with the tag and the rest. Generic only in the deserializer; the
/// splitting is [`split`], once.
pub(crate) fn read<'de, D, T>(
    d: D,
    tag: &'static str,
    expecting: &'static str,
    variant: fn(Split) -> Result<T, Error>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Value::deserialize(d)?;
    split(value, tag, expecting)
        .and_then(variant)
        .map_err(de::Error::custom)
}

fn split(value: Value, tag: &'static str, expecting: &'static str) -> Result<Split, Error> {
    match value {
        Value::Object(mut fields) => match fields.remove(tag) {
            Some(tag) => Ok(Split { tag, rest: fields }),
            None => Err(de::Error::missing_field(tag)),
        },
        other => Doc(other)
            .deserialize_any(Expecting(expecting))
            .map(|never| match never {}),
    }
}

/// Refuses anything with serde's message for a value that is no object: `invalid type: …,
/// expected <expecting>`.
struct Expecting(&'static str);

impl Visitor<'_> for Expecting {
    type Value = Infallible;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A tagged object taken apart: the tag, and the other fields.
pub(crate) struct Split {
    tag: Value,
    rest: Map<String, Value>,
}

impl<'de> Deserializer<'de> for Split {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> EnumAccess<'de> for Split {
    type Error = Error;
    type Variant = Rest;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Rest), Error> {
        Ok((seed.deserialize(Doc(self.tag))?, Rest(self.rest)))
    }
}

/// What a variant is read from: the object less its tag.
pub(crate) struct Rest(Map<String, Value>);

impl<'de> VariantAccess<'de> for Rest {
    type Error = Error;

    /// As serde's internally tagged unit variant: other fields are ignored.
    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(Doc(Value::Object(self.0)))
    }

    /// Never called: serde refuses tuple variants in an internally tagged enum.
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        Doc(Value::Object(self.0)).deserialize_any(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        Doc(Value::Object(self.0)).deserialize_map(visitor)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::{json, Value};

    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Inner {
        pub n: u32,
    }

    tagged! {
        /// Read by `tagged!`.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
        #[serde(tag = "kind", rename_all = "kebab-case")]
        #[name = "Tested"]
        pub enum Tested {
            Unit,
            Newtype(Inner),
            #[serde(rename_all = "camelCase")]
            Fields {
                first_one: u64,
                #[serde(default)]
                maybe: Option<String>,
                inner: Inner,
            },
        }
    }

    mod serdes {
        use super::Inner;
        use serde::{Deserialize, Serialize};

        /// The same enum read by serde's own derive: what `tagged!` must match.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(tag = "kind", rename_all = "kebab-case")]
        pub enum Tested {
            Unit,
            Newtype(Inner),
            #[serde(rename_all = "camelCase")]
            Fields {
                first_one: u64,
                #[serde(default)]
                maybe: Option<String>,
                inner: Inner,
            },
        }
    }

    /// Objects, which must read as serde's derive reads them.
    fn cases() -> Vec<Value> {
        vec![
            json!({"kind": "unit"}),
            json!({"kind": "unit", "other": [1, 2]}),
            json!({"kind": "newtype", "n": 3}),
            json!({"kind": "newtype", "n": "3"}),
            json!({"kind": "newtype"}),
            json!({"kind": "fields", "firstOne": 1, "inner": {"n": 2}}),
            json!({"kind": "fields", "firstOne": 1, "maybe": "m", "inner": {"n": 2}, "x": 0}),
            json!({"kind": "fields", "firstOne": -1, "inner": {"n": 2}}),
            json!({"kind": "fields", "firstOne": 1.5, "inner": {"n": 2}}),
            json!({"kind": "fields", "firstOne": 1, "inner": {"n": 5_000_000_000u64}}),
            json!({"kind": "fields", "firstOne": 1}),
            json!({"kind": "fields", "maybe": null, "firstOne": 1, "inner": null}),
            json!({"kind": "fields", "firstOne": 1, "inner": "n"}),
            json!({"kind": "bogus", "n": 1}),
            json!({"kind": 0}),
            json!({"kind": null}),
            json!({"n": 1}),
            json!({}),
            json!("unit"),
            json!(7),
            json!(null),
            json!(true),
        ]
    }

    /// Arrays, which serde's derive takes as the tag and then the fields in order, and which
    /// are refused here, with what serde says of any other value that is no object.
    fn arrays() -> Vec<(Value, &'static str)> {
        let no_object = "invalid type: sequence, expected internally tagged enum Tested";
        vec![
            (json!(["unit"]), no_object),
            (json!(["fields", 1, null, {"n": 2}]), no_object),
            (json!([]), no_object),
            (
                json!({"kind": "fields", "firstOne": 1, "inner": [2]}),
                "invalid type: sequence, expected struct Inner",
            ),
            (
                json!({"kind": "newtype", "n": [3]}),
                "invalid type: sequence, expected u32",
            ),
        ]
    }

    fn ours(case: &Value) -> Result<Tested, String> {
        super::super::de::from_value::<Tested>(case.clone()).map_err(|e| e.to_string())
    }

    #[test]
    fn refuses_arrays_that_serdes_derive_takes() {
        for (case, message) in arrays() {
            assert_eq!(ours(&case).unwrap_err(), message, "{case}");
            let text = case.to_string();
            let from_text = serde_json::from_str::<Tested>(&text).map_err(|e| e.to_string());
            assert_eq!(from_text.unwrap_err(), message, "{text}");
        }
    }

    #[test]
    fn reads_as_serdes_internally_tagged_derive() {
        for case in cases() {
            let ours = ours(&case);
            let serdes =
                serde_json::from_value::<serdes::Tested>(case.clone()).map_err(|e| e.to_string());
            match (&ours, &serdes) {
                (Ok(o), Ok(s)) => assert_eq!(json!(o), json!(s), "{case}"),
                (Err(o), Err(s)) => assert_eq!(o, s, "{case}"),
                _ => panic!("{case}: {ours:?} but serde: {serdes:?}"),
            }
        }
    }

    /// Read from text, the messages are the same but for serde's position of an error in the
    /// tag (read here after the whole value, where serde reads the tag as it parses).
    #[test]
    fn reads_text_as_serdes_internally_tagged_derive() {
        for case in cases() {
            let text = case.to_string();
            let ours = serde_json::from_str::<Tested>(&text).map_err(|e| e.to_string());
            let serdes = serde_json::from_str::<serdes::Tested>(&text).map_err(|e| {
                let message = e.to_string();
                match message.find(" at line ") {
                    Some(at) => message[..at].to_string(),
                    None => message,
                }
            });
            match (&ours, &serdes) {
                (Ok(o), Ok(s)) => assert_eq!(json!(o), json!(s), "{text}"),
                (Err(o), Err(s)) => assert_eq!(o, s, "{text}"),
                _ => panic!("{text}: {ours:?} but serde: {serdes:?}"),
            }
        }
    }
}
