use super::*;
use hrns_core::sandbox::{NetworkAccess, Places, SandboxMode};

fn policy(mode: SandboxMode) -> SandboxPolicy {
    SandboxPolicy::new(mode, &Places::default(), NetworkAccess::Denied)
}

#[test]
fn only_a_confined_command_under_ask_is_offered() {
    let ws = policy(SandboxMode::WorkspaceWrite);
    let ro = policy(SandboxMode::ReadOnly);
    let full = policy(SandboxMode::DangerFullAccess);
    let ask = ApprovalPolicy::Ask;
    assert_eq!(offer(ask, &ws, RUN_COMMAND), Unsandboxed::Offered);
    assert_eq!(offer(ask, &ro, RUN_COMMAND), Unsandboxed::Offered);
    // Not another tool, not an unconfined run, never without asking.
    assert_eq!(offer(ask, &ws, "write_file"), Unsandboxed::NotOffered);
    assert_eq!(offer(ask, &full, RUN_COMMAND), Unsandboxed::NotOffered);
    for approval in [ApprovalPolicy::Auto, ApprovalPolicy::ReadOnly] {
        assert_eq!(offer(approval, &ws, RUN_COMMAND), Unsandboxed::NotOffered);
        assert!(!possible(approval, &ws));
    }
}
