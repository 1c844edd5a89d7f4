//! A ledger violation as a [`Finding`]: the ledger as subject, the numbers as evidence (runs as inclusive
//! `[first, last]` pairs, cut at [`MAX_EVIDENCE_RUNS`]), and one readable line naming the worst entries, their
//! copies and what each bookie lacks.

use super::{LedgerViolation, class_text};
use crate::replicas::classify;
use mqwatch_model::{Engine, EntryRun, Evidence, Finding, FindingKind, LogRef, Subject};
use std::fmt::Write as _;

/// Runs listed in a finding's evidence at most (per list); the counts say how many there were.
pub const MAX_EVIDENCE_RUNS: usize = 1_000;

/// Runs named in a finding's message at most (per list).
const MESSAGE_RUNS: usize = 3;

/// Bookies named in a finding's message at most.
const MESSAGE_BOOKIES: usize = 3;

/// The finding for one violation of ledger `id` of `cluster` (engine BookKeeper, subject the ledger, evidence
/// with the copies, the worst entries and the missing runs per bookie).
///
/// Evidence: `ensemble_size`, `write_quorum`, `ack_quorum`, `detail`; replica violations add `copies`,
/// `worst_entries` (`[[first, last], …]`, inclusive), `worst_entry_count` and `missing`
/// (`{bookie: [[first, last], …]}`), each list cut at [`MAX_EVIDENCE_RUNS`] (`truncated: true` then); stuck
/// ledgers add `mark_age_ms` and `grace_ms`.
pub fn violation_finding(cluster: &str, id: u64, v: &LedgerViolation, now_ms: u64) -> Finding {
    let mut evidence = Evidence::new()
        .with("ensemble_size", v.ensemble_size)
        .with("write_quorum", v.write_quorum)
        .with("ack_quorum", v.ack_quorum)
        .with("detail", v.detail.clone());
    let mut truncated = false;
    if let Some(copies) = v.copies {
        let mut missing = serde_json::Map::new();
        for (bookie, runs) in &v.missing {
            truncated |= runs.len() > MAX_EVIDENCE_RUNS;
            missing.insert(bookie.clone(), runs_json(runs));
        }
        truncated |= v.worst_entries.len() > MAX_EVIDENCE_RUNS;
        evidence = evidence
            .with("copies", copies)
            .with("worst_entries", runs_json(&v.worst_entries))
            .with("worst_entry_count", entry_count(&v.worst_entries))
            .with("missing", serde_json::Value::Object(missing));
    }
    if truncated {
        evidence = evidence.with("truncated", true);
    }
    if let (Some(age), Some(grace)) = (v.mark_age_ms, v.grace_ms) {
        evidence = evidence.with("mark_age_ms", age).with("grace_ms", grace);
    }
    Finding::new(
        v.kind,
        cluster,
        Engine::Bookkeeper,
        Subject::Log {
            log: LogRef::Ledger { id },
        },
        message(id, v),
        now_ms,
    )
    .with_evidence(evidence)
}

/// One line for people, e.g. "ledger 42: entries 10..=19 have 1 of 3 copies (below ack quorum 2); missing on
/// 127.0.0.1:3181: 10..=19".
fn message(id: u64, v: &LedgerViolation) -> String {
    let Some(copies) = v.copies else {
        return match v.kind {
            FindingKind::PlacementViolation => {
                format!("ledger {id} is placed against the policy: {}", v.detail)
            }
            _ => format!("ledger {id}: {}", v.detail),
        };
    };
    let (noun, verb) = match entry_count(&v.worst_entries) {
        1 => ("entry", "has"),
        _ => ("entries", "have"),
    };
    let class = classify(copies, v.write_quorum, v.ack_quorum)
        .map_or_else(|| "full write quorum".to_owned(), |c| class_text(c, v));
    let mut m = format!(
        "ledger {id}: {noun} {} {verb} {copies} of {} copies ({class})",
        runs_text(&v.worst_entries),
        v.write_quorum
    );
    for (i, (bookie, runs)) in v.missing.iter().enumerate() {
        if i == MESSAGE_BOOKIES {
            let _ = write!(m, " (and {} more bookies)", v.missing.len() - i);
            break;
        }
        let sep = if i == 0 { "; missing on " } else { "; " };
        let _ = write!(m, "{sep}{bookie}: {}", runs_text(runs));
    }
    m
}

fn entry_count(runs: &[EntryRun]) -> u64 {
    runs.iter().map(EntryRun::len).sum()
}

fn run_text(r: &EntryRun) -> String {
    match r.len() {
        1 => r.start.to_string(),
        _ => format!("{}..={}", r.start, r.end_exclusive - 1),
    }
}

fn runs_text(runs: &[EntryRun]) -> String {
    let mut s: Vec<String> = runs.iter().take(MESSAGE_RUNS).map(run_text).collect();
    if runs.len() > MESSAGE_RUNS {
        s.push(format!(
            "… ({} runs, {} entries)",
            runs.len(),
            entry_count(runs)
        ));
    }
    s.join(", ")
}

fn runs_json(runs: &[EntryRun]) -> serde_json::Value {
    runs.iter()
        .take(MAX_EVIDENCE_RUNS)
        .map(|r| serde_json::json!([r.start, r.end_exclusive - 1]))
        .collect()
}
