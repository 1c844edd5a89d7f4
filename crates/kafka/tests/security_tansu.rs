//! TLS and SASL against a REAL tansu 0.6.0 broker.
//!
//! Real: tansu, its SASL (`--authentication`: SCRAM-SHA-256/512 for users made with `tansu user create`; its
//! build has no PLAIN, which client_scripted.rs covers), its storage and every Kafka answer. Test code: the TLS in front of it (`testkit::tls::TlsFront`,
//! rustls with a throwaway CA), because tansu 0.6 parses `--cert`/`--key` but never wraps its listener in TLS;
//! tansu advertises the front's address, so every connection the collector opens goes through TLS.
//!
//! Each test produces records and commits a group through the secured client, then asserts one collection
//! cycle sees them, so the whole collector ran over the secured connections. Skips (saying so) only when the
//! tansu binary is not installed; `scripts/test` installs it.

use bytes::Bytes;
use mqwatch_kafka::client::{ClientConfig, ErrorKind, KafkaClient, Mechanism, Sasl, Security, Tls};
use mqwatch_kafka::collector::{LagMemory, Target, collect};
use mqwatch_testkit::tansu::{self, Tansu, TansuOptions};
use mqwatch_testkit::tls::{TestCa, TlsFront};
use mqwatch_testkit::{free_port, retry_until_ok};
use std::time::Duration;

fn client(security: Security) -> KafkaClient {
    KafkaClient::new(ClientConfig {
        security,
        connect_timeout: Duration::from_secs(5),
        ..ClientConfig::default()
    })
}

fn sasl(mechanism: Mechanism, username: &str, password: &str) -> Option<Sasl> {
    Some(Sasl {
        mechanism,
        username: username.into(),
        password: password.into(),
    })
}

/// Makes topic `t` with 2 partitions, produces 3 records to partition 0, commits group `g` at 1, then collects
/// and asserts the lag picture (2 behind on t-0) came through `client`.
async fn round_trip(client: &KafkaClient, addr: &str) {
    retry_until_ok("create topic", Duration::from_secs(20), || {
        client.create_topic(addr, "t", 2, 1)
    })
    .await;
    let records: Vec<Bytes> = (0..3).map(|i| Bytes::from(format!("r{i}"))).collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    retry_until_ok("produce", Duration::from_secs(20), || {
        client.produce(addr, "t", 0, &records, now)
    })
    .await;
    let coordinator = retry_until_ok("find coordinator", Duration::from_secs(20), || {
        client.find_coordinator(addr, "g")
    })
    .await;
    let offsets = [("t".to_string(), 0, 1)];
    retry_until_ok("commit", Duration::from_secs(20), || {
        client.commit_offsets(&coordinator, "g", &offsets)
    })
    .await;
    let s = collect(
        client,
        &Target::new("secured", vec![addr.to_string()]),
        &LagMemory::new(),
        now as u64,
    )
    .await;
    assert!(
        s.nodes.len() == 1 && s.nodes[0].answered,
        "{:#?}\n{:#?}",
        s.nodes,
        s.errors
    );
    assert_eq!(s.logs.len(), 2, "{:#?}", s.errors);
    let g = s
        .groups
        .iter()
        .find(|g| g.group.name == "g")
        .unwrap_or_else(|| panic!("group g missing: {:#?}", s.errors));
    let lags: Vec<Option<i64>> = g.positions.iter().map(|p| p.lag()).collect();
    assert_eq!(lags, vec![Some(2), None]);
}

