//! How a connection to a broker is encrypted and authenticated: the settings ([`Security`]: TLS, SASL, both or
//! neither, Kafka's PLAINTEXT / SSL / SASL_PLAINTEXT / SASL_SSL) and the transport they make: a TCP stream, or
//! that stream under rustls, split into the halves [`super::BrokerConnection`] reads and writes. SASL itself runs
//! over the open connection ([`super::sasl`]).

use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// The read half of a broker connection.
pub(crate) type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
/// The write half of a broker connection.
pub(crate) type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// Encryption and authentication of every connection of a client. The default is neither (PLAINTEXT).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// TLS on every connection (SSL, or SASL_SSL with [`Security::sasl`]).
    pub tls: Option<Tls>,
    /// SASL authentication once a connection is open (SASL_PLAINTEXT, or SASL_SSL with [`Security::tls`]).
    pub sasl: Option<Sasl>,
}

/// TLS settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// PEM file of the CA certificates to trust; the platform's trust store when absent.
    pub ca_file: Option<String>,
    /// The name the broker's certificate must carry; the host of the broker's address when absent.
    pub server_name: Option<String>,
}

/// SASL settings.
#[derive(Clone, PartialEq, Eq)]
pub struct Sasl {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// User name.
    pub username: String,
    /// Password.
    pub password: String,
}

impl std::fmt::Debug for Sasl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sasl")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

/// A SASL mechanism mqwatch speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// `PLAIN` (RFC 4616): the password in the clear, so only over TLS outside a lab.
    Plain,
    /// `SCRAM-SHA-256` (RFC 5802, RFC 7677).
    ScramSha256,
    /// `SCRAM-SHA-512`.
    ScramSha512,
}

impl Mechanism {
    /// Kafka's name of the mechanism.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

impl std::str::FromStr for Mechanism {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_uppercase().as_str() {
            "PLAIN" => Ok(Mechanism::Plain),
            "SCRAM-SHA-256" => Ok(Mechanism::ScramSha256),
            "SCRAM-SHA-512" => Ok(Mechanism::ScramSha512),
            _ => Err(format!(
                "unknown SASL mechanism {s:?} (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)"
            )),
        }
    }
}

impl std::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Tls {
    /// The rustls connector for these settings: the CA file's certificates, or the platform's verifier. Errors
    /// name the file.
    pub fn connector(&self) -> Result<TlsConnector, String> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?;
        let config = match &self.ca_file {
            Some(path) => {
                let mut roots = rustls::RootCertStore::empty();
                let certs = CertificateDer::pem_file_iter(path)
                    .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| format!("TLS ca_file {path}: {e}"))?;
                if certs.is_empty() {
                    return Err(format!("TLS ca_file {path}: no PEM certificate in it"));
                }
                for cert in certs {
                    roots
                        .add(cert)
                        .map_err(|e| format!("TLS ca_file {path}: {e}"))?;
                }
                builder.with_root_certificates(roots).with_no_client_auth()
            }
            None => {
                let verifier = rustls_platform_verifier::Verifier::new(provider)
                    .map_err(|e| format!("TLS: the platform's trust store: {e}"))?;
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(verifier))
                    .with_no_client_auth()
            }
        };
        Ok(TlsConnector::from(Arc::new(config)))
    }

    /// The name to check in the certificate of the broker at `addr` (`host:port`).
    fn server_name(&self, addr: &str) -> Result<ServerName<'static>, String> {
        let host = match &self.server_name {
            Some(name) => name.as_str(),
            None => host_of(addr),
        };
        ServerName::try_from(host.to_string())
            .map_err(|e| format!("{host:?} is not a server name: {e}"))
    }
}

/// The host part of `host:port` (`[v6]:port` too).
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// A connected TCP stream as the halves a connection reads and writes, under TLS when `tls` is given.
pub(crate) async fn transport(
    stream: TcpStream,
    addr: &str,
    tls: Option<(&Tls, &TlsConnector)>,
) -> Result<(ReadHalf, WriteHalf), String> {
    let _ = stream.set_nodelay(true);
    match tls {
        None => {
            let (rd, wr) = stream.into_split();
            Ok((Box::new(rd), Box::new(wr)))
        }
        Some((settings, connector)) => {
            let name = settings.server_name(addr)?;
            let stream = connector
                .connect(name, stream)
                .await
                .map_err(|e| format!("handshake: {e}"))?;
            let (rd, wr) = tokio::io::split(stream);
            Ok((Box::new(rd), Box::new(wr)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_addresses() {
        assert_eq!(host_of("broker-1.example:9093"), "broker-1.example");
        assert_eq!(host_of("127.0.0.1:9093"), "127.0.0.1");
        assert_eq!(host_of("[::1]:9093"), "::1");
    }

    #[test]
    fn mechanisms_by_name() {
        assert_eq!("scram-sha-512".parse(), Ok(Mechanism::ScramSha512));
        assert_eq!(
            "PLAIN".parse::<Mechanism>().map(Mechanism::name),
            Ok("PLAIN")
        );
        assert!(
            "GSSAPI"
                .parse::<Mechanism>()
                .unwrap_err()
                .contains("GSSAPI")
        );
    }

    #[test]
    fn a_missing_ca_file_is_named() {
        let e = Tls {
            ca_file: Some("/nonexistent/ca.pem".into()),
            server_name: None,
        }
        .connector()
        .err()
        .unwrap();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }

    #[test]
    fn the_password_is_not_debug_printed() {
        let s = Sasl {
            mechanism: Mechanism::Plain,
            username: "u".into(),
            password: "secret".into(),
        };
        assert!(!format!("{s:?}").contains("secret"));
    }
}
