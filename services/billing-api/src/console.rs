//! The web console (issue 13): `GET /` and `GET /console/{path}` serve its page, scripts,
//! styles and the vendored chart library (Apache ECharts, `console/vendor/README.md`),
//! embedded in the binary. Nothing is loaded from elsewhere, so the console works offline and
//! in the embedded default; the `Content-Security-Policy` says so to the browser (scripts,
//! styles, images and API calls from this origin only, no inline script or style, no
//! framing).
//!
//! These routes need no token: the page holds no data. Every figure it shows comes from the
//! API routes customers use, called by the page with the key signed in with (kept in the
//! tab's sessionStorage), so the console has no query path of its own.

use crate::state::AppState;
use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The policy of every console response: only this origin, nothing inline.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; \
    base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The assets are not fingerprinted, so the browser revalidates each one on every load; the
/// strong `ETag` answers 304 when it has it already.
const CACHE_CONTROL: &str = "no-cache";

struct Asset {
    /// Under `/console/`.
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $ctype:expr) => {
        Asset {
            path: $path,
            content_type: $ctype,
            body: include_bytes!(concat!("../console/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

static ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("app.js", JS),
    asset!("admin.js", JS),
    asset!("api.js", JS),
    asset!("charts.js", JS),
    asset!("customer.js", JS),
    asset!("dom.js", JS),
    asset!("i18n.js", JS),
    asset!("notifications.js", JS),
    asset!("num.js", JS),
    asset!("periods.js", JS),
    asset!("vendor/echarts.min.js", JS),
    asset!("vendor/LICENSE", "text/plain; charset=utf-8"),
    asset!("vendor/LICENSE-d3", "text/plain; charset=utf-8"),
    asset!("vendor/NOTICE", "text/plain; charset=utf-8"),
    asset!("vendor/README.md", "text/markdown; charset=utf-8"),
];

/// Each asset's `ETag` (a quoted SHA-256 prefix of its bytes), in the order of [`ASSETS`],
/// computed once.
fn etags() -> &'static [String] {
    static ETAGS: OnceLock<Vec<String>> = OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| format!("\"{}\"", &hex::encode(Sha256::digest(a.body))[..32]))
            .collect()
    })
}

/// `GET /` and `GET /console/{path}`, merged into [`crate::routes::router`].
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/console/{*path}", get(asset))
}

/// `GET /`: the console's page.
pub async fn index(headers: HeaderMap) -> Response {
    serve("index.html", &headers)
}

/// `GET /console/{path}`
pub async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    serve(&path, &headers)
}

fn serve(path: &str, headers: &HeaderMap) -> Response {
    let Some(at) = ASSETS.iter().position(|a| a.path == path) else {
        return (StatusCode::NOT_FOUND, "no such console file").into_response();
    };
    let a = &ASSETS[at];
    let etag = &etags()[at];
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = a.body.into_response();
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(a.content_type),
        );
        r
    };
    let h = response.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_the_page_names_is_served() {
        let index = std::str::from_utf8(ASSETS[0].body).unwrap();
        for needed in [
            "/console/app.css",
            "/console/app.js",
            "/console/vendor/echarts.min.js",
        ] {
            assert!(index.contains(needed), "index.html loads {needed}");
        }
        // Every module the scripts import is in the table.
        for a in ASSETS.iter().filter(|a| a.content_type == JS) {
            let text = std::str::from_utf8(a.body).unwrap();
            for line in text.lines().filter(|l| l.starts_with("import ")) {
                let module = line
                    .rsplit_once("from './")
                    .map(|(_, m)| m.trim_end_matches("';"))
                    .unwrap_or_else(|| panic!("{}: unexpected import {line:?}", a.path));
                assert!(
                    ASSETS.iter().any(|x| x.path == module),
                    "{} imports {module}, which is not served",
                    a.path
                );
            }
        }
    }

    #[test]
    fn the_page_has_no_inline_script_or_style() {
        let index = std::str::from_utf8(ASSETS[0].body).unwrap();
        assert!(
            !index.contains("style="),
            "an inline style would be refused"
        );
        for script in index.split("<script").skip(1) {
            assert!(
                script.trim_start().starts_with("src=") || script.contains(" src="),
                "inline script: {script}"
            );
        }
    }

    #[test]
    fn the_vendored_chart_library_is_there_with_its_licence() {
        let find = |p: &str| ASSETS.iter().find(|a| a.path == p).unwrap();
        let echarts = std::str::from_utf8(find("vendor/echarts.min.js").body).unwrap();
        assert!(echarts.contains("t.version=\"5.6.0\""), "ECharts 5.6.0");
        let licence = std::str::from_utf8(find("vendor/LICENSE").body).unwrap();
        assert!(licence.contains("Apache License"));
    }
}
