//! First-run setup: when nothing is configured and a terminal is attached, ask for a provider
//! (offering local servers found on loopback) and save it. Without a terminal, say what to set.

use crate::args::Global;
use crate::setup::{CliError, ConfigFile, Setup, env_var};
use crate::term::style::Style;
use hrns_blocking::{Client, ClientConfig};
use hrns_core::config::{ENV_API_KEY, ENV_BASE_URL, ProviderEntry};
use hrns_core::http::Secret;
use hrns_core::session::Provider;
use std::io::{BufRead, IsTerminal, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Local servers worth looking for, by port.
const LOCAL_SERVERS: &[(&str, &str, u16)] = &[
    ("ollama", "Ollama", 11434),
    ("lmstudio", "LM Studio", 1234),
    ("llamacpp", "llama.cpp", 8080),
    ("vllm", "vLLM", 8000),
];

/// Resolves the run's setup; runs onboarding first when nothing is configured and a terminal is
/// attached.
pub(crate) fn resolve_or_onboard(global: &Global, file: ConfigFile) -> Result<Setup, CliError> {
    let nothing_configured = file.config.providers.is_empty()
        && env_var(ENV_API_KEY).is_none()
        && env_var(ENV_BASE_URL).is_none();
    if !nothing_configured {
        return Setup::resolve(global, file);
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(CliError::usage(format!(
            "no provider is configured. Set {ENV_API_KEY} (and {ENV_BASE_URL} and HRNS_MODEL for other endpoints), \
             write {}, or run `hrns` in a terminal to set one up.",
            file.path.display()
        )));
    }
    let mut file = file;
    onboard(
        &mut file,
        &mut std::io::stdin().lock(),
        &mut std::io::stderr(),
    )?;
    Setup::resolve(global, file)
}

/// Asks for a provider on `input`/`out` and saves it to the config file.
pub(crate) fn onboard(
    file: &mut ConfigFile,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let s = Style::stderr();
    let io = |e: std::io::Error| CliError::usage(format!("setup was interrupted: {e}"));
    writeln!(
        out,
        "{}",
        s.harness("Welcome to hrns. Let's set up a provider (an OpenAI-compatible endpoint).")
    )
    .map_err(io)?;
    let found = find_local_servers();
    let mut chosen: Option<(String, String)> = None;
    for server in &found {
        let models = match server.models.len() {
            0 => "no models yet".to_owned(),
            n if n <= 5 => server.models.join(", "),
            n => format!("{}, … ({n} models)", server.models[..5].join(", ")),
        };
        if ask_yes(
            input,
            out,
            &format!(
                "Found {} at {} ({models}). Use it? [Y/n] ",
                server.label, server.url
            ),
            true,
        )
        .map_err(io)?
        {
            chosen = Some((server.name.to_owned(), server.url.clone()));
            break;
        }
    }
    let (name, url, key) = match chosen {
        Some((name, url)) => (name, url, None),
        None => {
            let name = ask(input, out, "Name for this provider [openai]: ").map_err(io)?;
            let name = if name.is_empty() {
                "openai".to_owned()
            } else {
                name
            };
            let url = ask(input, out, "Base URL [https://api.openai.com/v1]: ").map_err(io)?;
            let url = if url.is_empty() {
                "https://api.openai.com/v1".to_owned()
            } else {
                url
            };
            let key = ask_secret(out, "API key (hidden; empty for none): ").map_err(io)?;
            (name, url, (!key.is_empty()).then_some(key))
        }
    };
    let skip_verify =
        asks_skip_verify(&url) && ask_yes(input, out, SKIP_VERIFY_QUESTION, false).map_err(io)?;
    let provider = Provider::new(url.clone(), key.clone().map(Secret::new));
    let client = Client::new(
        provider,
        &ClientConfig {
            skip_verify,
            connect_timeout: Duration::from_secs(3),
            read_idle_timeout: Duration::from_secs(10),
            ..ClientConfig::default()
        },
    );
    let models: Vec<String> = match client.list_models() {
        Ok(list) => list.into_iter().map(|m| m.id).collect(),
        Err(e) => {
            writeln!(
                out,
                "{}",
                s.dim(&format!("(could not list the models: {e})"))
            )
            .map_err(io)?;
            Vec::new()
        }
    };
    let model = choose_model(input, out, &models).map_err(io)?;
    let mut entry = ProviderEntry::new(url);
    entry.key = key;
    entry.model = Some(model);
    entry.skip_verify = skip_verify;
    file.config.upsert_provider(name.clone(), entry);
    file.config
        .set_current_provider(&name)
        .map_err(|e| CliError::usage(e.to_string()))?;
    file.save()?;
    writeln!(
        out,
        "{}",
        s.harness(&format!(
            "Saved provider `{name}` to {}.",
            file.path.display()
        ))
    )
    .map_err(io)?;
    Ok(())
}

fn choose_model(
    input: &mut impl BufRead,
    out: &mut impl Write,
    models: &[String],
) -> std::io::Result<String> {
    if !models.is_empty() {
        writeln!(out, "Models:")?;
        for (i, m) in models.iter().enumerate().take(50) {
            writeln!(out, "  {:>2}. {m}", i + 1)?;
        }
    }
    loop {
        let answer = ask(
            input,
            out,
            if models.is_empty() {
                "Model name: "
            } else {
                "Model (number or name) [1]: "
            },
        )?;
        if let Some(model) = pick_model(&answer, models) {
            return Ok(model);
        }
    }
}

/// The question about TLS certificate checks, asked at first run and by the UI's `/connect`.
pub(crate) const SKIP_VERIFY_QUESTION: &str =
    "Skip TLS certificate checks (only for self-signed local servers)? [y/N] ";

/// Whether adding a provider at `url` asks [`SKIP_VERIFY_QUESTION`]: only for `https://` URLs
/// other than OpenAI's own (whose certificate is always good).
pub(crate) fn asks_skip_verify(url: &str) -> bool {
    url.starts_with("https://") && !url.contains("api.openai.com")
}

/// The answer to a yes/no question: `y…` is yes, `n…` no, an empty line `default`; anything
/// else is `None` (ask again).
pub(crate) fn yes_no(answer: &str, default: bool) -> Option<bool> {
    match answer.trim().chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('y') => Some(true),
        Some('n') => Some(false),
        None => Some(default),
        Some(_) => None,
    }
}

