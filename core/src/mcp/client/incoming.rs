//! What the server sends: its requests (answered at once), its notifications, and its answers
//! to the client's requests (the handshake, listings, calls).

use super::{Action, Client, Event, Failure, Phase, Purpose, SUPPORTED_VERSIONS};
use crate::mcp::content::{call_result_output, cap_result};
use crate::mcp::jsonrpc::{ErrorObject, METHOD_NOT_FOUND, Message, RequestId};
use crate::tool::ToolOutput;
use serde_json::{Value, json};
use std::time::Instant;

impl Client {
    pub(super) fn on_request(&mut self, id: RequestId, method: &str, _params: Option<Value>) {
        let answer = match method {
            "ping" => Message::Response {
                id,
                result: json!({}),
            },
            "roots/list" => {
                let roots: Vec<Value> = self
                    .config
                    .roots
                    .iter()
                    .map(|root| match &root.name {
                        Some(name) => json!({"uri": root.uri, "name": name}),
                        None => json!({"uri": root.uri}),
                    })
                    .collect();
                Message::Response {
                    id,
                    result: json!({"roots": roots}),
                }
            }
            _ => Message::Error {
                id: Some(id),
                error: ErrorObject {
                    code: METHOD_NOT_FOUND,
                    message: format!("hrns does not support {method:?}"),
                    data: None,
                },
            },
        };
        self.out.push_back(Action::Send(answer));
    }

    pub(super) fn on_notification(&mut self, now: Instant, method: &str, params: Option<Value>) {
        let params = params.unwrap_or(Value::Null);
        match method {
            "notifications/tools/list_changed" => match self.phase {
                Phase::Ready if self.listing.is_none() => self.list_tools(now, None),
                Phase::Ready | Phase::Listing => self.list_again = true,
                Phase::New | Phase::Initializing | Phase::Failed(_) => {}
            },
            "notifications/progress" => {
                let Some(token) = params.get("progressToken").and_then(Value::as_i64) else {
                    return;
                };
                let Some(pending) = self.pending.get_mut(&token) else {
                    return;
                };
                let Purpose::Call(call) = pending.purpose else {
                    return;
                };
                // "Receivers MAY reset the timeout clock for a request upon receiving a
                // progress notification" — but "SHOULD always enforce a maximum timeout,
                // regardless of progress notifications": never past the call's total limit.
                let restarted = now + self.config.call_timeout;
                pending.deadline = pending.total.map_or(restarted, |t| restarted.min(t));
                let progress = params
                    .get("progress")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                let total = params.get("total").and_then(Value::as_f64);
                let message = params
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.emit(Event::Progress {
                    call,
                    progress,
                    total,
                    message,
                });
            }
            "notifications/message" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("info")
                    .to_owned();
                let text = match params.get("data") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                self.emit(Event::Log { level, text });
            }
            // Cancellations of the server's own requests (hrns answers at once), resource and
            // prompt notifications: nothing to do.
            _ => {}
        }
    }

    pub(super) fn on_answer(
        &mut self,
        now: Instant,
        id: RequestId,
        answer: Result<Value, ErrorObject>,
    ) {
        let pending = match &id {
            RequestId::Number(n) => self.pending.remove(n),
            RequestId::String(_) => None,
        };
        let Some(pending) = pending else {
            let known = matches!(id, RequestId::Number(n) if self.cancelled.contains(&n));
            if !known {
                self.log(
                    "warning",
                    format!("dropped an answer to an unknown request id {id}"),
                );
            }
            return;
        };
        match pending.purpose {
            Purpose::Initialize => self.on_initialized(now, answer),
            Purpose::ListTools => self.on_tools_page(now, answer),
            Purpose::Call(call) => {
                let output = match answer {
                    Ok(result) => cap_result(
                        call_result_output(&self.config.server, &result),
                        &self.config.server,
                        self.config.limits.max_result_chars,
                    ),
                    Err(error) => ToolOutput::error(format!(
                        "The MCP server {} refused the call: {} (code {}).",
                        self.config.server, error.message, error.code
                    )),
                };
                // A refresh under way was most likely caused by this very call: its caller
                // hears of the answer once the new tools are known.
                let refreshing = self.phase == Phase::Ready && self.listing.is_some();
                if refreshing {
                    self.held.push((call, output));
                } else {
                    self.emit(Event::CallFinished { call, output });
                }
            }
        }
    }

    fn on_initialized(&mut self, now: Instant, answer: Result<Value, ErrorObject>) {
        let result = match answer {
            Ok(result) => result,
            Err(error) => {
                return self.fail(Failure::Refused {
                    method: "initialize",
                    code: error.code,
                    message: error.message,
                });
            }
        };
        let Some(version) = result.get("protocolVersion").and_then(Value::as_str) else {
            return self.fail(Failure::Malformed {
                method: "initialize",
                reason: "no protocolVersion".into(),
            });
        };
        if !SUPPORTED_VERSIONS.contains(&version) {
            return self.fail(Failure::UnsupportedVersion {
                version: version.into(),
            });
        }
        self.protocol_version = Some(version.into());
        self.server_info = result.get("serverInfo").cloned();
        self.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.out.push_back(Action::Send(Message::Notification {
            method: "notifications/initialized".into(),
            params: None,
        }));
        let has_tools = result
            .get("capabilities")
            .and_then(|c| c.get("tools"))
            .is_some_and(|t| !t.is_null());
        if has_tools {
            self.phase = Phase::Listing;
            self.list_tools(now, None);
        } else {
            self.phase = Phase::Ready;
            self.emit(Event::Ready);
        }
    }
}
