//! iret's shared store: a team's index in a Chroma collection. `iret index --store`
//! pushes an index's chunks, vectors and vocabulary (only what changed, by content key);
//! any machine then builds its index with the vectors the store holds instead of
//! embedding them ([`iret_index::RemoteVectors`]) and has its vector leg proposed by the
//! store's search ([`iret_index::RemoteNearest`]). Walk, chunking, BM25 and the loop stay
//! in iret; nothing here searches vectors itself.
//!
//! One record per chunk and per vocabulary term, its id the embedding cache's key (the
//! model and the text embedded, which holds the chunk's path and symbol), so a record is
//! found from the text alone and two checkouts of the same code share their records.
//! The collection's metadata names the model, its dimensions and the index format; a
//! collection made by another is refused. Each ref (a checkout's branch) records which
//! records its latest push needs ([`refs`]); a record no ref needs is collected ([`gc`]).
//! `chroma+https://` speaks TLS ([`tls`]); a token comes from the environment ([`Access`]).
mod access;
mod client;
mod gc;
mod lock;
mod memo;
mod push;
mod refs;
mod tls;
mod url;

pub use access::{Access, Token, TokenHeader};
pub use client::Client;
pub use gc::{forget, gc, GcReport};
pub use push::{push, push_index, PushReport};
pub use refs::RefInfo;
pub use url::{collection_name, Scheme, StoreUrl};

use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;

/// The store's layout: 2 adds the refs' manifests beside format 1's records. A format-1
/// collection is read as it is and becomes format 2 at its first push; an iret of format
/// 1 refuses a format-2 collection (its push would delete other refs' records).
pub const STORE_FORMAT: u32 = 2;
/// The collection metadata key holding its version ([`Store::version`]).
const VERSION_KEY: &str = "iret_version";
/// Ids per request when asking which records the store holds (ids only, no vectors).
const HOLDING_BATCH: usize = 5000;
/// Records per request when fetching vectors by id.
const FETCH_BATCH: usize = 500;
/// Ids per page when listing the collection.
const LIST_PAGE: usize = 5000;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("bad store address {0}")]
    Url(String),
    #[error("cannot reach the store at {url}: {reason} (is `chroma run` serving there?)")]
    Unreachable { url: String, reason: String },
    #[error("{0}")]
    Access(String),
    #[error("no secure connection to the store at {host}: {reason}")]
    Tls { host: String, reason: String },
    #[error("{}", refused(host, *status, *sent, reason))]
    Refused {
        host: String,
        status: u16,
        /// The header the token went in; `None`: no token was sent.
        sent: Option<&'static str>,
        reason: String,
    },
    #[error("collection {collection} is locked by {holder} (a push checking its records or collecting garbage); try again when it is done (a lock whose holder died lapses after 10 minutes)")]
    Locked { collection: String, holder: String },
    #[error("the store answered {status}: {message}")]
    Server { status: u16, message: String },
    #[error("the store's answer is not what iret expects: {0}")]
    Protocol(String),
    #[error("the store has no collection {name}; `iret index --store {url}` pushes one")]
    NoCollection { name: String, url: String },
    #[error("collection {name} was made {found}; this iret uses {wanted} (push to another collection, or delete it)")]
    Mismatch {
        name: String,
        found: String,
        wanted: String,
    },
    #[error("{0}")]
    NotReady(String),
    #[error("cannot open the index in {dir}: {reason}")]
    Index { dir: String, reason: String },
    #[error("the push stopped after {sent} of the {missing} records the store lacked: {cause}. The local index is built and answers without --store; once the store is fixed (reachable, with room to write), `iret index --store …` again sends only what is still missing")]
    PushCut {
        sent: usize,
        missing: usize,
        cause: Box<StoreError>,
    },
}

/// The live index in `dir` (of `model_id`, when given), or why it cannot be opened.
pub(crate) fn open_index(
    dir: &std::path::Path,
    model_id: Option<&str>,
) -> Result<iret_index::Index, StoreError> {
    iret_index::Index::open(dir, model_id).map_err(|e| StoreError::Index {
        dir: dir.display().to_string(),
        reason: e.to_string(),
    })
}

fn refused(host: &str, status: u16, sent: Option<&str>, reason: &str) -> String {
    let why = if reason.is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    };
    match sent {
        Some(header) => format!(
            "the store at {host} refused the token (sent in the {header} header; HTTP {status}{why}). Check IRET_STORE_TOKEN or IRET_STORE_TOKEN_FILE, and IRET_STORE_TOKEN_HEADER"
        ),
        None => format!(
            "the store at {host} asks for a token (HTTP {status}{why}) and none is set: put it in IRET_STORE_TOKEN, or in a file named by IRET_STORE_TOKEN_FILE"
        ),
    }
}

/// A connection to one collection.
pub struct Store {
    client: Client,
    url: String,
    pub name: String,
    id: String,
    model_id: String,
    dims: usize,
    /// Where what the store holds of an index is remembered between processes.
    memo: Option<std::path::PathBuf>,
    /// Made by an iret of store format 1: a push marks it format 2 before anything else,
    /// so that such an iret, which deletes every record its index lacks, refuses it.
    format_1: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({} at {})", self.name, self.url)
    }
}

