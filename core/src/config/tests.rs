use super::*;
use serde_json::{Value, json};

/// A file as Go hrns writes it, plus keys hrns does not know.
const GO_FILE: &str = r#"{
  "providers": {
    "local": {
      "url": "http://127.0.0.1:11434/v1",
      "key": "",
      "model": "qwen3",
      "skipVerify": true
    },
    "openai": {
      "url": "https://api.openai.com/v1",
      "key": "sk-file-secret",
      "model": "gpt-4.1",
      "skipVerify": false,
      "note": {"added": "by hand"}
    }
  },
  "currentProvider": "openai",
  "currentAgent": "Builder",
  "theme": "dark",
  "history": [1, 2, 3]
}
"#;

fn no_env(_: &str) -> Option<String> {
    None
}

fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).to_owned())
    }
}

fn pick<'a>(provider: Option<&'a str>, model: Option<&'a str>) -> Selection<'a> {
    Selection { provider, model }
}

#[test]
fn go_file_parses() {
    let c = Config::parse(GO_FILE).unwrap();
    assert_eq!(c.provider_names(), ["local", "openai"]);
    assert_eq!(c.current_provider.as_deref(), Some("openai"));
    assert_eq!(c.current_agent.as_deref(), Some("Builder"));
    let local = &c.providers["local"];
    assert_eq!(local.url, "http://127.0.0.1:11434/v1");
    assert_eq!(local.key.as_deref(), Some(""));
    assert_eq!(local.model.as_deref(), Some("qwen3"));
    assert!(local.skip_verify);
    assert_eq!(
        c.providers["openai"].extra["note"],
        json!({"added": "by hand"})
    );
    assert_eq!(c.extra["theme"], "dark");
}

#[test]
fn round_trip_keeps_every_key() {
    let c = Config::parse(GO_FILE).unwrap();
    let text = c.to_json_pretty();
    assert!(text.ends_with("}\n"));
    let original: Value = serde_json::from_str(GO_FILE).unwrap();
    let written: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(original, written);
    assert_eq!(Config::parse(&text).unwrap(), c);
}

#[test]
fn new_keys_are_written_only_when_set() {
    let mut c = Config::default();
    let mut entry = ProviderEntry::new("https://x/v1");
    entry.key_env = Some("X_KEY".into());
    entry
        .headers
        .insert("HTTP-Referer".into(), "https://hrns".into());
    c.upsert_provider("x", entry);
    let written: Value = serde_json::from_str(&c.to_json_pretty()).unwrap();
    assert_eq!(
        written,
        json!({"providers": {"x": {
            "url": "https://x/v1",
            "keyEnv": "X_KEY",
            "skipVerify": false,
            "headers": {"HTTP-Referer": "https://hrns"}
        }}})
    );
    assert_eq!(
        Config::default().to_json_pretty(),
        "{\n  \"providers\": {}\n}\n"
    );
}

