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
fn a_subcommand_not_built_yet_exits_3_and_says_so() {
    let out = mqwatch(&["check", "--rocketmq", "127.0.0.1:9876"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not built yet"), "{err}");
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
