//! `mqwatch serve` keeps node lifecycles across a restart: REAL `mqwatch` binary and a REAL tansu 0.6.0 broker
//! (started by mqwatch-testkit on a free port, stopped by PID). After serve's first cycle the broker's lifecycle
//! (active since T) is in `lifecycles/<cluster>.json`; serve is SIGKILLed and started again on the same state
//! directory, and after its next cycle the broker is still active since T, not since the restart.
//!
//! Skips (saying so) only when the tansu binary is not installed; `scripts/test` installs it.

mod common;

use common::start_serve;
use mqwatch_testkit::poll_until;
use mqwatch_testkit::tansu::{self, Tansu};
use std::time::Duration;

fn saved(state: &std::path::Path) -> Option<(String, u64, u64)> {
    let text = std::fs::read_to_string(state.join("lifecycles/events.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let n = v.as_array()?.first()?;
    Some((
        n["state"].as_str()?.to_string(),
        n["since_ms"].as_u64()?,
        n["last_heartbeat_ms"].as_u64()?,
    ))
}

#[test]
fn a_restarted_serve_keeps_when_the_broker_became_active() {
    if tansu::missing() {
        return;
    }
    let mut broker = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"events\"\nengine = \"kafka\"\nbootstrap = [\"{}\"]\ninterval = \"1s\"\n",
            broker.addr
        ),
    )
    .unwrap();
    let (mut serve, _) = start_serve("serve-1", &config, &state, dir.path());
    let (first, since, _) = poll_until("a saved lifecycle", Duration::from_secs(60), || {
        saved(&state)
    });
    assert_eq!(first, "active");
    serve.kill();

    let (mut serve, _) = start_serve("serve-2", &config, &state, dir.path());
    let restarted_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    // A cycle of the new process: its heartbeat is after the restart.
    let (again, since_again, _) =
        poll_until("a cycle after the restart", Duration::from_secs(60), || {
            saved(&state).filter(|(_, _, beat)| *beat >= restarted_ms)
        });
    assert_eq!(again, "active");
    assert_eq!(
        since_again, since,
        "active since the first process saw it, not since the restart"
    );
    serve.kill();
    broker.process.stop(Duration::from_secs(5));
}
