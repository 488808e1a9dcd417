//! Reading a document back into the types that wrote it.
//!
//! JSON has no NaN, so the writer prints a float that is not finite as `null` (a rate over a
//! zero-length interval, a fit with too few points). A plain `Deserialize` would refuse that
//! `null` where the type has an `f64`; [`from_str`] reads it back as NaN, so that everything a
//! document holds decodes into the same struct that serialized it, and a field renamed on one
//! side breaks the round-trip tests instead of a reader's string path at run time.

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::{Map, Value};

/// Decodes a document (or any part of one) written by wirespeed, `null` floats as NaN.
pub fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    from_value(serde_json::from_str(text)?)
}

/// [`from_str`] for a parsed value.
pub fn from_value<T: DeserializeOwned>(value: Value) -> serde_json::Result<T> {
    T::deserialize(Lenient(value))
}

/// A JSON value whose `null`s read as NaN where a float is expected.
struct Lenient(Value);

impl<'de> Deserializer<'de> for Lenient {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Seq(items.into_iter())),
            Value::Object(map) => visitor.visit_map(Fields {
                iter: map.into_iter(),
                value: None,
            }),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_f64(f64::NAN),
            other => other.deserialize_f64(visitor),
        }
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_f32(f32::NAN),
            other => other.deserialize_f32(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Lenient(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        // Externally tagged enums: a unit variant is a string; the others hold no floats that
        // can be NaN in wirespeed's documents, so the value's own reader does.
        self.0.deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Seq(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Seq {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Lenient(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Fields {
    iter: <Map<String, Value> as IntoIterator>::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Fields {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        match self.iter.next() {
            Some((key, value)) => {
                self.value = Some(value);
                let key: de::value::StringDeserializer<serde_json::Error> = key.into_deserializer();
                seed.deserialize(key).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value without its key"))?;
        seed.deserialize(Lenient(value))
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::{Document, to_json};

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Inner {
        rate_bits_per_second: f64,
        note: Option<String>,
    }

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Tcp,
        Udp,
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Outer {
        kind: Kind,
        rows: Vec<Inner>,
        best: Option<f64>,
        count: u64,
    }

    #[test]
    fn a_document_reads_back_into_its_own_types_with_nan_for_null() {
        let doc = Document::new(
            "test",
            (),
            Outer {
                kind: Kind::Udp,
                rows: vec![
                    Inner {
                        rate_bits_per_second: f64::NAN,
                        note: None,
                    },
                    Inner {
                        rate_bits_per_second: 2.5,
                        note: Some("x".into()),
                    },
                ],
                best: None,
                count: 7,
            },
        );
        let text = to_json(&doc).unwrap();
        assert!(text.contains("\"rate_bits_per_second\": null"));
        let back: Document<(), Outer> = from_str(&text).unwrap();
        assert_eq!(back.schema, "wirespeed.test.v1");
        assert!(back.result.rows[0].rate_bits_per_second.is_nan());
        assert_eq!(back.result.rows[1], doc.result.rows[1]);
        assert_eq!(back.result.kind, Kind::Udp);
        assert_eq!((back.result.best, back.result.count), (None, 7));
        assert_eq!(back.host, doc.host);
    }

    #[test]
    fn a_wrong_type_is_still_an_error_naming_the_field() {
        let err = from_str::<Inner>(r#"{"rate_bits_per_second": "fast", "note": null}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("invalid type"), "{err}");
        assert!(from_str::<Inner>(r#"{"note": null}"#).is_err());
    }
}
