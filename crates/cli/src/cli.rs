//! Command-line shape (clap) and dispatch. Subcommands whose engine work has not landed yet say which issue
//! brings them and exit 3 ("could not run"), so scripts can already rely on the codes.

use crate::config::{ClusterConfig, Config};
use crate::state::StateDir;
use anyhow::{Result, bail};
use clap::{Args as ClapArgs, CommandFactory, Parser, Subcommand};
use mqwatch_model::{Span, parse_duration};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code when mqwatch could not do what was asked (bad config, unreachable cluster, not built yet).
pub const EXIT_COULD_NOT_RUN: u8 = 3;

/// mqwatch: statistics, durability audits, node lifecycles and alarms for RocketMQ, Kafka and BookKeeper.
#[derive(Debug, Parser)]
#[command(name = "mqwatch", version)]
pub struct Args {
    /// Where mqwatch keeps its state (embedded store, topology seen so far).
    /// Default: $XDG_STATE_HOME/mqwatch, else ~/.local/state/mqwatch.
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// The subcommand; none prints help.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the long-lived service: collectors, checks, alarms, store, HTTP API, dashboard, /metrics.
    Serve {
        /// Config file (TOML).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// HTTP listen address (default 127.0.0.1:8080 or the config's server.listen).
        #[arg(long, value_name = "ADDR")]
        listen: Option<String>,
    },
    /// One collection and check cycle; prints findings. Exit 0 healthy, 1 warnings, 2 critical, 3 could not run.
    Check(CheckArgs),
    /// One-shot audits.
    #[command(subcommand)]
    Audit(Audit),
    /// The whole product on a simulated estate with injected faults and an embedded store.
    Demo {
        /// HTTP listen address.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
        listen: String,
        /// Seed of the simulation: the same seed and start time give the same estate.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Run the fault schedule this many times faster (thresholds and interval scale alike).
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// History computed at start, so hour and day charts have data (e.g. 3h; 0s for none).
        #[arg(long, default_value = "3h", value_name = "DURATION")]
        backfill: String,
        /// Bearer token for silences (default: generated and printed).
        #[arg(long)]
        token: Option<String>,
    },
}

/// Arguments of `mqwatch check`.
#[derive(Debug, ClapArgs)]
pub struct CheckArgs {
    /// Where the clusters come from.
    #[command(flatten)]
    pub source: CheckSource,
    /// Ledgers root of the `--zk` cluster.
    #[arg(long, default_value = "/ledgers", requires = "zk")]
    pub root: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// One source of clusters for `check`.
#[derive(Debug, ClapArgs)]
#[group(required = true, multiple = false)]
pub struct CheckSource {
    /// Config file (TOML) naming the clusters.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A RocketMQ name server, HOST:PORT.
    #[arg(long, value_name = "NAMESRV")]
    pub rocketmq: Option<String>,
    /// A Kafka bootstrap server, HOST:PORT.
    #[arg(long, value_name = "BOOTSTRAP")]
    pub kafka: Option<String>,
    /// A BookKeeper cluster's ZooKeeper, HOST:PORT.
    #[arg(long, value_name = "ZK")]
    pub zk: Option<String>,
}

/// Audits.
#[derive(Debug, Subcommand)]
pub enum Audit {
    /// BP-34 durability audit of a BookKeeper cluster.
    Bookkeeper {
        /// ZooKeeper, HOST:PORT.
        #[arg(long, value_name = "HOST:PORT")]
        zk: String,
        /// Ledgers root path.
        #[arg(long, default_value = "/ledgers")]
        root: String,
        /// Report ledgers under-replicated for longer than this (e.g. 1h). Off by default, as in BookKeeper.
        #[arg(long, value_name = "DURATION")]
        grace: Option<String>,
        /// Probes of a silent bookie before it counts as unreachable.
        #[arg(long, default_value_t = 2, value_name = "N")]
        rechecks: u32,
        /// Wait before each re-probe (e.g. 10s).
        #[arg(long, default_value = "10s", value_name = "DURATION")]
        recheck_delay: String,
        /// Timeout of the ZooKeeper session and of every bookie request.
        #[arg(long, default_value = "10s", value_name = "DURATION")]
        timeout: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Runs the parsed command line.
pub fn run(args: Args) -> Result<ExitCode> {
    let Some(command) = args.command else {
        Args::command().print_help()?;
        println!();
        return Ok(ExitCode::SUCCESS);
    };
    match command {
        Command::Serve { config, listen } => {
            let config = Config::load(&config)?;
            let state = StateDir::resolve(args.state_dir.as_deref(), config.state.dir.as_deref())?;
            crate::serve::run(config, listen, state)
        }
        Command::Check(c) => {
            let s = &c.source;
            let (config, clusters) = if let Some(path) = &s.config {
                let config = Config::load(path)?;
                let clusters = config.clusters.clone();
                (config, clusters)
            } else if let Some(ns) = &s.rocketmq {
                (Config::default(), vec![ClusterConfig::rocketmq(ns)])
            } else if let Some(bootstrap) = &s.kafka {
                (Config::default(), vec![ClusterConfig::kafka(bootstrap)])
            } else if let Some(zk) = &s.zk {
                (
                    Config::default(),
                    vec![ClusterConfig::bookkeeper(zk, &c.root)],
                )
            } else {
                bail!("check needs --config, --rocketmq, --kafka or --zk")
            };
            let state = StateDir::resolve(args.state_dir.as_deref(), config.state.dir.as_deref())?;
            crate::check::run(&config, &clusters, &state, c.json, false)
        }
        Command::Audit(Audit::Bookkeeper {
            zk,
            root,
            grace,
            rechecks,
            recheck_delay,
            timeout,
            json,
        }) => {
            let duration = |flag: &str, v: &str| {
                parse_duration(v)
                    .map(Span)
                    .map_err(|e| anyhow::anyhow!("--{flag} {v:?}: {e}"))
            };
            let mut config = Config::default();
            config.thresholds.ledgers.grace =
                grace.as_deref().map(|g| duration("grace", g)).transpose()?;
            let mut cluster = ClusterConfig::bookkeeper(&zk, &root);
            cluster.rechecks = rechecks;
            cluster.recheck_delay = duration("recheck-delay", &recheck_delay)?;
            cluster.timeout = duration("timeout", &timeout)?;
            config.clusters = vec![cluster];
            config.validate()?;
            let clusters = config.clusters.clone();
            let state = StateDir::resolve(args.state_dir.as_deref(), None)?;
            crate::check::run(&config, &clusters, &state, json, true)
        }
        Command::Demo {
            listen,
            seed,
            speed,
            backfill,
            token,
        } => crate::demo::run(crate::demo::DemoOptions {
            listen,
            seed,
            speed,
            backfill: crate::demo::parse_backfill(&backfill)?,
            token,
            state_dir: args.state_dir,
        }),
    }
}
