use super::*;
use proptest::prelude::*;
use serde_json::json;

/// What a decoding run gave: each message, or each error as its text.
type Outcome = Vec<Result<Message, DecodeError>>;

/// Drains the decoder, stopping after a terminal error.
fn drain(decoder: &mut LineDecoder, out: &mut Outcome) -> bool {
    loop {
        match decoder.poll_message() {
            Ok(Some(message)) => out.push(Ok(message)),
            Ok(None) => return true,
            Err(error @ DecodeError::Malformed(_)) => out.push(Err(error)),
            Err(error) => {
                assert_eq!(decoder.poll_message(), Err(error.clone()), "not sticky");
                out.push(Err(error));
                return false;
            }
        }
    }
}

fn decode_pieces(limit: usize, pieces: &[&[u8]]) -> Outcome {
    let mut decoder = LineDecoder::with_max_message_size(limit);
    let mut out = Vec::new();
    for piece in pieces {
        decoder.feed(piece);
        if !drain(&mut decoder, &mut out) {
            return out;
        }
        assert!(
            decoder.buffered_len() <= limit + 1,
            "held more than the limit and a CR"
        );
    }
    decoder.feed_eof();
    drain(&mut decoder, &mut out);
    out
}

/// Decodes `input` whole, byte by byte and in two halves at every cut, all alike.
fn decode(limit: usize, input: &[u8]) -> Outcome {
    let whole = decode_pieces(limit, &[input]);
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(decode_pieces(limit, &bytes), whole, "byte by byte differs");
    for cut in 0..=input.len() {
        let (a, b) = input.split_at(cut);
        assert_eq!(decode_pieces(limit, &[a, b]), whole, "cut at {cut} differs");
    }
    whole
}

fn request(id: i64, method: &str, params: Option<Value>) -> Message {
    Message::Request {
        id: RequestId::Number(id),
        method: method.into(),
        params,
    }
}

fn malformed(reason: &'static str) -> impl Fn(&Result<Message, DecodeError>) -> bool {
    move |r| matches!(r, Err(DecodeError::Malformed(e)) if e.reason == reason)
}

#[test]
fn vectors() {
    let ok = |m: Message| vec![Ok(m)];
    let table: Vec<(&str, Outcome)> = vec![
        (
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            ok(request(1, "ping", None)),
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"x\":[1]}}\r\n",
            ok(Message::Response {
                id: RequestId::String("a".into()),
                result: json!({"x": [1]}),
            }),
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"p\":1}}",
            ok(Message::Notification {
                method: "notifications/progress".into(),
                params: Some(json!({"p": 1})),
            }),
        ),
        (
            "\n  \n{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"bad\"}}\n\n",
            ok(Message::Error {
                id: None,
                error: ErrorObject {
                    code: PARSE_ERROR,
                    message: "bad".into(),
                    data: None,
                },
            }),
        ),
        (
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"b\",\"params\":[]}]\n",
            vec![
                Ok(request(1, "a", None)),
                Ok(Message::Notification {
                    method: "b".into(),
                    params: Some(json!([])),
                }),
            ],
        ),
        ("", vec![]),
        ("\r\n\n", vec![]),
    ];
    for (input, expected) in table {
        assert_eq!(decode(1024, input.as_bytes()), expected, "{input:?}");
    }
}

#[test]
fn malformed_lines_are_skipped_and_named() {
    let cases: [(&str, &str); 14] = [
        ("not json", "not valid JSON"),
        ("{\"jsonrpc\":\"2.0\",\"id\":1", "not valid JSON"),
        ("42", "not a JSON object"),
        ("[]", "an empty batch"),
        ("{\"id\":1,\"result\":{}}", "\"jsonrpc\" is not \"2.0\""),
        (
            "{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}",
            "\"jsonrpc\" is not \"2.0\"",
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"result\":{}}",
            "\"id\" is neither a string nor an integer",
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"m\"}",
            "\"id\" is neither a string nor an integer",
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"method\":7}",
            "\"method\" is not a string",
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":3}",
            "\"params\" is neither an object nor an array",
        ),
        ("{\"jsonrpc\":\"2.0\"}", "neither \"method\" nor \"id\""),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":1}",
            "neither \"result\" nor \"error\"",
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{}}",
            "both \"result\" and \"error\"",
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"x\",\"message\":\"m\"}}",
            "\"error.code\" is not an integer",
        ),
    ];
    for (line, reason) in cases {
        // The bad line is reported, and the good one after it still arrives.
        let input = format!("{line}\n{{\"jsonrpc\":\"2.0\",\"method\":\"after\"}}\n");
        let out = decode(1024, input.as_bytes());
        assert_eq!(out.len(), 2, "{line}");
        assert!(malformed(reason)(&out[0]), "{line}: {:?}", out[0]);
        assert_eq!(
            out[1],
            Ok(Message::Notification {
                method: "after".into(),
                params: None
            })
        );
    }
    let null_result = decode(100, b"{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}");
    assert!(malformed("a result with a null \"id\"")(&null_result[0]));
}

