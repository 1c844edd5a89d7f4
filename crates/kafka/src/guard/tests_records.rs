//! mqwatch's record-batch reader against batches kafka-protocol's encoder writes (uncompressed, gzip, snappy),
//! and against batches that lie about their counts or are corrupt.

use super::records::{FoundRecord, first_at_or_after};
use bytes::{Bytes, BytesMut};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

fn batch(base: i64, n: i64, compression: Compression, ts_type: TimestampType) -> Vec<u8> {
    let records: Vec<Record> = (0..n)
        .map(|i| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: ts_type,
            offset: base + i,
            sequence: i as i32, // one batch: offset - sequence constant
            timestamp: 1_000 + 10 * i,
            key: Some(Bytes::from_static(b"k")),
            value: Some(Bytes::from(vec![b'v'; 100])),
            headers: [(
                kafka_protocol::protocol::StrBytes::from_static_str("h"),
                Some(Bytes::from_static(b"x")),
            )]
            .into_iter()
            .collect(),
        })
        .collect();
    let mut out = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut out,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression,
        },
    )
    .unwrap();
    out.to_vec()
}

#[test]
fn finds_the_record_at_or_after_an_offset_in_every_compression() {
    for c in [Compression::None, Compression::Gzip, Compression::Snappy] {
        let mut bytes = batch(10, 5, c, TimestampType::Creation);
        bytes.extend(batch(15, 5, c, TimestampType::Creation));
        let found = |o| first_at_or_after(&bytes, o).unwrap();
        let at = |offset, timestamp_ms| {
            Some(FoundRecord {
                offset,
                timestamp_ms,
                log_append_time: false,
            })
        };
        assert_eq!(found(0), at(10, 1_000), "{c:?}");
        assert_eq!(found(12), at(12, 1_020), "{c:?}");
        assert_eq!(found(16), at(16, 1_010), "{c:?}");
        assert_eq!(found(20), None, "{c:?}");
        // The last batch cut short by the fetch size: the search ends there.
        let first = batch(10, 5, c, TimestampType::Creation).len();
        for cut in [first + 5, first + 40, bytes.len() - 1] {
            let cut = &bytes[..cut];
            assert_eq!(first_at_or_after(cut, 16).unwrap(), None, "{c:?}");
            assert_eq!(first_at_or_after(cut, 11).unwrap(), at(11, 1_010), "{c:?}");
        }
    }
}

#[test]
fn log_append_time_batches_give_every_record_the_batch_max_timestamp() {
    // kafka-protocol's encoder does not write the LogAppendTime bit (attributes bit 3): set it as a broker does.
    let mut bytes = batch(0, 3, Compression::None, TimestampType::LogAppend);
    bytes[22] |= 1 << 3;
    recrc(&mut bytes);
    let r = first_at_or_after(&bytes, 1).unwrap().unwrap();
    assert_eq!(
        (r.offset, r.timestamp_ms, r.log_append_time),
        (1, 1_020, true)
    );
}

/// Rewrites a batch's CRC after a change.
fn recrc(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn impossible_counts_and_corruption_are_errors_naming_the_batch() {
    let good = batch(7, 2, Compression::None, TimestampType::Creation);
    // Record count (bytes 57..61) set to 0x033c0c00.
    let mut b = good.clone();
    b[57..61].copy_from_slice(&0x033c_0c00i32.to_be_bytes());
    recrc(&mut b);
    let e = first_at_or_after(&b, 0).unwrap_err();
    assert_eq!(e.base_offset, 7);
    assert!(e.reason.starts_with("declares 54266880 records"), "{e}");
    // A header count of i32::MAX in the first record: its varint follows the value.
    let mut b = good.clone();
    let first = 61;
    let pos = first + b[first..].windows(2).position(|w| w == [2, b'h']).unwrap() - 1;
    b[pos] = 0xfe; // with the next byte, a varint of 191 headers in a record of a few bytes
    recrc(&mut b);
    let e = first_at_or_after(&b, 0).unwrap_err();
    assert!(e.reason.contains("headers"), "{e}");
    // A flipped byte: the CRC says so.
    let mut b = good.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    assert!(first_at_or_after(&b, 0).unwrap_err().reason.contains("CRC"));
    // Lengths below -1 and garbage never panic.
    assert!(first_at_or_after(&[0xff; 64], 0).is_err());
    for n in 0..good.len() {
        let _ = first_at_or_after(&good[..n], 0);
    }
}

#[test]
fn a_gzip_bomb_stops_at_the_inflate_limit() {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..(super::records::MAX_INFLATED >> 20) + 1 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    let mut b = batch(0, 1, Compression::Gzip, TimestampType::Creation);
    b.truncate(61);
    b.extend_from_slice(&bomb);
    let len = (b.len() - 12) as i32;
    b[8..12].copy_from_slice(&len.to_be_bytes());
    recrc(&mut b);
    let e = first_at_or_after(&b, 0).unwrap_err();
    assert!(e.reason.contains("inflates past"), "{e}");
}
