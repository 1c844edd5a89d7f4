//! Property tests of the remoting codec: arbitrary bytes never panic a decoder, and frames round-trip.

use mqwatch_rocketmq::codec::{
    Frame, Header, SerializeType, decode_frame, encode_frame, parse_lenient_json,
};
use mqwatch_rocketmq::message::{StoredMessage, decode_messages};
use proptest::prelude::*;

fn header() -> impl Strategy<Value = Header> {
    (
        any::<i16>(),
        prop_oneof![Just("JAVA"), Just("RUST"), Just("GO")],
        any::<i16>(),
        any::<i32>(),
        0..4i32,
        proptest::option::of("[ -~]{1,20}"),
        proptest::collection::btree_map("[a-zA-Z]{1,12}", "[ -~]{0,20}", 0..5),
    )
        .prop_map(
            |(code, lang, version, opaque, flag, remark, ext_fields)| Header {
                code: i32::from(code),
                language: lang.to_string(),
                version: i32::from(version),
                opaque,
                flag,
                remark,
                ext_fields,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn frames_round_trip(h in header(), body in proptest::collection::vec(any::<u8>(), 0..200), binary in any::<bool>()) {
        let serialize = if binary { SerializeType::Binary } else { SerializeType::Json };
        let f = Frame { header: h, serialize, body };
        let bytes = encode_frame(&f);
        prop_assert_eq!(decode_frame(&bytes).unwrap(), Some((f, bytes.len())));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode_frame(&bytes);
        let _ = parse_lenient_json(&bytes);
        let _ = Header::from_binary(&bytes);
        let _ = Header::from_json(&bytes);
        let _ = decode_messages(&bytes);
    }

    #[test]
    fn stored_messages_round_trip_and_mutations_never_panic(
        offset in any::<i64>(), at in any::<i64>(), topic in "[A-Za-z_%]{1,40}",
        body in proptest::collection::vec(any::<u8>(), 0..100),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let m = StoredMessage {
            queue_id: 1, queue_offset: offset, sys_flag: 0, born_timestamp: at, store_timestamp: at,
            topic, body, properties: String::new(),
        };
        let mut bytes = m.encode();
        prop_assert_eq!(decode_messages(&bytes).unwrap(), vec![m]);
        for (i, b) in flips {
            let at = i.index(bytes.len());
            bytes[at] = b;
        }
        let _ = decode_messages(&bytes);
    }

    #[test]
    fn mutated_frames_never_panic(h in header(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut bytes = encode_frame(&Frame { header: h, serialize: SerializeType::Binary, body: b"{}".to_vec() });
        for (i, b) in flips {
            let at = i.index(bytes.len());
            bytes[at] = b;
        }
        let _ = decode_frame(&bytes);
    }

    #[test]
    fn lenient_json_agrees_with_serde_json_on_json(v in arb_json()) {
        let text = serde_json::to_vec(&v).unwrap();
        prop_assert_eq!(parse_lenient_json(&text).unwrap(), v);
    }
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(n.into())),
        "[^\u{0}]{0,10}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{0,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
