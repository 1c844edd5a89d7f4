//! Placement of one ledger against the policy, from its metadata alone: quorums that make sense
//! (1 <= AQ <= WQ <= E), and per segment (empty ones too, as BookKeeper's placement check does): as many members as
//! the ensemble size, each member once, and — when a rack map is known — every write quorum (members i, i+1, …,
//! i+WQ-1 mod E) on at least min(WQ, `min_racks_per_write_quorum`) racks. A bookie missing from the rack map is on
//! BookKeeper's default rack, `/default-rack`.

use mqwatch_model::LedgerLayout;
use std::collections::{BTreeMap, BTreeSet};

/// The rack of a bookie absent from the rack map (BookKeeper's `NetworkTopology.DEFAULT_RACK`).
pub const DEFAULT_RACK: &str = "/default-rack";

/// Every placement problem of `layout`, one sentence each; empty when it is placed as the policy asks.
pub(crate) fn problems(
    layout: &LedgerLayout,
    racks: &BTreeMap<String, String>,
    min_racks_per_write_quorum: usize,
) -> Vec<String> {
    let (e, wq, aq) = (layout.ensemble_size, layout.write_quorum, layout.ack_quorum);
    let mut out = Vec::new();
    if !quorums_valid(layout) {
        out.push(format!(
            "quorums break 1 <= ack quorum ({aq}) <= write quorum ({wq}) <= ensemble size ({e})"
        ));
    }
    if layout.segments.is_empty() {
        out.push("no ensemble".to_owned());
    }
    for (i, seg) in layout.segments.iter().enumerate() {
        let at = format!("segment {i} (from entry {})", seg.first_entry);
        let members = &seg.ensemble;
        if members.len() != e {
            out.push(format!(
                "{at}: {} members, ensemble size {e}",
                members.len()
            ));
        }
        let mut seen = BTreeSet::new();
        let mut repeated = BTreeSet::new();
        for m in members {
            if !seen.insert(m.as_str()) {
                repeated.insert(m.as_str());
            }
        }
        for m in repeated {
            let times = members.iter().filter(|x| *x == m).count();
            out.push(format!("{at}: {m} is a member {times} times"));
        }
        if racks.is_empty() || members.is_empty() || wq == 0 {
            continue;
        }
        let need = wq.min(min_racks_per_write_quorum);
        let n = members.len();
        for q in 0..n {
            let quorum: Vec<&str> = (0..wq.min(n))
                .map(|j| members[(q + j) % n].as_str())
                .collect();
            let on: BTreeSet<&str> = quorum
                .iter()
                .map(|m| racks.get(*m).map_or(DEFAULT_RACK, String::as_str))
                .collect();
            if on.len() < need {
                let on: Vec<&str> = on.into_iter().collect();
                out.push(format!(
                    "{at}: write quorum {q} ({}) spans {} rack(s) ({}), needs {need}",
                    quorum.join(", "),
                    on.len(),
                    on.join(", ")
                ));
            }
        }
    }
    out
}

/// 1 <= AQ <= WQ <= E: the only quorums a BookKeeper client creates, and the only ones whose replicas are checked.
pub(crate) fn quorums_valid(layout: &LedgerLayout) -> bool {
    1 <= layout.ack_quorum
        && layout.ack_quorum <= layout.write_quorum
        && layout.write_quorum <= layout.ensemble_size
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledgers::tests::closed;

    fn racks(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(b, r)| (b.to_string(), r.to_string()))
            .collect()
    }

    #[test]
    fn every_write_quorum_spans_two_racks_or_is_reported() {
        let l = closed(1, 3, 2, 2, 9, &["a", "b", "c"]).layout;
        let spread = racks(&[("a", "/r1"), ("b", "/r2"), ("c", "/r3")]);
        assert!(problems(&l, &spread, 2).is_empty());
        // a and b share a rack: quorum 0 (a, b) is on one rack; (b, c) and (c, a) are fine.
        let shared = racks(&[("a", "/r1"), ("b", "/r1"), ("c", "/r2")]);
        assert_eq!(
            problems(&l, &shared, 2),
            vec!["segment 0 (from entry 0): write quorum 0 (a, b) spans 1 rack(s) (/r1), needs 2"]
        );
        // No rack map: racks are not checked; a minimum above WQ is capped at WQ.
        assert!(problems(&l, &BTreeMap::new(), 2).is_empty());
        assert!(problems(&l, &spread, 5).is_empty());
    }

    #[test]
    fn a_bookie_absent_from_the_map_is_on_the_default_rack() {
        let l = closed(1, 2, 2, 2, 9, &["a", "b"]).layout;
        assert!(problems(&l, &racks(&[("a", "/r1")]), 2).is_empty());
        let p = problems(&l, &racks(&[("a", DEFAULT_RACK)]), 2);
        assert_eq!(p.len(), 2, "both quorums of two members: {p:?}");
        assert!(p[0].contains("(/default-rack)"), "{p:?}");
    }

    #[test]
    fn duplicates_sizes_and_quorums_are_reported() {
        let mut l = closed(1, 3, 2, 2, 9, &["a", "a", "b", "c"]).layout;
        l.ack_quorum = 3;
        assert_eq!(
            problems(&l, &BTreeMap::new(), 2),
            vec![
                "quorums break 1 <= ack quorum (3) <= write quorum (2) <= ensemble size (3)",
                "segment 0 (from entry 0): 4 members, ensemble size 3",
                "segment 0 (from entry 0): a is a member 2 times",
            ]
        );
        assert!(!quorums_valid(&l));
        l.segments.clear();
        assert_eq!(problems(&l, &BTreeMap::new(), 2).len(), 2);
    }
}
