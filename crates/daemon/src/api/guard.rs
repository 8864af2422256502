//! Who may talk to the API: a loopback `Host` (against DNS rebinding), no browser page of
//! another site (against cross-site requests), and a credential: the owner's token (unless
//! orchestra runs with `--insecure-no-auth`), or an agent session's own, which reaches only
//! that session's work (`rights`).

use super::error::error_response;
use super::rights::{self, Principal};
use crate::engine::Engine;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use orchestra_proto::wire::request::HOOK_TOKEN_HEADER;
use std::sync::Arc;

/// The answer to a request without a credential that opens anything. The same whatever was
/// asked for: it says nothing about whether a task or route exists.
pub const UNAUTHORIZED: &str = "missing or wrong credentials: send Authorization: Bearer <token>, where the token is what `orchestra token` prints on the machine orchestra runs on";

#[derive(Clone, Default)]
pub struct Access {
    /// The owner's token; `None` only under `--insecure-no-auth`, where every request that
    /// carries no session credential is the owner's.
    pub token: Option<String>,
    /// Extra `Host` names allowed besides loopback ones; `*` allows any.
    pub allowed_hosts: Vec<String>,
    /// Browser origins (`scheme://host[:port]`) allowed besides the API's own.
    pub allowed_origins: Vec<String>,
}

/// The host part of a `Host` header, without port or IPv6 brackets.
fn host_name(host: &str) -> &str {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return host;
    }
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    }
}

pub fn is_loopback_host(host: &str) -> bool {
    let h = host_name(host).trim_end_matches('.').to_ascii_lowercase();
    if h == "localhost" || h.ends_with(".localhost") {
        return true;
    }
    h.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

impl std::fmt::Debug for Access {
    // The token stays out of every log and error.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("token", &self.token.as_ref().map(|_| "<secret>"))
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .finish()
    }
}

/// What the guard checks a request against: the access rules and the engine that knows the
/// live sessions' credentials.
pub struct Guard {
    pub access: Access,
    pub engine: Engine,
}

/// The credential a request carries: its bearer token, else (for the agents' hooks) the
/// hook token header.
fn credential(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .or_else(|| headers.get(HOOK_TOKEN_HEADER).and_then(|v| v.to_str().ok()))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// Who sent the request, or `None` when its credential opens nothing.
fn principal(headers: &HeaderMap, guard: &Guard) -> Option<Principal> {
    let given = credential(headers);
    if let (Some(given), Some(token)) = (given, &guard.access.token)
        && orchestra_sys::credentials::same_secret(given.as_bytes(), token.as_bytes())
    {
        return Some(Principal::Owner);
    }
    if let Some(grant) = given.and_then(|g| guard.engine.session_grant(g)) {
        return Some(Principal::Session(grant));
    }
    guard.access.token.is_none().then_some(Principal::Owner)
}

/// An origin as browsers send it, for comparing: lower case, no trailing `/`.
fn normal_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Why a request that a browser sent on behalf of another site's page must be refused, or
/// `None` when it may go on.
///
/// A page can make the user's browser send "simple" requests (a `text/plain` POST, a GET,
/// an `EventSource`) to the loopback API without any CORS preflight, and the `Host` is then
/// the genuine `127.0.0.1:PORT`, so the Host check does not stop it. Browsers mark such
/// requests: `Origin` names the page's site (`null` for sandboxed or file pages), and
/// `Sec-Fetch-Site` says `cross-site` or `same-site` (another localhost port is same-site).
/// Refused: an `Origin` that is neither the API's own (`http://` + the `Host` the request was
/// sent to, already checked to be allowed) nor one the user allowed with `--allow-origin`;
/// and a `Sec-Fetch-Site` of `cross-site`/`same-site` unless the `Origin` is an allowed one.
/// Requests without these headers (the CLI, curl, scripts, agents) are not from a browser
/// page and go on.
///
/// One function so that every entry point uses the same rule: the middleware runs it for
/// every route, and a WebSocket upgrade must run it too, as browsers apply no CORS to
/// WebSockets (cross-site WebSocket hijacking).
pub fn cross_site_refusal(headers: &HeaderMap, access: &Access) -> Option<String> {
    if allowed_foreign_origin(headers, access).is_some() {
        return None;
    }
    // An origin that is not text is no site's: it is refused like `null`.
    let origin = headers
        .get(header::ORIGIN)
        .map(|v| normal_origin(v.to_str().unwrap_or("null")));
    if let Some(origin) = &origin {
        let own = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(|h| format!("http://{}", h.to_ascii_lowercase()));
        if own.as_deref() != Some(origin.as_str()) {
            return Some(format!(
                "requests from the web page origin {origin:?} are refused: a page of another site must not drive orchestra; start orchestra with --allow-origin {origin} to allow it"
            ));
        }
    }
    let site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase());
    if let Some(site @ ("cross-site" | "same-site")) = site.as_deref() {
        return Some(format!(
            "requests a browser marks Sec-Fetch-Site: {site} are refused: a page of another site must not drive orchestra; allow its origin with --allow-origin"
        ));
    }
    None
}

