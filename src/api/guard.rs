//! Who may talk to the API: a loopback `Host` (against DNS rebinding) and, when configured,
//! the bearer token.

use super::error::error_response;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct Access {
    pub token: Option<String>,
    /// Extra `Host` names allowed besides loopback ones; `*` allows any.
    pub allowed_hosts: Vec<String>,
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

fn token_matches(given: &[u8], want: &[u8]) -> bool {
    // Compare every byte so the time taken does not reveal how much matched.
    given.len() == want.len()
        && given
            .iter()
            .zip(want)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

pub async fn check(State(access): State<Arc<Access>>, req: Request, next: Next) -> Response {
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
    if let Some(token) = &access.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if !given.is_some_and(|g| token_matches(g.as_bytes(), token.as_bytes())) {
            return error_response(
                StatusCode::UNAUTHORIZED,
                "missing or wrong token: send Authorization: Bearer <token>",
            );
        }
    }
    next.run(req).await
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

    #[test]
    fn tokens() {
        assert!(token_matches(b"abc", b"abc"));
        assert!(!token_matches(b"abd", b"abc"));
        assert!(!token_matches(b"ab", b"abc"));
    }
}
