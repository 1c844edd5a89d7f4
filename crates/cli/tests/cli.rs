//! The binary's stable surface: help lists the subcommands of ARCHITECTURE.md, exit codes follow the contract.

use std::process::Command;

fn mqwatch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mqwatch"))
        .args(args)
        .output()
        .expect("run mqwatch")
}

#[test]
fn no_arguments_prints_the_subcommands_and_succeeds() {
    let out = mqwatch(&[]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in ["serve", "check", "audit", "demo"] {
        assert!(text.contains(sub), "help lacks {sub}: {text}");
    }
}

#[test]
fn demo_refuses_a_state_directory_that_holds_a_store_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mqwatch.db"), b"").unwrap();
    let state = dir.path().to_str().unwrap();
    let out = mqwatch(&["demo", "--listen", "127.0.0.1:0", "--state-dir", state]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fresh state directory"), "{err}");
}

#[test]
fn check_needs_exactly_one_source() {
    let out = mqwatch(&["check", "--rocketmq", "a:1", "--kafka", "b:2"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap usage errors exit 2: {out:?}"
    );
}

#[test]
fn an_unreachable_name_server_is_a_critical_finding_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let port = mqwatch_testkit::free_port(); // nothing listens there
    let ns = format!("127.0.0.1:{port}");
    let state = dir.path().to_str().unwrap();
    let out = mqwatch(&["check", "--rocketmq", &ns, "--json", "--state-dir", state]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["worst"], "critical");
    let kinds: Vec<&str> = doc["clusters"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["name_server_down"]);
}

#[test]
fn a_bad_config_key_exits_3_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[thresholds.backlog]\ncout = 1\n").unwrap();
    let out = mqwatch(&[
        "check",
        "--config",
        path.to_str().unwrap(),
        "--state-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml") && err.contains("cout"), "{err}");
}