/// The request's `Origin` when it is one the user allowed with `--allow-origin`.
fn allowed_foreign_origin(headers: &HeaderMap, access: &Access) -> Option<HeaderValue> {
    let value = headers.get(header::ORIGIN)?;
    let origin = normal_origin(value.to_str().ok()?);
    access
        .allowed_origins
        .iter()
        .any(|a| normal_origin(a) == origin)
        .then(|| value.clone())
}

/// The CORS answer an allowed page's browser needs before it lets the page send a JSON body
/// or a token (a preflight); the page may then read the responses.
fn cors_preflight(origin: HeaderValue) -> Response {
    let mut r = StatusCode::NO_CONTENT.into_response();
    let h = r.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, PATCH, DELETE"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type"),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    h.insert(header::VARY, HeaderValue::from_static("origin"));
    r
}

pub async fn check(State(guard): State<Arc<Guard>>, mut req: Request, next: Next) -> Response {
    let access = &guard.access;
    if let Some(host) = req.headers().get(header::HOST) {
        let host = host.to_str().unwrap_or("");
        let allowed = is_loopback_host(host)
            || access
                .allowed_hosts
                .iter()
                .any(|a| a == "*" || a.eq_ignore_ascii_case(host_name(host)));
        if !allowed {
            return error_response(
                StatusCode::FORBIDDEN,
                &format!(
                    "Host {host:?} is not allowed; orchestra answers loopback names only unless started with --allow-host"
                ),
            );
        }
    }
    if let Some(why) = cross_site_refusal(req.headers(), access) {
        return error_response(StatusCode::FORBIDDEN, &why);
    }
    let cors_origin = allowed_foreign_origin(req.headers(), access);
    if let Some(origin) = &cors_origin
        && req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
    {
        // Preflights carry no token: they ask, and the real request is checked.
        return cors_preflight(origin.clone());
    }
    let Some(principal) = principal(req.headers(), &guard) else {
        return error_response(StatusCode::UNAUTHORIZED, UNAUTHORIZED);
    };
    if let Principal::Session(grant) = &principal
        && let Err(why) = rights::session_may(req.method(), req.uri().path(), grant, &guard.engine)
    {
        return error_response(StatusCode::FORBIDDEN, &why);
    }
    req.extensions_mut().insert(principal);
    let mut response = next.run(req).await;
    if let Some(origin) = cors_origin {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        h.insert(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:3",
            "127.1.2.3",
            "[::1]:80",
            "::1",
            "app.localhost",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.com",
            "evil.com:80",
            "10.0.0.1",
            "localhost.evil.com",
            "[::2]:1",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, axum::http::HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn cross_site_requests_are_refused() {
        let access = Access {
            allowed_origins: vec!["http://localhost:3000/".into()],
            ..Access::default()
        };
        let host = ("host", "127.0.0.1:4000");
        let refused = [
            vec![host, ("origin", "http://evil.example")],
            vec![host, ("origin", "null")],
            vec![host, ("origin", "http://127.0.0.1:4001")],
            vec![host, ("origin", "https://127.0.0.1:4000")],
            vec![("origin", "http://127.0.0.1:4000")],
            vec![host, ("sec-fetch-site", "cross-site")],
            vec![host, ("sec-fetch-site", "same-site")],
            vec![
                host,
                ("origin", "http://127.0.0.1:4000"),
                ("sec-fetch-site", "same-site"),
            ],
        ];
        for h in refused {
            assert!(cross_site_refusal(&headers(&h), &access).is_some(), "{h:?}");
        }
        let allowed = [
            vec![host],
            vec![],
            vec![host, ("origin", "http://127.0.0.1:4000")],
            vec![host, ("origin", "HTTP://127.0.0.1:4000/")],
            vec![
                host,
                ("origin", "http://127.0.0.1:4000"),
                ("sec-fetch-site", "same-origin"),
            ],
            vec![host, ("sec-fetch-site", "none")],
            vec![
                host,
                ("origin", "http://localhost:3000"),
                ("sec-fetch-site", "same-site"),
            ],
        ];
        for h in allowed {
            assert_eq!(cross_site_refusal(&headers(&h), &access), None, "{h:?}");
        }
    }
}
