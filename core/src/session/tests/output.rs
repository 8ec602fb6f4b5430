//! A turn under an output schema: `response_format` sent (or the schema in the prompt once the
//! provider refused it), the answer read, one more ask with the errors, then a failure.

use super::*;
use std::sync::Arc;

/// An answer must be an object with an integer `n`.
#[derive(Debug)]
struct NeedsN;

impl OutputCheck for NeedsN {
    fn errors(&self, value: &Value) -> Vec<String> {
        if value.get("n").is_some_and(Value::is_i64) {
            Vec::new()
        } else {
            vec!["/n: required integer".to_owned()]
        }
    }
}

fn with_schema() -> H {
    let mut c = config(ApprovalPolicy::Auto);
    c.output = Some(OutputSchema::new(
        json!({"type": "object", "required": ["n"]}),
        Arc::new(NeedsN),
    ));
    H::new(c)
}

fn body_json(h: &H, n: usize) -> Value {
    serde_json::from_slice(&h.sent[n].body).unwrap()
}

#[test]
fn a_matching_answer_finishes_with_its_value_and_response_format_was_sent() {
    let mut h = with_schema();
    h.submit("count");
    let body = body_json(&h, 0);
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["name"], SCHEMA_NAME);
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["required"],
        json!(["n"])
    );
    assert!(
        !body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("JSON Schema"),
        "no instruction when response_format goes out"
    );
    h.sse(&text_answer("{\"n\": 3}"));
    assert_eq!(h.sent.len(), 1);
    match h.events.last().unwrap() {
        Event::TurnFinished { output, .. } => {
            assert_eq!(output.as_deref(), Some(&json!({"n": 3})))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_miss_is_told_once_then_a_second_miss_fails_the_turn() {
    let mut h = with_schema();
    h.submit("count");
    h.sse(&text_answer("three"));
    assert_eq!(h.sent.len(), 2, "asked once more");
    let retry = body_json(&h, 1);
    let messages = retry["messages"].as_array().unwrap();
    let told = messages.last().unwrap();
    assert_eq!(told["role"], "user");
    let told = told["content"].as_str().unwrap();
    assert!(told.contains("the answer is not JSON"), "{told}");
    assert!(retry["response_format"].is_object());
    h.sse(&text_answer("{\"n\": \"x\"}"));
    assert_eq!(h.sent.len(), 2, "asked once only");
    match h.events.last().unwrap() {
        Event::TurnFailed {
            error: TurnError::OutputSchemaUnmet { errors },
        } => assert_eq!(errors, &["/n: required integer"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_miss_then_a_match_finishes() {
    let mut h = with_schema();
    h.submit("count");
    h.sse(&text_answer("{}"));
    let told = body_json(&h, 1)["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(told.contains("- /n: required integer"), "{told}");
    h.sse(&text_answer("```json\n{\"n\": 1}\n```"));
    match h.events.last().unwrap() {
        Event::TurnFinished { output, .. } => {
            assert_eq!(output.as_deref(), Some(&json!({"n": 1})))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn at_the_step_limit_a_miss_fails_at_once() {
    let mut c = with_schema().s.config().clone();
    c.max_steps = 1;
    let mut h = H::new(c);
    h.submit("count");
    h.sse(&text_answer("no"));
    assert_eq!(h.sent.len(), 1);
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFailed {
            error: TurnError::OutputSchemaUnmet { .. }
        })
    ));
}

#[test]
fn a_refused_response_format_is_learned_and_the_schema_goes_into_the_prompt() {
    let mut h = with_schema();
    h.submit("count");
    h.status(
        400,
        &[("content-type", "application/json")],
        r#"{"error":{"message":"response_format json_schema is not supported by this server"}}"#,
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::OptionDropped { field, .. } if field == "response_format"))
    );
    assert_eq!(h.sent.len(), 2);
    let again = body_json(&h, 1);
    assert!(again.get("response_format").is_none());
    let system = again["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You are hrns."), "{system}");
    assert!(
        system.contains("JSON Schema") && system.contains("\"required\":[\"n\"]"),
        "{system}"
    );
    h.sse(&text_answer("{\"n\": 2}"));
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFinished {
            output: Some(_),
            ..
        })
    ));
}

#[test]
fn without_a_schema_a_400_naming_a_schema_teaches_nothing() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("hi");
    assert!(body_json(&h, 0).get("response_format").is_none());
    h.status(
        400,
        &[("content-type", "application/json")],
        r#"{"error":{"message":"invalid json_schema in tools[0]"}}"#,
    );
    assert_eq!(h.sent.len(), 1);
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFailed {
            error: TurnError::Api { status: 400, .. }
        })
    ));
}