impl Store {
    /// Connects to the collection of `url` (or `default_name`), checking that it was made
    /// for `model_id` at `dims` and this index format; `create` makes it when missing.
    pub fn connect(
        url: &StoreUrl,
        access: &Access,
        default_name: &str,
        model_id: &str,
        dims: usize,
        create: bool,
    ) -> Result<Self, StoreError> {
        let client = Client::new(url, access, Duration::from_secs(120))?;
        client.heartbeat()?;
        let name = url
            .collection
            .clone()
            .unwrap_or_else(|| default_name.to_string());
        let shown = url.shown(&name);
        let wanted = identity(model_id, dims);
        let collection = match client.collection(&name)? {
            Some(c) => c,
            None if create => client.create(&name, wanted.clone())?,
            None => return Err(StoreError::NoCollection { name, url: shown }),
        };
        let mut found = Value::Object(collection.metadata.clone().unwrap_or_default());
        let format_1 = found["iret_store_format"] == json!(1);
        if format_1 {
            // Format 1 holds the same records: read as it is, made format 2 by a push.
            found["iret_store_format"] = json!(STORE_FORMAT);
        }
        let keys = [
            "iret_model",
            "iret_dims",
            "iret_format",
            "iret_store_format",
        ];
        if keys.iter().any(|k| found.get(k) != wanted.get(k)) {
            let describe = |v: &Value| match v.get("iret_model") {
                Some(m) => format!(
                    "for {} ({} dimensions, index format {}, store format {})",
                    m, v["iret_dims"], v["iret_format"], v["iret_store_format"]
                ),
                None => "by something other than iret".to_string(),
            };
            return Err(StoreError::Mismatch {
                name,
                found: describe(&found),
                wanted: describe(&wanted),
            });
        }
        Ok(Self {
            client,
            url: shown,
            name,
            id: collection.id,
            model_id: model_id.to_string(),
            dims,
            memo: None,
            format_1,
        })
    }

    /// Remembers in `index_dir` which of the index's chunks the store holds, per version
    /// of the collection ([`Store::version`]), so that the next process (a CLI search)
    /// does not ask again while no push changed the collection.
    pub fn remembering_in(mut self, index_dir: &std::path::Path) -> Self {
        self.memo = Some(index_dir.join("store-holding"));
        self
    }

    /// Every ref's latest push recorded in the collection (empty for a collection of an
    /// older iret, which records none).
    pub fn refs(&self) -> Result<Vec<RefInfo>, StoreError> {
        refs::list(self)
    }

    /// `chroma://HOST:PORT/COLLECTION`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Every record id in the collection, read in pages (a record added or deleted while
    /// they are read may be missed or seen: callers check again what they rely on).
    pub fn ids(&self) -> Result<HashSet<String>, StoreError> {
        let mut ids = HashSet::new();
        let mut offset = 0;
        loop {
            let page = self
                .client
                .get(&self.id, None, Some((LIST_PAGE, offset)), &[])?;
            let n = page.ids.len();
            ids.extend(page.ids);
            if n < LIST_PAGE {
                return Ok(ids);
            }
            offset += n;
        }
    }

    /// Records in the collection.
    pub fn count(&self) -> Result<usize, StoreError> {
        self.client.count(&self.id)
    }

    /// Bytes sent and received by this connection so far.
    pub fn bytes(&self) -> (u64, u64) {
        self.client.bytes()
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// Whether the collection was made by an iret of store format 1 ([`Store::connect`]).
    pub(crate) fn is_format_1(&self) -> bool {
        self.format_1
    }

    /// Vectors by key, `None` where the store has none.
    pub fn fetch_vectors(&self, keys: &[[u8; 16]]) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
        let mut found = std::collections::HashMap::with_capacity(keys.len());
        for batch in keys.chunks(FETCH_BATCH) {
            let ids: Vec<String> = batch.iter().map(hex).collect();
            let got = self
                .client
                .get(&self.id, Some(&ids), None, &["embeddings"])?;
            let vectors = got.embeddings.unwrap_or_default();
            if vectors.len() != got.ids.len() {
                return Err(StoreError::Protocol(
                    "ids and embeddings differ in number".into(),
                ));
            }
            for (id, v) in got.ids.into_iter().zip(vectors) {
                found.insert(id, v);
            }
        }
        Ok(keys.iter().map(|k| found.remove(&hex(k))).collect())
    }

    /// How many chunks the index in `index_dir` has, and how many of them the store holds.
    pub fn coverage(&self, index_dir: &std::path::Path) -> Result<(usize, usize), StoreError> {
        let index = open_index(index_dir, None)?;
        let keys: Vec<[u8; 16]> = (0..index.chunks.len())
            .map(|c| iret_index::remote::chunk_key(&index, c))
            .collect();
        Ok((keys.len(), self.present(&keys)?))
    }

