//! `mqwatch check`: one cycle per cluster, findings and key statistics printed as text or JSON, and the exit code
//! of the worst finding (0 healthy, 1 warnings, 2 critical; 3 when mqwatch could not run).

use crate::config::{ClusterConfig, Config};
use crate::run::{CycleResult, cycle, now_ms};
use crate::state::StateDir;
use anyhow::Result;
use mqwatch_model::{Finding, Severity};
use mqwatch_rocketmq::client::AdminClient;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Runs one cycle of every cluster and prints the results.
pub fn run(
    config: &Config,
    clusters: &[ClusterConfig],
    state: &StateDir,
    json: bool,
) -> Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let results: Vec<CycleResult> = rt.block_on(async {
        let mut out = Vec::new();
        for c in clusters {
            let client = AdminClient::new(c.timeout.0);
            let mut memory = mqwatch_state::ClusterState::new();
            out.push(cycle(c, &client, &config.thresholds, state, &mut memory, now_ms()).await?);
        }
        anyhow::Ok(out)
    })?;
    let worst = Finding::worst(results.iter().flat_map(|r| &r.findings));
    if json {
        let doc = serde_json::json!({ "worst": worst, "clusters": results });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", text(&results));
    }
    Ok(ExitCode::from(match worst {
        None | Some(Severity::Info) => 0,
        Some(Severity::Warning) => 1,
        Some(Severity::Critical) => 2,
    }))
}

fn text(results: &[CycleResult]) -> String {
    let mut out = String::new();
    for r in results {
        let s = &r.snapshot;
        let _ = writeln!(
            out,
            "cluster {} ({}): {} nodes, {} queues, {} groups; cycle {} ms",
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