#[test]
fn sasl_plain_and_scram_authenticate_and_wrong_passwords_are_refused() {
    if tansu::missing() {
        return;
    }
    let mut broker = Tansu::start_with(&TansuOptions {
        authentication: true,
        scram_users: vec![
            ("alice".into(), "alice-secret".into(), "scram256".into()),
            ("bob".into(), "bob-secret".into(), "scram512".into()),
        ],
        advertised: None,
    });
    let addr = broker.addr.clone();
    mqwatch_testkit::runtime().block_on(async {
        // Without credentials tansu refuses everything but ApiVersions and SASL: it drops the connection.
        let e = client(Security::default())
            .find_coordinator(&addr, "g")
            .await
            .unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Closed(_)), "{e}");

        let scram256 = client(Security {
            tls: None,
            sasl: sasl(Mechanism::ScramSha256, "alice", "alice-secret"),
        });
        round_trip(&scram256, &addr).await;

        let scram512 = client(Security {
            tls: None,
            sasl: sasl(Mechanism::ScramSha512, "bob", "bob-secret"),
        });
        scram512
            .find_coordinator(&addr, "g")
            .await
            .expect("SCRAM-SHA-512");

        let wrong = client(Security {
            tls: None,
            sasl: sasl(Mechanism::ScramSha512, "bob", "not-bobs"),
        });
        let e = wrong.find_coordinator(&addr, "g").await.unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Authentication(_)), "{e}");
        assert!(e.to_string().contains("SaslAuthenticate (36)"), "{e}");

        let unknown = client(Security {
            tls: None,
            sasl: sasl(Mechanism::ScramSha256, "mallory", "x"),
        });
        let e = unknown.find_coordinator(&addr, "g").await.unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Authentication(_)), "{e}");

        // tansu 0.6 is built without rsasl's PLAIN: it closes the connection on the handshake (instead of
        // answering UNSUPPORTED_SASL_MECHANISM), which mqwatch reports against SaslHandshake. PLAIN itself is
        // tested against a scripted broker (client_scripted.rs).
        let plain = client(Security {
            tls: None,
            sasl: sasl(Mechanism::Plain, "carol", "any"),
        });
        let e = plain.find_coordinator(&addr, "g").await.unwrap_err();
        assert!(e.to_string().contains("SaslHandshake (17)"), "{e}");
    });
    broker.process.stop(Duration::from_secs(5));
}

#[test]
fn tls_and_sasl_ssl_reach_the_broker_and_untrusted_certificates_are_refused() {
    if tansu::missing() {
        return;
    }
    let ca = TestCa::new("mqwatch test CA");
    let front_addr = format!("127.0.0.1:{}", free_port());
    let mut broker = Tansu::start_with(&TansuOptions {
        authentication: true,
        scram_users: vec![("alice".into(), "alice-secret".into(), "scram256".into())],
        advertised: Some(front_addr.clone()),
    });
    let _front = TlsFront::start(&front_addr, &broker.addr, &ca);
    let tls = Tls {
        ca_file: Some(ca.ca_file.display().to_string()),
        server_name: None,
    };
    mqwatch_testkit::runtime().block_on(async {
        let sasl_ssl = client(Security {
            tls: Some(tls.clone()),
            sasl: sasl(Mechanism::ScramSha256, "alice", "alice-secret"),
        });
        round_trip(&sasl_ssl, &front_addr).await;

        // Another CA's certificate is not trusted.
        let other = TestCa::new("some other CA");
        let untrusted = client(Security {
            tls: Some(Tls {
                ca_file: Some(other.ca_file.display().to_string()),
                server_name: None,
            }),
            sasl: sasl(Mechanism::ScramSha256, "alice", "alice-secret"),
        });
        let e = untrusted
            .find_coordinator(&front_addr, "g")
            .await
            .unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Tls(_)), "{e}");
        assert!(e.to_string().contains(&front_addr), "{e}");

        // The certificate names localhost and 127.0.0.1, not this.
        let wrong_name = client(Security {
            tls: Some(Tls {
                server_name: Some("broker.example".into()),
                ..tls.clone()
            }),
            sasl: None,
        });
        let e = wrong_name
            .find_coordinator(&front_addr, "g")
            .await
            .unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Tls(_)), "{e}");

        // TLS to a plaintext listener fails as TLS, within the connect timeout.
        let e = client(Security {
            tls: Some(tls.clone()),
            sasl: None,
        })
        .find_coordinator(&broker.addr, "g")
        .await
        .unwrap_err();
        assert!(
            matches!(e.kind, ErrorKind::Tls(_) | ErrorKind::Connect(_)),
            "{e}"
        );
    });
    broker.process.stop(Duration::from_secs(5));
}
