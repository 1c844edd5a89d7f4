//! Proof that the tables are kafka-protocol's message shapes and that the guard refuses impossible counts.
//!
//! - Generated: random, populated bodies are written from each table (every covered version of every message,
//!   non-empty arrays, strings, known and unknown tagged fields); each must pass the walker, decode with
//!   kafka-protocol consuming every byte, and encode back to the same bytes. A table that differs from
//!   kafka-protocol's shape in any field, type, version or tag fails this.
//! - Defaults: every response kafka-protocol encodes from its default struct passes the walker, whole.
//! - Hostile: the impossible counts are refused with the field named.

use super::tables::{Kind, Message, RESPONSES, Schema};
use super::{ASSIGNMENT_MESSAGE, SUBSCRIPTION_MESSAGE, walk};
use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable};
use proptest::prelude::*;

/// Writes random valid bodies along a table.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn uvarint(out: &mut Vec<u8>, mut v: u32) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn len(out: &mut Vec<u8>, n: usize, flexible: bool, wide: bool) {
        if flexible {
            Self::uvarint(out, n as u32 + 1);
        } else if wide {
            out.extend_from_slice(&(n as i32).to_be_bytes());
        } else {
            out.extend_from_slice(&(n as i16).to_be_bytes());
        }
    }

    /// `tagged`: the value must differ from the field's default (the encoder leaves defaults out).
    fn kind(&mut self, k: &Kind, v: i16, flexible: bool, tagged: bool, out: &mut Vec<u8>) {
        match k {
            Kind::I8 => out.push(self.below(100) as u8),
            Kind::Bool => out.push(if tagged { 1 } else { self.below(2) as u8 }),
            Kind::I16 => out.extend_from_slice(&(self.below(30_000) as i16).to_be_bytes()),
            Kind::I32 => out.extend_from_slice(&(self.below(1 << 30) as i32).to_be_bytes()),
            Kind::I64 => out.extend_from_slice(&(self.below(1 << 60) as i64).to_be_bytes()),
            Kind::Uuid => (0..16).for_each(|_| out.push(self.next() as u8)),
            Kind::Str | Kind::Bytes => {
                let n = self.below(6) as usize + usize::from(tagged);
                Self::len(out, n, flexible, matches!(k, Kind::Bytes));
                (0..n).for_each(|_| out.push(b'a' + self.below(26) as u8));
            }
            Kind::Array(e) => {
                let n = self.below(3) as usize + usize::from(tagged);
                Self::len(out, n, flexible, true);
                (0..n).for_each(|_| self.kind(e, v, flexible, false, out));
            }
            Kind::Struct(s) => self.schema(s, v, flexible, out),
        }
    }

    fn schema(&mut self, s: &Schema, v: i16, flexible: bool, out: &mut Vec<u8>) {
        for f in s.fields.iter().filter(|f| f.min <= v && v <= f.max) {
            self.kind(&f.kind, v, flexible, false, out);
        }
        if !flexible {
            return;
        }
        let mut tags: Vec<(u32, Vec<u8>)> = Vec::new();
        for t in s.tagged.iter().filter(|t| t.min <= v && v <= t.max) {
            if self.below(2) == 0 {
                let mut body = Vec::new();
                self.kind(&t.kind, v, flexible, true, &mut body);
                tags.push((t.tag, body));
            }
        }
        if self.below(3) == 0 {
            let unknown = s.tagged.iter().map(|t| t.tag + 1).max().unwrap_or(0) + 7;
            let body: Vec<u8> = (0..self.below(4)).map(|_| self.next() as u8).collect();
            tags.push((unknown, body));
        }
        Self::uvarint(out, tags.len() as u32);
        for (tag, body) in tags {
            Self::uvarint(out, tag);
            Self::uvarint(out, body.len() as u32);
            out.extend_from_slice(&body);
        }
    }

    fn message(&mut self, m: &Message, v: i16) -> Vec<u8> {
        let mut out = Vec::new();
        let flexible = m.flexible_from.is_some_and(|f| v >= f);
        self.schema(m.schema, v, flexible, &mut out);
        out
    }
}

/// Decodes `bytes` as `T` in `v` (all of it), encodes it back, and compares.
fn round_trip<T: Decodable + Encodable>(v: i16, bytes: &[u8]) -> Result<(), String> {
    let mut b = Bytes::copy_from_slice(bytes);
    let t = T::decode(&mut b, v).map_err(|e| format!("decode: {e}"))?;
    if b.remaining() != 0 {
        return Err(format!("{} bytes left after decoding", b.remaining()));
    }
    let mut out = BytesMut::new();
    t.encode(&mut out, v).map_err(|e| format!("encode: {e}"))?;
    if out[..] != bytes[..] {
        return Err(format!(
            "re-encoded differently:\n {bytes:?}\n {:?}",
            &out[..]
        ));
    }
    Ok(())
}

