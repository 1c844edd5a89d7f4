//! [`HostCollector`]: fetches each configured node_exporter's `/metrics` (bounded by a timeout, all hosts at
//! once) and keeps each host's last [`Counters`] so the next look yields rates. A host that does not answer, or
//! answers something other than the exposition format, is a [`HostReading`] with an error naming the host and
//! the request; it never stops the other hosts.

use crate::counters::{Counters, sample};
use mqwatch_checks::hosts::HostSample;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Why a host could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("host {host}: GET {url}: {reason}")]
pub struct HostError {
    /// The endpoint as configured.
    pub host: String,
    /// The URL asked.
    pub url: String,
    /// What went wrong.
    pub reason: String,
}

/// One host's result of one look.
#[derive(Debug, Clone, PartialEq)]
pub enum HostReading {
    /// Read.
    Sample(HostSample),
    /// Not read.
    Error(HostError),
}

/// Reads node_exporters and remembers their last look.
#[derive(Debug)]
pub struct HostCollector {
    http: reqwest::Client,
    last: Mutex<HashMap<String, Counters>>,
    /// Wait between the two looks of a host seen for the first time.
    first_gap: Duration,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `host:port` → `http://host:port/metrics`; a value with a scheme or path is taken as the URL.
pub fn metrics_url(host: &str) -> String {
    match (host.contains("://"), host.contains('/')) {
        (true, _) => host.to_string(),
        (false, true) => format!("http://{host}"),
        (false, false) => format!("http://{host}/metrics"),
    }
}

impl HostCollector {
    /// A collector whose requests time out after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            http: reqwest::Client::builder()
                .timeout(timeout)
                .build()
                .unwrap_or_default(),
            last: Mutex::default(),
            first_gap: Duration::from_secs(1),
        }
    }

    /// Fetches and parses one host's metrics.
    pub async fn look(&self, host: &str) -> Result<Counters, HostError> {
        let url = metrics_url(host);
        let err = |reason: String| HostError {
            host: host.to_string(),
            url: url.clone(),
            reason,
        };
        let response = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|e| err(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(err(format!("HTTP {status}")));
        }
        let text = response.text().await.map_err(|e| err(e.to_string()))?;
        let counters = Counters::parse(&text, now_ms()).map_err(err)?;
        if counters.cpus == 0 && counters.mem_total.is_none() && counters.load1.is_none() {
            return Err(err(
                "no node_exporter metrics in the answer (is this a node_exporter?)".into(),
            ));
        }
        Ok(counters)
    }

    /// Reads every host at once: one look each when the host was seen before, else two a second apart.
    pub async fn collect(&self, hosts: &[String]) -> Vec<HostReading> {
        futures::future::join_all(hosts.iter().map(|h| self.collect_one(h))).await
    }

    async fn collect_one(&self, host: &str) -> HostReading {
        let prev = self.last.lock().ok().and_then(|l| l.get(host).cloned());
        let prev = match prev {
            Some(p) => Some(p),
            None => match self.look(host).await {
                Ok(first) => {
                    tokio::time::sleep(self.first_gap).await;
                    Some(first)
                }
                Err(e) => return HostReading::Error(e),
            },
        };
        match self.look(host).await {
            Ok(cur) => {
                let s = sample(host, prev.as_ref(), &cur);
                if let Ok(mut l) = self.last.lock() {
                    l.insert(host.to_string(), cur);
                }
                HostReading::Sample(s)
            }
            Err(e) => {
                if let Ok(mut l) = self.last.lock() {
                    l.remove(host);
                }
                HostReading::Error(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_from_endpoints() {
        assert_eq!(metrics_url("10.0.0.1:9100"), "http://10.0.0.1:9100/metrics");
        assert_eq!(metrics_url("h:9100/x"), "http://h:9100/x");
        assert_eq!(metrics_url("https://h/metrics"), "https://h/metrics");
    }
}
