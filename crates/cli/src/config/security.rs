//! A Kafka cluster's `[cluster.tls]` and `[cluster.sasl]` tables and the client [`Security`] they make: TLS alone
//! is Kafka's SSL, SASL alone SASL_PLAINTEXT, both SASL_SSL. The password comes inline (`password`) or from a
//! file (`password_file`, first line, so it stays out of the config); both are checked when the config loads.

use mqwatch_kafka::client::{Mechanism, Sasl, Security, Tls};
use serde::Deserialize;
use std::path::PathBuf;

/// `[cluster.tls]`: present means TLS on every connection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM file of the CA certificates to trust (default: the platform's trust store).
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// The name the brokers' certificates must carry (default: each broker's host).
    #[serde(default)]
    pub server_name: Option<String>,
}

/// `[cluster.sasl]`.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaslConfig {
    /// `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    pub mechanism: String,
    /// User name.
    pub username: String,
    /// The password itself.
    #[serde(default)]
    pub password: Option<String>,
    /// A file whose first line is the password.
    #[serde(default)]
    pub password_file: Option<PathBuf>,
}

impl std::fmt::Debug for SaslConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslConfig")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .field("password_file", &self.password_file)
            .finish()
    }
}

/// The client security of `tls` and `sasl`; errors name the key (`tls.ca_file`, `sasl.password_file`, …).
pub fn security(tls: Option<&TlsConfig>, sasl: Option<&SaslConfig>) -> Result<Security, String> {
    let tls = tls
        .map(|t| {
            let tls = Tls {
                ca_file: t.ca_file.as_ref().map(|p| p.display().to_string()),
                server_name: t.server_name.clone(),
            };
            tls.connector()
                .map_err(|e| format!("tls.ca_file: {e}"))
                .map(|_| tls)
        })
        .transpose()?;
    let sasl = sasl
        .map(|s| {
            let mechanism: Mechanism = s
                .mechanism
                .parse()
                .map_err(|e| format!("sasl.mechanism: {e}"))?;
            if s.username.is_empty() {
                return Err("sasl.username must not be empty".to_string());
            }
            let password = match (&s.password, &s.password_file) {
                (Some(p), None) => p.clone(),
                (None, Some(path)) => std::fs::read_to_string(path)
                    .map_err(|e| format!("sasl.password_file {}: {e}", path.display()))?
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                _ => return Err("sasl: give exactly one of password and password_file".into()),
            };
            Ok(Sasl {
                mechanism,
                username: s.username.clone(),
                password,
            })
        })
        .transpose()?;
    Ok(Security { tls, sasl })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sasl(mechanism: &str, password: Option<&str>, file: Option<PathBuf>) -> SaslConfig {
        SaslConfig {
            mechanism: mechanism.into(),
            username: "mqwatch".into(),
            password: password.map(Into::into),
            password_file: file,
        }
    }

    #[test]
    fn passwords_come_inline_or_from_the_first_line_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "s3cret\n").unwrap();
        let s = security(None, Some(&sasl("scram-sha-512", None, Some(file)))).unwrap();
        let got = s.sasl.unwrap();
        assert_eq!(
            (got.mechanism, got.password.as_str()),
            (Mechanism::ScramSha512, "s3cret")
        );
        let s = security(None, Some(&sasl("PLAIN", Some("x"), None))).unwrap();
        assert_eq!(s.sasl.unwrap().password, "x");
        assert_eq!(s.tls, None);
    }

    #[test]
    fn bad_settings_name_their_key() {
        for (cfg, key) in [
            (sasl("GSSAPI", Some("x"), None), "sasl.mechanism"),
            (sasl("PLAIN", None, None), "exactly one"),
            (sasl("PLAIN", Some("x"), Some("/p".into())), "exactly one"),
            (
                sasl("PLAIN", None, Some("/nonexistent/pw".into())),
                "sasl.password_file /nonexistent/pw",
            ),
        ] {
            let e = security(None, Some(&cfg)).unwrap_err();
            assert!(e.contains(key), "{e}");
        }
        let tls = TlsConfig {
            ca_file: Some("/nonexistent/ca.pem".into()),
            server_name: None,
        };
        let e = security(Some(&tls), None).unwrap_err();
        assert!(
            e.contains("tls.ca_file") && e.contains("/nonexistent/ca.pem"),
            "{e}"
        );
    }

    #[test]
    fn the_password_is_not_debug_printed() {
        assert!(!format!("{:?}", sasl("PLAIN", Some("hunter2"), None)).contains("hunter2"));
    }
}
