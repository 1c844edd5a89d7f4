//! Bytes from a RocketMQ connection: frame, both header forms, and the body parsers (JSON and stored messages)
//! on whatever body it carries.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_rocketmq::codec::{Header, decode_frame, parse_lenient_json};
use mqwatch_rocketmq::message::decode_messages;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((frame, used))) = decode_frame(data) {
        assert!(used <= data.len());
        let _ = parse_lenient_json(&frame.body);
        let _ = decode_messages(&frame.body);
    }
    let _ = Header::from_binary(data);
    let _ = Header::from_json(data);
});
