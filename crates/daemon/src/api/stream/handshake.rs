//! The WebSocket opening handshake of a session's stream (RFC 6455, section 4.2), answered
//! here rather than by axum's extractor so that the connection's socket itself is ours once
//! upgraded: its reading goes to a thread of its own (see `input.rs`).

use axum::http::header::{CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, UPGRADE};
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::response::Response;
use hyper::upgrade::OnUpgrade;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// The one WebSocket version there is.
const VERSION: &str = "13";

/// The checked upgrade of a request: the answer to send and the connection to come.
pub struct Accepted {
    pub response: Response,
    pub upgrade: OnUpgrade,
}

/// Checks that `request` opens a WebSocket and takes its upgrade; else why not, in words.
pub fn accept<B>(request: &mut Request<B>) -> Result<Accepted, String> {
    if request.method() != Method::GET {
        return Err(format!(
            "a WebSocket opens with GET, not {}",
            request.method()
        ));
    }
    let headers = request.headers();
    if !has_token(headers, CONNECTION.as_str(), "upgrade") {
        return Err("the `Connection` header must include `upgrade`".into());
    }
    if !has_token(headers, UPGRADE.as_str(), "websocket") {
        return Err("the `Upgrade` header must be `websocket`".into());
    }
    if !has_token(headers, "sec-websocket-version", VERSION) {
        return Err(format!(
            "the `Sec-WebSocket-Version` header must be {VERSION}"
        ));
    }
    let key = headers
        .get(SEC_WEBSOCKET_KEY)
        .filter(|k| !k.as_bytes().is_empty())
        .ok_or("the `Sec-WebSocket-Key` header is missing")?;
    let accept = HeaderValue::from_str(&derive_accept_key(key.as_bytes()))
        .map_err(|e| format!("cannot answer this `Sec-WebSocket-Key`: {e}"))?;
    // Only a connection served by hyper with upgrades enabled carries this.
    let upgrade = request
        .extensions_mut()
        .remove::<OnUpgrade>()
        .ok_or("this connection cannot be upgraded")?;
    let mut response = Response::new(axum::body::Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(SEC_WEBSOCKET_ACCEPT, accept);
    Ok(Accepted { response, upgrade })
}

/// Whether a comma-separated header holds `token` (case-insensitive), in any of its lines.
fn has_token(headers: &HeaderMap, name: &str, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().method(Method::GET).uri("/stream");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let mut r = b.body(()).unwrap();
        // What hyper puts on a request it can upgrade (here one that never will: only its
        // presence matters to the handshake).
        let upgrade = hyper::upgrade::on(Request::new(()));
        r.extensions_mut().insert(upgrade);
        r
    }

    const GOOD: [(&str, &str); 4] = [
        ("connection", "keep-alive, Upgrade"),
        ("upgrade", "WebSocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn answers_the_rfc_example() {
        let accepted = accept(&mut request(&GOOD)).expect("accepted");
        let r = accepted.response;
        assert_eq!(r.status(), StatusCode::SWITCHING_PROTOCOLS);
        assert_eq!(
            r.headers()[SEC_WEBSOCKET_ACCEPT],
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(r.headers()[UPGRADE], "websocket");
    }

    #[test]
    fn says_what_is_missing() {
        for (drop, says) in [
            ("connection", "Connection"),
            ("upgrade", "Upgrade"),
            ("sec-websocket-version", "Version"),
            ("sec-websocket-key", "Key"),
        ] {
            let headers: Vec<_> = GOOD.iter().copied().filter(|(k, _)| *k != drop).collect();
            let e = accept(&mut request(&headers)).err().expect("refused");
            assert!(e.contains(says), "{drop}: {e}");
        }
        let mut post = request(&GOOD);
        *post.method_mut() = Method::POST;
        assert!(accept(&mut post).err().expect("refused").contains("GET"));
        let mut plain = request(&GOOD);
        plain.extensions_mut().remove::<OnUpgrade>();
        assert!(
            accept(&mut plain)
                .err()
                .expect("refused")
                .contains("cannot be upgraded")
        );
    }
}
