//! The web inbox: one HTML page, its script (`sentences.js`, `markdown.js`, `when.js`, then
//! `inbox.js`) and its stylesheet, embedded in the binary (so a packaged `archmax` serves
//! them with nothing beside it) and served without a token (they hold no data; every call
//! the page makes sends the token the person types).

use axum::http::header;
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("inbox/index.html");
/// The pure parts (the live log's sentences, the safe markdown, relative times; each tested
/// from Node) ahead of the page's script.
const SCRIPT: &str = concat!(
    include_str!("inbox/sentences.js"),
    "\n",
    include_str!("inbox/markdown.js"),
    "\n",
    include_str!("inbox/when.js"),
    "\n",
    include_str!("inbox/inbox.js")
);
const STYLE: &str = include_str!("inbox/inbox.css");

/// Nothing but this server: no external script, style, image or connection.
const CSP: &str = "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

pub(crate) async fn page() -> Response {
    asset("text/html; charset=utf-8", PAGE)
}

pub(crate) async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

pub(crate) async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}
