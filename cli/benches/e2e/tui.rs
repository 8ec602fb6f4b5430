//! The TUI rendering a long Markdown answer in a pseudo-terminal, against starting and quitting.

use super::*;

/// The last words of the TUI benchmark's answer.
pub(crate) const ANSWER_END: &str = "End of the benchmark answer.";

/// What the benchmark answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Headings, emphasis, code spans, links, lists, quotes, tables and fenced code in two
    /// languages (highlighted).
    Markdown,
    /// The same without tables and fenced code: text the highlighter never sees.
    Prose,
}

/// A Markdown answer of about `bytes` (400 KB in the issues' figures) in deltas of 6 and 7
/// bytes alternately (about 61 000 for 400 KB), as a fast provider streams it.
pub(crate) fn markdown_deltas(bytes: usize, kind: Kind) -> Vec<String> {
    let mut text = String::new();
    let mut n = 0;
    while text.len() < bytes {
        n += 1;
        text.push_str(&format!(
            "## Section {n}\n\nSome **bold** words, some *italic* ones, a `code span` and a \
             [link](https://example.com/page/{n}) in a paragraph long enough to wrap on an \
             ordinary terminal of one hundred columns, café included.\n\n\
             - a bullet with **emphasis**\n- a second bullet\n  - a nested one\n\
             1. first step\n2. second step\n\n> a quoted line of text\n\n"
        ));
        match kind {
            Kind::Markdown => text.push_str(&format!(
                "```rust\nfn section_{n}() {{\n    println!(\"{n}\");\n}}\n```\n\n\
                 | Name | Size | Notes |\n|:---|---:|---|\n| item {n} | {n} KB | a cell long \
                 enough to need some room |\n| 日本語 | 2 | ✅ done |\n\n\
                 ```python\ndef section_{n}():\n    return \"{n}\"  # a comment\n```\n\n"
            )),
            Kind::Prose => text.push_str(&format!(
                "Another paragraph for section {n}, of about the length the table and the two \
                 code blocks take in the Markdown answer, so that both answers have as many \
                 sections for their size; it wraps too, as prose does, over two or three \
                 lines of an ordinary terminal, with nothing in it but words and punctuation \
                 of the usual kind, written out plainly.\n\n"
            )),
        }
    }
    text.push_str(ANSWER_END);
    let mut deltas = Vec::new();
    let mut rest = text.as_str();
    let mut step = 6;
    while !rest.is_empty() {
        let mut cut = step.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        deltas.push(rest[..cut].to_owned());
        rest = &rest[cut..];
        step = 13 - step;
    }
    deltas
}

/// Runs the TUI in a pseudo-terminal against the mock at `url`; with `prompt` other than
/// `-`, sends it and waits for the whole answer; then quits and prints the TUI process's CPU
/// time in microseconds (it is this process's only child).
pub(crate) fn tui_child(url: &str, prompt: &str) {
    use nix::sys::resource::{UsageWho, getrusage};
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let dir = |d: &str| root.path().join(d).display().to_string();
    let env = [
        ("HOME", dir("home")),
        ("XDG_CONFIG_HOME", dir("config")),
        ("XDG_STATE_HOME", dir("state")),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", url.to_owned()),
        ("OPENAI_API_KEY", "k".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    let t = Duration::from_secs(120);
    let work = root.path().join("work");
    // `HRNS_BENCH_TUI_WRAP="valgrind --tool=callgrind"` runs the TUI under a profiler.
    let wrap = std::env::var("HRNS_BENCH_TUI_WRAP").unwrap_or_default();
    // `HRNS_BENCH_BIN` measures another build, as in the other benches.
    let bin = hrns_bin();
    let mut words: Vec<&str> = wrap.split_whitespace().collect();
    words.push(&bin);
    let mut p = pty::Pty::spawn(words[0], &words[1..], &work, &env, 30, 100);
    p.expect("mock-model", t);
    if prompt != "-" {
        p.send(&format!("{prompt}\r"));
        p.expect(ANSWER_END, t);
    }
    p.send("/quit\r");
    assert_eq!(p.wait(t), 0);
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
    let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
    println!("{}", us(u.user_time()) + us(u.system_time()));
}

/// The TUI's CPU time for a 400 KB Markdown answer of about 61 000 deltas and for the same
/// size of prose, and for starting and quitting alone (its baseline), interleaved, each in a
/// fresh pseudo-terminal. `HRNS_BENCH_TUI_KB` (a comma-separated list, default 400) gives
/// other sizes: `100,200,400,800` is the size sweep of BENCHMARKS.md.
pub(crate) fn tui_render() {
    let sizes = std::env::var("HRNS_BENCH_TUI_KB").unwrap_or_else(|_| "400".into());
    println!(
        "\n## TUI rendering a Markdown answer (CPU time of the process; median of {RUNS}, range)\n"
    );
    for kb in sizes.split(',') {
        let kb: usize = kb.trim().parse().expect("HRNS_BENCH_TUI_KB: sizes in KB");
        for kind in [Kind::Markdown, Kind::Prose] {
            tui_render_one(kb * 1000, kind);
        }
    }
}

fn tui_render_one(size: usize, kind: Kind) {
    use hrns_blocking::mock::chunk;
    let deltas = markdown_deltas(size, kind);
    let bytes: usize = deltas.iter().map(String::len).sum();
    let mut events = vec![chunk::role_chunk()];
    events.extend(deltas.iter().map(|d| chunk::text_chunk(d)));
    events.push(chunk::finish_chunk("stop"));
    let mock = MockProvider::start_repeating(Reply::sse(events)).unwrap();
    mock.set_recording(false);
    let url = mock.base_url();
    let cpu = |prompt: &str| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["tui-child", &url, prompt])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let us: u64 = text.trim().parse().unwrap_or_else(|_| {
            panic!(
                "the TUI run failed: {text} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        Duration::from_micros(us)
    };
    let (mut idle, mut answer) = (Vec::new(), Vec::new());
    for round in 0..=RUNS {
        let (i, a) = (cpu("-"), cpu("write the benchmark answer"));
        if round > 0 {
            idle.push(i);
            answer.push(a);
        }
    }
    let show = |v: &mut Vec<Duration>| {
        v.sort();
        format!(
            "{:.3} s ({:.3}–{:.3})",
            v[v.len() / 2].as_secs_f64(),
            v[0].as_secs_f64(),
            v[v.len() - 1].as_secs_f64()
        )
    };
    let render = median(answer.clone()).saturating_sub(median(idle.clone()));
    println!(
        "{kind:?}, {} KB in {} deltas: {}; started and quit alone: {}; the answer's share: {:.3} s",
        bytes / 1000,
        deltas.len(),
        show(&mut answer),
        show(&mut idle),
        render.as_secs_f64()
    );
}
