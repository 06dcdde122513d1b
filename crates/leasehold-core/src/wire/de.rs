//! Typed values read out of a `serde_json::Value`, with a deserializer of the crate's own.
//!
//! Everything the core and the wasm binding read goes through a `Value` first (the wasm takes
//! JSON text; documents are parsed once, checked, then typed). `serde_json::from_value` would do
//! the typing, but its reader also takes each struct as a JSON array of its fields, and that
//! path is compiled for every struct read: about a tenth of the wasm. [`Doc`] is the same reader
//! without it: it makes the same calls on serde's visitors for everything else, so the same JSON
//! gives the same values and the same messages (``missing field `x` ``, ``invalid type: string
//! "x", expected u64``, ``unknown variant `x`, expected one of …``). The one difference, on
//! purpose: a struct must be a JSON object. `serde_json` also takes `[1, "a"]` for
//! `{"n": 1, "s": "a"}`; that was never a documented input of leasehold, and here it is refused
//! as ``invalid type: sequence, expected struct X``. `tests/value_reader.rs` holds the two
//! readers to each other.
//!
//! The core's own structs and enums are read by [`read`], which `#[derive(Read)]` (crate
//! `leasehold-derive`) calls: one function per type, not serde's visitor, field identifier and
//! seeds per type. Its tests (`read_tests`) hold it to serde's derive, type by type.

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, Expected, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde::Deserializer;
use serde_json::{Error, Map, Value};

/// `serde_json::from_value`, with [`Doc`]: how the crate and its wasm binding read every typed
/// value out of a `Value`.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, Error> {
    T::deserialize(Doc(value))
}

/// A `Value` to be read as a typed value.
pub(crate) struct Doc(pub(crate) Value);

/// What serde's messages call a value of this shape.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// serde's ``invalid type: …, expected …``. Not generic, so compiled once.
#[inline(never)]
fn refuse(value: &Value, expected: &dyn Expected) -> Error {
    de::Error::invalid_type(unexpected(value), expected)
}

fn visit_array<'de, V: Visitor<'de>>(items: Vec<Value>, visitor: V) -> Result<V::Value, Error> {
    let len = items.len();
    let mut items = Items(items.into_iter());
    let out = visitor.visit_seq(&mut items)?;
    match items.0.len() {
        0 => Ok(out),
        _ => Err(de::Error::invalid_length(len, &"fewer elements in array")),
    }
}

fn visit_object<'de, V: Visitor<'de>>(
    fields: Map<String, Value>,
    visitor: V,
) -> Result<V::Value, Error> {
    let len = fields.len();
    let mut fields = Fields {
        rest: fields.into_iter(),
        value: None,
    };
    let out = visitor.visit_map(&mut fields)?;
    match fields.rest.len() {
        0 => Ok(out),
        _ => Err(de::Error::invalid_length(len, &"fewer elements in map")),
    }
}

