//! `[store]` config and the store URL: `sqlite:///absolute/path.db`, `sqlite://relative.db`, or a PostgreSQL URL
//! (`postgres://user[:password]@host[:port]/db`). Anything shown to people (errors, logs) uses the URL with its
//! password replaced by `***`.

use crate::error::StoreError;
use crate::types::Retention;
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// `[store]`: where the store lives and how long it keeps rows.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// `sqlite:///path` or `postgres://…`; `None`: `mqwatch.db` in the state directory.
    pub url: Option<String>,
    /// `[store.retention]`.
    pub retention: Retention,
}

impl StoreConfig {
    /// The URL to open: the configured one, else a SQLite file `mqwatch.db` in `state_dir`.
    pub fn resolve(&self, state_dir: &Path) -> Result<StoreUrl, StoreError> {
        match &self.url {
            Some(url) => url.parse(),
            None => Ok(StoreUrl::Sqlite(state_dir.join("mqwatch.db"))),
        }
    }
}

/// Where a store lives.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// A SQLite database file (created on first open, with its directory).
    Sqlite(PathBuf),
    /// A PostgreSQL database, as a `postgres://` or `postgresql://` URL.
    Postgres(String),
}

impl StoreUrl {
    /// The URL for people: a PostgreSQL password is replaced by `***`.
    pub fn redacted(&self) -> String {
        match self {
            StoreUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
            StoreUrl::Postgres(url) => redact(url),
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreUrl({})", self.redacted())
    }
}

impl std::str::FromStr for StoreUrl {
    type Err = StoreError;
    fn from_str(text: &str) -> Result<Self, StoreError> {
        let bad = |reason: &str| StoreError::Url {
            url: redact(text),
            reason: reason.to_string(),
        };
        if let Some(rest) = text.strip_prefix("sqlite://") {
            if rest.is_empty() {
                return Err(bad("no file path after sqlite://"));
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(rest)));
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            text.parse::<tokio_postgres::Config>()
                .map_err(|e| bad(&e.to_string()))?;
            return Ok(StoreUrl::Postgres(text.to_string()));
        }
        Err(bad(
            "expected sqlite:///path/to/file.db or postgres://user@host/db",
        ))
    }
}

/// `scheme://user:secret@host/db` → `scheme://user:***@host/db`; anything else unchanged.
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let auth_start = scheme_end + 3;
    let rest = &url[auth_start..];
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..auth_end].rfind('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..auth_start],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_schemes_and_names_bad_urls() {
        assert_eq!(
            "sqlite:///var/lib/mqwatch/m.db"
                .parse::<StoreUrl>()
                .unwrap(),
            StoreUrl::Sqlite("/var/lib/mqwatch/m.db".into())
        );
        assert_eq!(
            "sqlite://rel.db".parse::<StoreUrl>().unwrap(),
            StoreUrl::Sqlite("rel.db".into())
        );
        assert!(matches!(
            "postgres://postgres@127.0.0.1:5432/test".parse::<StoreUrl>(),
            Ok(StoreUrl::Postgres(_))
        ));
        let err = "mysql://u:pw@h/db".parse::<StoreUrl>().unwrap_err();
        let text = err.to_string();
        assert!(text.contains("mysql://u:***@h/db"), "{text}");
        assert!(!text.contains("pw"), "{text}");
        assert!("sqlite://".parse::<StoreUrl>().is_err());
    }

    #[test]
    fn redaction_hides_only_the_password() {
        assert_eq!(
            redact("postgres://u:s3cret@h:5432/db?sslmode=disable"),
            "postgres://u:***@h:5432/db?sslmode=disable"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
        let url: StoreUrl = "postgres://u:s3cret@h/db".parse().unwrap();
        assert_eq!(
            format!("{url} {url:?}"),
            "postgres://u:***@h/db StoreUrl(postgres://u:***@h/db)"
        );
    }

    #[test]
    fn config_defaults_to_a_file_in_the_state_dir_and_rejects_unknown_keys() {
        let c: StoreConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(
            c.resolve(Path::new("/s")).unwrap(),
            StoreUrl::Sqlite("/s/mqwatch.db".into())
        );
        assert_eq!(c.retention, Retention::default());
        let err = serde_json::from_str::<StoreConfig>(r#"{"uri": "x"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `uri`"), "{err}");
        let c: StoreConfig =
            serde_json::from_str(r#"{"retention": {"minutes": "7d", "days": "3650d"}}"#).unwrap();
        assert_eq!(c.retention.minutes.as_millis(), 7 * 86_400_000);
        assert_eq!(c.retention.days.unwrap().as_millis(), 3650 * 86_400_000);
    }
}