    /// How many of `keys` the store holds.
    pub fn present(&self, keys: &[[u8; 16]]) -> Result<usize, StoreError> {
        Ok(self.holding(keys)?.into_iter().filter(|&h| h).count())
    }

    /// For each of `keys`, whether the store holds it.
    pub fn holding(&self, keys: &[[u8; 16]]) -> Result<Vec<bool>, StoreError> {
        let mut held = std::collections::HashSet::with_capacity(keys.len());
        for batch in keys.chunks(HOLDING_BATCH) {
            let ids: Vec<String> = batch.iter().map(hex).collect();
            held.extend(self.client.get(&self.id, Some(&ids), None, &[])?.ids);
        }
        Ok(keys.iter().map(|k| held.contains(&hex(k))).collect())
    }

    /// The collection's version: a token every push changes when it begins changing
    /// records and again when it is done, so that a reader knows when what it learnt
    /// of the collection (which chunks it holds) is out of date. Empty before any push.
    pub fn version(&self) -> Result<String, StoreError> {
        let collection =
            self.client
                .collection(&self.name)?
                .ok_or_else(|| StoreError::NoCollection {
                    name: self.name.clone(),
                    url: self.url.clone(),
                })?;
        if collection.id != self.id {
            // Deleted and made again under the same name: another collection.
            return Ok(format!("collection {}", collection.id));
        }
        Ok(collection
            .metadata
            .and_then(|m| {
                m.get(VERSION_KEY)
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default())
    }

    /// Gives the collection a new version (see [`Store::version`]).
    pub(crate) fn new_version(&self) -> Result<(), StoreError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let mut metadata = identity(&self.model_id, self.dims);
        metadata[VERSION_KEY] = json!(format!("{nanos:x}-{:x}", std::process::id()));
        self.client.set_metadata(&self.id, metadata)
    }

    /// The records nearest to `query` (keys and cosine), best first: `k` and a quarter
    /// more, so that the vocabulary terms among them leave about `k` chunks.
    pub fn nearest_chunks(
        &self,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<([u8; 16], f32)>, StoreError> {
        // No `where` on the record kind: a metadata filter turns Chroma's graph search
        // into a filtered scan (270 ms against 3.2 ms at 106k records, docs/journal/benchmarks.md,
        // session 21). Term records among the answers are dropped by the caller, which
        // keeps only keys of its own chunks; a margin of terms is asked for on top.
        let got = self.client.query(&self.id, query, k + k / 4)?;
        let ids = got.ids.into_iter().next().unwrap_or_default();
        let distances = got
            .distances
            .and_then(|d| d.into_iter().next())
            .unwrap_or_default();
        Ok(ids
            .iter()
            .enumerate()
            .filter_map(|(i, id)| {
                let d = distances.get(i).copied().flatten().unwrap_or(1.0);
                Some((unhex(id)?, 1.0 - d))
            })
            .collect())
    }
}

impl iret_index::RemoteVectors for Store {
    fn fetch(&self, keys: &[[u8; 16]]) -> Result<Vec<Option<Vec<f32>>>, String> {
        self.fetch_vectors(keys).map_err(|e| e.to_string())
    }
}

impl iret_index::RemoteNearest for Store {
    fn nearest(&self, query: &[f32], k: usize) -> Result<Vec<([u8; 16], f32)>, String> {
        self.nearest_chunks(query, k).map_err(|e| e.to_string())
    }

    fn version(&self) -> Result<String, String> {
        Store::version(self).map_err(|e| e.to_string())
    }

    fn holding(&self, keys: &[[u8; 16]]) -> Result<Vec<bool>, String> {
        let Some(dir) = &self.memo else {
            return Store::holding(self, keys).map_err(|e| e.to_string());
        };
        // The version first: a push after it gives the next reader another version.
        let version = Store::version(self).map_err(|e| e.to_string())?;
        let file = dir.join(&self.id);
        let tag = memo::tag(&version, keys);
        if let Some(held) = memo::read(&file, &tag, keys.len()) {
            return Ok(held);
        }
        let held = Store::holding(self, keys).map_err(|e| e.to_string())?;
        // A memo that cannot be written is only a slower next search.
        let _ = memo::write(dir, &file, &tag, &held);
        Ok(held)
    }
}

/// What a collection's metadata says about who made it.
fn identity(model_id: &str, dims: usize) -> Value {
    json!({
        "iret_model": model_id,
        "iret_dims": dims,
        "iret_format": iret_index::store::FORMAT_VERSION,
        "iret_store_format": STORE_FORMAT,
    })
}

/// A key as a record id: 32 lower-case hex digits.
pub fn hex(key: &[u8; 16]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(id: &str) -> Option<[u8; 16]> {
    if id.len() != 32 {
        return None;
    }
    let mut k = [0u8; 16];
    for (i, b) in k.iter_mut().enumerate() {
        *b = u8::from_str_radix(id.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(k)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_round_trip() {
        let k = [0u8, 1, 2, 0xab, 0xff, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        assert_eq!(super::unhex(&super::hex(&k)), Some(k));
        assert_eq!(super::unhex("xyz"), None);
    }
}
