//! The cost of checkpoints on generated trees: the first snapshot, a step that changed one
//! file, an unchanged step's disk, and undoing one step.
//!
//! `cargo bench -p hrns-blocking --bench checkpoints [-- FILES...]` (default 2000 20000
//! 200000: the size sweep); each figure is the median of the runs, with the range. The trees
//! are made in a temporary directory, in directories of 100 files: 10 KB files up to 20 000
//! files (200 MB), smaller ones past it so a tree stays at 200 MB (200 000 files of 1 KB).
//! After the figures it prints each target of issue 36 that applies at the size, met or not.
//!
//! With `GITLOG=FILE`, the bench writes a line `# PHASE` to that file before each phase
//! (`first`, `step`, `unchanged`, `undo`, `redo`), so a `git` wrapper on `PATH` that appends
//! each call's CPU time to the same file shows which calls each phase made. With
//! `HRNS_BENCH_KEEP=1` the generated tree and its shadow repository are kept (their path is
//! printed), for profiling `git` on them by hand.

use hrns_blocking::checkpoint::{CheckpointLimits, CheckpointStore};
use hrns_core::checkpoint::Overwrite;
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs of each figure (`HRNS_BENCH_STEPS` for more).
fn steps() -> usize {
    std::env::var("HRNS_BENCH_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9)
}

/// CPU time used so far: by this process, and by its waited-for children (the `git` calls).
fn cpu() -> (Duration, Duration) {
    use nix::sys::resource::{UsageWho, getrusage};
    let total = |who| {
        let u = getrusage(who).unwrap();
        let tv = |t: nix::sys::time::TimeVal| {
            Duration::new(t.tv_sec() as u64, 0) + Duration::from_micros(t.tv_usec() as u64)
        };
        tv(u.user_time()) + tv(u.system_time())
    };
    (
        total(UsageWho::RUSAGE_SELF),
        total(UsageWho::RUSAGE_CHILDREN),
    )
}

/// Wall and CPU times of one kind of operation, over its runs.
#[derive(Default)]
struct Timed {
    wall: Vec<Duration>,
    own: Vec<Duration>,
    git: Vec<Duration>,
}

impl Timed {
    /// Runs `f`, noting its wall time, this process's CPU and its `git` calls' CPU.
    fn run<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let (own, git) = cpu();
        let started = Instant::now();
        let out = f();
        self.wall.push(started.elapsed());
        let (own_after, git_after) = cpu();
        self.own.push(own_after - own);
        self.git.push(git_after - git);
        out
    }

    /// `wall MEDIAN ms (MIN–MAX), CPU: git MEDIAN ms + own MEDIAN ms`.
    fn summary(&mut self) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        format!(
            "{} [CPU: git {:.1} ms + own {:.1} ms]",
            summary(&mut self.wall),
            ms(median(&mut self.git)),
            ms(median(&mut self.own)),
        )
    }
}

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

/// Appends `# PHASE` to `$GITLOG`, when set (see the crate doc).
fn mark(phase: &str) {
    use std::io::Write as _;
    if let Some(log) = std::env::var_os("GITLOG") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        writeln!(file, "# {phase}").unwrap();
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
    mark("first");
    let mut first = Timed::default();
    let first_snapshot = first.run(|| store.snapshot("bench", "first").unwrap());
    let first_time = first.wall[0];

    let mut steps_timed = Timed::default();
    let mut ids = vec![first_snapshot.id];
    for step in 0..steps() {
        let path = ws.join(format!("d{}/f{}.txt", step % (files / 100).max(1), step));
        std::fs::write(&path, format!("step {step}")).unwrap();
        mark("step");
        let snap = steps_timed.run(|| store.snapshot("bench", "step").unwrap());
        assert_eq!(snap.changed.len(), 1);
        ids.push(snap.id);
    }

    let disk = store.disk_use();
    let mut unchanged_disk = Vec::new();
    let mut unchanged = Timed::default();
    for _ in 0..steps() {
        mark("unchanged");
        unchanged.run(|| store.snapshot("bench", "unchanged").unwrap());
        unchanged_disk.push(store.disk_use().saturating_sub(disk));
    }

    let mut undo = Timed::default();
    let to = ids[ids.len() - 2].clone();
    let mut latest = ids[ids.len() - 1].clone();
    for _ in 0..steps() {
        mark("undo");
        let restored = undo.run(|| {
            store
                .restore("bench", &to, &latest, Overwrite::Never)
                .unwrap()
        });
        assert_eq!(restored.actions.len(), 1);
        // Redo, so that the next undo has the same step to take back.
        mark("redo");
        let undone = store.snapshot("bench", "undone").unwrap().id;
        store
            .restore("bench", &restored.before, &undone, Overwrite::Never)
            .unwrap();
        latest = store.snapshot("bench", "redone").unwrap().id;
    }
    let unchanged_bytes = median(&mut unchanged_disk);
    println!(
        "{files} files of {file_bytes} bytes: first snapshot {:.0} ms [CPU: git {:.0} ms + own \
         {:.0} ms]; one-file step {}; unchanged step {} and +{} bytes (median); undo one step \
         {}; disk {:.1} MB",
        first_time.as_secs_f64() * 1000.0,
        first.git[0].as_secs_f64() * 1000.0,
        first.own[0].as_secs_f64() * 1000.0,
        steps_timed.summary(),
        unchanged.summary(),
        unchanged_bytes,
        undo.summary(),
        disk as f64 / 1e6,
    );
    // The targets that apply at this size, each with its figure, for a quiet rerun.
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let step = ms(median(&mut steps_timed.wall));
    let mut targets = vec![(
        "unchanged step's added disk ≤ 100 KB".to_owned(),
        format!("{unchanged_bytes} B"),
        unchanged_bytes <= 100 * 1024,
    )];
    match files {
        20_000 => {
            let first = ms(first_time);
            let undo = ms(median(&mut undo.wall));
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
    if std::env::var_os("HRNS_BENCH_KEEP").is_some() {
        println!("  kept: {}", dir.keep().display());
    } else {
        cleanup(dir.path());
    }
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
