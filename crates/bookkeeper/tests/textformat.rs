//! The protobuf text parser on BookKeeper-style text, escapes, integers and broken input.

use mqwatch_bookkeeper::textformat::{TextMessage, escape, parse_int};

#[test]
fn parses_bookkeeper_style_text() {
    let t = b"quorumSize: 2\nstate: CLOSED # done\nsegment {\n  ensembleMember: \"a:1\"\n  ensembleMember: 'b' \"\\x3a\\0622\"\n  firstEntryId: 0\n}\nsegment: < firstEntryId: -0x10 >, tags: [1, 2]\n";
    let m = TextMessage::parse(t).unwrap();
    assert_eq!(m.int("quorumSize").unwrap(), Some(2));
    assert_eq!(
        m.enumeration("state", |n| (n == "CLOSED").then_some(3))
            .unwrap(),
        Some(3)
    );
    let segs = m.messages_all("segment").unwrap();
    assert_eq!(segs.len(), 2);
    assert_eq!(
        segs[0].strings_all("ensembleMember").unwrap(),
        ["a:1", "b:22"]
    );
    assert_eq!(segs[1].int("firstEntryId").unwrap(), Some(-16));
    assert_eq!(m.all("tags").count(), 2);
}

#[test]
fn escape_round_trips() {
    let raw: Vec<u8> = (0..=255).collect();
    let text = format!("v: \"{}\"", escape(&raw));
    let m = TextMessage::parse(text.as_bytes()).unwrap();
    assert_eq!(m.bytes_all("v").unwrap(), vec![raw]);
}

#[test]
fn rejects_broken_text() {
    for bad in [
        &b"a: \"x"[..],
        b"a {",
        b"a b",
        b"a: \"\\q\"",
        b": 1",
        b"a: \"\\400\"",
        b"a: }",
    ] {
        assert!(
            TextMessage::parse(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    let deep = "a {".repeat(100_000);
    assert!(TextMessage::parse(deep.as_bytes()).is_err());
}

#[test]
fn integers() {
    assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
    assert_eq!(parse_int("9223372036854775808"), None);
    assert_eq!(parse_int("0x7f"), Some(127));
    assert_eq!(parse_int("1.5"), None);
    assert_eq!(parse_int("-"), None);
}
