//! `hrns doctor`: probes the provider with hrns-core's [`Probe`], prints what works, and saves
//! the quirks it learned with the provider in the config.

use crate::args::{DoctorArgs, Global};
use crate::setup::learned::{QuirkStore, Saved};
use crate::setup::{CliError, ConfigFile, env_var};
use crate::term::style::Style;
use hrns_blocking::{Client, ClientConfig};
use hrns_core::config::Selection;
use hrns_core::probe::{Probe, ProbeOptions, Report, Verdict};
use std::io::Read;
use std::time::{Duration, Instant};

/// Longest wait for any probe answer: a probe is short, and a hung server must not hang it.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the probe; exit 0 when a session can chat with the provider, 1 otherwise.
pub(crate) fn run(global: &Global, args: &DoctorArgs) -> Result<u8, CliError> {
    let file = ConfigFile::load(global.config.as_deref())?;
    let selection = Selection {
        provider: global.provider.as_deref(),
        model: global.model.as_deref(),
    };
    let resolved = file
        .config
        .resolve(&selection, &env_var)
        .map_err(|e| CliError::usage(file.name_in(&e, e.concerns_config_file())))?;
    let provider = resolved.to_provider();
    // The key, and what the URL carries (a password, a key in the query), never printed.
    crate::host::redact::remember(&hrns_core::secrets::Secrets::of_provider(&provider));
    let client = Client::new(
        provider.clone(),
        &ClientConfig {
            skip_verify: resolved.skip_verify,
            read_idle_timeout: PROBE_TIMEOUT,
            ..ClientConfig::default()
        },
    );
    let mut probe = Probe::new(
        provider,
        resolved.model.clone(),
        ProbeOptions {
            skip_verify: resolved.skip_verify,
        },
    );
    if !args.json {
        let s = Style::stderr();
        eprintln!(
            "{}",
            s.harness(&format!(
                "probing `{}` ({}) with model {} …",
                resolved.name,
                hrns_core::url_secrets::hide_url_secrets(&resolved.base_url),
                resolved.model
            ))
        );
    }
    drive(&client, &mut probe);
    let report = probe.report();
    let store = QuirkStore {
        path: file.path.clone(),
        provider: resolved.name.clone(),
    };
    // What a failed probe learned is partial: only a provider that chats gets its quirks saved.
    let saved = if report.chat_works {
        store.save(report.quirks)
    } else {
        Ok(Saved::Unchanged)
    };
    if args.json {
        let mut value = serde_json::to_value(&report).unwrap_or_default();
        value["provider"] = resolved.name.clone().into();
        value["model"] = resolved.model.clone().into();
        value["saved"] = match &saved {
            Ok(Saved::Written(_)) => true.into(),
            Ok(Saved::Unchanged | Saved::NoEntry) | Err(_) => false.into(),
        };
        println!("{}", crate::host::redact::redact(&value.to_string()));
    } else {
        print!("{}", crate::host::redact::redact(&table(&report)));
        println!("{}", saved_line(&saved, &report, &store));
    }
    if let Err(e) = saved {
        eprintln!("hrns: {}", e.message);
    }
    Ok(if report.chat_works {
        0
    } else {
        crate::exit::FAILURE
    })
}

/// Sends each probe request and feeds the answer back as it arrives.
fn drive(client: &Client, probe: &mut Probe) {
    let mut buf = vec![0u8; 16 * 1024];
    while let Some(req) = probe.next_request(Instant::now()) {
        let mut resp = match client.send(&req) {
            Ok(r) => r,
            Err(e) => {
                probe.handle_transport_error(Instant::now(), req.id, e);
                continue;
            }
        };
        let headers: Vec<(&str, &[u8])> = resp
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        probe.handle_response_head(Instant::now(), req.id, resp.status, headers);
        loop {
            match resp.body.read(&mut buf) {
                Ok(0) => {
                    probe.handle_response_end(Instant::now(), req.id);
                    break;
                }
                Ok(n) => probe.handle_response_data(Instant::now(), req.id, &buf[..n]),
                Err(e) => {
                    let error = hrns_blocking::client::io_error(&e);
                    probe.handle_transport_error(Instant::now(), req.id, error);
                    break;
                }
            }
        }
    }
}

/// The report as a table: verdict, check, what was seen, and on the next line what hrns does.
pub(crate) fn table(report: &Report) -> String {
    let s = Style::stdout();
    let mut out = String::new();
    for f in &report.findings {
        let word = f.verdict.as_str();
        let padded = format!("{word:<11}");
        let verdict = match f.verdict {
            Verdict::Ok => s.ok(&padded),
            Verdict::Degraded => s.args(&padded),
            Verdict::Unsupported | Verdict::Failed => s.error(&padded),
            Verdict::Skipped => s.dim(&padded),
        };
        out.push_str(&format!("{verdict} {:<21} {}\n", f.check.title(), f.detail));
        if !f.action.is_empty() {
            out.push_str(&format!(
                "{:33} {}\n",
                "",
                s.dim(&format!("→ {}", f.action))
            ));
        }
    }
    out
}

fn saved_line(saved: &Result<Saved, CliError>, report: &Report, store: &QuirkStore) -> String {
    let path = store.path.display();
    match saved {
        Ok(Saved::Written(keys)) if keys.is_empty() => {
            format!("saved: no quirks for `{}` in {path}", store.provider)
        }
        Ok(Saved::Written(keys)) => {
            format!(
                "saved for `{}` in {path}: {}",
                store.provider,
                keys.join(", ")
            )
        }
        Ok(Saved::Unchanged) if !report.chat_works => {
            "nothing saved: chat does not work, so what was learned is partial".to_owned()
        }
        Ok(Saved::Unchanged) => format!("nothing new to save for `{}`", store.provider),
        Ok(Saved::NoEntry) if report.quirks.is_default() => {
            "nothing to save (the provider comes from environment variables)".to_owned()
        }
        Ok(Saved::NoEntry) => format!(
            "not saved: the provider comes from environment variables; add it to the config to keep: {}",
            report
                .quirks
                .to_keys()
                .iter()
                .map(|(k, v)| format!("\"{k}\": {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(_) => "not saved (see the error below)".to_owned(),
    }
}
