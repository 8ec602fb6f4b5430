//! Record and replay: `exec --record FILE` saves every request and response of a run (the key
//! never enters the file); `hrns replay FILE` serves the recorded responses to a fresh session,
//! runs the tools for real, and reports where the requests now differ from the recorded ones.
//!
//! Every line is redacted with the run's secrets ([`crate::host::redact`]). A response body goes
//! through a [`BodyRedactor`]: an event stream is decoded and each text it streams (the answer,
//! the reasoning, a call's arguments) is redacted as one text across its deltas, the way
//! `exec` prints it, so no secret streamed in pieces, across reads or across deltas, can be
//! put together again from the `data` lines; any other body is one text. The lines still
//! concatenate to a body that reads back as the same answer with each secret replaced, so the
//! record stays replayable.

use hrns_blocking::{HttpResponse, Transport};
use hrns_core::http::{HeaderValue, HttpRequest, Method};
use hrns_core::secrets::BodyRedactor;
use hrns_core::session::{TransportError, TransportErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The version of the recording format.
pub(crate) const RECORD_VERSION: u32 = 1;

/// The first line of a recording: what is needed to set the same session up again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Header {
    /// Always [`RECORD_VERSION`].
    pub(crate) hrns_record: u32,
    /// The user's prompt.
    pub(crate) prompt: String,
    /// The model name.
    pub(crate) model: String,
    /// The system prompt that was sent.
    pub(crate) system_prompt: Option<String>,
    /// The names of the tools offered.
    pub(crate) tools: Vec<String>,
    /// The approval policy (`read-only`, `ask`, `auto`).
    pub(crate) approval: String,
    /// The agent's name.
    pub(crate) agent: String,
    /// Where the run's secrets came from, by name only (see [`SecretSources`]).
    #[serde(default, skip_serializing_if = "SecretSources::is_empty")]
    pub(crate) secrets: SecretSources,
}

/// Where a recorded run's secrets came from, so that a replay can know their values without
/// the record holding them: the provider's name in the config and the env variables that
/// held a key. A replay resolves them again ([`SecretSources::resolve`]) and redacts those
/// values from everything it prints, wherever the tools, run again, read them.
///
/// Names rather than hashes: a record is a file people share, and a hash of a key, or of
/// its 8-byte pieces, could be checked against guesses (a piece's next piece differs by one
/// byte, so they would give the key back one byte at a time), while a whole-key hash finds no
/// piece. A name says nothing about the value; a replay where the variable is not set (or
/// the provider not configured) knows only the secrets of its own config and environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SecretSources {
    /// The provider's name in the config (absent for the environment's provider).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) provider: Option<String>,
    /// The env variables whose values were the run's keys (`OPENAI_API_KEY`, a `keyEnv`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) env: Vec<String>,
}

impl SecretSources {
    fn is_empty(&self) -> bool {
        self.provider.is_none() && self.env.is_empty()
    }

    /// The sources of `provider`'s secrets, as resolved from `config`.
    pub(crate) fn of(
        config: &hrns_core::config::Config,
        provider: &hrns_core::config::ResolvedProvider,
    ) -> Self {
        use hrns_core::config::{ENV_API_KEY, ENV_PROVIDER_NAME};
        if provider.name == ENV_PROVIDER_NAME {
            return SecretSources {
                provider: None,
                env: vec![ENV_API_KEY.to_owned()],
            };
        }
        let key_env = config
            .providers
            .get(&provider.name)
            .and_then(|entry| entry.key_env.clone())
            .filter(|name| !name.trim().is_empty());
        SecretSources {
            provider: Some(provider.name.clone()),
            env: key_env.into_iter().collect(),
        }
    }