#[test]
fn empty_and_minimal_files() {
    for text in [
        "",
        "  \n\t",
        "{}",
        "{\"providers\": null}",
        "{\"providers\": {}}",
    ] {
        assert_eq!(Config::parse(text).unwrap(), Config::default(), "{text:?}");
    }
    let c = Config::parse(r#"{"providers": {"p": {}}}"#).unwrap();
    assert_eq!(c.providers["p"], ProviderEntry::default());
}

#[test]
fn corrupt_files_give_line_and_column() {
    // Columns point into or just past the offending value, as serde_json counts them.
    let cases: &[(&str, usize, usize, &str)] = &[
        (
            "{\n  \"providers\": {\n    \"a\": {\"url\": \"x\",}\n  }\n}",
            3,
            22,
            "trailing comma",
        ),
        (
            "{\n  \"providers\": {\"a\": {\"skipVerify\": \"yes\"}}\n}",
            2,
            41,
            "expected a boolean",
        ),
        (
            "{\n  \"providers\": {\"a\": {\"url\": 5}}\n}",
            2,
            30,
            "expected a string",
        ),
        ("{\"currentProvider\": [1]}", 1, 20, "expected a string"),
        ("{\"providers\": []}", 1, 14, "a map"),
        (
            "{\"providers\": {\"a\": \"http://x\"}}",
            1,
            30,
            "a provider object",
        ),
        ("[1, 2]", 1, 1, "a JSON object with `providers`"),
        (
            "{\"providers\": {}, \"providers\": {}}",
            1,
            34,
            "duplicate field `providers`",
        ),
        ("{\"a\": 1} x", 1, 10, "trailing characters"),
    ];
    for (text, line, column, needle) in cases {
        let e = Config::parse(text).unwrap_err();
        assert!(matches!(e, ConfigError::Invalid { .. }), "{text:?}: {e:?}");
        let msg = e.to_string();
        assert_eq!((e.line(), e.column()), (*line, *column), "{text:?}: {msg}");
        assert!(msg.contains(needle), "{text:?}: {msg}");
        assert!(
            msg.starts_with(&format!("line {line}, column {column}: ")),
            "{msg}"
        );
        assert!(msg.contains("does not overwrite"), "{msg}");
        assert!(!msg.contains(" at line "), "{msg}");
    }
}

#[test]
fn truncated_file() {
    let cut = &GO_FILE[..GO_FILE.find("\"currentProvider\"").unwrap() + 5];
    let e = Config::parse(cut).unwrap_err();
    assert!(matches!(e, ConfigError::Truncated { .. }), "{e:?}");
    assert_eq!(e.line(), 17);
    assert!(e.to_string().contains("ends in the middle"));
    assert!(matches!(
        Config::parse("{"),
        Err(ConfigError::Truncated { line: 1, .. })
    ));
}

#[test]
fn current_provider_from_the_file() {
    let c = Config::parse(GO_FILE).unwrap();
    let r = c.resolve(&Selection::default(), &no_env).unwrap();
    assert_eq!(r.name, "openai");
    assert_eq!(r.base_url, "https://api.openai.com/v1");
    assert_eq!(r.api_key, Some(Secret::new("sk-file-secret")));
    assert_eq!(r.model, "gpt-4.1");
    assert!(!r.skip_verify);
}

#[test]
fn selection_wins() {
    let c = Config::parse(GO_FILE).unwrap();
    let r = c
        .resolve(
            &pick(Some("local"), Some("llama3")),
            &env_of(&[(ENV_MODEL, "env-model")]),
        )
        .unwrap();
    assert_eq!((r.name.as_str(), r.model.as_str()), ("local", "llama3"));
    assert_eq!(r.api_key, None, "an empty key is no key");
    assert!(r.skip_verify);
    // Names match ignoring case; a blank selection defers to the file.
    let r = c.resolve(&pick(Some("LOCAL"), Some(" ")), &no_env).unwrap();
    assert_eq!((r.name.as_str(), r.model.as_str()), ("local", "qwen3"));
}

#[test]
fn the_only_provider_and_several_without_current() {
    let mut c = Config::parse(GO_FILE).unwrap();
    c.current_provider = None;
    let e = c.resolve(&Selection::default(), &no_env).unwrap_err();
    assert_eq!(
        e,
        ResolveError::NoCurrentProvider {
            known: vec!["local".into(), "openai".into()]
        }
    );
    assert!(e.to_string().contains("--provider"));
    c.current_provider = Some(String::new());
    assert!(matches!(
        c.resolve(&Selection::default(), &no_env),
        Err(ResolveError::NoCurrentProvider { .. })
    ));
    c.providers.remove("openai");
    assert_eq!(
        c.resolve(&Selection::default(), &no_env).unwrap().name,
        "local"
    );
}

#[test]
fn unknown_providers_list_the_configured_ones() {
    let mut c = Config::parse(GO_FILE).unwrap();
    let e = c.resolve(&pick(Some("groq"), None), &no_env).unwrap_err();
    assert_eq!(
        e.to_string(),
        "there is no provider named `groq` in the config (configured: local, openai): pick one of \
         those, or add it with /connect"
    );
    c.current_provider = Some("gone".into());
    let e = c.resolve(&Selection::default(), &no_env).unwrap_err();
    assert!(matches!(e, ResolveError::UnknownCurrentProvider { .. }));
    assert!(e.to_string().contains("currentProvider is `gone`"));
    let e = Config::default()
        .resolve(&pick(Some("groq"), None), &env_of(&[(ENV_API_KEY, "k")]))
        .unwrap_err();
    assert!(e.to_string().contains("(none are configured)"), "{e}");
    assert!(
        !e.to_string().contains("one of those"),
        "nothing to pick from: {e}"
    );
    assert!(e.to_string().contains("add one to the config"), "{e}");
}

#[test]
fn the_provider_from_the_environment_can_be_named() {
    // `hrns providers` lists it as `env`; `--provider env` picks it.
    let vars = env_of(&[(ENV_API_KEY, "k"), (ENV_MODEL, "m")]);
    let r = Config::default()
        .resolve(&pick(Some(ENV_PROVIDER_NAME), None), &vars)
        .unwrap();
    assert_eq!(
        (r.name.as_str(), r.model.as_str()),
        (ENV_PROVIDER_NAME, "m")
    );
    // Beside configured ones too, and without the variables it is the usual error.
    let c = Config::parse(GO_FILE).unwrap();
    let r = c.resolve(&pick(Some("env"), None), &vars).unwrap();
    assert_eq!(r.name, ENV_PROVIDER_NAME);
    let e = c.resolve(&pick(Some("env"), None), &no_env).unwrap_err();
    assert_eq!(e, ResolveError::NotConfigured);
    // A configured provider of that name wins.
    let c =
        Config::parse(r#"{"providers": {"env": {"url": "http://u", "model": "own"}}}"#).unwrap();
    let r = c.resolve(&pick(Some("env"), None), &vars).unwrap();
    assert_eq!((r.base_url.as_str(), r.model.as_str()), ("http://u", "own"));
}

#[test]
fn key_env() {
    let c = Config::parse(
        r#"{"providers": {"or": {"url": "https://or/v1", "keyEnv": "OR_KEY", "model": "m"}}}"#,
    )
    .unwrap();
    let r = c
        .resolve(
            &Selection::default(),
            &env_of(&[("OR_KEY", "sk-env"), (ENV_API_KEY, "sk-openai")]),
        )
        .unwrap();
    assert_eq!(r.api_key, Some(Secret::new("sk-env")));
    for env in [
        &env_of(&[(ENV_API_KEY, "sk-openai")]),
        &env_of(&[("OR_KEY", " ")]),
    ] {
        let e = c.resolve(&Selection::default(), env).unwrap_err();
        assert_eq!(
            e,
            ResolveError::KeyEnvUnset {
                provider: "or".into(),
                variable: "OR_KEY".into()
            }
        );
        assert!(e.to_string().contains("set OR_KEY"), "{e}");
    }
    // A key in the file wins over keyEnv.
    let mut c = c;
    c.providers.get_mut("or").unwrap().key = Some("sk-file".into());
    let r = c.resolve(&Selection::default(), &no_env).unwrap();
    assert_eq!(r.api_key, Some(Secret::new("sk-file")));
}

#[test]
fn openai_key_never_goes_to_a_configured_provider() {
    let c =
        Config::parse(r#"{"providers": {"x": {"url": "https://x/v1", "model": "m"}}}"#).unwrap();
    let r = c
        .resolve(
            &Selection::default(),
            &env_of(&[(ENV_API_KEY, "sk-openai")]),
        )
        .unwrap();
    assert_eq!(r.api_key, None);
}

#[test]
fn env_only() {
    let c = Config::default();
    let r = c
        .resolve(
            &Selection::default(),
            &env_of(&[(ENV_API_KEY, "sk-1"), (ENV_MODEL, "gpt-4.1")]),
        )
        .unwrap();
    assert_eq!(r.name, ENV_PROVIDER_NAME);
    assert_eq!(r.base_url, DEFAULT_BASE_URL);
    assert_eq!(r.api_key, Some(Secret::new("sk-1")));
    assert_eq!(r.model, "gpt-4.1");

    let r = c
        .resolve(
            &pick(None, Some("llama3")),
            &env_of(&[(ENV_BASE_URL, "http://127.0.0.1:8080/v1"), (ENV_MODEL, "x")]),
        )
        .unwrap();
    assert_eq!(
        (r.base_url.as_str(), r.model.as_str()),
        ("http://127.0.0.1:8080/v1", "llama3")
    );
    assert_eq!(r.api_key, None);

    let e = c
        .resolve(
            &Selection::default(),
            &env_of(&[(ENV_MODEL, "m"), (ENV_API_KEY, "")]),
        )
        .unwrap_err();
    assert_eq!(e, ResolveError::NotConfigured);
    assert!(e.to_string().contains("set OPENAI_API_KEY"));

    let e = c
        .resolve(&Selection::default(), &env_of(&[(ENV_API_KEY, "k")]))
        .unwrap_err();
    assert_eq!(
        e,
        ResolveError::MissingModel {
            provider: "env".into()
        }
    );
    assert!(e.to_string().contains("--model") && e.to_string().contains("HRNS_MODEL"));
}

#[test]
fn model_precedence() {
    let c = Config::parse(
        r#"{"providers": {"a": {"url": "http://u", "model": "entry"}, "b": {"url": "http://u"}}}"#,
    )
    .unwrap();
    let env = env_of(&[(ENV_MODEL, "from-env")]);
    let model = |provider, model| c.resolve(&pick(Some(provider), model), &env).unwrap().model;
    assert_eq!(model("a", Some("chosen")), "chosen");
    assert_eq!(
        model("a", None),
        "entry",
        "HRNS_MODEL is a default, not an override"
    );
    assert_eq!(model("b", None), "from-env");
    let e = c.resolve(&pick(Some("b"), None), &no_env).unwrap_err();
    assert_eq!(
        e,
        ResolveError::MissingModel {
            provider: "b".into()
        }
    );
}

#[test]
fn missing_url() {
    let c = Config::parse(r#"{"providers": {"a": {"model": "m"}}}"#).unwrap();
    let e = c.resolve(&Selection::default(), &no_env).unwrap_err();
    assert_eq!(
        e.to_string(),
        "provider `a` has no url: set providers.a.url in the config"
    );
}

#[test]
fn to_provider() {
    let mut entry = ProviderEntry::new("https://azure/v1");
    entry.model = Some("m".into());
    entry.headers.insert("api-key".into(), "az-secret".into());
    entry.headers.insert("X-Title".into(), "hrns".into());
    let mut c = Config::default();
    c.upsert_provider("az", entry);
    let p = c
        .resolve(&Selection::default(), &no_env)
        .unwrap()
        .to_provider();
    assert_eq!(p.base_url, "https://azure/v1");
    assert_eq!(p.api_key, None);
    assert_eq!(
        p.headers,
        [
            ("X-Title".to_owned(), "hrns".to_owned()),
            ("api-key".to_owned(), "az-secret".to_owned())
        ]
    );
}

#[test]
fn debug_never_shows_secrets() {
    let mut c = Config::parse(GO_FILE).unwrap();
    c.extra.insert("apiToken".into(), json!("top-secret-extra"));
    let entry = c.providers.get_mut("openai").unwrap();
    entry
        .headers
        .insert("Authorization".into(), "Bearer header-secret".into());
    entry.headers.insert("X-Title".into(), "visible".into());
    entry.extra.insert("password".into(), json!("entry-secret"));
    let r = c.resolve(&Selection::default(), &no_env).unwrap();
    let shown = format!("{c:?} {:?} {r:?} {r:#?}", c.providers["openai"]);
    for secret in [
        "sk-file-secret",
        "header-secret",
        "top-secret-extra",
        "entry-secret",
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    assert!(
        shown.contains("[redacted]") && shown.contains("visible") && shown.contains("apiToken")
    );
}

#[test]
fn onboarding_edits() {
    let mut c = Config::parse(GO_FILE).unwrap();
    let mut entry = ProviderEntry::new("https://api.openai.com/v1");
    entry.key_env = Some(ENV_API_KEY.into());
    entry.model = Some("gpt-5".into());
    c.upsert_provider("openai", entry);
    let openai = &c.providers["openai"];
    assert_eq!(openai.key, None);
    assert_eq!(openai.model.as_deref(), Some("gpt-5"));
    assert_eq!(
        openai.extra["note"],
        json!({"added": "by hand"}),
        "unknown keys survive"
    );

    c.upsert_provider("groq", ProviderEntry::new("https://api.groq.com/openai/v1"));
    c.set_current_provider("groq").unwrap();
    assert_eq!(c.current_provider.as_deref(), Some("groq"));
    let e = c.set_current_provider("nope").unwrap_err();
    assert!(matches!(e, ResolveError::UnknownProvider { .. }));
    assert_eq!(c.current_provider.as_deref(), Some("groq"));
    c.set_current_agent("Planner");
    let back = Config::parse(&c.to_json_pretty()).unwrap();
    assert_eq!(back, c);
    assert_eq!(back.extra["theme"], "dark");
}

#[test]
fn set_provider_model_keeps_the_model_in_the_entry() {
    let mut c = Config::default();
    c.upsert_provider("p", ProviderEntry::new("http://p/v1"));
    assert!(c.set_provider_model("p", "big"));
    assert_eq!(c.providers["p"].model.as_deref(), Some("big"));
    assert!(c.to_json_pretty().contains("\"model\": \"big\""));
    assert!(
        !c.set_provider_model(ENV_PROVIDER_NAME, "x"),
        "env provider is not saved"
    );
}

#[test]
fn a_base_url_that_is_not_http_is_a_config_error_naming_it() {
    let env_url =
        |url: &'static str| move |name: &str| (name == ENV_BASE_URL).then(|| url.to_owned());
    for bad in [
        "not-a-url",
        "ftp://host/v1",
        "http://",
        "https:///v1",
        "http://a b/v1",
    ] {
        let env = env_url(bad);
        let err = Config::default()
            .resolve(
                &Selection {
                    model: Some("m"),
                    ..Selection::default()
                },
                &env,
            )
            .unwrap_err();
        assert!(
            matches!(err, ResolveError::InvalidUrl { .. }),
            "{bad}: {err:?}"
        );
        let text = err.to_string();
        assert!(text.contains(bad) && text.contains(ENV_BASE_URL), "{text}");
    }
    for good in [
        "http://127.0.0.1:8000/v1",
        "HTTPS://api.example.com",
        "http://[::1]:8080/v1",
        "http://user@host/v1",
    ] {
        let env = env_url(good);
        let ok = Config::default().resolve(
            &Selection {
                model: Some("m"),
                ..Selection::default()
            },
            &env,
        );
        assert!(ok.is_ok(), "{good}: {ok:?}");
    }
    let mut c = Config::default();
    c.upsert_provider("p", ProviderEntry::new("localhost:8080/v1"));
    let err = c
        .resolve(
            &Selection {
                model: Some("m"),
                ..Selection::default()
            },
            &|_| None,
        )
        .unwrap_err();
    assert!(err.to_string().contains("providers.p.url"), "{err}");
}

#[test]
fn quirks_are_flat_provider_keys_that_round_trip_and_reach_the_session() {
    use crate::quirks::{MaxTokensField, StreamOptions, ToolChoice};
    let text = r#"{"providers":{"local":{"url":"http://127.0.0.1:8080/v1","model":"m",
        "streamOptions":false,"maxTokensField":"max_completion_tokens","color":"red"}}}"#;
    let mut c = Config::parse(text).unwrap();
    let q = c.providers["local"].quirks;
    assert_eq!(q.stream_options, StreamOptions::Omit);
    assert_eq!(q.max_tokens_field, MaxTokensField::MaxCompletionTokens);
    assert_eq!(q.tool_choice, ToolChoice::Omit);
    assert!(!c.providers["local"].extra.contains_key("streamOptions"));
    let resolved = c.resolve(&Selection::default(), &|_| None).unwrap();
    assert_eq!(resolved.to_provider().quirks, q);

    let learned = q.learn_dropped("stream_options");
    assert_eq!(learned, None, "already known");
    let mut more = q;
    more.tool_choice = ToolChoice::Auto;
    assert!(c.set_quirks("local", more));
    assert!(!c.set_quirks("nope", more));
    let saved = c.to_json_pretty();
    let v: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(v["providers"]["local"]["toolChoice"], "auto");
    assert_eq!(v["providers"]["local"]["streamOptions"], false);
    assert_eq!(v["providers"]["local"]["color"], "red");
    assert_eq!(Config::parse(&saved).unwrap(), c);

    c.set_quirks("local", Default::default());
    let v: serde_json::Value = serde_json::from_str(&c.to_json_pretty()).unwrap();
    assert!(v["providers"]["local"].get("streamOptions").is_none());

    let bad = r#"{"providers":{"local":{"url":"u","streamOptions":"nope"}}}"#;
    let err = Config::parse(bad).unwrap_err();
    assert!(err.to_string().contains("streamOptions"), "{err}");
}
