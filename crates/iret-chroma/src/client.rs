//! Chroma's HTTP API v2, the calls iret makes, through `ureq`: JSON in, JSON out, every
//! byte counted (the bench reports bytes on the wire).
use crate::StoreError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const DB: &str = "/api/v2/tenants/default_tenant/databases/default_database";
/// A response is read up to this size (a page of vectors is a few megabytes).
const MAX_RESPONSE: u64 = 1 << 30;

pub struct Client {
    agent: ureq::Agent,
    base: String,
    sent: AtomicU64,
    received: AtomicU64,
}

/// A collection as the server describes it.
#[derive(Debug, Deserialize)]
pub struct Collection {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
pub struct GetResponse {
    pub ids: Vec<String>,
    #[serde(default)]
    pub embeddings: Option<Vec<Vec<f32>>>,
}

#[derive(Debug, Deserialize)]
pub struct QueryResponse {
    pub ids: Vec<Vec<String>>,
    #[serde(default)]
    pub distances: Option<Vec<Vec<Option<f32>>>>,
}

/// A record to add.
#[derive(Debug, Serialize)]
pub struct Records<'a> {
    pub ids: Vec<String>,
    pub embeddings: Vec<&'a [f32]>,
    pub documents: Vec<&'a str>,
    pub metadatas: Vec<Value>,
}

impl Client {
    pub fn new(base: &str, timeout: Duration) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(timeout))
            .build()
            .into();
        Self {
            agent,
            base: base.to_string(),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
        }
    }

    /// Bytes sent and received so far (request and response bodies).
    pub fn bytes(&self) -> (u64, u64) {
        (
            self.sent.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
        )
    }

    /// The server answers its heartbeat.
    pub fn heartbeat(&self) -> Result<(), StoreError> {
        let _: Value = self.call("GET", "/api/v2/heartbeat", None)?;
        Ok(())
    }

    /// The most records the server takes in one call.
    pub fn max_batch_size(&self) -> Result<usize, StoreError> {
        let v: Value = self.call("GET", "/api/v2/pre-flight-checks", None)?;
        Ok(v["max_batch_size"].as_u64().unwrap_or(1000) as usize)
    }

    /// The collection `name`, or `None` when there is none.
    pub fn collection(&self, name: &str) -> Result<Option<Collection>, StoreError> {
        match self.call("GET", &format!("{DB}/collections/{name}"), None) {
            Ok(c) => Ok(Some(c)),
            Err(StoreError::Server { status: 404, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates `name` with `metadata`, compared by inner product (vectors are unit length).
    pub fn create(&self, name: &str, metadata: Value) -> Result<Collection, StoreError> {
        let body = json!({
            "name": name,
            "metadata": metadata,
            "configuration": {"hnsw": {"space": "ip", "ef_search": 512, "ef_construction": 200}},
            "get_or_create": true,
        });
        self.call("POST", &format!("{DB}/collections"), Some(&body))
    }

    pub fn delete_collection(&self, name: &str) -> Result<(), StoreError> {
        let _: Value = self.call("DELETE", &format!("{DB}/collections/{name}"), None)?;
        Ok(())
    }

    /// Replaces the collection's metadata (Chroma replaces it whole, it does not merge).
    pub fn set_metadata(&self, id: &str, metadata: Value) -> Result<(), StoreError> {
        let body = json!({ "new_metadata": metadata });
        let _: Value = self.call("PUT", &format!("{DB}/collections/{id}"), Some(&body))?;
        Ok(())
    }

    pub fn count(&self, id: &str) -> Result<usize, StoreError> {
        self.call("GET", &format!("{DB}/collections/{id}/count"), None)
    }

    pub fn add(&self, id: &str, records: &Records) -> Result<(), StoreError> {
        let body = serde_json::to_value(records).expect("records serialise");
        let _: Value = self.call("POST", &format!("{DB}/collections/{id}/add"), Some(&body))?;
        Ok(())
    }

    pub fn delete(&self, id: &str, ids: &[String]) -> Result<(), StoreError> {
        let body = json!({ "ids": ids });
        let _: Value = self.call(
            "POST",
            &format!("{DB}/collections/{id}/delete"),
            Some(&body),
        )?;
        Ok(())
    }

    /// Records by id (`ids`), or a page of all of them (`limit`, `offset`); `include`
    /// names the fields wanted (`["embeddings"]`, or none: ids only).
    pub fn get(
        &self,
        id: &str,
        ids: Option<&[String]>,
        page: Option<(usize, usize)>,
        include: &[&str],
    ) -> Result<GetResponse, StoreError> {
        let mut body = json!({ "include": include });
        if let Some(ids) = ids {
            body["ids"] = json!(ids);
        }
        if let Some((limit, offset)) = page {
            body["limit"] = json!(limit);
            body["offset"] = json!(offset);
        }
        self.call("POST", &format!("{DB}/collections/{id}/get"), Some(&body))
    }

    /// The `k` records nearest to `query`.
    pub fn query(&self, id: &str, query: &[f32], k: usize) -> Result<QueryResponse, StoreError> {
        let body = json!({
            "query_embeddings": [query],
            "n_results": k,
            "include": ["distances"],
        });
        self.call("POST", &format!("{DB}/collections/{id}/query"), Some(&body))
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, StoreError> {
        let url = format!("{}{path}", self.base);
        let unreachable = |e: ureq::Error| StoreError::Unreachable {
            url: self.base.clone(),
            reason: e.to_string(),
        };
        let result = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", _) => self.agent.delete(&url).call(),
            (_, body) => {
                let bytes = serde_json::to_vec(body.unwrap_or(&Value::Null)).expect("json");
                self.sent.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                let request = if method == "PUT" {
                    self.agent.put(&url)
                } else {
                    self.agent.post(&url)
                };
                request.content_type("application/json").send(&bytes[..])
            }
        };
        let mut response = result.map_err(unreachable)?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE)
            .read_to_vec()
            .map_err(unreachable)?;
        self.received
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if !(200..300).contains(&status) {
            let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let message = v["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| String::from_utf8_lossy(&bytes).chars().take(300).collect());
            return Err(StoreError::Server { status, message });
        }
        serde_json::from_slice(&bytes).map_err(|e| StoreError::Protocol(format!("{path}: {e}")))
    }
}