#[test]
fn a_huge_message_is_a_terminal_error() {
    let mut input = b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n".to_vec();
    input.extend_from_slice(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"{}\"}}\n",
            "x".repeat(100)
        )
        .as_bytes(),
    );
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n");
    let out = decode(64, &input);
    assert_eq!(out.len(), 2);
    assert!(out[0].is_ok());
    assert_eq!(out[1], Err(DecodeError::TooLarge { limit: 64 }));
    // A line that never ends is caught as soon as it crosses the limit, not at its end.
    let mut decoder = LineDecoder::with_max_message_size(64);
    decoder.feed(&[b'x'; 65]);
    assert_eq!(
        decoder.poll_message(),
        Err(DecodeError::TooLarge { limit: 64 })
    );
    assert_eq!(decoder.buffered_len(), 0, "the oversized line is released");
    decoder.feed(b"{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n");
    assert_eq!(
        decoder.poll_message(),
        Err(DecodeError::TooLarge { limit: 64 })
    );
    // Exactly at the limit is fine, the line end not counted.
    let line = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{}\"}}", "y".repeat(30));
    let out = decode(line.len(), format!("{line}\r\n").as_bytes());
    assert!(matches!(&out[..], [Ok(_)]), "{out:?}");
}

#[test]
fn input_after_the_end_is_ignored() {
    let mut decoder = LineDecoder::new();
    decoder.feed_eof();
    decoder.feed(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
    assert_eq!(decoder.poll_message(), Ok(None));
}

#[test]
fn written_messages_read_back() {
    let messages = [
        request(7, "tools/call", Some(json!({"name": "a\nb"}))),
        Message::Notification {
            method: "n".into(),
            params: None,
        },
        Message::Response {
            id: RequestId::String("s".into()),
            result: json!(null),
        },
        Message::Error {
            id: Some(RequestId::Number(-1)),
            error: ErrorObject {
                code: METHOD_NOT_FOUND,
                message: "no".into(),
                data: Some(json!({"k": 1})),
            },
        },
    ];
    let mut stream = Vec::new();
    for message in &messages {
        let bytes = message.to_bytes();
        assert!(!bytes.contains(&b'\n'));
        stream.extend_from_slice(&bytes);
        stream.push(b'\n');
    }
    let out = decode(1024, &stream);
    let expected: Outcome = messages.iter().cloned().map(Ok).collect();
    assert_eq!(out, expected);
}

proptest! {
    #[test]
    fn any_split_gives_the_same_messages(
        lines in proptest::collection::vec(
            prop_oneof![
                Just("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"é\"}}".to_owned()),
                Just("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}".to_owned()),
                Just("garbage ü".to_owned()),
                Just(String::new()),
                "[ -~]{0,40}",
            ],
            0..8,
        ),
        crlf in any::<bool>(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let end = if crlf { "\r\n" } else { "\n" };
        let input: String = lines.iter().map(|l| format!("{l}{end}")).collect();
        let input = input.as_bytes();
        let whole = decode_pieces(48, &[input]);
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
        points.sort_unstable();
        let mut pieces = Vec::new();
        let mut last = 0;
        for p in points {
            pieces.push(&input[last..p]);
            last = p;
        }
        pieces.push(&input[last..]);
        prop_assert_eq!(decode_pieces(48, &pieces), whole);
    }
}
