//! `hrns doctor` end to end: the built binary probing mock providers with different quirks
//! over loopback, and the quirks it saves being obeyed by `exec`.

mod common;

use hrns_blocking::mock::{MockProvider, RecordedRequest, Reply, chunk};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Output;

const KEY: &str = "sk-doctor-NEVERSHOWN-4242";

/// The common sandbox, with a doctor's configuration.
struct Env(common::Env);

impl Env {
    fn new() -> Self {
        Env(common::Env::new())
    }

    fn config_file(&self) -> PathBuf {
        self.0.config_file()
    }

    /// A config with the provider `local` at `url` and whatever else `entry` adds.
    fn configure(&self, url: &str, entry: Value) {
        let mut provider = json!({"url": url, "key": KEY, "model": "mock-model", "color": "red"});
        for (k, v) in entry.as_object().unwrap() {
            provider[k] = v.clone();
        }
        let config =
            json!({"providers": {"local": provider}, "currentProvider": "local", "theme": "dark"});
        self.0.write("config/hrns/config.json", &config.to_string());
    }

    fn config(&self) -> Value {
        self.0.config_json()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, &[])
    }

    /// [`Env::run`] with environment variables `vars` set.
    fn run_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        self.0
            .cmd(None)
            .envs(vars.iter().copied())
            .args(args)
            .output()
            .unwrap()
    }
}

fn text(out: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "the key leaked:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

/// The verdict word of the table line for `title`.
fn verdict<'a>(table: &'a str, title: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.get(12..33).is_some_and(|cell| cell.trim_end() == title))
        .unwrap_or_else(|| panic!("no line for {title} in\n{table}"))
        .split_whitespace()
        .next()
        .unwrap()
}

/// How a scripted provider behaves.
#[derive(Clone, Copy, Default)]
struct Quirks {
    refuse_stream_options: bool,
    refuse_max_tokens: bool,
    tools_only_with_auto: bool,
    no_tools: bool,
    refuse_response_format: bool,
}

/// A provider that answers by what it is sent.
fn provider(q: Quirks) -> MockProvider {
    MockProvider::start_with(move |req: &RecordedRequest| {
        if req.method == "GET" {
            return Some(Reply::json(
                200,
                json!({"object": "list", "data": [{"id": "mock-model", "max_model_len": 32768}]}),
            ));
        }
        if req.header("authorization") != Some(&format!("Bearer {KEY}")) {
            return Some(Reply::error(401, "Incorrect API key provided"));
        }
        let body = req.json();
        if q.refuse_stream_options && body.get("stream_options").is_some() {
            return Some(Reply::json(
                422,
                json!({"detail": [{"loc": ["body", "stream_options"], "msg": "extra fields not permitted"}]}),
            ));
        }
        if q.refuse_max_tokens && body.get("max_tokens").is_some() {
            return Some(Reply::error(
                400,
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            ));
        }
        let format = body.get("response_format").is_some();
        if q.refuse_response_format && format {
            return Some(Reply::error(
                400,
                "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            ));
        }
        let tools = body.get("tools").is_some();
        if tools && q.no_tools {
            return Some(Reply::error(400, "tools are not supported by this model"));
        }
        let stream = body["stream"] == true;
        // A session (its requests start with the system prompt) gets a plain answer.
        let session = body["messages"][0]["role"] == "system";
        let calls = tools
            && !session
            && !(q.tools_only_with_auto && body.get("tool_choice").is_none());
        let prompt = body["messages"][0]["content"].as_str().unwrap_or("");
        // Asked for JSON (in the request, or in the system prompt): a JSON answer.
        let wants_json = format || (session && prompt.contains("JSON Schema"));
        Some(match (stream, calls) {
            (false, false) if wants_json => Reply::json(
                200,
                json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"city\": \"Paris\"}"}, "finish_reason": "stop"}]}),
            ),
            (true, false) if wants_json => Reply::text_answer("{\"city\": \"Paris\"}"),
            (false, false) => Reply::json(
                200,
                json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "pong"}, "finish_reason": "stop"}]}),
            ),
            (false, true) => Reply::json(
                200,
                json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": "{\"city\":\"Paris\"}"}}]},
                    "finish_reason": "tool_calls"}]}),
            ),
            (true, true) if prompt.contains("Tokyo") => Reply::tool_calls(&[
                ("c1", "get_time", r#"{"city":"Paris"}"#),
                ("c2", "get_time", r#"{"city":"Tokyo"}"#),
            ]),
            (true, true) => Reply::tool_calls(&[("c1", "get_time", r#"{"city":"Paris"}"#)]),
            (true, false) if body.get("stream_options").is_some() => {
                Reply::text_answer("1 2 3 4 5 6 7 8 9 10")
            }
            (true, false) => Reply::sse([
                chunk::text_chunk("1 2 3"),
                chunk::finish_chunk("stop"),
            ]),
        })
    })
    .unwrap()
}

