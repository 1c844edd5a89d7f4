//! A bookie client for the two protocol-v3 requests the auditor needs: GET_LIST_OF_ENTRIES_OF_LEDGER (which
//! entries of a ledger a bookie holds) and GET_BOOKIE_INFO (a cheap liveness probe). One request at a time per
//! connection, matched by transaction id, each with a timeout; every error names the bookie and the operation.
//! Frames are bounded and decoded without panicking.

pub mod wire;

use crate::availability::{self, EntryRun};
use prost::Message;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use wire::{GET_BOOKIE_INFO, GET_LIST_OF_ENTRIES_OF_LEDGER, PacketHeader, Request, Response};

/// Largest response frame accepted.
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// Why a bookie request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bookie {bookie}: {operation}: {reason}")]
pub struct BookieError {
    /// The bookie's address.
    pub bookie: String,
    /// The operation.
    pub operation: &'static str,
    /// What happened.
    pub reason: String,
    /// Whether the bookie could not be reached or did not answer (as opposed to answering badly).
    pub unreachable: bool,
}

/// What a bookie holds of a ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holdings {
    /// These entries (sorted, merged runs).
    Entries(Vec<EntryRun>),
    /// Nothing: ENOLEDGER.
    NoLedger,
}

/// A connection to one bookie.
pub struct BookieClient {
    addr: String,
    stream: TcpStream,
    timeout: Duration,
    next_txn: u64,
}

impl BookieClient {
    /// Connects within `timeout`; every later request also gives up after `timeout`.
    pub async fn connect(addr: &str, timeout: Duration) -> Result<Self, BookieError> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| err(addr, "connect", "no connection within the timeout", true))?
            .map_err(|e| err(addr, "connect", &e.to_string(), true))?;
        Ok(Self {
            addr: addr.to_string(),
            stream,
            timeout,
            next_txn: 1,
        })
    }

    async fn call(
        &mut self,
        operation: i32,
        name: &'static str,
        mut req: Request,
    ) -> Result<Response, BookieError> {
        let txn = self.next_txn;
        self.next_txn += 1;
        req.header = Some(PacketHeader {
            version: Some(wire::VERSION_THREE),
            operation: Some(operation),
            txn_id: Some(txn),
            priority: Some(0),
        });
        let body = req.encode_to_vec();
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        let addr = self.addr.clone();
        let exchange = async {
            self.stream
                .write_all(&frame)
                .await
                .map_err(|e| err(&addr, name, &e.to_string(), true))?;
            let mut len = [0u8; 4];
            self.stream
                .read_exact(&mut len)
                .await
                .map_err(|e| err(&addr, name, &e.to_string(), true))?;
            let len = i32::from_be_bytes(len);
            let len = usize::try_from(len)
                .ok()
                .filter(|&l| l <= MAX_FRAME)
                .ok_or_else(|| err(&addr, name, &format!("bad frame length {len}"), false))?;
            let mut buf = vec![0u8; len];
            self.stream
                .read_exact(&mut buf)
                .await
                .map_err(|e| err(&addr, name, &e.to_string(), true))?;
            Response::decode(buf.as_slice())
                .map_err(|e| err(&addr, name, &format!("bad response: {e}"), false))
        };
        let resp = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| err(&self.addr, name, "no answer within the timeout", true))??;
        let echoed = resp.header.as_ref().and_then(|h| h.txn_id);
        if echoed != Some(txn) {
            return Err(err(
                &self.addr,
                name,
                &format!("answer for txn {echoed:?}, asked {txn}"),
                false,
            ));
        }
        Ok(resp)
    }

    /// GET_LIST_OF_ENTRIES_OF_LEDGER.
    pub async fn entries(&mut self, ledger_id: i64) -> Result<Holdings, BookieError> {
        const NAME: &str = "GET_LIST_OF_ENTRIES_OF_LEDGER";
        let req = Request {
            get_list_of_entries_of_ledger: Some(wire::GetListOfEntriesOfLedgerRequest {
                ledger_id: Some(ledger_id),
            }),
            ..Default::default()
        };
        let resp = self.call(GET_LIST_OF_ENTRIES_OF_LEDGER, NAME, req).await?;
        let body = resp.get_list_of_entries_of_ledger.unwrap_or_default();
        match body.status.or(resp.status).unwrap_or(wire::EOK) {
            wire::EOK => {
                let bytes = body.availability_of_entries_of_ledger.unwrap_or_default();
                availability::decode(&bytes)
                    .map(Holdings::Entries)
                    .map_err(|e| err(&self.addr, NAME, &format!("ledger {ledger_id}: {e}"), false))
            }
            wire::ENOLEDGER => Ok(Holdings::NoLedger),
            code => Err(err(
                &self.addr,
                NAME,
                &format!("ledger {ledger_id}: status {code}"),
                false,
            )),
        }
    }

    /// GET_BOOKIE_INFO: total and free disk bytes.
    pub async fn info(&mut self) -> Result<(i64, i64), BookieError> {
        const NAME: &str = "GET_BOOKIE_INFO";
        let req = Request {
            get_bookie_info: Some(wire::GetBookieInfoRequest { requested: Some(3) }),
            ..Default::default()
        };
        let resp = self.call(GET_BOOKIE_INFO, NAME, req).await?;
        let body = resp.get_bookie_info.unwrap_or_default();
        match body.status.or(resp.status).unwrap_or(wire::EOK) {
            wire::EOK => Ok((
                body.total_disk_capacity.unwrap_or(0),
                body.free_disk_space.unwrap_or(0),
            )),
            code => Err(err(&self.addr, NAME, &format!("status {code}"), false)),
        }
    }
}

fn err(bookie: &str, operation: &'static str, reason: &str, unreachable: bool) -> BookieError {
    BookieError {
        bookie: bookie.to_string(),
        operation,
        reason: reason.to_string(),
        unreachable,
    }
}