    /// The secrets these sources hold now: the named provider resolved from `config` (its
    /// key, secret headers and URL secrets) and the named variables' values (each a key,
    /// unless too plain to be one). A name that resolves to nothing adds nothing.
    pub(crate) fn resolve(
        &self,
        config: &hrns_core::config::Config,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> hrns_core::secrets::Secrets {
        let mut secrets = hrns_core::secrets::Secrets::new();
        if let Some(name) = &self.provider {
            let selection = hrns_core::config::Selection {
                provider: Some(name),
                model: None,
            };
            if let Ok(provider) = config.resolve(&selection, env) {
                secrets.extend(&hrns_core::secrets::Secrets::of_provider(
                    &provider.to_provider(),
                ));
            }
        }
        for name in &self.env {
            if let Some(value) = env(name) {
                secrets.add(&value);
            }
        }
        secrets
    }
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    /// A request as sent (secret headers redacted).
    Request {
        id: u64,
        method: String,
        url: String,
        headers: Vec<(String, String)>,
        body: Value,
    },
    /// The status line and headers of its response.
    Response {
        id: u64,
        status: u16,
        headers: Vec<(String, String)>,
    },
    /// A piece of the body as it was read.
    Data { id: u64, text: String },
    /// The body ended.
    End { id: u64 },
    /// The request failed in transport.
    Error {
        id: u64,
        kind: TransportErrorKind,
        message: String,
    },
}

type Sink = Arc<Mutex<BufWriter<File>>>;

fn write_line(sink: &Sink, line: &impl Serialize) {
    if let Ok(mut w) = sink.lock() {
        if let Ok(text) = serde_json::to_string(line) {
            // Bodies can quote a key (a provider's error, a tool output): never on disk.
            let _ = writeln!(w, "{}", crate::host::redact::redact(&text));
            let _ = w.flush();
        }
    }
}

/// A transport that records everything that passes through it.
pub(crate) struct Recorder {
    inner: Arc<dyn Transport>,
    sink: Sink,
}

impl Recorder {
    /// Creates `path` and writes the header.
    pub(crate) fn create(
        path: &Path,
        header: &Header,
        inner: Arc<dyn Transport>,
    ) -> io::Result<Self> {
        // A record holds whole conversations: owner-only, wherever it is written.
        let sink = Arc::new(Mutex::new(BufWriter::new(
            crate::setup::paths::create_private(path)?,
        )));
        write_line(&sink, header);
        Ok(Recorder { inner, sink })
    }
}

impl Transport for Recorder {
    fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let id = req.id.0;
        let headers = req
            .headers
            .iter()
            .map(|(n, v)| {
                let v = match v {
                    HeaderValue::Plain(p) => p.clone(),
                    HeaderValue::Secret(_) => "[redacted]".to_owned(),
                };
                (n.clone(), v)
            })
            .collect();
        let body = serde_json::from_slice(&req.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned()));
        write_line(
            &self.sink,
            &Line::Request {
                id,
                method: req.method.as_str().to_owned(),
                url: req.url.clone(),
                headers,
                body,
            },
        );
        match self.inner.send(req) {
            Ok(mut resp) => {
                let headers = resp
                    .headers
                    .iter()
                    .map(|(n, v)| (n.clone(), String::from_utf8_lossy(v).into_owned()))
                    .collect();
                write_line(
                    &self.sink,
                    &Line::Response {
                        id,
                        status: resp.status,
                        headers,
                    },
                );
                let content_type = resp
                    .headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned());
                resp.body = Box::new(Tee {
                    inner: resp.body,
                    sink: Arc::clone(&self.sink),
                    id,
                    body: BodyRedactor::new(resp.status, content_type.as_deref()),
                });
                Ok(resp)
            }
            Err(e) => {
                write_line(
                    &self.sink,
                    &Line::Error {
                        id,
                        kind: e.kind,
                        message: e.message.clone(),
                    },
                );
                Err(e)
            }
        }
    }
}

/// Copies a body into the recording as it is read, with its secrets taken out
/// ([`BodyRedactor`]: an event stream's texts each redacted as one text across its deltas,
/// any other body as one text).
struct Tee {
    inner: Box<dyn Read + Send>,
    sink: Sink,
    id: u64,
    body: BodyRedactor,
}

impl Tee {
    /// Writes what the body redactor gives for this read (or for the end of the body).
    fn write(&mut self, read: Option<&[u8]>) {
        let text = crate::host::redact::with_secrets(|secrets| match read {
            Some(bytes) => self.body.feed(secrets, bytes),
            None => self.body.finish(secrets),
        });
        if !text.is_empty() {
            write_line(&self.sink, &Line::Data { id: self.id, text });
        }
    }
}

impl Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(0) => {
                self.write(None);
                write_line(&self.sink, &Line::End { id: self.id });
                Ok(0)
            }
            Ok(n) => {
                self.write(Some(&buf[..n]));
                Ok(n)
            }
            Err(e) => {
                self.write(None);
                let error = hrns_blocking::client::io_error(&e);
                write_line(
                    &self.sink,
                    &Line::Error {
                        id: self.id,
                        kind: error.kind,
                        message: error.message,
                    },
                );
                Err(e)
            }
        }
    }
}

