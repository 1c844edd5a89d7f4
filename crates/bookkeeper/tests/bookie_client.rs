//! The bookie client against test bookies. NOT real bookies (none can be installed here: BookKeeper ships through
//! Maven only): protocol-exact servers in test code that speak protocol v3 framing (i32 length + protobuf
//! Request/Response with BookKeeper's field numbers) and answer GET_LIST_OF_ENTRIES_OF_LEDGER with availability
//! bytes in the real bookie's layout (one sequence group per run), or misbehave on purpose.

use mqwatch_bookkeeper::availability::{EntryRun, encode_bookie_style};
use mqwatch_bookkeeper::bookie::wire::{
    self, GetBookieInfoResponse, GetListOfEntriesOfLedgerResponse, Request, Response,
};
use mqwatch_bookkeeper::bookie::{BookieClient, Holdings};
use prost::Message;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Clone, Copy)]
enum Behaviour {
    Honest,
    WrongTxn,
    Silent,
}

/// A test bookie holding `ledgers` (ledger id → entry runs).
async fn bookie(ledgers: BTreeMap<i64, Vec<EntryRun>>, behaviour: Behaviour) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let ledgers = ledgers.clone();
            tokio::spawn(async move {
                loop {
                    let mut len = [0u8; 4];
                    if s.read_exact(&mut len).await.is_err() {
                        return;
                    }
                    let mut buf = vec![0u8; i32::from_be_bytes(len) as usize];
                    if s.read_exact(&mut buf).await.is_err() {
                        return;
                    }
                    let req =
                        Request::decode(buf.as_slice()).expect("the client sends valid requests");
                    let mut header = req.header.clone().expect("v3 requests carry a header");
                    assert_eq!(header.version, Some(wire::VERSION_THREE));
                    let mut resp = Response {
                        status: Some(wire::EOK),
                        ..Default::default()
                    };
                    if let Some(r) = &req.get_list_of_entries_of_ledger {
                        let id = r.ledger_id.unwrap_or(-1);
                        let body = match ledgers.get(&id) {
                            Some(runs) => GetListOfEntriesOfLedgerResponse {
                                status: Some(wire::EOK),
                                ledger_id: Some(id),
                                availability_of_entries_of_ledger: Some(encode_bookie_style(runs)),
                            },
                            None => GetListOfEntriesOfLedgerResponse {
                                status: Some(wire::ENOLEDGER),
                                ledger_id: Some(id),
                                availability_of_entries_of_ledger: None,
                            },
                        };
                        resp.get_list_of_entries_of_ledger = Some(body);
                    }
                    if req.get_bookie_info.is_some() {
                        resp.get_bookie_info = Some(GetBookieInfoResponse {
                            status: Some(wire::EOK),
                            total_disk_capacity: Some(1 << 40),
                            free_disk_space: Some(1 << 39),
                        });
                    }
                    match behaviour {
                        Behaviour::Silent => continue,
                        Behaviour::WrongTxn => header.txn_id = header.txn_id.map(|t| t + 100),
                        Behaviour::Honest => {}
                    }
                    resp.header = Some(header);
                    let body = resp.encode_to_vec();
                    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
                    frame.extend_from_slice(&body);
                    if s.write_all(&frame).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn r(start: i64, end_exclusive: i64) -> EntryRun {
    EntryRun {
        start,
        end_exclusive,
    }
}

#[tokio::test]
async fn lists_entries_of_a_ledger_and_no_ledger_and_bookie_info() {
    // Ledger 5: entries 0..=11, E = 3, WQ = 2. Bookie 0 must hold e mod 3 in {0, 2}; this one lost 6 and 8..=9.
    let held = vec![r(0, 1), r(2, 4), r(5, 6), r(11, 12)];
    let addr = bookie(BTreeMap::from([(5, held.clone())]), Behaviour::Honest).await;
    let mut c = BookieClient::connect(&addr, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(c.entries(5).await.unwrap(), Holdings::Entries(held.clone()));
    assert_eq!(c.entries(6).await.unwrap(), Holdings::NoLedger);
    assert_eq!(c.info().await.unwrap(), (1 << 40, 1 << 39));
}

#[tokio::test]
async fn a_mismatched_answer_is_a_bad_answer_and_silence_is_unreachable() {
    let addr = bookie(BTreeMap::new(), Behaviour::WrongTxn).await;
    let mut c = BookieClient::connect(&addr, Duration::from_secs(5))
        .await
        .unwrap();
    let e = c.entries(1).await.unwrap_err();
    assert!(
        !e.unreachable && e.to_string().contains("GET_LIST_OF_ENTRIES_OF_LEDGER"),
        "{e}"
    );

    let addr = bookie(BTreeMap::new(), Behaviour::Silent).await;
    let mut c = BookieClient::connect(&addr, Duration::from_millis(300))
        .await
        .unwrap();
    let e = c.info().await.unwrap_err();
    assert!(e.unreachable && e.to_string().contains(&addr), "{e}");

    let port = mqwatch_testkit::free_port();
    let e = BookieClient::connect(&format!("127.0.0.1:{port}"), Duration::from_secs(2))
        .await
        .err()
        .unwrap();
    assert!(e.unreachable && e.operation == "connect", "{e}");
}
