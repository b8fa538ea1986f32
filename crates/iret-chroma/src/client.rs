//! Chroma's HTTP API v2, the calls iret makes, through `ureq`: JSON in, JSON out, every
//! byte counted (the bench reports bytes on the wire).
use crate::{Access, StoreError, StoreUrl};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A response is read up to this size (a page of vectors is a few megabytes).
const MAX_RESPONSE: u64 = 1 << 30;

pub struct Client {
    agent: ureq::Agent,
    base: String,
    host: String,
    /// `/api/v2/tenants/TENANT/databases/DATABASE`.
    db: String,
    /// The credential header (name, value) sent with every request.
    auth: Option<(&'static str, String)>,
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
    #[serde(default)]
    pub documents: Option<Vec<Option<String>>>,
    #[serde(default)]
    pub metadatas: Option<Vec<Option<serde_json::Map<String, Value>>>>,
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
    /// A client for `url`'s server, tenant and database, sending `access`'s token and
    /// trusting its CA bundle (else the system's roots). Refuses a token over plain HTTP to
    /// another machine ([`Access::check`]).
    pub fn new(url: &StoreUrl, access: &Access, timeout: Duration) -> Result<Self, StoreError> {
        access.check(url)?;
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(5)))
            .timeout_global(Some(timeout));
        if url.scheme == crate::Scheme::Https {
            config = config
                .https_only(true)
                .tls_config(crate::tls::config(access)?);
        }
        let auth = access
            .token
            .as_ref()
            .map(|t| (access.header.name(), access.header.value(t)));
        Ok(Self {
            agent: config.build().into(),
            base: url.base(),
            host: format!("{}:{}", url.host, url.port),
            db: format!("/api/v2/tenants/{}/databases/{}", url.tenant, url.database),
            auth,
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
        })
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
        match self.call("GET", &format!("{}/collections/{name}", self.db), None) {
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
        self.call("POST", &format!("{}/collections", self.db), Some(&body))
    }

    pub fn delete_collection(&self, name: &str) -> Result<(), StoreError> {
        let _: Value = self.call("DELETE", &format!("{}/collections/{name}", self.db), None)?;
        Ok(())
    }

    /// Replaces the collection's metadata (Chroma replaces it whole, it does not merge).
    pub fn set_metadata(&self, id: &str, metadata: Value) -> Result<(), StoreError> {
        let body = json!({ "new_metadata": metadata });
        let _: Value = self.call("PUT", &format!("{}/collections/{id}", self.db), Some(&body))?;
        Ok(())
    }

    pub fn count(&self, id: &str) -> Result<usize, StoreError> {
        self.call("GET", &format!("{}/collections/{id}/count", self.db), None)
    }

    pub fn add(&self, id: &str, records: &Records) -> Result<(), StoreError> {
        let body = serde_json::to_value(records).expect("records serialise");
        let _: Value = self.call(
            "POST",
            &format!("{}/collections/{id}/add", self.db),
            Some(&body),
        )?;
        Ok(())
    }

