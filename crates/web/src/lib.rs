//! mqwatch-web: the dashboard. Its HTML, CSS and JavaScript (plain files in `assets/`, no framework) and the
//! chart library's built file (uPlot, vendored in `assets/vendor/`, pinned by `package.json`) are embedded in the
//! binary with `include_bytes!`, so the dashboard needs no CDN, no Node and no file on disk at run time.
//!
//! What it owns: the embedded [`ASSETS`] and the [`router`] serving `/` (the page) and `/assets/{path}`.
//! What it is not: the JSON API the page reads (`/api/v1/…`, in `mqwatch-cli`'s `serve`); the page only fetches
//! it, so the dashboard works against any `serve` or `demo` on the same origin.

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One embedded file.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// Its path under `/assets/` (`index.html` is also served at `/`).
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub bytes: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $type:expr) => {
        Asset {
            path: $path,
            content_type: $type,
            bytes: include_bytes!(concat!("../assets/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file of the dashboard.
pub const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", CSS),
    asset!("util.js", JS),
    asset!("charts.js", JS),
    asset!("panels.js", JS),
    asset!("alarms.js", JS),
    asset!("app.js", JS),
    asset!("vendor/uPlot.iife.min.js", JS),
    asset!("vendor/uPlot.min.css", CSS),
    asset!("vendor/uPlot.LICENSE", "text/plain; charset=utf-8"),
];

/// The embedded file at `path` (relative to `/assets/`).
pub fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}

/// The page's Content-Security-Policy: everything from this origin only (no CDN can be reached even by mistake);
/// inline styles allowed because the chart library sizes its elements through `style`.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

fn serve(asset: &Asset) -> Response {
    let mut response = asset.bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    // Revalidate every time: a restarted, upgraded mqwatch must never run with a stale script.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    response
}

async fn index() -> Response {
    match asset("index.html") {
        Some(a) => serve(a),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn file(axum::extract::Path(path): axum::extract::Path<String>) -> Response {
    match asset(&path) {
        Some(a) => serve(a),
        None => (
            StatusCode::NOT_FOUND,
            format!("no dashboard asset {path:?}\n"),
        )
            .into_response(),
    }
}

/// `/` and `/assets/{path}`, for merging into the service's Router (any state).
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/assets/{*path}", get(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_non_empty_and_named_once() {
        for a in ASSETS {
            assert!(!a.bytes.is_empty(), "{} is empty", a.path);
            assert_eq!(
                ASSETS.iter().filter(|b| b.path == a.path).count(),
                1,
                "{}",
                a.path
            );
        }
        assert_eq!(asset("app.js").map(|a| a.content_type), Some(JS));
        assert_eq!(asset("app.css").map(|a| a.content_type), Some(CSS));
    }

    #[test]
    fn the_page_loads_only_embedded_files() {
        let page = std::str::from_utf8(asset("index.html").unwrap().bytes).unwrap();
        for part in page.split(['"', '\'']) {
            if let Some(path) = part.strip_prefix("/assets/") {
                assert!(
                    asset(path).is_some(),
                    "index.html names {path}, not embedded"
                );
            }
            assert!(!part.starts_with("http"), "index.html loads {part}");
        }
    }
}
