//! The cost of checkpoints on generated trees: the first snapshot, a step that changed one
//! file, an unchanged step's disk, and undoing one step.
//!
//! `cargo bench -p hrns-blocking --bench checkpoints [-- FILES...]` (default 2000 20000
//! 200000: the size sweep); each figure is the median of the runs, with the range. The trees
//! are made in a temporary directory, in directories of 100 files: 10 KB files up to 20 000
//! files (200 MB), smaller ones past it so a tree stays at 200 MB (200 000 files of 1 KB).
//! After the figures it prints each target of issue 36 that applies at the size, met or not.

use hrns_blocking::checkpoint::{CheckpointLimits, CheckpointStore};
use hrns_core::checkpoint::Overwrite;
use std::path::Path;
use std::time::{Duration, Instant};

const STEPS: usize = 9;

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![2_000, 20_000, 200_000]
    } else {
        sizes
    };
    for files in sizes {
        run(files);
    }
}

fn run(files: usize) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let file_bytes = (200 * 1024 * 1024 / files).min(10 * 1024);
    for i in 0..files {
        let d = ws.join(format!("d{}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&d).unwrap();
        }
        let mut content = format!("file {i}\n").into_bytes();
        content.resize(file_bytes, b'x');
        std::fs::write(d.join(format!("f{i}.txt")), &content).unwrap();
    }
    let limits = CheckpointLimits {
        max_dir_files: usize::MAX,
        time_limit: Duration::from_secs(600),
        ..CheckpointLimits::default()
    };
    let store = CheckpointStore::open(&dir.path().join("state"), &ws, limits).unwrap();
    let started = Instant::now();
    let first = store.snapshot("bench", "first").unwrap();
    let first_time = started.elapsed();

    let mut step_times = Vec::new();
    let mut ids = vec![first.id];
    for step in 0..STEPS {
        let path = ws.join(format!("d{}/f{}.txt", step % (files / 100).max(1), step));
        std::fs::write(&path, format!("step {step}")).unwrap();
        let started = Instant::now();
        let snap = store.snapshot("bench", "step").unwrap();
        step_times.push(started.elapsed());
        assert_eq!(snap.changed.len(), 1);
        ids.push(snap.id);
    }

    let disk = store.disk_use();
    let mut unchanged_disk = Vec::new();
    let mut unchanged_times = Vec::new();
    for _ in 0..STEPS {
        let started = Instant::now();
        store.snapshot("bench", "unchanged").unwrap();
        unchanged_times.push(started.elapsed());
        unchanged_disk.push(store.disk_use().saturating_sub(disk));
    }

    let mut undo_times = Vec::new();
    let to = ids[ids.len() - 2].clone();
    let mut latest = ids[ids.len() - 1].clone();
    for _ in 0..STEPS {
        let started = Instant::now();
        let restored = store
            .restore("bench", &to, &latest, Overwrite::Never)
            .unwrap();
        undo_times.push(started.elapsed());
        assert_eq!(restored.actions.len(), 1);
        // Redo, so that the next undo has the same step to take back.
        let undone = store.snapshot("bench", "undone").unwrap().id;
        store
            .restore("bench", &restored.before, &undone, Overwrite::Never)
            .unwrap();
        latest = store.snapshot("bench", "redone").unwrap().id;
    }
    let unchanged_bytes = median(&mut unchanged_disk);
    println!(
        "{files} files of {file_bytes} bytes: first snapshot {:.0} ms; one-file step {}; \
         unchanged step {} and +{} bytes (median); undo one step {}; disk {:.1} MB",
        first_time.as_secs_f64() * 1000.0,
        summary(&mut step_times),
        summary(&mut unchanged_times),
        unchanged_bytes,
        summary(&mut undo_times),
        disk as f64 / 1e6,
    );
    // The targets that apply at this size, each with its figure, for a quiet rerun.
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let step = ms(median(&mut step_times));
    let mut targets = vec![(
        "unchanged step's added disk ≤ 100 KB".to_owned(),
        format!("{unchanged_bytes} B"),
        unchanged_bytes <= 100 * 1024,
    )];
    match files {
        20_000 => {
            let first = ms(first_time);
            let undo = ms(median(&mut undo_times));
            targets.push((
                "one-file step ≤ 50 ms".into(),
                format!("{step:.1} ms"),
                step <= 50.0,
            ));
            targets.push((
                "first snapshot ≤ 3 s".into(),
                format!("{first:.0} ms"),
                first <= 3000.0,
            ));
            targets.push((
                "undo one step ≤ 100 ms".into(),
                format!("{undo:.1} ms"),
                undo <= 100.0,
            ));
        }
        200_000 => {
            targets.push((
                "step ≤ 500 ms".into(),
                format!("{step:.1} ms"),
                step <= 500.0,
            ));
        }
        _ => {}
    }
    for (target, figure, met) in targets {
        let verdict = if met { "met" } else { "NOT met" };
        println!("  target at {files} files: {target}: {figure}, {verdict}");
    }
    cleanup(dir.path());
}

fn median<T: Ord + Copy>(values: &mut [T]) -> T {
    values.sort();
    values[values.len() / 2]
}

fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    format!(
        "{:.1} ms ({:.1}–{:.1})",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1])
    )
}

fn cleanup(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}
