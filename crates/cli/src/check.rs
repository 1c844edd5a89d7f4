//! `mqwatch check`: one cycle per cluster, findings and key statistics printed as text or JSON, and the exit code
//! of the worst finding (0 healthy, 1 warnings, 2 critical; 3 when mqwatch could not run).

use crate::audit::LedgerAudit;
use crate::config::{ClusterConfig, Config};
use crate::run::{Collectors, CycleResult, cycle, now_ms};
use crate::state::StateDir;
use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mqwatch_model::{Engine, Finding, Severity};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Runs one cycle of every cluster and prints the results. With `audit`, a BookKeeper cluster whose audit pass
/// could not run at all (ZooKeeper, the registry or the ledger list unreadable) exits 3 after printing.
pub fn run(
    config: &Config,
    clusters: &[ClusterConfig],
    state: &StateDir,
    json: bool,
    audit: bool,
) -> Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let bar = progress_bar();
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let results: Vec<CycleResult> = rt.block_on(async {
        let mut out = Vec::new();
        for c in clusters {
            let collectors = Collectors::new(c);
            let mut memory = mqwatch_state::ClusterState::new();
            // Node lifecycles carry over from the last check (startup and fencing last longer than one run).
            state.restore_lifecycles(&c.name, &mut memory.lifecycle)?;
            let r = cycle(
                c,
                &collectors,
                &config.thresholds,
                state,
                &mut memory,
                &progress,
                now_ms(),
            )
            .await?;
            state.save_lifecycles(&c.name, &memory.lifecycle, r.snapshot.taken_at_ms)?;
            bar.reset();
            out.push(r);
        }
        anyhow::Ok(out)
    })?;
    bar.finish_and_clear();
    let worst = Finding::worst(results.iter().flat_map(|r| &r.findings));
    if json {
        let doc = serde_json::json!({ "worst": worst, "clusters": results });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", text(&results));
    }
    let not_run = results
        .iter()
        .any(|r| r.snapshot.engine == Some(Engine::Bookkeeper) && r.ledgers.is_none());
    if audit && not_run {
        eprintln!("mqwatch: the audit could not run (see the collector_error above)");
        return Ok(ExitCode::from(crate::cli::EXIT_COULD_NOT_RUN));
    }
    Ok(ExitCode::from(match worst {
        None | Some(Severity::Info) => 0,
        Some(Severity::Warning) => 1,
        Some(Severity::Critical) => 2,
    }))
}

/// A progress bar on stderr when it is a terminal (ledgers audited / ledgers in all), hidden otherwise.
fn progress_bar() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("auditing ledgers {bar:40} {pos}/{len} ({per_sec}, eta {eta})")
    {
        bar.set_style(style);
    }
    bar
}

fn text(results: &[CycleResult]) -> String {
    let mut out = String::new();
    for r in results {
        let s = &r.snapshot;
        let _ = writeln!(
            out,
            "cluster {} ({}): {} nodes, {} logs, {} groups; cycle {} ms",
            s.cluster,
            s.engine.map(|e| e.as_str()).unwrap_or("?"),
            s.nodes.len(),
            s.logs.len(),
            s.groups.len(),
            s.cycle_ms
        );
        for n in &s.nodes {
            let state = match (&n.registration, n.answered) {
                (_, false) => format!("DOWN ({})", n.error.as_deref().unwrap_or("no answer")),
                (Some(reg), true) => format!("{reg:?}").to_lowercase(),
                (None, true) => "up".into(),
            };
            let _ = writeln!(
                out,
                "  {:<32} {:<22} {state}",
                n.node.to_string(),
                n.node.addr.as_deref().unwrap_or("-")
            );
        }
        for g in &s.groups {
            let b = mqwatch_checks::backlog::measure(g);
            let age = b
                .age_ms
                .map(|a| format!(", oldest {} s", a / 1000))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  group {:<26} backlog {}{age}; {} logs without commit; {} online clients",
                g.group.name,
                b.count,
                b.logs_without_commit,
                g.clients.len()
            );
        }
        if let Some(l) = &r.ledgers {
            ledger_text(&mut out, l);
        }
        let _ = writeln!(out, "findings ({}):", r.findings.len());
        for f in &r.findings {
            let _ = writeln!(
                out,
                "  {:<8} {:<26} {}",
                f.severity.as_str().to_uppercase(),
                f.kind.as_str(),
                f.message
            );
        }
    }
    out
}

fn ledger_text(out: &mut String, l: &LedgerAudit) {
    let c = &l.counts;
    let _ = writeln!(
        out,
        "  ledgers {}: {} healthy; skipped {} open, {} empty, {} marked; {} unavailable (silent bookies)",
        c.ledgers, c.healthy, c.skipped_open, c.skipped_empty, c.skipped_marked, c.unavailable
    );
    let _ = writeln!(
        out,
        "  violations: {} no replica, {} below ack quorum, {} below write quorum, {} placement, {} stuck",
        c.entries_no_replica,
        c.entries_below_ack_quorum,
        c.entries_below_write_quorum,
        c.placement_violation,
        c.under_replication_stuck
    );
    if l.redone > 0 || !l.unsettled.is_empty() {
        let _ = writeln!(
            out,
            "  {} ledgers redone after their metadata changed; {} left for the next pass",
            l.redone,
            l.unsettled.len()
        );
    }
    for (id, bookies) in &l.unavailable {
        let _ = writeln!(
            out,
            "  ledger {id}: not fully checked, silent: {}",
            bookies.join(", ")
        );
    }
}
