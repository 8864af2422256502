//! A scripted model server for tests: answers on 127.0.0.1 port 0 the APIs the coding-agent
//! CLIs call (Anthropic Messages, OpenAI Responses and Chat Completions, Gemini), each turn
//! chosen by a [`Script`] from what the CLI sent, and records every request.
//!
//! It runs on its own tokio runtime thread, so sync tests (and the real CLIs, out of process)
//! reach it over real HTTP; it stops when dropped.
#![allow(dead_code)]

pub mod apis;
pub mod conversation;
pub mod limits;
pub mod results;
pub mod schema;
pub mod script;
pub mod sse;

pub use script::{Reply, Script, Turn};

use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    /// The JSON body (`Null` when there is none or it is not JSON).
    pub body: Value,
}

struct State {
    script: Script,
    requests: Mutex<Vec<Recorded>>,
}

/// A running model server; stopped (and its thread joined) on drop.
pub struct ModelServer {
    pub url: String,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ModelServer {
    pub fn start(script: Script) -> ModelServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind model server");
        listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let state = Arc::new(State {
            script,
            requests: Mutex::new(Vec::new()),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let served = state.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("model server runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let app = axum::Router::new().fallback(move |req: Request<Body>| {
                    let state = served.clone();
                    async move { handle(&state, req).await }
                });
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        ModelServer {
            url,
            state,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The requests whose path ends with `suffix` (e.g. `/v1/messages`).
    pub fn requests_to(&self, suffix: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with(suffix))
            .collect()
    }

    /// A summary of the requests (method, path, a bit of the body), for failure messages.
    pub fn log(&self) -> String {
        self.requests()
            .iter()
            .map(|r| {
                let b = r.body.to_string();
                let cut: String = b.chars().take(300).collect();
                format!("{} {}?{} {cut}", r.method, r.path, r.query)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn handle(state: &State, req: Request<Body>) -> Response<Body> {
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    let upgrade = req.headers().contains_key(header::UPGRADE);
    let bytes = axum::body::to_bytes(req.into_body(), 256 << 20)
        .await
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    state
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Recorded {
            method: method.clone(),
            path: path.clone(),
            query,
            body: body.clone(),
        });
    if upgrade {
        // Codex tries a WebSocket first; 426 sends it to plain HTTP streaming.
        return json_response(
            StatusCode::UPGRADE_REQUIRED,
            json!({"error": {"message": "WebSockets are not supported here"}}),
        );
    }
    match apis::answer(&state.script, &method, &path, &body) {
        Some(apis::Answer::Json(v)) => json_response(StatusCode::OK, v),
        Some(apis::Answer::Refused(r)) => {
            let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
            let mut b = Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, "application/json");
            for (k, v) in &r.headers {
                b = b.header(k.as_str(), v.as_str());
            }
            b.body(Body::from(r.body.to_string())).unwrap_or_default()
        }
        Some(apis::Answer::Sse(text)) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(Body::from(text))
            .unwrap_or_default(),
        None => json_response(
            StatusCode::NOT_FOUND,
            json!({"error": {"message": format!("the scripted model does not serve {method} {path}")}}),
        ),
    }
}

fn json_response(status: StatusCode, v: Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(v.to_string()))
        .unwrap_or_default()
}
