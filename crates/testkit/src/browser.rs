//! The dashboard's browser tests: where the pinned npm packages are (`crates/web/package.json`, installed by
//! `scripts/test` with `npm ci` into `$HOME/.cache/mqwatch/web`, or `MQWATCH_WEB_DEPS`), and running a Node
//! script from `crates/web/browser-tests/` that drives Debian's headless Chromium (`/usr/bin/chromium`) through
//! playwright-core. The script gets one JSON argument and prints one JSON line starting with `RESULT `.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The Chromium the tests drive.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// `crates/web` of this checkout.
pub fn web_crate() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web")
}

/// The directory holding the installed `node_modules` of `crates/web/package-lock.json`. Panics with the fix
/// when it is missing or installed from another lock file.
pub fn web_deps() -> PathBuf {
    let dir = crate::cache_dir("MQWATCH_WEB_DEPS", "web");
    let lock = web_crate().join("package-lock.json");
    let want = std::fs::read(&lock).unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
    let have = std::fs::read(dir.join("package-lock.json")).ok();
    assert!(
        have.as_deref() == Some(&want[..]) && dir.join("node_modules").is_dir(),
        "the dashboard's npm packages are not installed from {} in {}: run ./scripts/test, which runs \
         `npm ci` there (or set MQWATCH_WEB_DEPS)",
        lock.display(),
        dir.display()
    );
    dir
}

/// Runs `crates/web/browser-tests/<script>` with `config` as its argument, at most `deadline`; returns the JSON
/// it printed after `RESULT `. Panics with the script's whole output when it fails.
pub fn run_script(
    script: &str,
    config: &serde_json::Value,
    deadline: Duration,
) -> serde_json::Value {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: apt-get install chromium (./scripts/test does)"
    );
    let deps = web_deps();
    let path = web_crate().join("browser-tests").join(script);
    let out_dir = tempfile::tempdir().expect("temp dir");
    let (stdout, stderr) = (out_dir.path().join("stdout"), out_dir.path().join("stderr"));
    let mut child = Command::new("node")
        .arg(&path)
        .arg(config.to_string())
        .env("NODE_PATH", deps.join("node_modules"))
        .env("MQWATCH_CHROMIUM", CHROMIUM)
        .stdout(std::fs::File::create(&stdout).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run node {}: {e}", path.display()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for node") {
            break status;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{script} did not finish within {deadline:?}:\n{}\n{}",
                std::fs::read_to_string(&stdout).unwrap_or_default(),
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = std::fs::read_to_string(&stdout).unwrap_or_default();
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    let result = out
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .and_then(|j| serde_json::from_str(j).ok());
    match result {
        Some(r) if status.success() => r,
        _ => panic!("{script} failed ({status}):\n--- stdout\n{out}\n--- stderr\n{err}"),
    }
}
