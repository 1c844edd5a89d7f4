//! A scripted Kafka broker for tests: NOT a real server. It speaks the Kafka wire protocol exactly (requests and
//! responses are kafka-protocol's own types, encoded and decoded by it) and answers from a fixed script: brokers,
//! partitions with leader/replicas/ISR, offsets and committed offsets. Multi-broker states that tansu cannot show
//! (a second broker that hangs, an ISR smaller than the replica set, a partition without a leader, fenced
//! brokers, KIP-848 consumer groups) come from here. A cluster's brokers can share one script that a test swaps
//! between cycles ([`shared`], [`serve_shared`], [`set`]) to play changes: a leader moving, an ISR shrinking, a
//! broker going away.

#![allow(dead_code)]

mod answers;
mod groups;

use answers::{describe_cluster, describe_configs, fetch};
use bytes::{BufMut, Bytes, BytesMut};
use groups::{consumer_group_describe, describe_groups, list_groups, offset_fetch};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::list_offsets_response::{
    ListOffsetsPartitionResponse, ListOffsetsTopicResponse,
};
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes, decode_request_header_from_buffer};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One partition of the script.
#[derive(Debug, Clone)]
pub struct Part {
    pub topic: &'static str,
    pub index: i32,
    pub leader: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub earliest: i64,
    pub latest: i64,
    /// Leader epoch Metadata reports (bumped by a leader move).
    pub leader_epoch: i32,
}

/// What the scripted cluster holds.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// Broker id → address.
    pub brokers: BTreeMap<i32, String>,
    /// Broker id → rack.
    pub racks: BTreeMap<i32, String>,
    pub partitions: Vec<Part>,
    /// Group → (topic, partition, committed offset).
    pub commits: BTreeMap<String, Vec<(&'static str, i32, i64)>>,
    /// Highest OffsetFetch version offered (7: one group per request; 8: batched).
    pub offset_fetch_max: i16,
    /// Close the connection on DescribeGroups (as tansu 0.6 on sqlite does).
    pub drop_describe_groups: bool,
    /// Fetch answers one record at the asked offset with timestamp `fetch_base_ms + 1000 * offset`.
    pub fetch_base_ms: i64,
    /// Partitions a Fetch of several partitions leaves out, as a broker does when their first batch does not fit
    /// the answer (no records, high watermark past the offset); asked alone they are answered.
    pub fetch_left_out: std::collections::BTreeSet<(&'static str, i32)>,
    /// Offer DescribeCluster v2 and DescribeConfigs (else the broker lacks them, as an old one does).
    pub admin_apis: bool,
    /// Fenced brokers DescribeCluster lists (Metadata does not): id → address.
    pub fenced: BTreeMap<i32, String>,
    /// Topic → min.insync.replicas, for DescribeConfigs.
    pub min_isr: BTreeMap<&'static str, i32>,
    /// Highest ListGroups version offered (0: 4, no group types; 5 lists each group's type).
    pub list_groups_max: i16,
    /// Group → its type (`classic` when absent; `consumer` is a KIP-848 group).
    pub group_types: BTreeMap<String, &'static str>,
    /// Group → its members (DescribeGroups for classic groups, ConsumerGroupDescribe for `consumer` ones).
    pub members: BTreeMap<String, Vec<Member>>,
    /// Offer ConsumerGroupDescribe (API 69, Kafka 4.0).
    pub kip848: bool,
    /// Brokers that are gone: they close every connection on its next request.
    pub gone: std::collections::BTreeSet<i32>,
    /// `(broker, api key)` answered with a body whose first array count (after a throttle time) no frame could
    /// hold: for ListOffsets, its topics.
    pub lie: std::collections::BTreeSet<(i32, i16)>,
}

/// A group member.
#[derive(Debug, Clone)]
pub struct Member {
    pub client_id: &'static str,
    pub host: &'static str,
    pub subscribed: Vec<&'static str>,
    pub assigned: Vec<(&'static str, Vec<i32>)>,
}

/// A script its brokers share and a test can replace.
pub type Shared = Arc<std::sync::RwLock<Arc<Script>>>;

/// `script` as a shared, replaceable script.
pub fn shared(script: Script) -> Shared {
    Arc::new(std::sync::RwLock::new(Arc::new(script)))
}

/// Replaces the shared script: every broker answers from `script` from its next request on.
pub fn set(shared: &Shared, script: Script) {
    *shared.write().unwrap() = Arc::new(script);
}

impl Script {
    fn group_type(&self, g: &str) -> &'static str {
        self.group_types.get(g).copied().unwrap_or("classic")
    }

    fn groups(&self) -> std::collections::BTreeSet<String> {
        self.commits
            .keys()
            .chain(self.members.keys())
            .chain(self.group_types.keys())
            .cloned()
            .collect()
    }
}

/// A running scripted broker.
pub struct ScriptedBroker {
    pub id: i32,
    pub addr: String,
    /// Requests seen, by API key.
    pub seen: Arc<std::sync::Mutex<Vec<(i16, i16)>>>,
    pub connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
    open: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl ScriptedBroker {
    /// Dies as a killed process does: the port refuses from now on and every open connection is closed.
    pub fn stop(&self) {
        self.task.abort();
        for c in self.open.lock().unwrap().drain(..) {
            c.abort();
        }
    }
}

impl Drop for ScriptedBroker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Binds a listener on a free loopback port (before the script names addresses).
pub async fn listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap().to_string();
    (l, addr)
}

/// Serves broker `id` of `script` on `listener`.
pub fn serve(id: i32, listener: TcpListener, script: Arc<Script>) -> ScriptedBroker {
    serve_shared(id, listener, Arc::new(std::sync::RwLock::new(script)))
}

/// Serves broker `id` of the shared script on `listener`.
pub fn serve_shared(id: i32, listener: TcpListener, script: Shared) -> ScriptedBroker {
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let connections = Arc::new(AtomicUsize::new(0));
    let open = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (s2, c2, o2) = (seen.clone(), connections.clone(), open.clone());
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            c2.fetch_add(1, Ordering::SeqCst);
            let conn = tokio::spawn(connection(id, stream, script.clone(), s2.clone()));
            o2.lock().unwrap().push(conn);
        }
    });
    ScriptedBroker {
        id,
        addr,
        seen,
        connections,
        task,
        open,
    }
}