/// `T::default()` encoded in `v`, when kafka-protocol can encode it.
fn default_bytes<T: Encodable + Default>(v: i16) -> Option<Vec<u8>> {
    let mut out = BytesMut::new();
    T::default().encode(&mut out, v).ok().map(|()| out.to_vec())
}

macro_rules! by_type {
    ($key:expr, $f:ident, $($args:expr),*) => {
        match $key {
            Some(0) => $f::<ProduceResponse>($($args),*),
            Some(1) => $f::<FetchResponse>($($args),*),
            Some(2) => $f::<ListOffsetsResponse>($($args),*),
            Some(3) => $f::<MetadataResponse>($($args),*),
            Some(8) => $f::<OffsetCommitResponse>($($args),*),
            Some(9) => $f::<OffsetFetchResponse>($($args),*),
            Some(10) => $f::<FindCoordinatorResponse>($($args),*),
            Some(15) => $f::<DescribeGroupsResponse>($($args),*),
            Some(16) => $f::<ListGroupsResponse>($($args),*),
            Some(17) => $f::<SaslHandshakeResponse>($($args),*),
            Some(18) => $f::<ApiVersionsResponse>($($args),*),
            Some(19) => $f::<CreateTopicsResponse>($($args),*),
            Some(32) => $f::<DescribeConfigsResponse>($($args),*),
            Some(36) => $f::<SaslAuthenticateResponse>($($args),*),
            Some(60) => $f::<DescribeClusterResponse>($($args),*),
            Some(69) => $f::<ConsumerGroupDescribeResponse>($($args),*),
            other => panic!("no type for api key {other:?}"),
        }
    };
}

fn all_messages() -> Vec<(&'static Message, &'static str)> {
    let mut all: Vec<(&Message, &str)> = RESPONSES.iter().map(|m| (m, m.schema.name)).collect();
    all.push((&SUBSCRIPTION_MESSAGE, "subscription"));
    all.push((&ASSIGNMENT_MESSAGE, "assignment"));
    all
}

fn check_generated(m: &Message, v: i16, bytes: &[u8]) -> Result<(), String> {
    let read = walk::walk(m, v, bytes).map_err(|e| format!("walker refused: {e}"))?;
    if read != bytes.len() {
        return Err(format!("walker read {read} of {} bytes", bytes.len()));
    }
    match m.schema.name {
        "ConsumerProtocolSubscription" => round_trip::<ConsumerProtocolSubscription>(v, bytes),
        "ConsumerProtocolAssignment" => round_trip::<ConsumerProtocolAssignment>(v, bytes),
        _ => by_type!(m.api_key, round_trip, v, bytes),
    }
}

proptest! {
    #[test]
    fn every_table_is_kafka_protocols_shape(seed in 1u64..u64::MAX) {
        let mut g = Gen(seed);
        for (m, name) in all_messages() {
            for v in m.min..=m.max {
                let bytes = g.message(m, v);
                if let Err(e) = check_generated(m, v, &bytes) {
                    prop_assert!(false, "{name} v{v}: {e}");
                }
            }
        }
    }
}

#[test]
fn every_default_response_passes_whole() {
    for m in RESPONSES {
        for v in m.min..=m.max {
            let Some(bytes) = by_type!(m.api_key, default_bytes, v) else {
                continue;
            };
            let read =
                walk::walk(m, v, &bytes).unwrap_or_else(|e| panic!("{} v{v}: {e}", m.schema.name));
            assert_eq!(read, bytes.len(), "{} v{v}", m.schema.name);
        }
    }
}

#[test]
fn a_count_the_bytes_cannot_hold_is_refused_with_its_field() {
    // Metadata v0: a broker count of 0x033c0c00 and four bytes: the payload that made kafka-protocol reserve
    // 54 million brokers.
    let bytes = [0x03, 0x3c, 0x0c, 0x00, 0, 0, 0, 0];
    let e = super::check_response(3, 0, &bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "brokers: declares 54266880 elements, only 4 bytes left"
    );
    // The same deep inside: one topic whose partitions array lies.
    let mut b = vec![0, 0, 0, 0]; // no brokers
    b.extend_from_slice(&[0, 0, 0, 1]); // one topic
    b.extend_from_slice(&[0, 0, 0, 1, b't']); // error code 0, name "t"
    b.extend_from_slice(&[0x7f, 0xff, 0xff, 0xff]); // partitions: i32::MAX
    let e = super::check_response(3, 0, &b).unwrap_err();
    assert_eq!(e.path(), "topics[0].partitions");
    // Compact (flexible) counts too: DescribeCluster v0, brokers count 0xffffffff.
    let mut b = vec![0, 0, 0, 0, 0, 0, 1]; // throttle, error code, error message null
    b.extend_from_slice(&[1 + 1, b'c', 0, 0, 0, 1]); // cluster id "c", controller 1
    b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
    let e = super::check_response(60, 0, &b).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("brokers: declares 4294967294 elements"),
        "{e}"
    );
}

