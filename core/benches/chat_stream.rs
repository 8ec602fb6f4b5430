//! `ChatStream` throughput over generated streams of 1, 10 and 100 MB.
//!
//! Each iteration does what a driver does with a response body: feed it in 16 KiB pieces (a
//! socket read), drain every event after each piece, then `finish()`. Group `bytes` reports
//! MB/s (10^6 bytes), group `events` the same runs as SSE events per second (one token per
//! event). Run with `cargo bench -p hrns-core --bench chat_stream`; a filter such as
//! `-- bytes/content` picks a subset.

use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, black_box, criterion_group,
    criterion_main, measurement::WallTime,
};
use hrns_core::{ChatStream, Completion};
use std::time::Duration;

#[path = "streams/mod.rs"]
mod streams;

use streams::{Stream, Variant};

/// How much a driver reads from the socket at once.
const PIECE: usize = 16 * 1024;

/// Body sizes in MB (10^6 bytes).
const SIZES_MB: [usize; 3] = [1, 10, 100];

/// Decodes `body` as a driver would and returns the completion.
fn run(body: &[u8]) -> Completion {
    let mut stream = ChatStream::new();
    for piece in body.chunks(PIECE) {
        stream.feed(piece);
        while let Some(event) = stream.poll_event().expect("generated streams are valid") {
            black_box(event);
        }
    }
    stream.feed_eof();
    while let Some(event) = stream.poll_event().expect("generated streams are valid") {
        black_box(event);
    }
    stream.finish().expect("generated streams are complete")
}

/// Checks once, outside the timing, that a stream decodes to what it was built from.
fn verify(variant: Variant, stream: &Stream) {
    let completion = run(&stream.body);
    assert!(completion.done, "{}: no [DONE]", variant.name());
    for (choice, content) in completion.choices.iter().zip(&stream.content) {
        assert_eq!(&choice.content, content, "{}: content", variant.name());
    }
    let first = &completion.choices[0];
    assert_eq!(
        first.reasoning.as_deref().unwrap_or_default(),
        stream.reasoning,
        "{}: reasoning",
        variant.name()
    );
    let arguments = first.tool_calls.first().map(|c| c.arguments.as_str());
    assert_eq!(
        arguments.unwrap_or_default(),
        stream.arguments,
        "{}: arguments",
        variant.name()
    );
    if !stream.arguments.is_empty() {
        serde_json::from_str::<serde_json::Value>(&stream.arguments)
            .expect("generated arguments are JSON");
    }
}

/// Fewer samples for the larger bodies, so the whole run stays a few minutes.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>, mb: usize) {
    group.warm_up_time(Duration::from_secs(1));
    match mb {
        0..=1 => {
            group
                .sample_size(20)
                .measurement_time(Duration::from_secs(2));
        }
        2..=10 => {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(3));
        }
        _ => {
            // One iteration per sample.
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(5))
                .sampling_mode(SamplingMode::Flat);
        }
    }
}

fn chat_stream(c: &mut Criterion) {
    for mb in SIZES_MB {
        let streams: Vec<(Variant, Stream)> = Variant::ALL
            .into_iter()
            .map(|variant| {
                let stream = streams::generate(variant, mb * 1_000_000);
                verify(variant, &stream);
                (variant, stream)
            })
            .collect();
        for (variant, stream) in &streams {
            eprintln!(
                "{}/{mb}MB: {} bytes, {} events ({} bytes per event)",
                variant.name(),
                stream.body.len(),
                stream.events,
                stream.body.len() as u64 / stream.events
            );
        }
        for (group_name, bytes) in [("bytes", true), ("events", false)] {
            let mut group = c.benchmark_group(group_name);
            configure(&mut group, mb);
            for (variant, stream) in &streams {
                group.throughput(if bytes {
                    Throughput::BytesDecimal(stream.body.len() as u64)
                } else {
                    Throughput::Elements(stream.events)
                });
                group.bench_function(format!("{}/{mb}MB", variant.name()), |b| {
                    b.iter(|| run(black_box(&stream.body)))
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, chat_stream);
criterion_main!(benches);