/// A listener that accepts connections and never answers anything (a hung broker).
pub fn hang(listener: TcpListener) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    })
}

async fn connection(
    id: i32,
    mut stream: TcpStream,
    shared: Shared,
    seen: Arc<std::sync::Mutex<Vec<(i16, i16)>>>,
) {
    loop {
        let Ok(len) = stream.read_i32().await else {
            return;
        };
        let mut frame = BytesMut::zeroed(len as usize);
        if stream.read_exact(&mut frame).await.is_err() {
            return;
        }
        // The script as it is when the request arrives.
        let script = shared.read().unwrap().clone();
        if script.gone.contains(&id) {
            return;
        }
        let mut frame = frame.freeze();
        let header = decode_request_header_from_buffer(&mut frame).unwrap();
        let (key, version) = (header.request_api_key, header.request_api_version);
        seen.lock().unwrap().push((key, version));
        let api = ApiKey::try_from(key).unwrap();
        let body = match api {
            // A lying answer: four zero bytes (a throttle time), an array count of 0x033c0c00 (compact from the
            // first flexible version, as ListOffsets v6+ reads it; classic before), and four bytes.
            _ if script.lie.contains(&(id, key)) => {
                if version >= 6 {
                    Bytes::from_static(&[0, 0, 0, 0, 0x81, 0x98, 0xf0, 0x19, 0, 0, 0, 0])
                } else {
                    Bytes::from_static(&[0, 0, 0, 0, 0x03, 0x3c, 0x0c, 0x00, 0, 0, 0, 0])
                }
            }
            ApiKey::ApiVersions => {
                let _ = ApiVersionsRequest::decode(&mut frame, version);
                encode(&api_versions(&script), version)
            }
            ApiKey::Metadata => {
                let _ = MetadataRequest::decode(&mut frame, version).unwrap();
                encode(&metadata(&script), version)
            }
            ApiKey::ListOffsets => {
                let r = ListOffsetsRequest::decode(&mut frame, version).unwrap();
                encode(&list_offsets(id, &script, &r), version)
            }
            ApiKey::ListGroups => {
                let _ = ListGroupsRequest::decode(&mut frame, version).unwrap();
                encode(&list_groups(&script), version)
            }
            ApiKey::OffsetFetch => {
                let r = OffsetFetchRequest::decode(&mut frame, version).unwrap();
                encode(&offset_fetch(&script, &r, version), version)
            }
            ApiKey::Fetch => {
                let r = FetchRequest::decode(&mut frame, version).unwrap();
                encode(&fetch(&script, &r), version)
            }
            ApiKey::DescribeCluster if script.admin_apis => {
                let _ = DescribeClusterRequest::decode(&mut frame, version).unwrap();
                encode(&describe_cluster(&script), version)
            }
            ApiKey::DescribeConfigs if script.admin_apis => {
                let r = DescribeConfigsRequest::decode(&mut frame, version).unwrap();
                encode(&describe_configs(&script, &r), version)
            }
            ApiKey::DescribeGroups if script.drop_describe_groups => return,
            ApiKey::DescribeGroups => {
                let r = DescribeGroupsRequest::decode(&mut frame, version).unwrap();
                encode(&describe_groups(&script, &r), version)
            }
            ApiKey::ConsumerGroupDescribe if script.kip848 => {
                let r = ConsumerGroupDescribeRequest::decode(&mut frame, version).unwrap();
                encode(&consumer_group_describe(&script, &r), version)
            }
            _ => return, // anything unscripted: hang up, as a broker that cannot parse it would
        };
        let mut out = BytesMut::new();
        out.put_i32(0);
        ResponseHeader::default()
            .with_correlation_id(header.correlation_id)
            .encode(&mut out, api.response_header_version(version))
            .unwrap();
        out.extend_from_slice(&body);
        let n = (out.len() - 4) as i32;
        out[..4].copy_from_slice(&n.to_be_bytes());
        if stream.write_all(&out).await.is_err() {
            return;
        }
    }
}