impl<'de> Deserializer<'de> for Doc {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            // serde_json's own: an integer as `u64` or `i64`, any other number as `f64`.
            Value::Number(n) => n.deserialize_any(visitor),
            Value::String(s) => visitor.visit_string(s),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(fields) => visit_object(fields, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Doc(other)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            other => Err(refuse(&other, &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => Err(refuse(&other, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    /// Only an object: the one difference from `serde_json` (see the module's comment).
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(fields) => visit_object(fields, visitor),
            other => Err(refuse(&other, &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    /// An externally tagged enum, as `serde_json` reads one: a unit variant is its name, any
    /// other an object of one field, the name, holding the variant's value.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(name) => visitor.visit_enum(Variant { name, value: None }),
            Value::Object(fields) if fields.len() == 1 => {
                let (name, value) = fields.into_iter().next().expect("one field");
                visitor.visit_enum(Variant {
                    name,
                    value: Some(value),
                })
            }
            Value::Object(_) => Err(de::Error::invalid_value(
                Unexpected::Map,
                &"map with a single key",
            )),
            other => Err(refuse(&other, &"string or map")),
        }
    }

    /// A name (of a field or a variant) is a string, as in `serde_json`: serde's identifiers
    /// would also take a number, the index.
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            other => Err(refuse(&other, &visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        drop(self);
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
    }
}

/// The name of a field or a variant (a key of an object): a string.
struct Name(String);

impl<'de> Deserializer<'de> for Name {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string(self.0)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// The items of an array, each read as a [`Doc`].
struct Items(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Items {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|v| seed.deserialize(Doc(v))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The fields of an object: each key read as a string, each value as a [`Doc`].
struct Fields {
    rest: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Fields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.rest.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(Name(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Doc(value)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.rest.len())
    }
}

/// An externally tagged variant: its name, and its value unless it is a unit variant.
struct Variant {
    name: String,
    value: Option<Value>,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = Payload;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Payload), Error> {
        let name = seed.deserialize(Name(self.name))?;
        Ok((name, Payload(self.value)))
    }
}

/// What a variant holds (`None` for a unit variant named by a string).
struct Payload(Option<Value>);

impl<'de> VariantAccess<'de> for Payload {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Some(value) => serde::Deserialize::deserialize(Doc(value)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        match self.0 {
            Some(value) => seed.deserialize(Doc(value)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Array(items)) if items.is_empty() => visitor.visit_unit(),
            Some(Value::Array(items)) => visit_array(items, visitor),
            Some(other) => Err(refuse(&other, &"tuple variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(Value::Object(fields)) => visit_object(fields, visitor),
            Some(other) => Err(refuse(&other, &"struct variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

/// What `#[derive(Read)]` (crate `leasehold-derive`) calls: a struct read out of a `Value` by
/// one function of its own, with serde's messages. The rules are here, once; the derive only
/// lists the fields. (serde's derive compiles a visitor, a field identifier and their seeds for
/// every struct: most of the wasm's reading code.) Reading never returns early: the first error
/// is kept and the struct function has one way out, so it holds no clean-up code per field.
pub mod read {
    use super::{refuse, Doc};
    use serde::de::{self, DeserializeOwned};
    use serde_json::{Error, Map, Value};

    /// A struct's fields not yet taken, and the first error met reading them (with its key:
    /// serde's derive names whichever comes first in key order, a field that does not read or
    /// an unknown key).
    pub struct Object {
        rest: Map<String, Value>,
        error: Option<(String, Error)>,
    }

    impl Object {
        /// The value as an object; anything else is kept as ``invalid type: …, expected
        /// <expecting>`` (every field then reads as missing, and [`Object::finish`] says why).
        #[inline(never)]
        pub fn open(value: Value, expecting: &'static str) -> Object {
            match value {
                Value::Object(rest) => Object { rest, error: None },
                other => Object {
                    rest: Map::new(),
                    error: Some((String::new(), refuse(&other, &expecting))),
                },
            }
        }

        /// The field `key`, read with its type's `Deserialize`, if it is there and reads.
        #[inline(never)]
        pub fn take<T: DeserializeOwned>(&mut self, key: &str) -> Option<T> {
            let value = self.rest.remove(key)?;
            self.kept(key, T::deserialize(Doc(value)))
        }

        /// The field `key`, read with a `with` module's `deserialize`, if it is there and reads.
        #[inline(never)]
        pub fn take_with<T>(&mut self, key: &str, read: fn(Doc) -> Result<T, Error>) -> Option<T> {
            let value = self.rest.remove(key)?;
            self.kept(key, read(Doc(value)))
        }

        /// An internally tagged enum's object: the index of the variant its `tag` names (of
        /// `variants`, in declaration order) and the other fields, else serde's message: no
        /// object ``invalid type: …, expected <expecting>``, no tag ``missing field `kind` ``, a
        /// tag of another type ``… expected variant identifier``, another name ``unknown
        /// variant `x`, expected one of …``.
        #[inline(never)]
        pub fn tagged(
            value: Value,
            expecting: &'static str,
            tag: &'static str,
            variants: &'static [&'static str],
        ) -> Result<(usize, Object), Error> {
            let mut rest = match value {
                Value::Object(rest) => rest,
                other => return Err(refuse(&other, &expecting)),
            };
            let name = match rest.remove(tag) {
                Some(Value::String(name)) => name,
                Some(other) => return Err(refuse(&other, &"variant identifier")),
                None => return Err(de::Error::missing_field(tag)),
            };
            let index = index_of(&name, variants)?;
            Ok((index, Object { rest, error: None }))
        }

        /// A newtype variant of an internally tagged enum: its value, read from the fields.
        pub fn rest<T: DeserializeOwned>(self) -> Result<T, Error> {
            T::deserialize(Doc(Value::Object(self.rest)))
        }

        fn kept<T>(&mut self, key: &str, read: Result<T, Error>) -> Option<T> {
            match read {
                Ok(value) => Some(value),
                Err(e) => {
                    self.failed(key, e);
                    None
                }
            }
        }

        /// Keeps the first error, with its key. Not generic, so compiled once.
        #[inline(never)]
        fn failed(&mut self, key: &str, e: Error) {
            if self.error.is_none() {
                self.error = Some((key.to_string(), e));
            }
        }

        /// After every field was taken, why the struct cannot be made, in serde's order: the
        /// first key (in key order) that did not read, or that no field takes where the struct
        /// denies unknown fields (others are ignored); then the first required field missing (by
        /// declaration: `present[i]` for `required[i]`).
        #[inline(never)]
        pub fn finish(
            self,
            deny: bool,
            known: &'static [&'static str],
            present: &[bool],
            required: &'static [&'static str],
        ) -> Result<(), Error> {
            // Fields are taken in key order, so the kept error is the first field that did not
            // read; a key left over is unknown, and named if it comes before that field.
            let unknown = self.rest.keys().next().filter(|_| deny);
            match (unknown, self.error) {
                (Some(key), Some((at, _))) if key < &at => {
                    return Err(de::Error::unknown_field(key, known))
                }
                (_, Some((_, e))) => return Err(e),
                (Some(key), None) => return Err(de::Error::unknown_field(key, known)),
                (None, None) => {}
            }
            match present.iter().position(|p| !p) {
                Some(i) => Err(de::Error::missing_field(required[i])),
                None => Ok(()),
            }
        }
    }

    /// The variant of an enum of unit variants, as serde reads one from a `Value`: its name, or
    /// an object of one field, the name, holding null; the index of the name in `variants`.
    #[inline(never)]
    pub fn unit_variant(value: Value, variants: &'static [&'static str]) -> Result<usize, Error> {
        let (name, payload) = match value {
            Value::String(name) => (name, None),
            Value::Object(fields) if fields.len() == 1 => {
                let (name, payload) = fields.into_iter().next().expect("one field");
                (name, Some(payload))
            }
            Value::Object(_) => {
                return Err(de::Error::invalid_value(
                    de::Unexpected::Map,
                    &"map with a single key",
                ))
            }
            other => return Err(refuse(&other, &"string or map")),
        };
        let index = index_of(&name, variants)?;
        match payload {
            Some(Value::Null) | None => Ok(index),
            Some(other) => Err(refuse(&other, &"unit")),
        }
    }

    fn index_of(name: &str, variants: &'static [&'static str]) -> Result<usize, Error> {
        variants
            .iter()
            .position(|v| *v == name)
            .ok_or_else(|| de::Error::unknown_variant(name, variants))
    }
}

/// `#[derive(Read)]` held to serde's own derive: each type here is declared twice, once read by
/// `Read` and once (in `serdes`, down to the nested types) by serde, with the same attributes
/// (the shapes the core's types use), and every case must read to the same value or fail with
/// the same message from a `Value` (how the core reads), and to the same value or a refusal
/// from text.
#[cfg(test)]
mod read_tests {
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use serde_json::{json, Value};

    use crate::wire::time::{self, Millis};

    /// Declares the test types twice: as written (read by `Read`) and in `serdes` (read by
    /// serde's derive), so the two can never differ in an attribute.
    macro_rules! twice {
        ($($item:item)*) => {
            $(
                #[derive(Clone, Debug, PartialEq, Eq, Serialize, leasehold_derive::Read)]
                $item
            )*
            mod serdes {
                use super::{time, Millis};
                use serde::{Deserialize, Serialize};
                $(
                    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
                    $item
                )*
            }
        };
    }

    twice! {
        pub struct Inner {
            pub n: u32,
        }

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
            #[serde(rename = "other-name")]
            Renamed { r#ref: String },
            #[serde(rename_all = "camelCase")]
            WithTimes {
                #[serde(default)]
                label: String,
                #[serde(with = "time::rfc3339")]
                at_time: Millis,
                #[serde(default, with = "time::rfc3339_opt")]
                until: Option<Millis>,
            },
        }

        #[serde(tag = "kind", rename_all = "camelCase")]
        pub enum Camel {
            NotModified,
            GitRef { sha: String },
        }

        #[serde(rename_all = "kebab-case")]
        pub enum Word {
            FirstOne,
            Second,
            #[serde(rename = "third!")]
            Third,
        }

        #[serde(rename_all = "lowercase")]
        pub enum Lower {
            ClaimRead,
            Other,
        }

        #[serde(rename_all = "camelCase")]
        pub struct Loose {
            pub holder_id: String,
            pub count: u64,
            pub maybe: Option<u32>,
            #[serde(default)]
            pub listed: Vec<Inner>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub defaulted: Option<Word>,
            #[serde(rename = "type", default)]
            pub kind: String,
            #[serde(skip)]
            pub skipped: u8,
            #[serde(with = "time::rfc3339")]
            pub at: Millis,
            #[serde(default, with = "time::rfc3339_opt")]
            pub until: Option<Millis>,
            pub words: std::collections::BTreeMap<String, Word>,
            pub tagged: Option<Tested>,
            #[serde(default)]
            pub lower: Vec<Lower>,
        }

        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct Strict {
            pub a_b: u32,
            #[serde(default)]
            pub c: bool,
            pub inner: Option<Inner>,
            pub required: String,
            #[serde(skip)]
            pub skipped: u8,
        }
    }

    /// `value`, and `value` with one thing changed: each field left out, or each field's value
    /// (at any depth) replaced by one of another type.
    fn variants(value: &Value) -> Vec<Value> {
        let others = [
            json!(null),
            json!(true),
            json!(-1),
            json!(1.5),
            json!("x"),
            json!({}),
            json!([1]),
        ];
        let mut out = vec![value.clone()];
        match value {
            Value::Object(fields) => {
                for (key, inner) in fields {
                    let mut less = fields.clone();
                    less.remove(key);
                    out.push(Value::Object(less));
                    for other in others.iter().chain(variants(inner).iter().skip(1)) {
                        let mut changed = fields.clone();
                        changed.insert(key.clone(), other.clone());
                        out.push(Value::Object(changed));
                    }
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    for other in others.iter().chain(variants(inner).iter().skip(1)) {
                        let mut changed = items.clone();
                        changed[i] = other.clone();
                        out.push(Value::Array(changed));
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// The same value or the same message from a `Value` (the crate's reader), and from text
    /// the same value or a refusal (serde_json's own reader words some refusals its way,
    /// ``expected value`` for an enum given as `true`, and adds a position). Returns whether
    /// the case was refused.
    fn same<Ours, Serdes>(case: &Value) -> bool
    where
        Ours: DeserializeOwned + Serialize + std::fmt::Debug,
        Serdes: DeserializeOwned + Serialize + std::fmt::Debug,
    {
        let ours = super::from_value::<Ours>(case.clone())
            .map(|v| json!(v))
            .map_err(|e| e.to_string());
        let serdes = super::from_value::<Serdes>(case.clone())
            .map(|v| json!(v))
            .map_err(|e| e.to_string());
        assert_eq!(ours, serdes, "from a Value: {case}");
        let text = case.to_string();
        let ours_text = serde_json::from_str::<Ours>(&text)
            .map(|v| json!(v))
            .map_err(|e| e.to_string());
        let serdes_text = serde_json::from_str::<Serdes>(&text)
            .map(|v| json!(v))
            .map_err(|e| e.to_string());
        match (&ours_text, &serdes_text) {
            (Err(_), Err(_)) => {}
            _ => assert_eq!(ours_text, serdes_text, "from text: {text}"),
        }
        ours.is_err()
    }

    fn cases_of<Ours, Serdes>(seeds: &[Value]) -> (usize, usize)
    where
        Ours: DeserializeOwned + Serialize + std::fmt::Debug,
        Serdes: DeserializeOwned + Serialize + std::fmt::Debug,
    {
        let (mut n, mut refused) = (0, 0);
        for seed in seeds {
            for case in variants(seed) {
                // An array where an object is asked for: refused here on purpose (below).
                if case.to_string().contains("[1]") {
                    continue;
                }
                n += 1;
                refused += usize::from(same::<Ours, Serdes>(&case));
            }
        }
        (n, refused)
    }

    fn scalars() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(7),
            json!(-1),
            json!(1.5),
            json!("x"),
            json!({}),
        ]
    }

    #[test]
    fn structs_read_as_serdes_derive() {
        let loose = json!({
            "holderId": "o/r:1:j", "count": 3, "maybe": 4, "listed": [{"n": 1}, {"n": 2}],
            "defaulted": "second", "type": "t", "skipped": 9, "at": "2027-01-15T07:59:00.000Z",
            "until": "2027-01-15T08:00:00Z", "words": {"a": "first-one", "b": "third!"}, "extra": 1,
            "tagged": {"kind": "fields", "firstOne": 1, "inner": {"n": 2}}, "lower": ["claimread", "other"]
        });
        let small = json!({"holderId": "h", "count": 0, "at": "2027-01-15T07:59:00Z", "words": {}});
        let (n, refused) = cases_of::<Loose, serdes::Loose>(&[loose, small]);
        assert!(
            n > 200 && refused > 100 && refused < n,
            "{n} cases, {refused} refused"
        );
        let strict = json!({"aB": 1, "c": true, "inner": {"n": 2}, "required": "r"});
        let (n, refused) = cases_of::<Strict, serdes::Strict>(&[
            strict,
            json!({"aB": 1, "required": "r", "zz": 0}),
            json!({"aB": 1, "a_b": 2, "required": "r"}),
        ]);
        assert!(
            n > 50 && refused > 25 && refused < n,
            "{n} cases, {refused} refused"
        );
        for case in scalars() {
            same::<Loose, serdes::Loose>(&case);
            same::<Strict, serdes::Strict>(&case);
        }
    }

    /// Two faults in one document: serde's derive names the first key it meets, a field that
    /// does not read or an unknown key, and the missing fields after both.
    #[test]
    fn of_several_faults_the_same_is_named() {
        for case in [
            json!({"a": 0, "aB": "x", "required": "r"}),
            json!({"aB": "x", "b": 0, "required": "r"}),
            json!({"aB": 1, "skipped": 3, "required": "r"}),
            json!({"c": "no"}),
            json!({}),
            json!({"zz": 1}),
            json!({"inner": {"n": "x"}, "aB": "y", "required": "r"}),
        ] {
            assert!(same::<Strict, serdes::Strict>(&case), "{case} is refused");
        }
        let ours = super::from_value::<Strict>(json!({"a": 0, "aB": "x", "required": "r"}));
        assert_eq!(
            ours.unwrap_err().to_string(),
            "unknown field `a`, expected one of `aB`, `c`, `inner`, `required`"
        );
    }

    #[test]
    fn unit_enums_read_as_serdes_derive() {
        for case in [
            json!("first-one"),
            json!("second"),
            json!("third!"),
            json!("third"),
            json!("FirstOne"),
            json!({"second": null}),
            json!({"second": 1}),
            json!({"nope": null}),
            json!({}),
            json!({"second": null, "third!": null}),
            json!(["second"]),
            json!(1),
            json!(null),
            json!(true),
        ] {
            same::<Word, serdes::Word>(&case);
        }
        for case in [
            json!("claimread"),
            json!("other"),
            json!("claimRead"),
            json!("claim-read"),
        ] {
            same::<Lower, serdes::Lower>(&case);
        }
    }

    #[test]
    fn internally_tagged_enums_read_as_serdes_derive() {
        let seeds = [
            json!({"kind": "unit"}),
            json!({"kind": "unit", "other": [1, 2]}),
            json!({"kind": "newtype", "n": 3}),
            json!({"kind": "fields", "firstOne": 1, "maybe": "m", "inner": {"n": 2}, "x": 0}),
            json!({"kind": "other-name", "ref": "r"}),
            json!({"kind": "with-times", "label": "l", "atTime": "2027-01-15T07:59:00Z", "until": "2027-01-15T08:00:00Z"}),
            json!({"kind": "bogus", "n": 1}),
            json!({"kind": 0}),
            json!({"n": 1}),
        ];
        let (n, refused) = cases_of::<Tested, serdes::Tested>(&seeds);
        assert!(
            n > 100 && refused > 50 && refused < n,
            "{n} cases, {refused} refused"
        );
        for case in [
            json!({"kind": "notModified"}),
            json!({"kind": "gitRef", "sha": "s"}),
            json!({"kind": "git-ref", "sha": "s"}),
            json!({"kind": "gitRef"}),
        ] {
            same::<Camel, serdes::Camel>(&case);
        }
        for case in scalars() {
            same::<Tested, serdes::Tested>(&case);
        }
    }

    /// The one difference on purpose: no struct, variant or enum given as an array of its
    /// fields, which serde's derive would take.
    #[test]
    fn refuses_arrays_that_serdes_derive_takes() {
        for (case, message) in [
            (
                json!(["unit"]),
                "invalid type: sequence, expected internally tagged enum Tested",
            ),
            (
                json!(["fields", 1, null, {"n": 2}]),
                "invalid type: sequence, expected internally tagged enum Tested",
            ),
            (
                json!({"kind": "fields", "firstOne": 1, "inner": [2]}),
                "invalid type: sequence, expected struct Inner",
            ),
            (
                json!({"kind": "newtype", "n": [3]}),
                "invalid type: sequence, expected u32",
            ),
        ] {
            let ours = super::from_value::<Tested>(case.clone()).map_err(|e| e.to_string());
            assert_eq!(ours.unwrap_err(), message, "{case}");
            let from_text =
                serde_json::from_str::<Tested>(&case.to_string()).map_err(|e| e.to_string());
            assert_eq!(from_text.unwrap_err(), message, "{case}");
        }
        let serdes = serde_json::from_str::<serdes::Inner>("[2]").map(|i| i.n);
        assert_eq!(
            serdes.unwrap(),
            2,
            "serde's derive takes a struct as an array from text"
        );
        let ours = serde_json::from_str::<Inner>("[2]")
            .unwrap_err()
            .to_string();
        assert_eq!(ours, "invalid type: sequence, expected struct Inner");
    }
}
