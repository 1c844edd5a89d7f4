//! One TCP connection to one node: requests are matched to responses by opaque; a reader task dispatches
//! responses and, the moment the connection closes or sends a malformed frame, fails every request in flight.
//! Every call has a timeout.

use super::error::ErrorKind;
use crate::codec::{Frame, Header, SerializeType, decode_frame, encode_frame};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

type Reply = oneshot::Sender<Result<Frame, ErrorKind>>;

#[derive(Default)]
struct Pending {
    waiting: HashMap<i32, Reply>,
    /// Set once the connection is dead; new calls fail with it at once.
    closed: Option<ErrorKind>,
}

impl Pending {
    fn close(&mut self, reason: ErrorKind) {
        if self.closed.is_none() {
            self.closed = Some(reason.clone());
        }
        for (_, tx) in self.waiting.drain() {
            let _ = tx.send(Err(reason.clone()));
        }
    }
}

/// A connection to one node.
pub(crate) struct Connection {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    pending: Arc<Mutex<Pending>>,
    next_opaque: AtomicI32,
    reader: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Connection {
    /// Connects within `timeout`.
    pub(crate) async fn open(addr: &str, timeout: Duration) -> Result<Self, ErrorKind> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| {
                ErrorKind::Connect(format!("no connection within {} ms", timeout.as_millis()))
            })?
            .map_err(|e| ErrorKind::Connect(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        let pending = Arc::new(Mutex::new(Pending::default()));
        let reader = tokio::spawn(read_loop(rd, pending.clone()));
        Ok(Self {
            writer: tokio::sync::Mutex::new(wr),
            pending,
            next_opaque: AtomicI32::new(1),
            reader,
        })
    }

    /// Whether the connection has closed (a new one is needed).
    pub(crate) fn is_closed(&self) -> bool {
        self.pending
            .lock()
            .map(|p| p.closed.is_some())
            .unwrap_or(true)
    }

    /// Sends a request and waits for its response, at most `timeout`.
    pub(crate) async fn call(
        &self,
        mut header: Header,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Frame, ErrorKind> {
        let opaque = self.next_opaque.fetch_add(1, Ordering::Relaxed);
        header.opaque = opaque;
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self
                .pending
                .lock()
                .map_err(|_| ErrorKind::Closed("connection state poisoned".into()))?;
            if let Some(reason) = &p.closed {
                return Err(reason.clone());
            }
            p.waiting.insert(opaque, tx);
        }
        let bytes = encode_frame(&Frame {
            header,
            serialize: SerializeType::Json,
            body,
        });
        let exchange = async {
            {
                let mut w = self.writer.lock().await;
                if let Err(e) = w.write_all(&bytes).await {
                    let reason = ErrorKind::Closed(format!("write failed: {e}"));
                    if let Ok(mut p) = self.pending.lock() {
                        p.close(reason.clone());
                    }
                    return Err(reason);
                }
            }
            rx.await
                .unwrap_or_else(|_| Err(ErrorKind::Closed("connection reader stopped".into())))
        };
        let result = tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or(Err(ErrorKind::Timeout(timeout.as_millis() as u64)));
        if result.is_err()
            && let Ok(mut p) = self.pending.lock()
        {
            p.waiting.remove(&opaque);
        }
        result
    }
}

async fn read_loop(mut rd: OwnedReadHalf, pending: Arc<Mutex<Pending>>) {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let reason = 'read: loop {
        loop {
            match decode_frame(&buf) {
                Ok(Some((frame, used))) => {
                    buf.drain(..used);
                    if !frame.header.is_response() {
                        continue; // a request from the server (e.g. to a client); mqwatch is not one
                    }
                    let reply = pending
                        .lock()
                        .ok()
                        .and_then(|mut p| p.waiting.remove(&frame.header.opaque));
                    if let Some(tx) = reply {
                        let _ = tx.send(Ok(frame));
                    }
                }
                Ok(None) => break,
                Err(e) => break 'read ErrorKind::Frame(e),
            }
        }
        match rd.read(&mut chunk).await {
            Ok(0) => break ErrorKind::Closed("closed by the node".into()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => break ErrorKind::Closed(e.to_string()),
        }
    };
    if let Ok(mut p) = pending.lock() {
        p.close(reason);
    }
}
