//! mqwatch-rmq-client: a real RocketMQ client (the `rocketmq-client-rust` 1.0.0 producer and push consumer) as a
//! program the end-to-end tests start and stop by PID, the way real applications run beside a cluster.
//!
//! ```text
//! mqwatch-rmq-client NAMESRV produce TOPIC COUNT BODY_BYTES   sends COUNT messages, prints "SENT <n>", exits
//! mqwatch-rmq-client NAMESRV consume TOPIC GROUP MODE          MODE: ok | reject | block; prints "READY",
//!                                                              then "CONSUMED <n>" as it goes, until killed
//! ```
//! `reject` answers "reconsume later" to every first delivery (the broker sends it back to `%RETRY%GROUP`) and
//! accepts redeliveries, so each message is retried exactly once. `block` never returns from its handler.

use rocketmq_client_rust::{
    ClientConfig, ClientRuntime, ClientRuntimeConfig, ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus, DefaultMQProducer, DefaultMQPushConsumer, MQPushConsumer,
    MessageListenerConcurrently,
};
use rocketmq_model::common::consumer::consume_from_where::ConsumeFromWhere;
use rocketmq_model::common::message::message_ext::MessageExt;
use rocketmq_model::common::message::message_single::Message;
use rocketmq_runtime::{RuntimeConfig, RuntimeOwner};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Ok,
    Reject,
    Block,
}

struct Listener {
    mode: Mode,
    consumed: Arc<AtomicU64>,
}

impl MessageListenerConcurrently for Listener {
    fn consume_message(
        &self,
        msgs: &[&MessageExt],
        _context: &ConsumeConcurrentlyContext,
    ) -> rocketmq_client_rust::ClientResult<ConsumeConcurrentlyStatus> {
        match self.mode {
            Mode::Block => loop {
                std::thread::sleep(Duration::from_secs(3600));
            },
            Mode::Reject if msgs.iter().any(|m| m.reconsume_times() == 0) => {
                Ok(ConsumeConcurrentlyStatus::ReconsumeLater)
            }
            _ => {
                let n = self.consumed.fetch_add(msgs.len() as u64, Ordering::SeqCst)
                    + msgs.len() as u64;
                println!("CONSUMED {n}");
                let _ = std::io::stdout().flush();
                Ok(ConsumeConcurrentlyStatus::ConsumeSuccess)
            }
        }
    }
}

fn config(namesrv: &str) -> ClientConfig {
    ClientConfig {
        namesrv_addr: Some(namesrv.to_string().into()),
        vip_channel_enabled: false,
        ..Default::default()
    }
}

async fn produce(
    rt: Arc<ClientRuntime>,
    namesrv: &str,
    topic: &str,
    count: u64,
    size: usize,
) -> Result<(), Error> {
    let mut producer = DefaultMQProducer::builder(rt)
        .client_config(config(namesrv))
        .producer_group(format!("{topic}_producer"))
        .build();
    producer.start().await?;
    let body = vec![b'x'; size];
    for _ in 0..count {
        let message = Message::builder()
            .topic(topic.to_string())
            .body_slice(&body)
            .build_unchecked();
        producer.send_with_timeout(message, 10_000).await?;
    }
    println!("SENT {count}");
    Box::pin(producer.shutdown()).await;
    Ok(())
}

async fn consume(
    rt: Arc<ClientRuntime>,
    namesrv: &str,
    topic: &str,
    group: &str,
    mode: Mode,
) -> Result<(), Error> {
    let mut consumer = DefaultMQPushConsumer::builder(rt)
        .client_config(config(namesrv))
        .consumer_group(group.to_string())
        .consume_from_where(ConsumeFromWhere::ConsumeFromFirstOffset)
        .consume_message_batch_max_size(1)
        .build();
    consumer.subscribe(topic, "*").await?;
    let consumed = Arc::new(AtomicU64::new(0));
    consumer.register_message_listener_concurrently(Listener { mode, consumed });
    consumer.start().await?;
    println!("READY");
    let _ = std::io::stdout().flush();
    std::future::pending::<()>().await;
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: mqwatch-rmq-client NAMESRV produce TOPIC COUNT BODY_BYTES | NAMESRV consume TOPIC GROUP ok|reject|block";
    let owner = RuntimeOwner::plan(RuntimeConfig {
        thread_name: "mqwatch-rmq-client".into(),
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
        match args
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            [ns, "produce", topic, count, size] => {
                produce(rt, ns, topic, count.parse()?, size.parse()?).await
            }
            [ns, "consume", topic, group, mode] => {
                let mode = match *mode {
                    "ok" => Mode::Ok,
                    "reject" => Mode::Reject,
                    "block" => Mode::Block,
                    _ => return Err(usage.into()),
                };
                consume(rt, ns, topic, group, mode).await
            }
            _ => Err(usage.into()),
        }
    })
}
