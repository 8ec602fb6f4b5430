//! JSON-RPC 2.0 messages as ACP uses them: requests, notifications and responses, one per line.
//!
//! [`parse`] sorts a line into an [`Incoming`] message or says why it is not one, with the
//! error code and the id to answer with ("If there was an error in detecting the id in the
//! Request object (e.g. Parse error/Invalid Request), it MUST be Null"). The encoders build
//! the lines hrns writes.

use serde_json::{Map, Value, json};

/// "Invalid JSON was received by the server."
pub const PARSE_ERROR: i64 = -32700;
/// "The JSON sent is not a valid Request object."
pub const INVALID_REQUEST: i64 = -32600;
/// "The method does not exist / is not available."
pub const METHOD_NOT_FOUND: i64 = -32601;
/// "Invalid method parameter(s)."
pub const INVALID_PARAMS: i64 = -32602;
/// "Internal JSON-RPC error." hrns uses it for a failed turn, with hrns's message.
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's "resource not found" (an unknown session).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A message from the peer.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A call that wants an answer with the same `id`.
    Request {
        /// The id, a number or a string, echoed in the answer.
        id: Value,
        /// The method name.
        method: String,
        /// The parameters (`null` when absent).
        params: Value,
    },
    /// A call without an id; never answered.
    Notification {
        /// The method name.
        method: String,
        /// The parameters (`null` when absent).
        params: Value,
    },
    /// The answer to one of our requests.
    Response {
        /// The id of our request.
        id: Value,
        /// Its `result`, or its `error` object.
        outcome: Result<Value, RpcError>,
    },
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// What went wrong, for people.
    pub message: String,
    /// Extra data, when any.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The error as a JSON-RPC error object.
    pub fn to_value(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

/// A line that is not a message we can act on: the error to answer with, and the id to answer
/// (`Null` when it could not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    /// The id to answer with.
    pub id: Value,
    /// Why.
    pub error: RpcError,
}

/// Whether `id` is an id JSON-RPC allows ("a String, Number, or NULL"; hrns refuses `null` ids
/// in requests, as the spec discourages them, and fractional numbers).
fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => false,
    }
}

/// Sorts one line into a message.
pub fn parse(line: &[u8]) -> Result<Incoming, Malformed> {
    let value: Value = serde_json::from_slice(line).map_err(|e| Malformed {
        id: Value::Null,
        error: RpcError::new(PARSE_ERROR, format!("the message is not valid JSON: {e}")),
    })?;
    let Value::Object(mut object) = value else {
        let what = if value.is_array() {
            "a batch (an array); ACP sends one message per line"
        } else {
            "not a JSON object"
        };
        return Err(invalid(Value::Null, format!("the message is {what}")));
    };
    let id = object.remove("id");
    let answer_id = id.clone().filter(valid_id).unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(answer_id, "the message lacks \"jsonrpc\": \"2.0\""));
    }
    if let Some(id) = &id {
        if !valid_id(id) {
            return Err(invalid(
                Value::Null,
                "the id must be a string or an integer",
            ));
        }
    }
    match (object.remove("method"), id) {
        (Some(Value::String(method)), id) => {
            let params = object.remove("params").unwrap_or(Value::Null);
            if !(params.is_object() || params.is_array() || params.is_null()) {
                return Err(invalid(answer_id, "params must be an object or an array"));
            }
            Ok(match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            })
        }
        (Some(_), _) => Err(invalid(answer_id, "the method must be a string")),
        (None, Some(id)) => response(id, object),
        (None, None) => Err(invalid(
            Value::Null,
            "the message has neither a method nor an id",
        )),
    }
}

fn response(id: Value, mut object: Map<String, Value>) -> Result<Incoming, Malformed> {
    match (object.remove("result"), object.remove("error")) {
        (Some(result), None) => Ok(Incoming::Response {
            id,
            outcome: Ok(result),
        }),
        (None, Some(error)) => {
            let code = error.get("code").and_then(Value::as_i64);
            let message = error.get("message").and_then(Value::as_str);
            match (code, message) {
                (Some(code), Some(message)) => Ok(Incoming::Response {
                    id,
                    outcome: Err(RpcError {
                        code,
                        message: message.to_owned(),
                        data: error.get("data").cloned(),
                    }),
                }),
                _ => Err(invalid(
                    id,
                    "the error object needs an integer code and a message",
                )),
            }
        }
        (Some(_), Some(_)) => Err(invalid(id, "a response has a result or an error, not both")),
        (None, None) => Err(invalid(id, "a response needs a result or an error")),
    }
}

fn invalid(id: Value, message: impl Into<String>) -> Malformed {
    Malformed {
        id,
        error: RpcError::new(INVALID_REQUEST, message),
    }
}

/// The line answering request `id` with `result` (without the line end).
pub fn encode_result(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// The line answering request `id` (or `null`) with `error`.
pub fn encode_error(id: &Value, error: &RpcError) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()}).to_string()
}

/// A notification line.
pub fn encode_notification(method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// A request line.
pub fn encode_request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The requests hrns sent to the client that await their answer, by id, each with what waits
/// for it (`T`: a channel in the driver).
///
/// Ids are hrns's own numbers, from 0 up, never reused. An answer is handed to its waiter once;
/// an answer with an id hrns did not send, one answered already, one given up on
/// ([`Outstanding::forget`]), or an id of another type (the string `"3"` is not the number
/// `3`) is a [`StrayAnswer`], which the server reports and otherwise ignores.
#[derive(Debug)]
pub struct Outstanding<T> {
    next: u64,
    waiting: std::collections::HashMap<u64, T>,
}

impl<T> Default for Outstanding<T> {
    fn default() -> Self {
        Outstanding {
            next: 0,
            waiting: std::collections::HashMap::new(),
        }
    }
}

/// An answer no request of ours waits for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("an answer to a request hrns did not send or no longer waits for (id {id}) was ignored")]
pub struct StrayAnswer {
    /// The id the answer carried.
    pub id: Value,
}

impl<T> Outstanding<T> {
    /// Takes the id of a new request, whose answer goes to `waiter`.
    pub fn start(&mut self, waiter: T) -> u64 {
        let id = self.next;
        self.next += 1;
        self.waiting.insert(id, waiter);
        id
    }

    /// The waiter of the answer with `id`, which no longer waits after this.
    pub fn finish(&mut self, id: &Value) -> Result<T, StrayAnswer> {
        id.as_u64()
            .and_then(|n| self.waiting.remove(&n))
            .ok_or_else(|| StrayAnswer { id: id.clone() })
    }

    /// Gives up on request `id` (it timed out): its late answer will be a stray.
    pub fn forget(&mut self, id: u64) -> Option<T> {
        self.waiting.remove(&id)
    }

    /// Every waiter, when the client went away: no answer will come.
    pub fn drain(&mut self) -> Vec<T> {
        self.waiting.drain().map(|(_, waiter)| waiter).collect()
    }

    /// How many requests await their answer.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether no request awaits its answer.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}
