//! The OpenAPI document: served as generated, committed as generated, and covering every
//! route the router has with exactly the methods it answers.

use crate::support;

use orchestra_daemon::api::openapi::{TokenRequired, document, document_for, document_text};
use orchestra_daemon::api::route_paths;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use support::Server;

const COMMITTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/openapi.json");

#[test]
fn the_committed_document_is_the_generated_one() {
    let generated = document_text();
    if std::env::var_os("ORCHESTRA_WRITE_OPENAPI").is_some() {
        std::fs::write(COMMITTED, &generated).expect("write docs/openapi.json");
    }
    let committed = std::fs::read_to_string(COMMITTED).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json differs from the document the wire types make; regenerate it with \
         `cargo run -q -- openapi > docs/openapi.json` (or \
         `ORCHESTRA_WRITE_OPENAPI=1 cargo test --test api_openapi`) and commit it"
    );
}

#[test]
fn orchestra_openapi_prints_the_document() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_orchestra"))
        .arg("openapi")
        .env("HOME", std::env::temp_dir())
        .output()
        .expect("run orchestra openapi");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), document_text());
}

#[test]
fn the_server_serves_the_document_with_the_same_token_rule_as_every_route() {
    let s = Server::start_with(&["--token", "sesame"]);
    let r = s.get("/api/openapi.json");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["openapi"], "3.1.0");
    // This server needs its token, and its document (the one committed) says so.
    let served = r.json();
    assert_eq!(served["security"], json!([{"bearer": []}]));
    assert_eq!(served, document_for(TokenRequired(true)));
    assert_eq!(served, document());
    let anonymous = support::raw_request(&s.addr, "GET", "/api/openapi.json", None, &[]);
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);
    assert!(anonymous.json()["error"].is_string());
}

/// The methods the router answers on `path`: a method no route uses (PUT) gets a 405 whose
/// `Allow` lists them, and no handler runs.
fn router_methods(s: &Server, path: &str) -> BTreeSet<String> {
    let concrete = path.replace("{id}", "x").replace("{stepId}", "y");
    let r = s.request("PUT", &concrete, None);
    assert_eq!(r.status, 405, "PUT {concrete}: {}", r.body);
    r.header("allow")
        .unwrap_or_default()
        .split(',')
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty() && m != "head")
        .collect()
}

#[test]
fn every_route_of_the_router_is_documented_with_its_methods() {
    let doc = document();
    let paths = doc["paths"].as_object().expect("paths");
    let s = Server::start();
    let served = s.get("/api/openapi.json");
    assert_eq!(served.status, 200, "{}", served.body);
    assert_eq!(
        served.json(),
        doc,
        "a server without a token serves the committed document"
    );
    let routes: BTreeSet<&str> = route_paths().into_iter().collect();
    for path in &routes {
        let documented: BTreeSet<String> = paths
            .get(*path)
            .and_then(Value::as_object)
            .map(|item| item.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(
            router_methods(&s, path),
            documented,
            "{path}: the router's methods (left) and the document's (right)"
        );
    }
    let documented: BTreeSet<&str> = paths.keys().map(String::as_str).collect();
    assert_eq!(
        documented, routes,
        "the document's paths (left) and the router's (right)"
    );
}

#[test]
fn every_operation_has_a_unique_id_and_every_reference_resolves() {
    let doc = document();
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("item") {
            let id = op["operationId"].as_str().expect("operationId");
            assert!(ids.insert(id.to_string()), "{method} {path}: {id} twice");
        }
    }
    let text = doc.to_string();
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = piece.split('"').next().unwrap_or_default();
        assert!(schemas.contains_key(name), "unresolved $ref to {name}");
    }
}
