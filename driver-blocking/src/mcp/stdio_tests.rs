use super::program_exists;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_program_is_looked_up_on_the_servers_own_path_first() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("own-bin");
    std::fs::create_dir(&bin).unwrap();
    let program = bin.join("hrns-test-only-server");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let own_path = bin.to_str().unwrap();
    assert!(program_exists(
        "hrns-test-only-server",
        dir.path(),
        Some(own_path)
    ));
    // Not on hrns's own PATH, and a server PATH without it does not find it either.
    assert!(!program_exists("hrns-test-only-server", dir.path(), None));
    assert!(!program_exists(
        "hrns-test-only-server",
        dir.path(),
        Some("/nonexistent-dir")
    ));
    // A server PATH replaces hrns's: `sh` is not found where the server does not look.
    assert!(program_exists("sh", dir.path(), None));
    assert!(!program_exists("sh", dir.path(), Some(own_path)));
}
