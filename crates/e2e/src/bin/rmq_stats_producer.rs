//! mqwatch-rmq-stats-producer: a real `rocketmq-client-rust` 1.0.0 producer instrumented with `mqwatch-client`
//! (its RocketMQ RPC hook, feature `rocketmq`, and a reporter posting to mqwatch), as the end-to-end tests run it.
//!
//! ```text
//! mqwatch-rmq-stats-producer NAMESRV TOPIC COUNT MQWATCH_URL TOKEN CLUSTER
//! ```
//! Sends COUNT messages one after another, then prints `MEASURED <µs,µs,…>`: each send's wire latency as an
//! independent recorder saw it (its own hook at the same two points — request leaving, response arriving — kept
//! as exact values, not through a histogram). Then it keeps sending one message every 100 ms to `TOPIC-2` until
//! killed;
//! a send that fails before reaching the wire (no connection to the broker) is recorded by the application's
//! error path with `ProducerStats::record`, as an application would, and counted in `FAILED <n>` lines.

use mqwatch_client::rocketmq::StatsRpcHook;
use mqwatch_client::{ErrorKind, Outcome, ProducerStats, Reporter, ReporterConfig};
use rocketmq_client_rust::{ClientConfig, ClientRuntime, ClientRuntimeConfig, DefaultMQProducer};
use rocketmq_model::common::message::message_single::Message;
use rocketmq_protocol::protocol::remoting_command::RemotingCommand;
use rocketmq_runtime::{RuntimeConfig, RuntimeOwner};
use rocketmq_transport::api::RPCHook;
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The independent recorder: exact durations of send requests, paired by (address, opaque) under a mutex.
#[derive(Default)]
struct Exact {
    started: Mutex<HashMap<(SocketAddr, i32), Instant>>,
    done: Mutex<Vec<Duration>>,
}

/// The producer takes one RPC hook: this one calls the recorder and mqwatch's hook.
struct Both {
    exact: Arc<Exact>,
    stats: StatsRpcHook,
}

const SEND_CODES: [i32; 3] = [10, 310, 320];

impl RPCHook for Both {
    fn do_before_request(
        &self,
        addr: SocketAddr,
        request: &mut RemotingCommand,
    ) -> Result<(), rocketmq_error::SharedError> {
        if SEND_CODES.contains(&request.code())
            && let Ok(mut s) = self.exact.started.lock()
        {
            s.insert((addr, request.opaque()), Instant::now());
        }
        self.stats.do_before_request(addr, request)
    }

    fn do_after_response(
        &self,
        addr: SocketAddr,
        request: &RemotingCommand,
        response: &mut RemotingCommand,
    ) -> Result<(), rocketmq_error::SharedError> {
        let r = self.stats.do_after_response(addr, request, response);
        if SEND_CODES.contains(&request.code())
            && let Some(start) = self
                .exact
                .started
                .lock()
                .ok()
                .and_then(|mut s| s.remove(&(addr, request.opaque())))
            && let Ok(mut d) = self.exact.done.lock()
        {
            d.push(start.elapsed());
        }
        r
    }
}

async fn run(rt: Arc<ClientRuntime>, args: &[String]) -> Result<(), Error> {
    let [namesrv, topic, count, url, token, cluster] = args else {
        return Err(
            "usage: mqwatch-rmq-stats-producer NAMESRV TOPIC COUNT MQWATCH_URL TOKEN CLUSTER"
                .into(),
        );
    };
    let count: usize = count.parse()?;
    let stats = Arc::new(ProducerStats::new());
    let mut rc = ReporterConfig::new(url.clone());
    rc.token = Some(token.clone());
    rc.cluster = Some(cluster.clone());
    rc.client_id = Some(format!("stats-producer@{}", std::process::id()));
    rc.interval = Duration::from_millis(500);
    let _reporter = Reporter::start(stats.clone(), rc)?;
    let exact = Arc::new(Exact::default());
    let mut producer = DefaultMQProducer::builder(rt)
        .client_config(ClientConfig {
            namesrv_addr: Some(namesrv.to_string().into()),
            vip_channel_enabled: false,
            ..Default::default()
        })
        .producer_group(format!("{topic}_stats_producer"))
        .build();
    producer.set_rpc_hook(Arc::new(Both {
        exact: exact.clone(),
        stats: StatsRpcHook::new(stats.clone(), Duration::from_secs(4)),
    }));
    producer.start().await?;
    let message = |topic: &str| {
        Message::builder()
            .topic(topic.to_string())
            .body_slice(b"mqwatch")
            .build_unchecked()
    };
    for _ in 0..count {
        producer.send_with_timeout(message(topic), 3_000).await?;
    }
    let measured: Vec<String> = exact
        .done
        .lock()
        .map_err(|_| "poisoned")?
        .iter()
        .map(|d| d.as_micros().to_string())
        .collect();
    println!("MEASURED {}", measured.join(","));
    let _ = std::io::stdout().flush();
    let mut failed = 0u64;
    let after = format!("{topic}-2");
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        if let Err(e) = producer.send_with_timeout(message(&after), 1_000).await {
            // What never reached the wire is the application's to count.
            stats.record(
                &after,
                "(unsent)",
                started.elapsed(),
                Outcome::Failed(ErrorKind::Network),
            );
            failed += 1;
            println!("FAILED {failed}: {e}");
            let _ = std::io::stdout().flush();
        }
    }
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let owner = RuntimeOwner::plan(RuntimeConfig {
        thread_name: "mqwatch-rmq-stats-producer".into(),
        ..Default::default()
    })?
    .build()?;
    let telemetry = rocketmq_observability::install_global(
        &rocketmq_observability::TelemetryBootstrapConfig::default(),
    )?;
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    tokio.block_on(async {
        let rt = ClientRuntime::try_new(
            owner.root_context().component("client"),
            ClientRuntimeConfig::default(),
            telemetry.handle(),
        )?;
        run(rt, &args).await
    })
}