/// A recorded request and what came back.
#[derive(Debug, Clone)]
struct Exchange {
    method: String,
    body: Value,
    status: Option<u16>,
    headers: Vec<(String, String)>,
    data: Vec<u8>,
    error: Option<(TransportErrorKind, String)>,
    ended: bool,
}

/// A recording read back.
#[derive(Debug)]
pub(crate) struct Recording {
    pub(crate) header: Header,
    exchanges: Vec<Exchange>,
}

/// Why a recording could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordingError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}:{line}: {message}")]
    Bad {
        path: String,
        line: usize,
        message: String,
    },
}

impl Recording {
    /// Reads a recording. A torn last line (a run that was killed) is ignored.
    pub(crate) fn load(path: &Path) -> Result<Recording, RecordingError> {
        let shown = path.display().to_string();
        let file = File::open(path).map_err(|source| RecordingError::Io {
            path: shown.clone(),
            source,
        })?;
        let mut lines = io::BufReader::new(file).lines().enumerate().peekable();
        let bad = |line: usize, message: String| RecordingError::Bad {
            path: shown.clone(),
            line: line + 1,
            message,
        };
        let header: Header = match lines.next() {
            Some((n, Ok(text))) => serde_json::from_str(&text)
                .map_err(|e| bad(n, format!("not an hrns recording header: {e}")))?,
            Some((n, Err(e))) => return Err(bad(n, e.to_string())),
            None => return Err(bad(0, "the file is empty".into())),
        };
        if header.hrns_record != RECORD_VERSION {
            return Err(bad(
                0,
                format!(
                    "recording format {} is not supported (this hrns reads {RECORD_VERSION})",
                    header.hrns_record
                ),
            ));
        }
        let mut exchanges: Vec<(u64, Exchange)> = Vec::new();
        while let Some((n, text)) = lines.next() {
            let text = text.map_err(|e| bad(n, e.to_string()))?;
            if text.trim().is_empty() {
                continue;
            }
            let line: Line = match serde_json::from_str(&text) {
                Ok(l) => l,
                Err(_) if lines.peek().is_none() => break, // torn last line
                Err(e) => return Err(bad(n, e.to_string())),
            };
            let find = |exchanges: &mut Vec<(u64, Exchange)>, id: u64| -> Option<usize> {
                exchanges.iter().rposition(|(i, _)| *i == id)
            };
            match line {
                Line::Request {
                    id, method, body, ..
                } => exchanges.push((
                    id,
                    Exchange {
                        method,
                        body,
                        status: None,
                        headers: Vec::new(),
                        data: Vec::new(),
                        error: None,
                        ended: false,
                    },
                )),
                Line::Response {
                    id,
                    status,
                    headers,
                } => {
                    let i = find(&mut exchanges, id)
                        .ok_or_else(|| bad(n, format!("response to unknown request {id}")))?;
                    exchanges[i].1.status = Some(status);
                    exchanges[i].1.headers = headers;
                }
                Line::Data { id, text } => {
                    let i = find(&mut exchanges, id)
                        .ok_or_else(|| bad(n, format!("data for unknown request {id}")))?;
                    exchanges[i].1.data.extend_from_slice(text.as_bytes());
                }
                Line::End { id } => {
                    let i = find(&mut exchanges, id)
                        .ok_or_else(|| bad(n, format!("end of unknown request {id}")))?;
                    exchanges[i].1.ended = true;
                }
                Line::Error { id, kind, message } => {
                    let i = find(&mut exchanges, id)
                        .ok_or_else(|| bad(n, format!("error for unknown request {id}")))?;
                    exchanges[i].1.error = Some((kind, message));
                }
            }
        }
        Ok(Recording {
            header,
            exchanges: exchanges.into_iter().map(|(_, e)| e).collect(),
        })
    }

    /// How many requests the recording holds.
    pub(crate) fn len(&self) -> usize {
        self.exchanges.len()
    }

    /// A transport that serves the recorded responses in order.
    pub(crate) fn into_replayer(self) -> Replayer {
        Replayer {
            state: Mutex::new(ReplayState {
                queue: self.exchanges.into(),
                served: 0,
                differences: Vec::new(),
            }),
        }
    }
}

#[derive(Debug)]
struct ReplayState {
    queue: VecDeque<Exchange>,
    served: usize,
    differences: Vec<String>,
}

/// Serves a recording; see [`Recording::into_replayer`].
#[derive(Debug)]
pub(crate) struct Replayer {
    state: Mutex<ReplayState>,
}

