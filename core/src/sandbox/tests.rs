use super::*;
use std::path::Path;

fn places() -> Places {
    Places {
        workspace: "/ws".into(),
        tmpdir: Some("/run/user/tmp".into()),
        system_temp: "/tmp".into(),
        extra_roots: vec!["/cache".into(), "relative".into(), "/ws".into()],
    }
}

#[test]
fn modes_parse_and_print_by_codex_names() {
    for mode in SandboxMode::ALL {
        assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
        let json = serde_json::to_string(&mode).unwrap();
        assert_eq!(json, format!("\"{mode}\""));
    }
    let err = "full".parse::<SandboxMode>().unwrap_err();
    assert!(err.to_string().contains("danger-full-access"), "{err}");
    assert_eq!(SandboxMode::default(), SandboxMode::WorkspaceWrite);
}

#[test]
fn workspace_write_roots_and_network() {
    let p = SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        &places(),
        NetworkAccess::Denied,
    );
    let roots: Vec<&str> = p
        .writable_roots()
        .iter()
        .map(|r| r.to_str().unwrap())
        .collect();
    assert_eq!(roots, ["/ws", "/run/user/tmp", "/tmp", "/cache"]);
    assert_eq!(p.network(), NetworkAccess::Denied);
    assert!(p.is_confined());
    let args: Vec<String> = p
        .launcher_args()
        .into_iter()
        .map(|a| a.into_string().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "--mode",
            "workspace-write",
            "--writable",
            "/ws",
            "--writable",
            "/run/user/tmp",
            "--writable",
            "/tmp",
            "--writable",
            "/cache",
            "--network",
            "denied"
        ]
    );
    assert_eq!(
        p.describe(),
        "workspace-write (writes only in /ws, /run/user/tmp, /tmp, /cache; no network)"
    );
    let open = SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        &places(),
        NetworkAccess::Allowed,
    );
    assert_eq!(open.network(), NetworkAccess::Allowed);
}

#[test]
fn read_only_and_full_access_ignore_the_network_setting() {
    let ro = SandboxPolicy::new(SandboxMode::ReadOnly, &places(), NetworkAccess::Allowed);
    assert!(ro.writable_roots().is_empty());
    assert_eq!(ro.network(), NetworkAccess::Denied);
    let full = SandboxPolicy::new(
        SandboxMode::DangerFullAccess,
        &places(),
        NetworkAccess::Denied,
    );
    assert_eq!(full.network(), NetworkAccess::Allowed);
    assert!(!full.is_confined());
    assert_eq!(full, SandboxPolicy::unconfined());
}

#[test]
fn texts_name_the_policy_and_the_way_out() {
    let p = SandboxPolicy::new(SandboxMode::ReadOnly, &places(), NetworkAccess::Denied);
    assert!(
        p.failure_note()
            .starts_with("hrns: this command ran in the sandbox read-only")
    );
    let refusal = unavailable_refusal(SandboxMode::WorkspaceWrite, "Landlock is not supported");
    assert!(refusal.contains("workspace-write"), "{refusal}");
    assert!(refusal.contains("Landlock is not supported"), "{refusal}");
    assert!(
        refusal.contains("--sandbox danger-full-access"),
        "{refusal}"
    );
}

#[test]
fn secret_names_are_withheld_unless_allowed() {
    for name in [
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "my_passwd",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "keychain",
    ] {
        assert!(is_secret_name(name), "{name}");
    }
    for name in ["PATH", "HOME", "TMPDIR", "LANG", "TERM", "CARGO_HOME"] {
        assert!(!is_secret_name(name), "{name}");
    }
    let policy = EnvPolicy {
        withheld: vec!["MY_PROVIDER".into()],
        allowed: vec!["GITHUB_TOKEN".into()],
    };
    assert!(policy.passes("PATH", "v"));
    assert!(policy.passes("GITHUB_TOKEN", "v"));
    assert!(!policy.passes("MY_PROVIDER", "v"));
    assert!(!policy.passes("OPENAI_API_KEY", "v"));
    assert!(
        !policy.passes("github_token", "v"),
        "the allow-list compares exactly"
    );
    assert!(
        !policy.passes("X_TOKEN", "v"),
        "a secret's name withholds it"
    );
}

#[test]
fn the_new_secret_names_are_withheld_and_their_look_alikes_pass() {
    for name in [
        "MYSQL_PWD",
        "NPM_AUTH",
        "npm_config__auth",
        "GH_PAT",
        "SENTRY_DSN",
        "SLACK_WEBHOOK_URL",
        "AUTH_HEADER",
        "HTTP_AUTHORIZATION",
        "GIT_AUTHOR_TOKEN",
        "XAUTHORITY",
    ] {
        assert!(is_secret_name(name), "{name}");
    }
    for name in [
        "PWD",
        "OLDPWD",
        "PATH",
        "PATHEXT",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "AUTHOR",
        "DSN_HOST_NAME",
        "PATTERN",
    ] {
        assert!(!is_secret_name(name), "{name}");
    }
}

