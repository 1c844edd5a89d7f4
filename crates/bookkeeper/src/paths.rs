//! Where BookKeeper keeps things in ZooKeeper: ledger id ⇄ metadata znode path (hierarchical layout below
//! 2^31 - 1, long hierarchical from there on) and the under-replication mark of a ledger. It owns only path
//! arithmetic; roots are given with or without a trailing `/`.

/// The first ledger id stored in the long hierarchical layout (Java's `Integer.MAX_VALUE`).
pub const LONG_LAYOUT_FROM: i64 = i32::MAX as i64;

fn trim_root(root: &str) -> &str {
    root.trim_end_matches('/')
}

/// The metadata znode of ledger `id` under `root` (e.g. `/ledgers`): `1` → `/ledgers/00/0000/L0001`,
/// ids from [`LONG_LAYOUT_FROM`] on → `%019d` split 3-4-4-4-4 with `L` before the last part. `None` for a
/// negative id (no such ledger).
pub fn ledger_path(root: &str, id: i64) -> Option<String> {
    if id < 0 {
        return None;
    }
    let root = trim_root(root);
    if id < LONG_LAYOUT_FROM {
        let d = format!("{id:010}");
        Some(format!("{root}/{}/{}/L{}", &d[0..2], &d[2..6], &d[6..10]))
    } else {
        let d = format!("{id:019}");
        Some(format!(
            "{root}/{}/{}/{}/{}/L{}",
            &d[0..3],
            &d[3..7],
            &d[7..11],
            &d[11..15],
            &d[15..19]
        ))
    }
}

/// The ledger whose metadata znode is `path`, or `None` when `path` is not one (other znodes under the root such
/// as `available`, `cookies`, `LAYOUT`, `INSTANCEID`, `underreplication`, `idgen`, intermediate levels, or a path
/// in the layout the id does not belong to).
pub fn ledger_id(root: &str, path: &str) -> Option<i64> {
    let rest = path.strip_prefix(trim_root(root))?.strip_prefix('/')?;
    let parts: Vec<&str> = rest.split('/').collect();
    let widths: &[usize] = match parts.len() {
        3 => &[2, 4, 4],
        5 => &[3, 4, 4, 4, 4],
        _ => return None,
    };
    let (last, levels) = parts.split_last()?;
    let last = last.strip_prefix('L')?;
    let mut digits = String::with_capacity(19);
    for (part, &width) in levels.iter().chain(std::iter::once(&last)).zip(widths) {
        if part.len() != width || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.push_str(part);
    }
    let id: i64 = digits.parse().ok()?;
    let long = parts.len() == 5;
    (long == (id >= LONG_LAYOUT_FROM)).then_some(id)
}

/// The under-replication mark of ledger `id`: `<root>/underreplication/ledgers/<h1>/<h2>/<h3>/<h4>/urL%010d`,
/// h1..h4 the id's 16-bit groups from high to low as four hex digits each.
pub fn under_replication_path(root: &str, id: i64) -> String {
    let u = id as u64;
    format!(
        "{}/underreplication/ledgers/{:04x}/{:04x}/{:04x}/{:04x}/urL{id:010}",
        trim_root(root),
        (u >> 48) & 0xffff,
        (u >> 32) & 0xffff,
        (u >> 16) & 0xffff,
        u & 0xffff,
    )
}

/// The ledger an under-replication mark is for, or `None` when `path` is not a mark (or its hex levels do not
/// match the id).
pub fn under_replication_ledger_id(root: &str, path: &str) -> Option<i64> {
    let rest = path
        .strip_prefix(trim_root(root))?
        .strip_prefix("/underreplication/ledgers/")?;
    let name = rest.rsplit('/').next()?;
    let digits = name.strip_prefix("urL")?;
    if digits.len() < 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let id: i64 = digits.parse().ok()?;
    (under_replication_path(root, id) == path).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        assert_eq!(
            ledger_path("/ledgers", 1).unwrap(),
            "/ledgers/00/0000/L0001"
        );
        assert_eq!(
            ledger_path("/ledgers/", 1234567890).unwrap(),
            "/ledgers/12/3456/L7890"
        );
        assert_eq!(
            ledger_path("/ledgers", 2147483646).unwrap(),
            "/ledgers/21/4748/L3646"
        );
        assert_eq!(
            ledger_path("/ledgers", 2147483647).unwrap(),
            "/ledgers/000/0000/0021/4748/L3647"
        );
        assert_eq!(
            ledger_path("/ledgers", i64::MAX).unwrap(),
            "/ledgers/922/3372/0368/5477/L5807"
        );
        assert_eq!(ledger_path("/ledgers", -1), None);
    }

    #[test]
    fn paths_back_to_ids() {
        assert_eq!(ledger_id("/ledgers", "/ledgers/00/0000/L0001"), Some(1));
        assert_eq!(
            ledger_id("/ledgers/", "/ledgers/12/3456/L7890"),
            Some(1234567890)
        );
        assert_eq!(
            ledger_id("/ledgers", "/ledgers/000/0000/0021/4748/L3647"),
            Some(2147483647)
        );
        assert_eq!(
            ledger_id("/ledgers", "/ledgers/922/3372/0368/5477/L5807"),
            Some(i64::MAX)
        );
        for not_ledger in [
            "/ledgers/available",
            "/ledgers/available/readonly",
            "/ledgers/cookies/h:1",
            "/ledgers/LAYOUT",
            "/ledgers/INSTANCEID",
            "/ledgers/underreplication/ledgers/0000/0000/0000/0001/urL0000000001",
            "/ledgers/idgen/ID-0000000001",
            "/ledgers/00/0000",
            "/ledgers/00/0000/0001",
            "/ledgers/00/0000/L001",
            "/ledgers/00/00+0/L0001",
            "/other/00/0000/L0001",
            "/ledgers00/0000/L0001",
            "/ledgers/000/0000/0000/0000/L0001",
            "/ledgers/922/3372/0368/5477/L5808",
        ] {
            assert_eq!(ledger_id("/ledgers", not_ledger), None, "{not_ledger}");
        }
    }

    #[test]
    fn under_replication_marks() {
        assert_eq!(
            under_replication_path("/ledgers", 1),
            "/ledgers/underreplication/ledgers/0000/0000/0000/0001/urL0000000001"
        );
        let id = 0x0001_0002_0003_abcd_i64;
        let p = under_replication_path("/ledgers", id);
        assert_eq!(
            p,
            format!("/ledgers/underreplication/ledgers/0001/0002/0003/abcd/urL{id:010}")
        );
        assert_eq!(under_replication_ledger_id("/ledgers", &p), Some(id));
        assert_eq!(
            under_replication_ledger_id(
                "/ledgers",
                "/ledgers/underreplication/ledgers/0000/0000/0000/0002/urL0000000001"
            ),
            None
        );
        assert_eq!(
            under_replication_ledger_id("/ledgers", "/ledgers/underreplication/ledgers"),
            None
        );
    }
}
