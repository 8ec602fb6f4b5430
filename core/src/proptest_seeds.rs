//! Where property tests keep the failing cases they find (test builds only).
//!
//! Committed seeds replay first, as the proptest book recommends: each property reads
//! `proptest-regressions/<path of its source file>.txt` beside the crate's `src/`. A new failure
//! is written to `proptest-regressions/new/…` instead, which no run reads: the failing run is red
//! and prints the seed, but an untracked file left behind cannot turn later runs red (or green
//! again by chance). To keep a seed, move its `cc` line into the committed file and commit it.
//!
//! Integration tests include this file with `#[path]`; every `proptest!` block in the crate uses
//! [`config`] or [`with_cases`].

use proptest::test_runner::{Config, FailurePersistence, PersistedSeed};
use std::any::Any;
use std::fmt::Debug;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Reads committed seeds, writes new ones where nothing reads them.
#[derive(Debug, Clone, PartialEq)]
struct CommittedSeeds;

impl CommittedSeeds {
    /// `proptest-regressions/[new/]<source path relative to the crate>.txt`, e.g.
    /// `core/proptest-regressions/src/sse/tests.txt` for `core/src/sse/tests.rs`.
    fn path(source_file: &str, new: bool) -> Option<PathBuf> {
        let krate = Path::new(env!("CARGO_MANIFEST_DIR"));
        // `file!()` is relative to the workspace root (the crate's parent) or absolute.
        let source = krate.parent()?.join(source_file);
        let relative = source.strip_prefix(krate).ok()?;
        let mut dir = krate.join("proptest-regressions");
        if new {
            dir.push("new");
        }
        Some(dir.join(relative).with_extension("txt"))
    }
}

impl FailurePersistence for CommittedSeeds {
    fn load_persisted_failures2(&self, source_file: Option<&'static str>) -> Vec<PersistedSeed> {
        let Some(path) = source_file.and_then(|s| Self::path(s, false)) else {
            return Vec::new();
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Vec::new();
        };
        // Proptest's format: a seed (`cc 38c5…`) per line, `#` starts a comment.
        text.lines()
            .map(|line| line.split('#').next().unwrap_or_default().trim())
            .filter(|seed| !seed.is_empty())
            .filter_map(|seed| seed.parse().ok())
            .collect()
    }

    fn save_persisted_failure2(
        &mut self,
        source_file: Option<&'static str>,
        seed: PersistedSeed,
        shrunken_value: &dyn Debug,
    ) {
        let Some(path) = source_file.and_then(|s| Self::path(s, true)) else {
            return;
        };
        let line = format!("{seed} # shrinks to {shrunken_value:?}\n");
        let saved = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
            })
            .and_then(|mut file| file.write_all(line.as_bytes()));
        match saved {
            Ok(()) => eprintln!(
                "proptest: failing seed saved to {}; no run reads it there: move the line into \
                 {} and commit it to replay it on every run",
                path.display(),
                Self::path(source_file.unwrap_or_default(), false)
                    .unwrap_or_default()
                    .display()
            ),
            Err(e) => eprintln!(
                "proptest: cannot save the failing seed to {}: {e}",
                path.display()
            ),
        }
    }

    fn box_clone(&self) -> Box<dyn FailurePersistence> {
        Box::new(self.clone())
    }

    fn eq(&self, other: &dyn FailurePersistence) -> bool {
        other.as_any().downcast_ref::<Self>().is_some()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The default configuration with [`CommittedSeeds`] persistence.
pub(crate) fn config() -> Config {
    Config {
        failure_persistence: Some(Box::new(CommittedSeeds)),
        ..Config::default()
    }
}

/// [`config`] with `cases` cases per property.
pub(crate) fn with_cases(cases: u32) -> Config {
    Config { cases, ..config() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_seeds_replay_and_new_ones_go_elsewhere() {
        let sse = concat!(env!("CARGO_MANIFEST_DIR"), "/src/sse/tests.rs");
        let committed = CommittedSeeds::path(sse, false).unwrap();
        assert!(committed.ends_with("core/proptest-regressions/src/sse/tests.txt"));
        let new = CommittedSeeds::path(sse, true).unwrap();
        assert!(new.ends_with("core/proptest-regressions/new/src/sse/tests.txt"));
        // The seed of the once-flaky SSE property is committed and read back.
        assert!(
            !CommittedSeeds
                .load_persisted_failures2(Some(sse))
                .is_empty()
        );
        assert_eq!(
            CommittedSeeds::path("core/tests/properties.rs", false).unwrap(),
            Path::new(env!("CARGO_MANIFEST_DIR")).join("proptest-regressions/tests/properties.txt")
        );
    }
}
