//! The ready-made RocketMQ hook's cost per send, measured on the real thing: `StatsRpcHook` as
//! `rocketmq-client-rust` 1.0.0 calls it (`RPCHook::do_before_request` as a send request leaves,
//! `do_after_response` when its answer arrives), with real `RemotingCommand`s of the kind the producer sends
//! (SEND_MESSAGE_V2, topic in header field `b`, a 1 KiB body), against the same calls on an RPC hook that does
//! nothing (what any hook costs the client's call sites). Also the clone of the request the client makes for its
//! after-hook whenever an RPC hook is set (a cost of the client, paid for any hook). No network: the client's
//! send path around the hook is the same with or without it.

use criterion::{Criterion, criterion_group, criterion_main};
use mqwatch_client::ProducerStats;
use mqwatch_client::rocketmq::StatsRpcHook;
use rocketmq_protocol::protocol::remoting_command::RemotingCommand;
use rocketmq_transport::api::RPCHook;
use std::hint::black_box;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

struct NoHook;

impl RPCHook for NoHook {
    fn do_before_request(
        &self,
        _: SocketAddr,
        _: &mut RemotingCommand,
    ) -> Result<(), rocketmq_error::SharedError> {
        Ok(())
    }

    fn do_after_response(
        &self,
        _: SocketAddr,
        _: &RemotingCommand,
        _: &mut RemotingCommand,
    ) -> Result<(), rocketmq_error::SharedError> {
        Ok(())
    }
}

fn request(topic: &str) -> RemotingCommand {
    let mut r = RemotingCommand::create_remoting_command(310).set_body(vec![b'x'; 1024]);
    r.add_ext_field("a", "producer-group");
    r.add_ext_field("b", topic.to_string());
    r.add_ext_field("e", "0");
    r
}

fn hook(c: &mut Criterion) {
    let brokers: Vec<SocketAddr> = (0..4)
        .map(|i| format!("10.0.0.{}:10911", i + 1).parse().unwrap())
        .collect();
    let mut requests: Vec<RemotingCommand> = (0..100)
        .map(|t| request(&format!("topic-{t:03}")))
        .collect();
    let mut response = RemotingCommand::create_remoting_command(0); // SUCCESS
    let stats = Arc::new(ProducerStats::new());
    let ours = StatsRpcHook::new(stats.clone(), Duration::from_secs(4));
    let mut g = c.benchmark_group("rocketmq_hook_per_send");
    let mut i = 0usize;
    let mut send = |hook: &dyn RPCHook, i: &mut usize| {
        *i = i.wrapping_add(1);
        let addr = brokers[*i % 4];
        let req = &mut requests[*i % 100];
        req.set_opaque_mut(*i as i32);
        hook.do_before_request(addr, req).unwrap();
        response.set_opaque_mut(*i as i32);
        hook.do_after_response(addr, req, &mut response).unwrap();
    };
    g.bench_function("no-op RPC hook (baseline)", |b| {
        b.iter(|| send(black_box(&NoHook), &mut i))
    });
    let mut sent_through_ours = 0usize;
    g.bench_function("StatsRpcHook", |b| {
        b.iter(|| {
            sent_through_ours += 1;
            send(black_box(&ours), &mut i)
        })
    });
    g.finish();
    // The measured path is the recording one: every send paired and recorded, as sent, per (topic, broker).
    assert_eq!(ours.in_flight(), 0);
    let entries = stats.report_since(&mut mqwatch_client::Samplers::default(), 0, u64::MAX);
    // Consecutive sends: topic i % 100 always goes to broker i % 4, so min(sends, 100) pairs (one send under
    // `cargo test`).
    assert_eq!(
        entries.len(),
        sent_through_ours.min(100),
        "one entry per (topic, broker) pair seen"
    );
    let req = request("topic-000");
    c.bench_function(
        "the client's clone of a 1 KiB send request (any RPC hook)",
        |b| b.iter(|| black_box(req.clone())),
    );
}

criterion_group!(benches, hook);
criterion_main!(benches);
