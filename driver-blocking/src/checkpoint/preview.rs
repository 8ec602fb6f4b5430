//! [`CheckpointStore::preview`]: what a restore would do, without doing it, so that a front end
//! can ask before it overwrites files someone changed after the agent.

use super::{CheckpointError, CheckpointId, CheckpointStore, paths};
use hrns_core::checkpoint::{Current, Overwrite, RestorePlan, plan_restore};
use std::collections::BTreeMap;

impl CheckpointStore {
    /// The plan [`restore`](Self::restore) would carry out from `latest` back to `to` with
    /// `overwrite`, the workspace as it is now: the paths it would write or remove, and those it
    /// would keep because they changed after `latest`. Nothing is written.
    pub fn preview(
        &self,
        to: &CheckpointId,
        latest: &CheckpointId,
        overwrite: Overwrite,
    ) -> Result<RestorePlan, CheckpointError> {
        let changes = self.changes(to, latest)?;
        let workspace = &self.git.work_tree;
        let current: BTreeMap<String, Current> = changes
            .iter()
            .map(|c| (c.path.clone(), paths::current(workspace, &c.path)))
            .collect();
        Ok(plan_restore(
            &changes,
            |p| current.get(p).cloned().unwrap_or(Current::Other),
            overwrite,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::CheckpointLimits;
    use hrns_core::checkpoint::RestoreAction;
    use std::fs;

    #[test]
    fn a_preview_names_what_a_restore_would_do_and_changes_nothing() {
        let dirs = tempfile::tempdir().unwrap();
        let ws = dirs.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        fs::write(ws.join("a"), "one").unwrap();
        fs::write(ws.join("b"), "one").unwrap();
        let store =
            CheckpointStore::open(&dirs.path().join("state"), &ws, CheckpointLimits::default())
                .unwrap();
        let before = store.snapshot("s", "before").unwrap().id;
        fs::write(ws.join("a"), "agent").unwrap();
        fs::write(ws.join("b"), "agent").unwrap();
        let latest = store.snapshot("s", "after").unwrap().id;
        fs::write(ws.join("b"), "user").unwrap();
        let plan = store.preview(&before, &latest, Overwrite::Never).unwrap();
        assert_eq!(
            plan.actions
                .iter()
                .map(RestoreAction::path)
                .collect::<Vec<_>>(),
            ["a"]
        );
        assert_eq!(plan.kept.len(), 1);
        assert_eq!(plan.kept[0].path, "b");
        let forced = store.preview(&before, &latest, Overwrite::Force).unwrap();
        assert_eq!(forced.actions.len(), 2);
        assert!(forced.kept.is_empty());
        assert_eq!(
            fs::read_to_string(ws.join("a")).unwrap(),
            "agent",
            "nothing written"
        );
        assert_eq!(fs::read_to_string(ws.join("b")).unwrap(), "user");
    }
}
