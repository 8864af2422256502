//! The daemon's API as async calls: the one client (`orchestra-client`, blocking) run on the
//! blocking pool, so that a slow answer never stalls the MCP connection (a `wait_for_task`
//! and a `get_task` run side by side).

use orchestra_client::daemon::Endpoint;
use orchestra_client::http::{Api, ApiError, Caller, Method};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a call gave no answer.
#[derive(Debug)]
pub enum Failed {
    /// The daemon refused, or could not be reached: the client's own sentence.
    Api(ApiError),
    /// The call's thread did not finish (the process is stopping).
    Lost(String),
}

impl From<ApiError> for Failed {
    fn from(e: ApiError) -> Self {
        Failed::Api(e)
    }
}

#[derive(Clone, Debug)]
pub struct Remote {
    api: Api,
}

impl Remote {
    pub fn new(endpoint: &Endpoint) -> Remote {
        Remote {
            api: Api::new(&endpoint.url, endpoint.token.clone(), Caller::Mcp),
        }
    }

    /// Runs `f` with the client on the blocking pool.
    pub async fn run<T, F>(&self, f: F) -> Result<T, Failed>
    where
        T: Send + 'static,
        F: FnOnce(&Api) -> Result<T, ApiError> + Send + 'static,
    {
        let api = self.api.clone();
        match tokio::task::spawn_blocking(move || f(&api)).await {
            Ok(r) => r.map_err(Failed::Api),
            Err(e) => Err(Failed::Lost(e.to_string())),
        }
    }

    /// A GET answered with the wire type `T` (`expected` names it).
    pub async fn get<T>(&self, path: String, expected: &'static str) -> Result<T, Failed>
    where
        T: DeserializeOwned + Send + 'static,
    {
        self.run(move |api| api.read(&path, expected)).await
    }

    /// A request with `body` (`()` for none) answered with `T`.
    pub async fn send<B, T>(
        &self,
        method: Method,
        path: String,
        body: B,
        expected: &'static str,
    ) -> Result<T, Failed>
    where
        B: Serialize + Send + 'static,
        T: DeserializeOwned + Send + 'static,
    {
        self.run(move |api| api.send(method, &path, &body, expected))
            .await
    }

    /// A GET whose body is not JSON (a transcript).
    pub async fn bytes(&self, path: String) -> Result<Vec<u8>, Failed> {
        self.run(move |api| api.request_bytes(Method::Get, &path, None))
            .await
    }
}
