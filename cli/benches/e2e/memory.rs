//! Peak memory of a session holding a large history.

use super::*;

/// Peak resident memory of this process (VmHWM), in bytes.
pub(crate) fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// In a child process (so the mock's copy of the body is not counted): stream the body at
/// `url` through the blocking client and print the accumulated text size and the peak RSS.
pub(crate) fn memory_child(url: &str) {
    let before = peak_rss();
    let client = hrns_blocking::Client::new(Provider::new(url, None), &Default::default());
    let mut events = client.stream_chat(&request()).unwrap();
    for ev in events.by_ref() {
        drop(ev.unwrap());
    }
    let c = events.finish().unwrap();
    let text: usize = c
        .choices
        .iter()
        .map(|ch| {
            ch.content.len()
                + ch.reasoning.as_ref().map_or(0, String::len)
                + ch.tool_calls
                    .iter()
                    .map(|t| t.arguments.len())
                    .sum::<usize>()
        })
        .sum();
    println!("{text} {before} {}", peak_rss());
}

pub(crate) fn memory(mb: usize) {
    println!("\n## Peak memory streaming {mb} MB through hrns-blocking (child process)\n");
    println!("| variant | accumulated text | peak RSS | RSS before | target (2 × text + 16 MiB) |");
    println!("|---|---|---|---|---|");
    for variant in [streams::Variant::Content, streams::Variant::Mix] {
        let stream = streams::generate(variant, mb * 1_000_000);
        let mock = MockProvider::start_repeating(Reply::sse_raw(stream.body)).unwrap();
        mock.set_recording(false);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["memory-child", &mock.base_url()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let nums: Vec<u64> = text
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        let [text, before, peak] = nums[..] else {
            panic!(
                "memory child failed: {text} {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        println!(
            "| {} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
            variant.name(),
            mib(text),
            mib(peak),
            mib(before),
            mib(2 * text + 16 * 1024 * 1024)
        );
    }
}
