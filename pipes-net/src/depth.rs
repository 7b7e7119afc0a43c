//! Decoding what a peer sent, with a limit on how deep it nests: [`take`], the one place
//! pipes-net decodes postcard, and the serde `Deserializer` adapter behind it.
//!
//! Postcard has no recursion limit, and a payload's `Deserialize` recurses once per level of
//! nesting: a peer's payload of a recursive type (a tree, a boxed list) nested a million deep is
//! one byte a level in postcard, well under any frame maximum, yet overflows the decoding
//! thread's stack, which aborts the whole process (no `catch_unwind` stops that). So every
//! decode goes through [`Deep`], which counts the levels it enters and fails with a serde error
//! past [`MAX_DEPTH`] before recursing further; the caller reports it as any payload that does
//! not decode (a violation, for a session).
//!
//! A level is each value that holds others: a sequence, tuple or struct (postcard gives all
//! three as a sequence), a map, an enum's variant, an option's `Some`, a newtype struct. The
//! count travels by value in the wrappers (the deserializer, its visitors, their accessors and
//! seeds), each nested deserializer one deeper than its parent; nothing is undone on the way
//! out.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};

/// How deep a decoded value may nest. serde_json's default, for the same reason: deep enough
/// for any message a protocol means to carry, and shallow enough that decoding it stays far
/// within a thread's stack (tokio's workers have 2 MiB; each level costs a few frames of the
/// payload's `Deserialize` and postcard's). A peer that nests deeper is refused, not obeyed.
pub(crate) const MAX_DEPTH: usize = 128;

/// Why bytes did not decode.
#[derive(Debug)]
pub(crate) enum DecodeError {
    /// The value nests deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Postcard's own error (the bytes are not a value of the type).
    Postcard(postcard::Error),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TooDeep => write!(f, "it nests more than {MAX_DEPTH} levels deep"),
            DecodeError::Postcard(error) => error.fmt(f),
        }
    }
}

/// Decodes a `T` from the front of `bytes` in postcard, as `postcard::take_from_bytes` does,
/// returning the rest; a value that nests deeper than [`MAX_DEPTH`] is an error.
pub(crate) fn take<'de, T: de::Deserialize<'de>>(
    bytes: &'de [u8],
) -> Result<(T, &'de [u8]), DecodeError> {
    // Postcard's errors carry no text of ours (its `custom` drops the message), so the
    // adapter marks here that it was the limit that failed the decode.
    let too_deep = Cell::new(false);
    let mut postcard = postcard::Deserializer::from_bytes(bytes);
    let deep = Deep {
        inner: &mut postcard,
        depth: Depth {
            level: 0,
            too_deep: &too_deep,
        },
    };
    match T::deserialize(deep) {
        Ok(value) => Ok((value, postcard.finalize().map_err(DecodeError::Postcard)?)),
        Err(_) if too_deep.get() => Err(DecodeError::TooDeep),
        Err(error) => Err(DecodeError::Postcard(error)),
    }
}

/// How deep the value being decoded is, and where to mark that it went too deep.
#[derive(Clone, Copy)]
struct Depth<'a> {
    level: usize,
    too_deep: &'a Cell<bool>,
}

impl Depth<'_> {
    /// One level deeper, for what a value holds; an error past [`MAX_DEPTH`].
    fn enter<E: de::Error>(self) -> Result<Self, E> {
        if self.level >= MAX_DEPTH {
            self.too_deep.set(true);
            return Err(E::custom(format_args!(
                "the value nests more than {MAX_DEPTH} levels deep"
            )));
        }
        Ok(Depth {
            level: self.level + 1,
            ..self
        })
    }
}

/// A deserializer whose values are `depth` deep: it hands every visitor over wrapped, so that
/// the visitor's nested values are counted.
struct Deep<'a, D> {
    inner: D,
    depth: Depth<'a>,
}

/// A visitor at some depth: what holds other values is entered (counted) before the inner
/// visitor sees it; scalars pass straight through.
struct Visit<'a, V> {
    inner: V,
    depth: Depth<'a>,
}

/// An accessor (of a sequence, map, enum or variant) whose elements are `depth` deep.
struct Access<'a, A> {
    inner: A,
    depth: Depth<'a>,
}

/// A seed whose value is `depth` deep.
struct Seed<'a, S> {
    inner: S,
    depth: Depth<'a>,
}

impl<'a, V> Visit<'a, V> {
    fn new(inner: V, depth: Depth<'a>) -> Self {
        Visit { inner, depth }
    }
}