impl Replayer {
    /// Requests served and the differences found so far.
    pub(crate) fn report(&self) -> (usize, Vec<String>, usize) {
        let s = self.state.lock().expect("replay state");
        (s.served, s.differences.clone(), s.queue.len())
    }
}

impl Transport for Replayer {
    fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        let mut s = self.state.lock().expect("replay state");
        let Some(ex) = s.queue.pop_front() else {
            let n = s.served + 1;
            s.differences.push(format!(
                "request {n} was made, but the recording has no more requests"
            ));
            return Err(TransportError::new(
                TransportErrorKind::Other,
                "the recording has no more responses",
            ));
        };
        s.served += 1;
        let n = s.served;
        let method = match req.method {
            Method::Get => "GET",
            Method::Post => "POST",
        };
        if ex.method != method {
            s.differences.push(format!(
                "request {n}: method {method}, recorded {}",
                ex.method
            ));
        }
        let mut body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        // Both sides without secrets, before a value is shortened for its line: the tools ran
        // again and may have read a key the recording has as `[redacted]`.
        let mut recorded = ex.body.clone();
        crate::host::redact::with_secrets(|secrets| {
            secrets.redact_json(&mut recorded);
            secrets.redact_json(&mut body);
        });
        let mut diffs = Vec::new();
        json_diff("", &recorded, &body, &mut diffs);
        for d in diffs.into_iter().take(20) {
            s.differences
                .push(crate::host::redact::redact(&format!("request {n}: {d}")).into_owned());
        }
        if let Some((kind, message)) = ex.error.clone() {
            if ex.status.is_none() {
                return Err(TransportError::new(kind, message));
            }
        }
        let status = ex.status.unwrap_or(200);
        let headers = ex
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
            .collect();
        let body: Box<dyn Read + Send> = match ex.error {
            Some((kind, message)) => {
                Box::new(io::Cursor::new(ex.data).chain(FailingReader(kind, message)))
            }
            None => Box::new(io::Cursor::new(ex.data)),
        };
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

/// A body that breaks the way the recorded one did.
struct FailingReader(TransportErrorKind, String);

impl Read for FailingReader {
    fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        let kind = match self.0 {
            TransportErrorKind::Timeout => io::ErrorKind::TimedOut,
            TransportErrorKind::Connect
            | TransportErrorKind::Io
            | TransportErrorKind::Tls
            | TransportErrorKind::InvalidRequest
            | TransportErrorKind::Other => io::ErrorKind::ConnectionReset,
        };
        Err(io::Error::new(kind, self.1.clone()))
    }
}

/// Lists the differences between two JSON values as `path: recorded X, now Y` lines.
pub(crate) fn json_diff(path: &str, recorded: &Value, now: &Value, out: &mut Vec<String>) {
    match (recorded, now) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(vb) => json_diff(&p, va, vb, out),
                    None => out.push(format!(
                        "{}: recorded {}, now absent",
                        p.trim_start_matches('.'),
                        short(va)
                    )),
                }
            }
            for (k, vb) in b {
                if !a.contains_key(k) {
                    out.push(format!(
                        "{}: recorded absent, now {}",
                        format!("{path}.{k}").trim_start_matches('.'),
                        short(vb)
                    ));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                json_diff(&format!("{path}[{i}]"), va, vb, out);
            }
            if a.len() != b.len() {
                out.push(format!(
                    "{}: recorded {} items, now {}",
                    path.trim_start_matches('.'),
                    a.len(),
                    b.len()
                ));
            }
        }
        (a, b) if a != b => out.push(format!(
            "{}: recorded {}, now {}",
            path.trim_start_matches('.'),
            short(a),
            short(b)
        )),
        _ => {}
    }
}

fn short(v: &Value) -> String {
    crate::exec::output::one_line(&v.to_string(), 80)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_diff_names_paths() {
        let mut out = Vec::new();
        json_diff(
            "",
            &json!({"messages": [{"content": "a"}, {"content": "b"}], "model": "m"}),
            &json!({"messages": [{"content": "a"}, {"content": "c"}, {}], "x": 1}),
            &mut out,
        );
        assert_eq!(
            out,
            [
                "messages[1].content: recorded \"b\", now \"c\"",
                "messages: recorded 2 items, now 3",
                "model: recorded \"m\", now absent",
                "x: recorded absent, now 1",
            ]
        );
    }
}
