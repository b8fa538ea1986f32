//! `iret index --store`: the collection made to hold what the live index holds, sending
//! only the records it lacks and deleting those the index no longer has. The server's
//! records are the push's progress: a push killed midway leaves the batches it sent, and
//! the next push sends the rest.
use crate::client::Records;
use crate::{hex, Store, StoreError};
use iret_index::Index;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Instant;

/// Records per add request (bounded by the server's own limit too).
const PUSH_BATCH: usize = 256;
/// Ids per page when listing the collection.
const LIST_PAGE: usize = 5000;

/// What a push did.
#[derive(Debug, Clone, Default)]
pub struct PushReport {
    /// Records sent (chunks and vocabulary terms).
    pub added: usize,
    /// Records deleted: no longer in the index.
    pub deleted: usize,
    /// Records the store already held.
    pub kept: usize,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub seconds: f64,
}

impl PushReport {
    pub fn summary(&self, store: &Store) -> String {
        format!(
            "pushed to {}: {} records added, {} deleted, {} already there, in {:.1}s ({:.1} MB sent, {:.1} MB received)",
            store.url(),
            self.added,
            self.deleted,
            self.kept,
            self.seconds,
            self.bytes_sent as f64 / 1e6,
            self.bytes_received as f64 / 1e6
        )
    }
}

/// One record to push.
struct Record<'a> {
    id: String,
    vector: &'a [f32],
    document: &'a str,
    metadata: Value,
}

/// Makes the collection hold the index's records.
pub fn push(store: &Store, index: &Index, progress: bool) -> Result<PushReport, StoreError> {
    let started = Instant::now();
    let before = store.bytes();
    let m = &index.manifest;
    if m.pending() || m.static_tier.is_some() {
        return Err(StoreError::NotReady(format!(
            "the index is its {} tier ({} texts not embedded by {} yet): a store only takes the model's own vectors; `iret index --wait` embeds them first",
            m.tier(),
            m.pending_vectors,
            m.model_id
        )));
    }
    if m.model_id != store.model_id() || m.dims != store.dims() {
        return Err(StoreError::Mismatch {
            name: store.name.clone(),
            found: format!("for {} ({} dimensions)", store.model_id(), store.dims()),
            wanted: format!("{} ({} dimensions) for this index", m.model_id, m.dims),
        });
    }
    let records = records(index);
    let on_server = list_ids(store)?;
    let wanted: HashSet<&str> = records.iter().map(|r| r.id.as_str()).collect();
    let missing: Vec<&Record> = records
        .iter()
        .filter(|r| !on_server.contains(&r.id))
        .collect();
    let stale: Vec<String> = on_server
        .iter()
        .filter(|id| !wanted.contains(id.as_str()))
        .cloned()
        .collect();
    let batch = PUSH_BATCH.min(store.client().max_batch_size()?.max(1));
    let changing = !missing.is_empty() || !stale.is_empty();
    let mut sent = 0;
    let cut = |sent: usize, source: StoreError| StoreError::PushCut {
        sent,
        missing: missing.len(),
        cause: Box::new(source),
    };
    if changing {
        // Readers re-learn what the collection holds when its version changes: once
        // before the first change, once after the last.
        store.new_version().map_err(|e| cut(0, e))?;
    }
    let bar = progress_bar(progress, missing.len());
    // Adds first, deletes after: a push stopped midway leaves a superset of the index.
    for chunk in missing.chunks(batch) {
        let recs = Records {
            ids: chunk.iter().map(|r| r.id.clone()).collect(),
            embeddings: chunk.iter().map(|r| r.vector).collect(),
            documents: chunk.iter().map(|r| r.document).collect(),
            metadatas: chunk.iter().map(|r| r.metadata.clone()).collect(),
        };
        store
            .client()
            .add(store.id(), &recs)
            .map_err(|e| cut(sent, e))?;
        sent += chunk.len();
        if let Some(b) = &bar {
            b.inc(chunk.len() as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for chunk in stale.chunks(batch) {
        store
            .client()
            .delete(store.id(), chunk)
            .map_err(|e| cut(sent, e))?;
    }
    if changing {
        store.new_version().map_err(|e| cut(sent, e))?;
    }
    let after = store.bytes();
    Ok(PushReport {
        added: missing.len(),
        deleted: stale.len(),
        kept: records.len() - missing.len(),
        bytes_sent: after.0 - before.0,
        bytes_received: after.1 - before.1,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The index's records: its chunks (path and symbol as metadata) and its vocabulary
/// terms, each once.
fn records(index: &Index) -> Vec<Record<'_>> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(index.chunks.len() + index.vocab.terms.len());
    for (i, c) in index.chunks.iter().enumerate() {
        let id = hex(&iret_index::remote::chunk_key(index, i));
        if seen.insert(id.clone()) {
            out.push(Record {
                id,
                vector: index.vectors.get(i),
                document: &c.text,
                metadata: json!({
                    "kind": "chunk",
                    "path": index.files[c.file as usize].path,
                    "symbol": c.symbol,
                }),
            });
        }
    }
    let dims = index.vocab.dims;
    for (t, term) in index.vocab.terms.iter().enumerate() {
        let id = hex(&iret_index::cache::key(&index.manifest.model_id, term));
        if seen.insert(id.clone()) {
            out.push(Record {
                id,
                vector: &index.vocab.vectors[t * dims..(t + 1) * dims],
                document: term,
                metadata: json!({"kind": "term"}),
            });
        }
    }
    out
}

/// Every record id in the collection.
fn list_ids(store: &Store) -> Result<HashSet<String>, StoreError> {
    let mut ids = HashSet::new();
    let mut offset = 0;
    loop {
        let page = store
            .client()
            .get(store.id(), None, Some((LIST_PAGE, offset)), &[])?;
        let n = page.ids.len();
        ids.extend(page.ids);
        if n < LIST_PAGE {
            return Ok(ids);
        }
        offset += n;
    }
}

fn progress_bar(progress: bool, n: usize) -> Option<indicatif::ProgressBar> {
    if !progress || n == 0 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(n as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "pushing {bar:40} {pos}/{len} records ({per_sec}, eta {eta})",
        )
        .expect("valid template"),
    );
    Some(bar)
}
