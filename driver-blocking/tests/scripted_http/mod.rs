//! A scripted MCP server over HTTP/1.1 on loopback for the driver's tests: each connection is
//! served on a thread of its own (one held open must not stop the others), each request
//! handed to the test's script with its head, and what was asked kept in order.

#![allow(dead_code)] // each test file uses a part

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// Reads one HTTP/1.1 request: its head (lower-cased) and its JSON body.
pub(crate) fn read_request(stream: &mut TcpStream) -> Option<(String, Value)> {
    let (head, body) = read_raw_request(stream)?;
    Some((head, serde_json::from_slice(&body).ok()?))
}

/// Reads one HTTP/1.1 request: its head (lower-cased) and its body as sent (empty for a GET).
pub(crate) fn read_raw_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut data = Vec::new();
    let mut byte = [0u8; 1];
    while !data.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        data.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&data).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    Some((head, body))
}

/// What the script answers one request with.
pub(crate) enum Answer {
    /// `200 OK` with this JSON body.
    Json(Value),
    /// `202 Accepted`, no body.
    Accepted,
    /// This status line and body, as they are.
    Status(&'static str, String),
    /// Nothing at all: the connection is held open, unanswered, until the client closes it.
    Silence,
}

/// The answer to `initialize` (version 2025-06-18, tools offered).
pub(crate) fn initialized(id: &Value) -> Answer {
    Answer::Json(json!({"jsonrpc": "2.0", "id": id, "result":
        {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}}))
}

/// A `tools/list` answer with one tool `work`.
pub(crate) fn one_tool(id: &Value) -> Answer {
    Answer::Json(json!({"jsonrpc": "2.0", "id": id, "result":
        {"tools": [{"name": "work", "inputSchema": {"type": "object"}}]}}))
}

/// A `tools/call` answer with one text.
pub(crate) fn text_result(id: &Value, text: &str) -> Answer {
    Answer::Json(json!({"jsonrpc": "2.0", "id": id, "result":
        {"content": [{"type": "text", "text": text}]}}))
}

/// A running scripted server.
pub(crate) struct Scripted {
    /// Its port on 127.0.0.1.
    pub(crate) port: u16,
    /// Every request's head and body, in arrival order.
    pub(crate) seen: Arc<Mutex<Vec<(String, Value)>>>,
    /// How many connections the client has closed.
    pub(crate) closed: Arc<Mutex<usize>>,
}

impl Scripted {
    /// The URL of its endpoint.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The methods asked so far, in order.
    pub(crate) fn methods(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .map(|(_, b)| b["method"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// Serves `script(head, body, nth request overall)` on a free port.
pub(crate) fn serve(
    script: impl Fn(&str, &Value, usize) -> Answer + Send + Sync + 'static,
) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let closed: Arc<Mutex<usize>> = Arc::default();
    let script = Arc::new(script);
    let (all, ended) = (Arc::clone(&seen), Arc::clone(&closed));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (all, ended, script) = (Arc::clone(&all), Arc::clone(&ended), Arc::clone(&script));
            std::thread::spawn(move || {
                while let Some((head, body)) = read_request(&mut stream) {
                    let nth = {
                        let mut all = all.lock().unwrap();
                        all.push((head.clone(), body.clone()));
                        all.len() - 1
                    };
                    let (status, body) = match script(&head, &body, nth) {
                        Answer::Json(value) => ("200 OK", value.to_string()),
                        Answer::Accepted => ("202 Accepted", String::new()),
                        Answer::Status(status, body) => (status, body),
                        Answer::Silence => {
                            let mut buf = [0u8; 1024];
                            while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                            break;
                        }
                    };
                    let mut response =
                        format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", body.len());
                    if body.starts_with(['{', '[']) {
                        response.push_str("content-type: application/json\r\n");
                    }
                    response.push_str("\r\n");
                    response.push_str(&body);
                    if stream.write_all(response.as_bytes()).is_err() {
                        break;
                    }
                }
                *ended.lock().unwrap() += 1;
            });
        }
    });
    Scripted { port, seen, closed }
}
