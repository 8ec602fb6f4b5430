//! [`DeltaText`]: the text of one streamed delta, kept inline when short.
//!
//! A delta is usually one token of a few bytes, and a stream brings hundreds of thousands of
//! them: an owned `String` each cost an allocation and a free per delta (about a sixth of the
//! decode path's instructions, measured in `BENCHMARKS.md`). Text of up to 23 bytes lives in
//! the value itself (a [`SmolStr`], which reads as a `&str` without checking its UTF-8 again:
//! that check cost every reader about 86 instructions per delta), and the value is no larger
//! than a `String`; longer text (and text that already is an owned `String`) keeps its heap
//! buffer.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smol_str::SmolStr;
use std::fmt;
use std::ops::Deref;

/// The most bytes kept inline: the value is as large as a `String` (24 bytes).
const INLINE: usize = 23;

/// The text of a streamed delta; reads as a `&str` (it derefs to one), compares with strings,
/// and serialises as a JSON string.
#[derive(Clone)]
pub struct DeltaText(Repr);

#[derive(Clone)]
enum Repr {
    /// At most [`INLINE`] bytes, in the value.
    Inline(SmolStr),
    Heap(Box<str>),
}

impl DeltaText {
    /// An empty text.
    pub const fn new() -> Self {
        DeltaText(Repr::Inline(SmolStr::new_inline("")))
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline(text) => text.as_str(),
            Repr::Heap(text) => text,
        }
    }

    /// The length in bytes, read without looking at the text.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Inline(text) => text.len(),
            Repr::Heap(text) => text.len(),
        }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text as an owned `String` (no copy when it is on the heap already).
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Inline(text) => text.as_str().to_owned(),
            Repr::Heap(text) => text.into_string(),
        }
    }
}

impl Default for DeltaText {
    fn default() -> Self {
        Self::new()
    }
}

impl From<&str> for DeltaText {
    #[inline]
    fn from(text: &str) -> Self {
        if text.len() <= INLINE {
            DeltaText(Repr::Inline(SmolStr::new_inline(text)))
        } else {
            DeltaText(Repr::Heap(text.into()))
        }
    }
}

impl From<String> for DeltaText {
    fn from(text: String) -> Self {
        if text.len() <= INLINE {
            DeltaText::from(text.as_str())
        } else {
            DeltaText(Repr::Heap(text.into_boxed_str()))
        }
    }
}

impl From<std::borrow::Cow<'_, str>> for DeltaText {
    fn from(text: std::borrow::Cow<'_, str>) -> Self {
        match text {
            std::borrow::Cow::Borrowed(text) => text.into(),
            std::borrow::Cow::Owned(text) => text.into(),
        }
    }
}

impl From<DeltaText> for String {
    fn from(text: DeltaText) -> Self {
        text.into_string()
    }
}

impl Deref for DeltaText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for DeltaText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for DeltaText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for DeltaText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl PartialEq for DeltaText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for DeltaText {}

impl std::hash::Hash for DeltaText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for DeltaText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for DeltaText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for DeltaText {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<DeltaText> for str {
    fn eq(&self, other: &DeltaText) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<DeltaText> for &str {
    fn eq(&self, other: &DeltaText) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<DeltaText> for String {
    fn eq(&self, other: &DeltaText) -> bool {
        self == other.as_str()
    }
}

impl Serialize for DeltaText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for DeltaText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_string(TextVisitor)
    }
}

/// Takes short text from the input without an allocation, and a `String` as it is.
struct TextVisitor;

impl serde::de::Visitor<'_> for TextVisitor {
    type Value = DeltaText;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<DeltaText, E> {
        Ok(text.into())
    }

    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<DeltaText, E> {
        Ok(text.into())
    }
}

#[cfg(test)]
mod tests;
