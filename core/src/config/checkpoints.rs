//! The checkpoint keys of the config file: `checkpoints`, whether hrns takes checkpoints of
//! the workspace at all (default `true`), and `checkpointsMaxBytes`, the disk the checkpoints
//! of one workspace may use before the oldest sessions' are pruned (default 2 GiB).
//!
//! ```json
//! { "checkpoints": true, "checkpointsMaxBytes": 2147483648 }
//! ```

use super::Config;
use crate::checkpoint::Checkpoints;

/// The key that turns checkpoints off (`false`).
pub const CHECKPOINTS_KEY: &str = "checkpoints";
/// The key of the disk cap per workspace, in bytes.
pub const CHECKPOINTS_MAX_BYTES_KEY: &str = "checkpointsMaxBytes";
/// The disk cap per workspace when the file sets none: 2 GiB.
pub const DEFAULT_CHECKPOINTS_MAX_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// The smallest cap accepted (1 MiB): below it every snapshot would prune the one before.
pub const MIN_CHECKPOINTS_MAX_BYTES: u64 = 1024 * 1024;

/// What the config file says about checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSettings {
    /// Whether checkpoints are taken.
    pub enabled: Checkpoints,
    /// The disk the checkpoints of one workspace may use, in bytes.
    pub max_bytes: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            enabled: Checkpoints::On,
            max_bytes: DEFAULT_CHECKPOINTS_MAX_BYTES,
        }
    }
}

impl Config {
    /// The checkpoint settings the file sets over the defaults (on, 2 GiB). A `checkpoints`
    /// that is not `true` or `false`, or a cap that is not a whole number of bytes of at least
    /// [`MIN_CHECKPOINTS_MAX_BYTES`], is an error naming the key.
    pub fn checkpoint_settings(&self) -> Result<CheckpointSettings, String> {
        let mut settings = CheckpointSettings::default();
        if let Some(v) = self.extra.get(CHECKPOINTS_KEY) {
            settings.enabled = match v.as_bool() {
                Some(true) => Checkpoints::On,
                Some(false) => Checkpoints::Off,
                None => {
                    return Err(format!(
                        "`{CHECKPOINTS_KEY}` must be true or false, not {v}"
                    ));
                }
            };
        }
        if let Some(v) = self.extra.get(CHECKPOINTS_MAX_BYTES_KEY) {
            settings.max_bytes = v
                .as_u64()
                .filter(|n| *n >= MIN_CHECKPOINTS_MAX_BYTES)
                .ok_or_else(|| {
                    format!(
                        "`{CHECKPOINTS_MAX_BYTES_KEY}` must be a whole number of bytes (at least \
                         {MIN_CHECKPOINTS_MAX_BYTES}), not {v}"
                    )
                })?;
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> Result<CheckpointSettings, String> {
        Config::parse(text).unwrap().checkpoint_settings()
    }

    #[test]
    fn on_with_two_gib_unless_the_file_says_otherwise() {
        assert_eq!(settings("{}"), Ok(CheckpointSettings::default()));
        assert_eq!(
            settings(r#"{"checkpoints": false}"#).map(|s| s.enabled),
            Ok(Checkpoints::Off)
        );
        assert_eq!(
            settings(r#"{"checkpointsMaxBytes": 1048576}"#).map(|s| s.max_bytes),
            Ok(1024 * 1024)
        );
        for bad in ["\"no\"", "0", "null", "[]"] {
            let e = settings(&format!(r#"{{"checkpoints": {bad}}}"#)).unwrap_err();
            assert!(e.contains("`checkpoints`"), "{bad}: {e}");
        }
        for bad in ["1048575", "-1", "1.5", "\"2GiB\"", "null"] {
            let e = settings(&format!(r#"{{"checkpointsMaxBytes": {bad}}}"#)).unwrap_err();
            assert!(e.contains("`checkpointsMaxBytes`"), "{bad}: {e}");
        }
        let c = Config::parse(r#"{"checkpoints": false, "checkpointsMaxBytes": 5000000}"#).unwrap();
        let again = Config::parse(&c.to_json_pretty()).unwrap();
        assert_eq!(again.checkpoint_settings(), c.checkpoint_settings());
    }
}
