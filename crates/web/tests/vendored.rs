//! The vendored chart library cannot drift from the pinned npm package: `assets/vendor/` must hold, byte for
//! byte, the built files of the `uplot` version `package.json` pins, as `npm ci` installed them from
//! `package-lock.json` (into `~/.cache/mqwatch/web`, by `scripts/test`). Also checks the Router serves every
//! embedded file with its type and the page at `/`.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tower::ServiceExt;

#[test]
fn vendored_uplot_is_the_pinned_npm_build() {
    let deps = mqwatch_testkit::browser::web_deps();
    let web = mqwatch_testkit::browser::web_crate();
    let pinned: serde_json::Value =
        serde_json::from_slice(&std::fs::read(web.join("package.json")).unwrap()).unwrap();
    let installed: serde_json::Value = serde_json::from_slice(
        &std::fs::read(deps.join("node_modules/uplot/package.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        pinned["dependencies"]["uplot"], installed["version"],
        "package.json pins an exact uplot version, and that version is installed"
    );
    for file in ["uPlot.iife.min.js", "uPlot.min.css"] {
        let vendored = std::fs::read(web.join("assets/vendor").join(file)).unwrap();
        let npm = std::fs::read(deps.join("node_modules/uplot/dist").join(file)).unwrap();
        assert!(
            vendored == npm,
            "crates/web/assets/vendor/{file} differs from uplot {}'s dist/{file}: copy it again from the \
             npm package (see README, Dashboard)",
            installed["version"]
        );
        let embedded = mqwatch_web::asset(&format!("vendor/{file}")).unwrap();
        assert_eq!(embedded.bytes, &vendored[..], "{file} as embedded");
    }
}

#[tokio::test]
async fn the_router_serves_the_page_and_every_asset() {
    let app = mqwatch_web::router::<()>();
    let get = |path: String| {
        let app = app.clone();
        async move {
            app.oneshot(Request::get(path).body(Body::empty()).unwrap())
                .await
                .unwrap()
        }
    };
    let page = get("/".into()).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(
        page.headers()[header::CONTENT_TYPE],
        "text/html; charset=utf-8"
    );
    assert!(page.headers().contains_key(header::CONTENT_SECURITY_POLICY));
    for a in mqwatch_web::ASSETS {
        let r = get(format!("/assets/{}", a.path)).await;
        assert_eq!(r.status(), StatusCode::OK, "{}", a.path);
        assert_eq!(
            r.headers()[header::CONTENT_TYPE],
            a.content_type,
            "{}",
            a.path
        );
        let body = axum::body::to_bytes(r.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(&body[..], a.bytes, "{}", a.path);
    }
    let missing = get("/assets/nope.js".into()).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}
