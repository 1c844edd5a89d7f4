//! TLS for tests of peers that do not speak it themselves. [`TestCa`]: a throwaway CA (rcgen) and a server
//! certificate it signed for `localhost` and `127.0.0.1`, written as PEM files. [`TlsFront`]: a TLS-terminating
//! TCP forwarder on a loopback port (tokio-rustls, on its own thread and runtime), each accepted TLS connection
//! piped to one plain TCP connection to the real server behind it. This is TEST CODE standing in for a broker's
//! own TLS listener (tansu 0.6 has none); everything behind it is the real peer.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};

/// A CA and one server certificate, as PEM files in a temp dir.
pub struct TestCa {
    /// The CA certificate (what a client trusts).
    pub ca_file: PathBuf,
    /// The server certificate chain.
    pub cert_file: PathBuf,
    /// The server key.
    pub key_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl TestCa {
    /// A fresh CA (`common_name`) and a server certificate for `localhost` and `127.0.0.1`.
    pub fn new(common_name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("mqwatch-ca-")
            .tempdir()
            .expect("temp dir");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        let ca_key = rcgen::KeyPair::generate().expect("CA key");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("CA certificate");
        let params =
            rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
                .expect("server params");
        let key = rcgen::KeyPair::generate().expect("server key");
        let cert = params.signed_by(&key, &ca).expect("server certificate");
        let write = |name: &str, pem: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, pem).expect("write PEM");
            path
        };
        Self {
            ca_file: write("ca.pem", ca.pem()),
            cert_file: write("server.pem", cert.pem()),
            key_file: write("server.key", key.serialize_pem()),
            _dir: dir,
        }
    }
}

/// A TLS front: accepts TLS on `addr`, forwards the plaintext to `upstream`. Stops when dropped.
pub struct TlsFront {
    /// `127.0.0.1:<port>` it listens on.
    pub addr: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl TlsFront {
    /// Listens on `addr` (a free loopback address the caller picked, e.g. one a broker advertises) with `ca`'s
    /// server certificate; every connection is piped to `upstream`.
    pub fn start(addr: &str, upstream: &str, ca: &TestCa) -> Self {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&ca.cert_file)
            .expect("server certificate")
            .collect::<Result<_, _>>()
            .expect("server certificate PEM");
        let key = PrivateKeyDer::from_pem_file(&ca.key_file).expect("server key");
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server TLS config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("TLS front runtime");
        let listener = runtime
            .block_on(TcpListener::bind(addr))
            .unwrap_or_else(|e| panic!("TLS front cannot listen on {addr}: {e}"));
        let upstream = upstream.to_string();
        runtime.spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut plain) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let _ = plain.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        Self {
            addr: addr.to_string(),
            runtime: Some(runtime),
        }
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