fn encode<M: Encodable>(m: &M, version: i16) -> Bytes {
    let mut b = BytesMut::new();
    m.encode(&mut b, version).unwrap();
    b.freeze()
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn api_versions(script: &Script) -> ApiVersionsResponse {
    let keys = [
        (ApiKey::ApiVersions, 0, 3),
        (ApiKey::Metadata, 0, 12),
        (ApiKey::ListOffsets, 0, 7),
        (
            ApiKey::ListGroups,
            0,
            if script.list_groups_max == 0 {
                4
            } else {
                script.list_groups_max
            },
        ),
        (ApiKey::OffsetFetch, 0, script.offset_fetch_max.max(1)),
        (ApiKey::DescribeGroups, 0, 6),
        (ApiKey::Fetch, 4, 12),
        (ApiKey::DescribeCluster, 0, 2),
        (ApiKey::DescribeConfigs, 1, 4),
        (ApiKey::ConsumerGroupDescribe, 0, 1),
    ];
    let admin = [ApiKey::DescribeCluster, ApiKey::DescribeConfigs];
    ApiVersionsResponse::default().with_api_keys(
        keys.into_iter()
            .filter(|(k, _, _)| script.admin_apis || !admin.contains(k))
            .filter(|(k, _, _)| script.kip848 || *k != ApiKey::ConsumerGroupDescribe)
            .map(|(k, min, max)| {
                ApiVersion::default()
                    .with_api_key(k as i16)
                    .with_min_version(min)
                    .with_max_version(max)
            })
            .collect(),
    )
}

fn metadata(script: &Script) -> MetadataResponse {
    let brokers = script
        .brokers
        .iter()
        .map(|(id, addr)| {
            let (host, port) = addr.rsplit_once(':').unwrap();
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(*id))
                .with_host(s(host))
                .with_port(port.parse().unwrap())
                .with_rack(script.racks.get(id).map(|r| s(r)))
        })
        .collect();
    let mut topics: BTreeMap<&str, Vec<&Part>> = BTreeMap::new();
    for p in &script.partitions {
        topics.entry(p.topic).or_default().push(p);
    }
    let topics = topics
        .into_iter()
        .map(|(t, ps)| {
            MetadataResponseTopic::default()
                .with_name(Some(TopicName(s(t))))
                .with_partitions(
                    ps.into_iter()
                        .map(|p| {
                            MetadataResponsePartition::default()
                                .with_partition_index(p.index)
                                .with_leader_id(BrokerId(p.leader))
                                .with_leader_epoch(p.leader_epoch)
                                .with_replica_nodes(
                                    p.replicas.iter().map(|r| BrokerId(*r)).collect(),
                                )
                                .with_isr_nodes(p.isr.iter().map(|r| BrokerId(*r)).collect())
                        })
                        .collect(),
                )
        })
        .collect();
    MetadataResponse::default()
        .with_brokers(brokers)
        .with_controller_id(BrokerId(*script.brokers.keys().next().unwrap()))
        .with_topics(topics)
}

fn list_offsets(id: i32, script: &Script, r: &ListOffsetsRequest) -> ListOffsetsResponse {
    ListOffsetsResponse::default().with_topics(
        r.topics
            .iter()
            .map(|t| {
                ListOffsetsTopicResponse::default()
                    .with_name(t.name.clone())
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|rp| {
                                let part = script.partitions.iter().find(|p| {
                                    p.topic == t.name.0.as_str() && p.index == rp.partition_index
                                });
                                let base = ListOffsetsPartitionResponse::default()
                                    .with_partition_index(rp.partition_index);
                                match part {
                                    Some(p) if p.leader == id => {
                                        base.with_offset(match rp.timestamp {
                                            -2 => p.earliest,
                                            -1 => p.latest,
                                            other => panic!(
                                                "scripted broker asked for timestamp {other}"
                                            ),
                                        })
                                    }
                                    Some(_) => base.with_error_code(6), // NOT_LEADER_OR_FOLLOWER
                                    None => base.with_error_code(3),
                                }
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}