#[test]
fn a_well_behaved_provider_is_ok_on_every_line_and_stale_quirks_are_cleared() {
    let env = Env::new();
    let mock = provider(Quirks::default());
    env.configure(&mock.base_url(), json!({"streamOptions": false}));
    let out = env.run(&["doctor"]);
    let (table, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{table}\n{stderr}");
    for title in [
        "reachable, TLS",
        "authentication",
        "/models",
        "model listed",
        "context window",
        "chat",
        "streaming chat",
        "stream usage",
        "tools",
        "tools streamed, auto",
        "tools streamed",
        "parallel tool calls",
        "reasoning fields",
        "token limit field",
        "stream quirks",
        "structured output",
    ] {
        assert_eq!(verdict(&table, title), "ok", "{title} in\n{table}");
    }
    assert!(table.contains("32768 tokens"), "{table}");
    assert!(table.contains("plain HTTP to a local address"), "{table}");
    assert!(table.contains("2 calls in one answer"), "{table}");
    assert!(stderr.contains("probing `local`"), "{stderr}");
    let config = env.config();
    let local = &config["providers"]["local"];
    assert!(
        local.get("streamOptions").is_none(),
        "stale quirk cleared: {local}"
    );
    assert_eq!(local["color"], "red");
    assert_eq!(config["theme"], "dark");
    assert_eq!(
        mock.requests().len() + mock.model_requests().len(),
        8,
        "the /models lookup is listed apart"
    );
}

#[test]
fn quirks_are_shown_saved_and_obeyed_by_later_sessions() {
    let env = Env::new();
    let mock = provider(Quirks {
        refuse_stream_options: true,
        refuse_max_tokens: true,
        tools_only_with_auto: true,
        ..Quirks::default()
    });
    env.configure(&mock.base_url(), json!({}));
    let out = env.run(&["doctor"]);
    let (table, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{table}\n{stderr}");
    assert_eq!(verdict(&table, "stream usage"), "unsupported", "{table}");
    assert_eq!(verdict(&table, "tools streamed"), "degraded", "{table}");
    assert_eq!(verdict(&table, "token limit field"), "ok", "{table}");
    assert!(
        table.contains("sessions send tool_choice: auto (saved)"),
        "{table}"
    );
    assert!(table.contains("max_completion_tokens accepted"), "{table}");
    assert!(table.contains("saved for `local`"), "{table}");
    let local = &env.config()["providers"]["local"];
    assert_eq!(local["streamOptions"], false);
    assert_eq!(local["maxTokensField"], "max_completion_tokens");
    assert_eq!(local["toolChoice"], "auto");
    assert_eq!(local["color"], "red");

    // A session now sends what the provider takes, the first time.
    let before = mock.requests().len();
    let out = env.run(&["exec", "--approval", "read-only", "hello"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let sent = &mock.requests()[before..];
    assert_eq!(sent.len(), 1, "no 4xx paid");
    let first = sent[0].json();
    assert!(first.get("stream_options").is_none(), "{first}");
    assert_eq!(first["tool_choice"], "auto");
}

#[test]
fn a_refused_response_format_is_saved_and_exec_puts_the_schema_into_the_prompt() {
    let env = Env::new();
    let mock = provider(Quirks {
        refuse_response_format: true,
        ..Quirks::default()
    });
    env.configure(&mock.base_url(), json!({}));
    let out = env.run(&["doctor"]);
    let (table, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{table}\n{stderr}");
    assert_eq!(
        verdict(&table, "structured output"),
        "unsupported",
        "{table}"
    );
    assert!(table.contains("into the prompt instead (saved)"), "{table}");
    assert_eq!(env.config()["providers"]["local"]["responseFormat"], false);

    // The next `exec --output-schema` pays no 400: the schema goes into the system prompt.
    let schema = env.0.write(
        "work/schema.json",
        r#"{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}"#,
    );
    let before = mock.requests().len();
    let out = env.run(&[
        "exec",
        "--output-schema",
        schema.to_str().unwrap(),
        "capital of France?",
    ]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, "{\"city\":\"Paris\"}\n");
    let sent = &mock.requests()[before..];
    assert_eq!(sent.len(), 1, "no 400 paid");
    let body = sent[0].json();
    assert!(body.get("response_format").is_none(), "{body}");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("\"required\":[\"city\"]"), "{system}");
}

#[test]
fn a_session_that_meets_a_refusal_saves_it_for_the_next_one() {
    let env = Env::new();
    let mock = provider(Quirks {
        refuse_stream_options: true,
        ..Quirks::default()
    });
    env.configure(&mock.base_url(), json!({}));
    let out = env.run(&[
        "exec",
        "--agent",
        "Explorer",
        "--approval",
        "read-only",
        "hi",
    ]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("saved for provider `local`: streamOptions: false"),
        "{stderr}"
    );
    assert_eq!(env.config()["providers"]["local"]["streamOptions"], false);
    let paid = mock.requests().len();
    let out = env.run(&[
        "exec",
        "--agent",
        "Explorer",
        "--approval",
        "read-only",
        "hi",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let sent = &mock.requests()[paid..];
    assert!(
        sent.iter()
            .all(|r| r.json().get("stream_options").is_none())
    );
    assert_eq!(mock.requests().len() - paid, 1, "no refusal this time");
}

#[test]
fn an_ephemeral_session_that_meets_a_refusal_keeps_the_config_as_it_was() {
    let env = Env::new();
    let mock = provider(Quirks {
        refuse_stream_options: true,
        ..Quirks::default()
    });
    env.configure(&mock.base_url(), json!({}));
    let before = std::fs::read(env.config_file()).unwrap();
    let args = [
        "exec",
        "--ephemeral",
        "--agent",
        "Explorer",
        "--approval",
        "read-only",
        "hi",
    ];
    let out = env.run(&args);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // The refused option is still dropped for this run, but nothing is written.
    assert!(!stderr.contains("saved for provider"), "{stderr}");
    assert_eq!(std::fs::read(env.config_file()).unwrap(), before);
    let sent = mock.requests();
    assert!(
        sent.iter()
            .any(|r| r.method == "POST" && r.json().get("stream_options").is_some()),
        "the option was tried"
    );
    // The next run meets the refusal again: it learned nothing.
    let paid = mock.requests().len();
    let out = env.run(&args);
    assert_eq!(out.status.code(), Some(0));
    let again = &mock.requests()[paid..];
    assert!(
        again
            .iter()
            .any(|r| r.method == "POST" && r.json().get("stream_options").is_some())
    );
}

#[test]
fn an_unreachable_server_or_a_refused_key_exits_1_and_saves_nothing() {
    let env = Env::new();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    env.configure(&url, json!({"maxTokensField": "max_completion_tokens"}));
    let before = std::fs::read_to_string(env.config_file()).unwrap();
    let out = env.run(&["doctor"]);
    let (table, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{table}");
    assert_eq!(verdict(&table, "reachable, TLS"), "failed", "{table}");
    assert_eq!(verdict(&table, "streaming chat"), "skipped", "{table}");
    assert_eq!(
        std::fs::read_to_string(env.config_file()).unwrap(),
        before,
        "untouched"
    );

    let mock = provider(Quirks::default());
    env.configure(&mock.base_url(), json!({"key": "sk-wrong"}));
    let out = env.run(&["doctor", "--json"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let report: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["chat_works"], false);
    assert_eq!(report["provider"], "local");
    let auth = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "authentication")
        .unwrap();
    assert_eq!(auth["verdict"], "failed");
    assert!(
        auth["detail"]
            .as_str()
            .unwrap()
            .contains("Incorrect API key")
    );
    assert!(!stdout.contains("sk-wrong"));
}

#[test]
fn a_model_without_tools_still_chats() {
    let env = Env::new();
    let mock = provider(Quirks {
        no_tools: true,
        ..Quirks::default()
    });
    env.configure(&mock.base_url(), json!({}));
    let out = env.run(&["doctor", "--json"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let report: Value = serde_json::from_str(stdout.trim()).unwrap();
    let verdicts: Vec<(&str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["check"].as_str().unwrap(), f["verdict"].as_str().unwrap()))
        .collect();
    assert!(verdicts.contains(&("tools", "unsupported")), "{verdicts:?}");
    assert!(
        verdicts.contains(&("parallel_tool_calls", "unsupported")),
        "{verdicts:?}"
    );
    assert!(verdicts.contains(&("streaming", "ok")), "{verdicts:?}");
    assert_eq!(report["quirks"], json!({}));
}

#[test]
fn a_provider_from_environment_variables_learns_without_a_config_file() {
    let env = Env::new();
    let mock = provider(Quirks {
        refuse_stream_options: true,
        ..Quirks::default()
    });
    let url = mock.base_url();
    let vars = [
        ("OPENAI_BASE_URL", url.as_str()),
        ("OPENAI_API_KEY", KEY),
        ("HRNS_MODEL", "mock-model"),
    ];
    let out = env.run_with(&["doctor"], &vars);
    let (table, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{table}\n{stderr}");
    assert!(
        table.contains("not saved: the provider comes from environment variables"),
        "{table}"
    );
    assert!(!stderr.contains("does not exist"), "{stderr}");
    let out = env.run_with(&["exec", "--approval", "read-only", "hi"], &vars);
    let (answer, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{answer}\n{stderr}");
    assert!(!stderr.contains("does not exist"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(!env.config_file().exists(), "no config file was made");
}