/// The model an answer to `Model (number or name) [1]` names: a number picks from `models`
/// (1-based), an empty answer takes the first, anything else is the name itself. `None` when
/// the answer is empty and there is nothing to take.
pub(crate) fn pick_model(answer: &str, models: &[String]) -> Option<String> {
    let answer = answer.trim();
    if answer.is_empty() {
        return models.first().cloned();
    }
    if let Ok(n) = answer.parse::<usize>() {
        if let Some(m) = n.checked_sub(1).and_then(|i| models.get(i)) {
            return Some(m.clone());
        }
    }
    Some(answer.to_owned())
}

/// Local servers answering on loopback, as `(name, label, base URL)`.
fn find_local_servers() -> Vec<LocalServer> {
    probe_local_servers(LOCAL_SERVERS)
}

/// A local server that answered `GET /v1/models` with a model list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LocalServer {
    name: &'static str,
    label: &'static str,
    url: String,
    models: Vec<String>,
}

/// The candidates that accept a connection and answer `GET /v1/models` with a model list. An
/// open port alone (`python -m http.server 8000`) is not a model server.
fn probe_local_servers(candidates: &[(&'static str, &'static str, u16)]) -> Vec<LocalServer> {
    candidates
        .iter()
        .filter(|(_, _, port)| {
            let addr = SocketAddr::from(([127, 0, 0, 1], *port));
            TcpStream::connect_timeout(&addr, Duration::from_millis(150)).is_ok()
        })
        .filter_map(|(name, label, port)| {
            let url = format!("http://127.0.0.1:{port}/v1");
            let client = Client::new(
                Provider::new(url.clone(), None),
                &ClientConfig {
                    connect_timeout: Duration::from_millis(500),
                    read_idle_timeout: Duration::from_secs(2),
                    ..ClientConfig::default()
                },
            );
            let models: Vec<String> = client
                .list_models()
                .ok()?
                .into_iter()
                .map(|m| m.id)
                .collect();
            Some(LocalServer {
                name,
                label,
                url,
                models,
            })
        })
        .collect()
}

