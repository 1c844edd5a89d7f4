//! SASL authentication of a freshly opened connection (KIP-43, KIP-152): SaslHandshake v1 names the mechanism,
//! then the mechanism's messages travel in SaslAuthenticate requests: one for PLAIN, two for SCRAM, whose server
//! signature is checked ([`super::scram`]). Runs after ApiVersions (which Kafka answers before authentication), so
//! both APIs' versions are negotiated like any other. A broker that closes the session after its
//! `session_lifetime_ms` (KIP-368) just closes the connection; the next request opens and authenticates a new one.

use super::connection::BrokerConnection;
use super::error::{Api, ErrorKind};
use super::scram::{Hash, ScramClient};
use super::security::{Mechanism, Sasl};
use bytes::Bytes;
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::{Request, StrBytes};
use std::time::Duration;

/// What went wrong, about which API and version.
pub(crate) type Failure = (Api, Option<i16>, ErrorKind);

/// Authenticates `conn` as `sasl` says, each exchange within `timeout`.
pub(crate) async fn authenticate(
    conn: &BrokerConnection,
    sasl: &Sasl,
    timeout: Duration,
) -> Result<(), Failure> {
    handshake(conn, sasl.mechanism, timeout).await?;
    let auth = Authenticator {
        conn,
        timeout,
        version: version::<SaslAuthenticateRequest>(conn, None)?,
    };
    match sasl.mechanism {
        Mechanism::Plain => {
            let message = format!("\0{}\0{}", sasl.username, sasl.password);
            auth.step(message.into_bytes()).await.map(drop)
        }
        Mechanism::ScramSha256 | Mechanism::ScramSha512 => {
            let hash = if sasl.mechanism == Mechanism::ScramSha256 {
                Hash::Sha256
            } else {
                Hash::Sha512
            };
            let nonce = ScramClient::random_nonce().map_err(|e| auth.refused(e))?;
            let (client, first) = ScramClient::start(hash, &sasl.username, &sasl.password, &nonce);
            let server_first = auth.step(first.into_bytes()).await?;
            let server_first = auth.text(server_first)?;
            let (last, client_final) = client.finish(&server_first).map_err(|e| auth.refused(e))?;
            let server_final = auth.step(client_final.into_bytes()).await?;
            let server_final = auth.text(server_final)?;
            last.verify(&server_final).map_err(|e| auth.refused(e))
        }
    }
}

/// SaslHandshake v1: the broker must offer the mechanism.
async fn handshake(
    conn: &BrokerConnection,
    mechanism: Mechanism,
    timeout: Duration,
) -> Result<(), Failure> {
    let api = Api(SaslHandshakeRequest::KEY);
    let version = version::<SaslHandshakeRequest>(conn, Some(1))?;
    let request =
        SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism.name()));
    let response = conn
        .call(&request, version, timeout)
        .await
        .map_err(|k| (api, Some(version), k))?;
    if response.error_code != 0 {
        let offered: Vec<&str> = response.mechanisms.iter().map(|m| m.as_str()).collect();
        return Err((
            api,
            Some(version),
            ErrorKind::Authentication(format!(
                "the broker does not enable {mechanism} (error code {}; it offers {})",
                response.error_code,
                if offered.is_empty() {
                    "none".to_string()
                } else {
                    offered.join(", ")
                }
            )),
        ));
    }
    Ok(())
}

/// The version of `R` to send on `conn`, or why there is none.
fn version<R: Request>(conn: &BrokerConnection, cap: Option<i16>) -> Result<i16, Failure> {
    conn.versions()
        .pick(R::KEY, super::ours::<R>(cap))
        .map_err(|(ours, theirs)| (Api(R::KEY), None, ErrorKind::Unsupported { ours, theirs }))
}

struct Authenticator<'a> {
    conn: &'a BrokerConnection,
    timeout: Duration,
    version: i16,
}

impl Authenticator<'_> {
    /// One SaslAuthenticate exchange: our bytes out, the broker's back (a non-zero error code is a refusal).
    async fn step(&self, bytes: Vec<u8>) -> Result<Bytes, Failure> {
        let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(bytes));
        let response = self
            .conn
            .call(&request, self.version, self.timeout)
            .await
            .map_err(|k| (Api(SaslAuthenticateRequest::KEY), Some(self.version), k))?;
        if response.error_code != 0 {
            let why = response
                .error_message
                .as_ref()
                .map(|m| m.to_string())
                .unwrap_or_else(|| super::code_name(response.error_code));
            return Err(self.refused(format!(
                "error code {} ({}): {why}",
                response.error_code,
                super::code_name(response.error_code)
            )));
        }
        Ok(response.auth_bytes)
    }

    fn text(&self, bytes: Bytes) -> Result<String, Failure> {
        String::from_utf8(bytes.to_vec())
            .map_err(|_| self.refused("the broker's SCRAM message is not UTF-8".into()))
    }

    fn refused(&self, why: String) -> Failure {
        (
            Api(SaslAuthenticateRequest::KEY),
            Some(self.version),
            ErrorKind::Authentication(why),
        )
    }
}