#[test]
fn urls_with_passwords_are_withheld_whatever_the_name() {
    for value in [
        "postgres://u:pw@h/db",
        "https://user:p%40ss@proxy:3128",
        "mysql://root:x@127.0.0.1:3306",
        "https://a.example https://u:p@b.example/simple",
        "redis://:only-a-password@cache:6379/0",
    ] {
        assert!(has_url_password(value), "{value}");
    }
    for value in [
        "",
        "postgres://localhost/db",
        "ssh://git@github.com/o/r",
        "https://h/path/with@at",
        "https://h/?q=a:b@c",
        "https://u:@h/",
        "user:pw@host",
        "://:",
        "https://u:p#@h",
    ] {
        assert!(!has_url_password(value), "{value}");
    }
    let policy = EnvPolicy::default();
    assert_eq!(
        policy.verdict("DATABASE_URL", "postgres://u:pw@h/db"),
        EnvVerdict::UrlWithPassword
    );
    assert!(policy.passes("DATABASE_URL", "postgres://h/db"));
    let allowed = EnvPolicy {
        allowed: vec!["DATABASE_URL".into()],
        ..EnvPolicy::default()
    };
    assert!(allowed.passes("DATABASE_URL", "postgres://u:pw@h/db"));
}

#[test]
fn handles_to_outside_services_are_withheld_unless_allowed() {
    let policy = EnvPolicy::default();
    for name in [
        "TMUX",
        "TMUX_PANE",
        "STY",
        "DBUS_SESSION_BUS_ADDRESS",
        "GPG_AGENT_INFO",
        "DOCKER_HOST",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "KITTY_LISTEN_ON",
    ] {
        assert_eq!(
            policy.verdict(name, "/tmp/tmux-1000/default,1,0"),
            EnvVerdict::ServiceHandle,
            "{name}"
        );
    }
    // SSH_AUTH_SOCK is a handle too, and its name already says AUTH.
    assert!(!policy.passes("SSH_AUTH_SOCK", "/run/user/1000/ssh"));
    assert!(policy.passes("tmux", "x"), "names compare exactly");
    assert!(policy.passes("TERM", "tmux-256color"));
    let allowed = EnvPolicy {
        allowed: vec!["TMUX".into(), "DISPLAY".into()],
        ..EnvPolicy::default()
    };
    assert!(allowed.passes("TMUX", "/tmp/tmux-1000/default,1,0"));
    assert!(allowed.passes("DISPLAY", ":0"));
    assert!(!allowed.passes("STY", "1.pts-0"));
}

#[test]
fn settings_from_the_config_global_and_per_project() {
    let extra: crate::wire::Extra = serde_json::from_str(
        r#"{
            "sandbox": "read-only",
            "sandboxNetwork": true,
            "envAllow": ["GITHUB_TOKEN"],
            "projects": {
                "/src": {"sandbox": "workspace-write"},
                "/src/site": {"sandbox": "danger-full-access", "sandboxWritableRoots": ["/cache"]}
            }
        }"#,
    )
    .unwrap();
    let elsewhere = SafetySettings::from_config(&extra, Path::new("/home/u")).unwrap();
    assert_eq!(elsewhere.sandbox, Some(SandboxMode::ReadOnly));
    assert_eq!(elsewhere.network, NetworkAccess::Allowed);
    assert_eq!(elsewhere.env_allow, ["GITHUB_TOKEN"]);
    let src = SafetySettings::from_config(&extra, Path::new("/src/lib")).unwrap();
    assert_eq!(src.sandbox, Some(SandboxMode::WorkspaceWrite));
    let site = SafetySettings::from_config(&extra, Path::new("/src/site/www")).unwrap();
    assert_eq!(site.sandbox, Some(SandboxMode::DangerFullAccess));
    assert_eq!(site.writable_roots, [PathBuf::from("/cache")]);
    assert!(!site.web_fetch_private);
    // "/src/sitemap" is not below "/src/site".
    let map = SafetySettings::from_config(&extra, Path::new("/src/sitemap")).unwrap();
    assert_eq!(map.sandbox, Some(SandboxMode::WorkspaceWrite));
    assert_eq!(
        SafetySettings::from_config(&Default::default(), Path::new("/")).unwrap(),
        SafetySettings::default()
    );
}