    pub fn delete(&self, id: &str, ids: &[String]) -> Result<(), StoreError> {
        let body = json!({ "ids": ids });
        let _: Value = self.call(
            "POST",
            &format!("{}/collections/{id}/delete", self.db),
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
        self.call(
            "POST",
            &format!("{}/collections/{id}/get", self.db),
            Some(&body),
        )
    }

    /// The `k` records nearest to `query`.
    pub fn query(&self, id: &str, query: &[f32], k: usize) -> Result<QueryResponse, StoreError> {
        let body = json!({
            "query_embeddings": [query],
            "n_results": k,
            "include": ["distances"],
        });
        self.call(
            "POST",
            &format!("{}/collections/{id}/query", self.db),
            Some(&body),
        )
    }

    /// Creates `name` only if it does not exist: `None` when it does (Chroma answers
    /// 409), which makes a collection a lock ([`crate::lock`]).
    pub fn create_new(
        &self,
        name: &str,
        metadata: Value,
    ) -> Result<Option<Collection>, StoreError> {
        let body = json!({ "name": name, "metadata": metadata, "get_or_create": false });
        match self.call("POST", &format!("{}/collections", self.db), Some(&body)) {
            Ok(c) => Ok(Some(c)),
            Err(StoreError::Server { status: 409, .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Adds or replaces records.
    pub fn upsert(&self, id: &str, records: &Records) -> Result<(), StoreError> {
        let body = serde_json::to_value(records).expect("records serialise");
        let _: Value = self.call(
            "POST",
            &format!("{}/collections/{id}/upsert", self.db),
            Some(&body),
        )?;
        Ok(())
    }

    /// Records matching the metadata filter `filter` (all when `None`), with `include`'s
    /// fields.
    pub fn get_where(
        &self,
        id: &str,
        filter: Option<Value>,
        include: &[&str],
    ) -> Result<GetResponse, StoreError> {
        let mut body = json!({ "include": include });
        if let Some(f) = filter {
            body["where"] = f;
        }
        self.call(
            "POST",
            &format!("{}/collections/{id}/get", self.db),
            Some(&body),
        )
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, StoreError> {
        let url = format!("{}{path}", self.base);
        let failed = |e: ureq::Error| match crate::tls::failure(&e) {
            Some(reason) => StoreError::Tls {
                host: self.host.clone(),
                reason,
            },
            None => StoreError::Unreachable {
                url: self.base.clone(),
                reason: e.to_string(),
            },
        };
        let result = match (method, body) {
            ("GET", _) => self.authorised(self.agent.get(&url)).call(),
            ("DELETE", _) => self.authorised(self.agent.delete(&url)).call(),
            (_, body) => {
                let bytes = serde_json::to_vec(body.unwrap_or(&Value::Null)).expect("json");
                self.sent.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                let request = if method == "PUT" {
                    self.agent.put(&url)
                } else {
                    self.agent.post(&url)
                };
                self.authorised(request)
                    .content_type("application/json")
                    .send(&bytes[..])
            }
        };
        let mut response = result.map_err(failed)?;
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_RESPONSE)
            .read_to_vec()
            .map_err(failed)?;
        self.received
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if !(200..300).contains(&status) {
            return Err(self.refusal(status, challenge.as_deref(), &bytes));
        }
        serde_json::from_slice(&bytes).map_err(|e| StoreError::Protocol(format!("{path}: {e}")))
    }

    fn authorised<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.auth {
            Some((name, value)) => request.header(*name, value),
            None => request,
        }
    }

    /// The error of a non-2xx answer: a refused credential says which header went to which
    /// host (never the token); plain HTTP sent to a TLS port says so.
    fn refusal(&self, status: u16, challenge: Option<&str>, body: &[u8]) -> StoreError {
        let message = short_reason(body);
        if status == 401 || status == 403 {
            let why = challenge.and_then(challenge_reason).unwrap_or(message);
            return StoreError::Refused {
                host: self.host.clone(),
                status,
                sent: self.auth.as_ref().map(|(name, _)| *name),
                reason: why,
            };
        }
        if status == 400 && message.contains("plain HTTP request was sent to HTTPS port") {
            return StoreError::Tls {
                host: self.host.clone(),
                reason: "the server speaks TLS on this port and iret spoke plain HTTP: use chroma+https://".into(),
            };
        }
        StoreError::Server { status, message }
    }
}

/// What a refusal's body says, in one short line: a JSON body's `error_description`,
/// `message` or `error`; an HTML page's title (a proxy's error page), never its markup;
/// else the first line of text. At most 200 characters.
fn short_reason(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let json = ["error_description", "message", "error"]
        .iter()
        .find_map(|k| v[*k].as_str().map(str::to_string));
    let html = || {
        let lower = text.to_ascii_lowercase();
        ["title", "h1"].iter().find_map(|tag| {
            let start = lower.find(&format!("<{tag}"))?;
            let start = start + lower[start..].find('>')? + 1;
            let end = start + lower[start..].find(&format!("</{tag}"))?;
            Some(
                text[start..end]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })
    };
    let line = || {
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('<'))
            .map(str::to_string)
    };
    let reason = json
        .or_else(html)
        .or_else(line)
        .unwrap_or_else(|| "no reason given".into());
    reason.chars().take(200).collect()
}

/// The reason a `WWW-Authenticate` challenge gives (`error_description`, else `error`).
fn challenge_reason(header: &str) -> Option<String> {
    let field = |name: &str| {
        let start = header.find(&format!("{name}=\""))? + name.len() + 2;
        let end = header[start..].find('"')?;
        Some(header[start..start + end].to_string())
    };
    field("error_description").or_else(|| field("error"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_refusal_reads_as_a_line_never_as_a_page() {
        let page = b"<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
        assert_eq!(super::short_reason(page), "401 Authorization Required");
        assert_eq!(
            super::short_reason(br#"{"error":"invalid_token","error_description":"expired"}"#),
            "expired"
        );
        assert_eq!(
            super::short_reason(br#"{"error":"Unauthorized","message":"bad token"}"#),
            "bad token"
        );
        assert_eq!(
            super::short_reason(b"\n  denied by policy\nmore"),
            "denied by policy"
        );
        assert_eq!(super::short_reason(b""), "no reason given");
        assert_eq!(super::short_reason(&[b'x'; 500]).len(), 200);
    }

    #[test]
    fn a_challenge_gives_its_reason() {
        let h =
            r#"Bearer realm="iret", error="invalid_token", error_description="the token expired""#;
        assert_eq!(
            super::challenge_reason(h).as_deref(),
            Some("the token expired")
        );
        assert_eq!(
            super::challenge_reason(r#"Bearer error="invalid_token""#).as_deref(),
            Some("invalid_token")
        );
        assert_eq!(super::challenge_reason("Basic realm=x"), None);
    }
}