/// `deserialize_*` methods taking only a visitor: the inner deserializer's, with the visitor
/// wrapped.
macro_rules! forward_deserialize {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.inner.$method(Visit::new(visitor, self.depth))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Deep<'_, D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit
        deserialize_seq deserialize_map deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// `visit_*` methods of scalars: the inner visitor's, unchanged.
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: de::Error>(self, value: $ty) -> Result<Self::Value, E> {
            self.inner.$method(value)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Visit<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit! {
        visit_bool(bool)
        visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64) visit_i128(i128)
        visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64) visit_u128(u128)
        visit_f32(f32) visit_f64(f64) visit_char(char)
        visit_str(&str) visit_borrowed_str(&'de str) visit_string(String)
        visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        let depth = self.depth.enter()?;
        self.inner.visit_some(Deep { inner, depth })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        let depth = self.depth.enter()?;
        self.inner.visit_newtype_struct(Deep { inner, depth })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, inner: A) -> Result<Self::Value, A::Error> {
        let depth = self.depth.enter()?;
        self.inner.visit_seq(Access { inner, depth })
    }

    fn visit_map<A: MapAccess<'de>>(self, inner: A) -> Result<Self::Value, A::Error> {
        let depth = self.depth.enter()?;
        self.inner.visit_map(Access { inner, depth })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, inner: A) -> Result<Self::Value, A::Error> {
        let depth = self.depth.enter()?;
        self.inner.visit_enum(Access { inner, depth })
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Access<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        let seed = Seed {
            inner: seed,
            depth: self.depth,
        };
        self.inner.next_element_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Access<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let seed = Seed {
            inner: seed,
            depth: self.depth,
        };
        self.inner.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        let seed = Seed {
            inner: seed,
            depth: self.depth,
        };
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'a, 'de, A: EnumAccess<'de>> EnumAccess<'de> for Access<'a, A> {
    type Error = A::Error;
    type Variant = Access<'a, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), Self::Error> {
        let depth = self.depth;
        let seed = Seed { inner: seed, depth };
        let (tag, inner) = self.inner.variant_seed(seed)?;
        Ok((tag, Access { inner, depth }))
    }
}

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for Access<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        let seed = Seed {
            inner: seed,
            depth: self.depth,
        };
        self.inner.newtype_variant_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.tuple_variant(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = Visit::new(visitor, self.depth);
        self.inner.struct_variant(fields, visitor)
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
        self.inner.deserialize(Deep {
            inner,
            depth: self.depth,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Serialize};

    use super::*;

    /// A recursive type: each `More` is one level (its enum variant).
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Nest {
        End,
        More(Box<Nest>),
    }

    /// `levels` levels of `Nest`, in postcard: variant 1 for each `More`, then 0 for `End`
    /// (itself a level).
    fn nested(levels: usize) -> Vec<u8> {
        let mut bytes = vec![1u8; levels - 1];
        bytes.push(0);
        bytes
    }

    #[test]
    fn a_value_nested_to_the_limit_decodes() {
        let bytes = nested(MAX_DEPTH);
        let (nest, rest) = take::<Nest>(&bytes).unwrap();
        assert!(rest.is_empty());
        let mut levels = 1;
        let mut at = &nest;
        while let Nest::More(next) = at {
            levels += 1;
            at = next;
        }
        assert_eq!(levels, MAX_DEPTH);
    }

    #[test]
    fn a_value_nested_past_the_limit_is_an_error() {
        let error = take::<Nest>(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert!(matches!(error, DecodeError::TooDeep), "{error}");
        assert_eq!(error.to_string(), "it nests more than 128 levels deep");
    }

    #[test]
    fn a_million_levels_is_an_error_not_a_stack_overflow() {
        let error = take::<Nest>(&nested(1 << 20)).unwrap_err();
        assert!(matches!(error, DecodeError::TooDeep), "{error}");
    }

    #[test]
    fn options_sequences_and_newtypes_count_as_levels() {
        #[derive(Debug, Serialize, Deserialize)]
        struct Wrap(Option<Vec<Nest>>);
        // `Wrap`, `Some`, the `Vec`: three levels above the nest.
        let fits = Wrap(Some(vec![take::<Nest>(&nested(MAX_DEPTH - 3)).unwrap().0]));
        let bytes = postcard::to_allocvec(&fits).unwrap();
        assert!(take::<Wrap>(&bytes).is_ok());
        let mut deeper = postcard::to_allocvec(&Wrap(Some(vec![Nest::End]))).unwrap();
        deeper.pop();
        deeper.extend(nested(MAX_DEPTH - 2));
        assert!(matches!(
            take::<Wrap>(&deeper).unwrap_err(),
            DecodeError::TooDeep
        ));
    }

    #[test]
    fn ordinary_values_round_trip() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        enum Shape {
            Unit,
            Tuple(u8, i64),
            Struct {
                name: String,
                tags: Vec<Option<char>>,
            },
        }
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Message {
            id: u128,
            ratio: f64,
            bytes: Vec<u8>,
            shapes: Vec<Shape>,
            index: BTreeMap<String, (bool, Option<u16>)>,
            unit: (),
            newtype: Wrapper,
        }
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Wrapper(i32);
        let message = Message {
            id: u128::MAX - 7,
            ratio: -1.5,
            bytes: vec![0, 1, 255],
            shapes: vec![
                Shape::Unit,
                Shape::Tuple(3, -9),
                Shape::Struct {
                    name: "ann".into(),
                    tags: vec![Some('é'), None],
                },
            ],
            index: BTreeMap::from([("a".into(), (true, None)), ("b".into(), (false, Some(4)))]),
            unit: (),
            newtype: Wrapper(-1),
        };
        let mut bytes = postcard::to_allocvec(&message).unwrap();
        bytes.extend([7, 8]);
        let (back, rest) = take::<Message>(&bytes).unwrap();
        assert_eq!(back, message);
        assert_eq!(rest, [7, 8]);
        // A borrowed string decodes from the bytes themselves.
        let bytes = postcard::to_allocvec("borrowed").unwrap();
        let (text, _) = take::<&str>(&bytes).unwrap();
        assert_eq!(text, "borrowed");
    }

    #[test]
    fn bytes_that_are_not_the_type_are_postcards_error() {
        let error = take::<(u8, String)>(&[1]).unwrap_err();
        assert!(matches!(error, DecodeError::Postcard(_)), "{error}");
    }
}