fn ask(input: &mut impl BufRead, out: &mut impl Write, question: &str) -> std::io::Result<String> {
    write!(out, "{question}")?;
    out.flush()?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "end of input",
        ));
    }
    Ok(line.trim().to_owned())
}

fn ask_yes(
    input: &mut impl BufRead,
    out: &mut impl Write,
    question: &str,
    default: bool,
) -> std::io::Result<bool> {
    let a = ask(input, out, question)?;
    Ok(yes_no(&a, default).unwrap_or(default))
}

/// Reads a secret without echoing it when stdin is a terminal.
fn ask_secret(out: &mut impl Write, question: &str) -> std::io::Result<String> {
    // Echo goes off before the question shows: a key typed or pasted the moment it appears
    // must not be echoed (rpassword alone turns echo off only after the question is out).
    let _quiet = EchoOff::new();
    write!(out, "{question}")?;
    out.flush()?;
    rpassword::read_password().map(|s| s.trim().to_owned())
}

/// The controlling terminal's echo off for as long as this lives; nothing without a terminal.
struct EchoOff {
    tty: std::fs::File,
    saved: rustix::termios::Termios,
}

impl EchoOff {
    fn new() -> Option<EchoOff> {
        use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let saved = tcgetattr(&tty).ok()?;
        let mut quiet = saved.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        quiet.local_modes.insert(LocalModes::ECHONL);
        tcsetattr(&tty, OptionalActions::Now, &quiet).ok()?;
        Some(EchoOff { tty, saved })
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        use rustix::termios::{OptionalActions, tcsetattr};
        let _ = tcsetattr(&self.tty, OptionalActions::Now, &self.saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrns_blocking::mock::MockProvider;
    use std::io::{Read, Write};

    #[test]
    fn only_servers_that_list_models_are_offered() {
        let mock = MockProvider::start([])
            .unwrap()
            .with_models(["qwen3", "llama"]);
        // Any open port that answers HTTP, but not with a model list (`python -m http.server`).
        let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let plain_port = plain.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in plain.incoming().flatten() {
                let mut stream = stream;
                let mut buf = [0u8; 2048];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(
                    b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html>Directory listing</html>",
                );
            }
        });
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let found = probe_local_servers(&[
            ("plain", "vLLM", plain_port),
            ("closed", "Ollama", closed_port),
            ("mock", "LM Studio", mock.addr().port()),
        ]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].label, "LM Studio");
        assert_eq!(found[0].models, ["qwen3", "llama"]);
    }

    #[test]
    fn answers_pick_a_model_and_say_yes_or_no() {
        let models = ["a".to_owned(), "b".to_owned()];
        for (answer, want) in [("", "a"), ("2", "b"), (" b ", "b"), ("3", "3"), ("x", "x")] {
            assert_eq!(
                pick_model(answer, &models).as_deref(),
                Some(want),
                "{answer:?}"
            );
        }
        assert_eq!(pick_model("", &[]), None);
        assert_eq!(pick_model("1", &[]).as_deref(), Some("1"));
        for (answer, want) in [("", Some(false)), ("Y", Some(true)), ("no", Some(false))] {
            assert_eq!(yes_no(answer, false), want, "{answer:?}");
        }
        assert_eq!(yes_no("maybe", false), None);
        assert!(asks_skip_verify("https://10.0.0.2:8443/v1"));
        assert!(!asks_skip_verify("https://api.openai.com/v1"));
        assert!(!asks_skip_verify("http://127.0.0.1:8000/v1"));
    }
}
