//! The store's errors. Each names the database (URL without password, or file path), the operation and the
//! table it concerns, and for a bad row its key.

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store URL cannot be used.
    #[error("store url {url}: {reason}")]
    Url {
        /// The URL, password redacted.
        url: String,
        /// Why.
        reason: String,
    },
    /// The database's directory could not be created.
    #[error("store {db}: cannot create directory {dir}: {source}")]
    Io {
        /// The database.
        db: String,
        /// The directory.
        dir: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused an operation.
    #[error("store {db}: {op}: {source}")]
    Sqlite {
        /// The database file.
        db: String,
        /// What was being done, naming the table.
        op: String,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// PostgreSQL refused an operation or the connection failed.
    #[error("store {db}: {op}: {detail}")]
    Postgres {
        /// The database URL, password redacted.
        db: String,
        /// What was being done, naming the table.
        op: String,
        /// The server's message when it sent one, else the client's.
        detail: String,
        /// The cause.
        #[source]
        source: tokio_postgres::Error,
    },
    /// A stored row does not decode.
    #[error("store {db}: table {table}: row {key}: {reason}")]
    BadRow {
        /// The database.
        db: String,
        /// The table.
        table: &'static str,
        /// The row's key.
        key: String,
        /// Why it does not decode.
        reason: String,
    },
    /// The database was migrated by a newer mqwatch.
    #[error(
        "store {db}: schema version {found} is newer than this mqwatch knows ({known}); upgrade mqwatch"
    )]
    SchemaTooNew {
        /// The database.
        db: String,
        /// The version found in `schema_version`.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// A blocking SQLite task panicked or was cancelled.
    #[error("store {db}: {op}: background task failed: {reason}")]
    Task {
        /// The database.
        db: String,
        /// What was being done.
        op: String,
        /// Why.
        reason: String,
    },
}

impl StoreError {
    pub(crate) fn postgres(db: &str, op: impl Into<String>, source: tokio_postgres::Error) -> Self {
        let detail = match source.as_db_error() {
            Some(e) => format!("{} ({})", e.message(), e.code().code()),
            None => {
                let mut text = source.to_string();
                let mut cause = std::error::Error::source(&source);
                while let Some(c) = cause {
                    text.push_str(": ");
                    text.push_str(&c.to_string());
                    cause = c.source();
                }
                text
            }
        };
        StoreError::Postgres {
            db: db.to_string(),
            op: op.into(),
            detail,
            source,
        }
    }
}

/// The store's result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
