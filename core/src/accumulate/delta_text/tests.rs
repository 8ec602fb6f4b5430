//! Tests of [`DeltaText`]: inline and heap text read, compare and serialise alike.

use super::*;
use proptest::prelude::*;

#[test]
fn is_no_larger_than_a_string() {
    assert!(std::mem::size_of::<DeltaText>() <= std::mem::size_of::<String>());
}

#[test]
fn short_text_is_inline_and_long_text_on_the_heap() {
    let at_limit = format!("{}a", "é".repeat(11));
    assert_eq!(at_limit.len(), INLINE);
    for (text, inline) in [
        ("", true),
        ("a", true),
        (at_limit.as_str(), true),
        ("x".repeat(INLINE + 1).as_str(), false),
    ] {
        for t in [DeltaText::from(text), DeltaText::from(text.to_owned())] {
            assert_eq!(matches!(t.0, Repr::Inline(_)), inline, "{text:?}");
            assert_eq!(t.as_str(), text);
            assert_eq!(&*t, text);
            assert_eq!(t.len(), text.len());
            assert_eq!(t.clone().into_string(), text);
        }
    }
    assert_eq!(DeltaText::default(), "");
}

#[test]
fn compares_and_formats_as_its_text() {
    let t = DeltaText::from("a \"b\"");
    assert_eq!(t, "a \"b\"");
    assert_eq!("a \"b\"", t);
    assert_eq!(t, String::from("a \"b\""));
    assert_eq!(String::from("a \"b\""), t);
    assert_ne!(t, "a");
    assert_eq!(format!("{t}"), "a \"b\"");
    assert_eq!(format!("{t:?}"), format!("{:?}", "a \"b\""));
    let long = "y".repeat(100);
    assert_eq!(
        DeltaText::from(long.as_str()),
        DeltaText::from(long.clone())
    );
    assert_ne!(DeltaText::from(long.as_str()), DeltaText::from("y"));
}

#[test]
fn an_owned_cow_keeps_its_buffer_when_long() {
    let long = "z".repeat(64);
    let ptr = long.as_ptr();
    let t = DeltaText::from(std::borrow::Cow::<str>::Owned(long));
    let back = t.into_string();
    assert_eq!(back.as_ptr(), ptr);
}

proptest! {
    #![proptest_config(crate::proptest_seeds::config())]
    #[test]
    fn round_trips_through_json(text in ".{0,40}") {
        let t = DeltaText::from(text.as_str());
        let json = serde_json::to_string(&t).unwrap();
        prop_assert_eq!(&json, &serde_json::to_string(&text).unwrap());
        let back: DeltaText = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back.as_str(), text.as_str());
        let from_value: DeltaText = serde_json::from_value(serde_json::Value::String(text.clone())).unwrap();
        prop_assert_eq!(from_value, t);
    }
}

#[test]
fn a_non_string_is_refused() {
    assert!(serde_json::from_str::<DeltaText>("12").is_err());
}