#[test]
fn uncovered_apis_and_versions_are_refused_before_decoding() {
    assert!(
        super::check_response(3, 14, &[])
            .unwrap_err()
            .to_string()
            .contains("outside")
    );
    assert!(super::check_response(55, 0, &[]).is_err());
    assert_eq!(super::versions(55), None);
    assert_eq!(super::versions(1).map(|r| (r.min, r.max)), Some((4, 18)));
    // The client never negotiates what the guard does not cover.
    let ours = crate::client::ours::<MetadataRequest>(None);
    assert_eq!((ours.min, ours.max), (0, 13));
    assert!(crate::client::ours::<DescribeQuorumRequest>(None).is_empty());
}

#[test]
fn member_blobs_with_impossible_counts_are_none() {
    let mut blob = vec![0, 1]; // v1 subscription
    blob.extend_from_slice(&[0x40, 0, 0, 0]); // topics: 2^30
    assert!(super::subscription(&Bytes::from(blob)).is_none());
    let sub = ConsumerProtocolSubscription::default().with_topics(vec![
        kafka_protocol::protocol::StrBytes::from_static_str("orders"),
    ]);
    let mut b = BytesMut::new();
    b.extend_from_slice(&1i16.to_be_bytes());
    sub.encode(&mut b, 1).unwrap();
    assert_eq!(super::subscription(&b.freeze()), Some(sub));
}

#[test]
fn the_reservation_estimate_covers_the_decoders_element_sizes() {
    use std::mem::size_of;
    let largest = [
        size_of::<metadata_response::MetadataResponseTopic>(),
        size_of::<metadata_response::MetadataResponsePartition>(),
        size_of::<metadata_response::MetadataResponseBroker>(),
        size_of::<describe_groups_response::DescribedGroup>(),
        size_of::<describe_groups_response::DescribedGroupMember>(),
        size_of::<consumer_group_describe_response::DescribedGroup>(),
        size_of::<consumer_group_describe_response::Member>(),
        size_of::<fetch_response::FetchableTopicResponse>(),
        size_of::<fetch_response::PartitionData>(),
        size_of::<describe_configs_response::DescribeConfigsResult>(),
        size_of::<describe_configs_response::DescribeConfigsResourceResult>(),
        size_of::<offset_fetch_response::OffsetFetchResponseGroup>(),
        size_of::<list_offsets_response::ListOffsetsPartitionResponse>(),
        size_of::<produce_response::PartitionProduceResponse>(),
        size_of::<create_topics_response::CreatableTopicResult>(),
    ];
    assert!(
        largest.iter().all(|s| *s <= super::walk::STRUCT_COST),
        "{largest:?}"
    );
    assert_eq!(
        size_of::<kafka_protocol::protocol::StrBytes>(),
        super::walk::STR_COST
    );
}

#[test]
fn a_body_whose_elements_would_reserve_far_more_than_its_size_is_refused() {
    use super::tables::Field;
    static NAMES: Schema = Schema {
        name: "Names",
        fields: &[Field::new("names", 0, 0, Kind::Array(&Kind::Str))],
        tagged: &[],
    };
    static M: Message = Message {
        api_key: None,
        min: 0,
        max: 0,
        flexible_from: Some(0),
        schema: &NAMES,
    };
    // n empty compact strings: one byte each on the wire, 32 bytes each once decoded.
    let body = |n: u32| {
        let mut b = Vec::new();
        Gen::uvarint(&mut b, n + 1);
        b.extend(std::iter::repeat_n(1u8, n as usize));
        b.push(0);
        b
    };
    // A million: 32 MB reserved, under the 64 MB floor.
    assert!(walk::walk(&M, 0, &body(1_000_000)).is_ok());
    // Three million in 3 MB: 96 MB, above both the floor and 16 times the body.
    let e = walk::walk(&M, 0, &body(3_000_000)).unwrap_err();
    assert!(e.reason().contains("would reserve"), "{e}");
}