#[test]
fn bad_settings_name_the_key() {
    for (text, key) in [
        (r#"{"sandbox": 3}"#, "sandbox"),
        (r#"{"sandbox": "none"}"#, "sandbox"),
        (r#"{"sandboxNetwork": "yes"}"#, "sandboxNetwork"),
        (
            r#"{"sandboxWritableRoots": ["rel"]}"#,
            "sandboxWritableRoots",
        ),
        (r#"{"envAllow": "X"}"#, "envAllow"),
        (
            r#"{"sandboxUnixSockets": ["run/docker.sock"]}"#,
            "sandboxUnixSockets",
        ),
        (r#"{"sandboxUnixSockets": "/s"}"#, "sandboxUnixSockets"),
        (r#"{"projects": []}"#, "projects"),
        (
            r#"{"projects": {"/": {"sandbox": 1}}}"#,
            "projects./.sandbox",
        ),
    ] {
        let extra: crate::wire::Extra = serde_json::from_str(text).unwrap();
        let err = SafetySettings::from_config(&extra, Path::new("/w")).unwrap_err();
        assert!(err.contains(key), "{text}: {err}");
    }
}

#[test]
fn unix_sockets_are_listed_per_project_too() {
    let extra: crate::wire::Extra = serde_json::from_str(
        r#"{"sandboxUnixSockets": ["/run/a.sock"],
            "projects": {"/src": {"sandboxUnixSockets": []}}}"#,
    )
    .unwrap();
    let global = SafetySettings::from_config(&extra, Path::new("/w")).unwrap();
    assert_eq!(global.unix_sockets, [PathBuf::from("/run/a.sock")]);
    let project = SafetySettings::from_config(&extra, Path::new("/src/x")).unwrap();
    assert!(project.unix_sockets.is_empty());
}

#[test]
fn a_program_may_ask_for_another_mode() {
    let session = SandboxPolicy::new(
        SandboxMode::WorkspaceWrite,
        &places(),
        NetworkAccess::Denied,
    );
    assert_eq!(
        session.for_mode(SandboxMode::WorkspaceWrite),
        Ok(session.clone())
    );
    let free = session.for_mode(SandboxMode::DangerFullAccess).unwrap();
    assert!(!free.is_confined());
    let read_only = session.for_mode(SandboxMode::ReadOnly).unwrap();
    assert_eq!(read_only.mode(), SandboxMode::ReadOnly);
    assert!(read_only.writable_roots().is_empty());
    let err = read_only.for_mode(SandboxMode::WorkspaceWrite).unwrap_err();
    assert!(err.contains("runs under read-only"), "{err}");
}

#[test]
fn git_writes_and_the_web_fetch_allow_list_from_the_config() {
    use crate::tool::protect::GitWrites;
    let ws = Path::new("/w");
    let parse = |text: &str| {
        let extra: crate::wire::Extra = serde_json::from_str(text).unwrap();
        SafetySettings::from_config(&extra, ws)
    };
    let default = parse("{}").unwrap();
    assert_eq!(default.writable_git, GitWrites::Refused);
    assert!(default.web_fetch_allow.is_empty());
    let set = parse(
        r#"{"sandboxWritableGit": true, "webFetchAllow": ["Docs.RS", "127.0.0.1", "[::1]"]}"#,
    )
    .unwrap();
    assert_eq!(set.writable_git, GitWrites::Allowed);
    assert_eq!(set.web_fetch_allow, ["docs.rs", "127.0.0.1", "[::1]"]);
    let project =
        parse(r#"{"sandboxWritableGit": true, "projects": {"/w": {"sandboxWritableGit": false}}}"#)
            .unwrap();
    assert_eq!(project.writable_git, GitWrites::Refused);
    for (text, expected) in [
        (
            r#"{"sandboxWritableGit": "yes"}"#,
            "sandboxWritableGit in the config must be true or false",
        ),
        (
            r#"{"webFetchAllow": "docs.rs"}"#,
            "webFetchAllow in the config must be a list of host names",
        ),
        (
            r#"{"webFetchAllow": ["https://docs.rs/"]}"#,
            "`https://docs.rs/` is not a host name",
        ),
        (
            r#"{"webFetchAllow": ["*.example.com"]}"#,
            "is not a host name",
        ),
        (r#"{"webFetchAllow": ["h:8080"]}"#, "is not a host name"),
        (r#"{"webFetchAllow": [""]}"#, "is not a host name"),
        (r#"{"webFetchAllow": ["[]"]}"#, "is not a host name"),
    ] {
        let err = parse(text).unwrap_err();
        assert!(err.contains(expected), "{text}: {err}");
    }
}
