//! `iret index --store`: the collection made to hold what the live index holds, under
//! the checkout's ref (its branch): the ref's manifest names the index's records
//! ([`crate::refs`]), the records the collection lacks are sent, then, under the
//! collection's lock, every record the ref needs is checked (one a concurrent collection
//! took is sent again) and what no ref needs any more is collected ([`crate::gc`]). A push
//! never deletes what another ref's push needs. The server's records are the push's
//! progress: a push killed midway leaves the batches it sent, and the next push sends
//! the rest.
use crate::client::Records;
use crate::lock::Lock;
use crate::{gc, hex, refs, Store, StoreError};
use iret_index::Index;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Instant;

/// Records per add request (bounded by the server's own limit too).
const PUSH_BATCH: usize = 256;

/// What a push did.
#[derive(Debug, Clone, Default)]
pub struct PushReport {
    /// The ref pushed.
    pub ref_name: String,
    /// Records sent (chunks and vocabulary terms).
    pub added: usize,
    /// Records sent again: a concurrent collection had deleted them.
    pub resent: usize,
    /// Records collected: no ref needs them any more.
    pub deleted: usize,
    /// Records the store already held.
    pub kept: usize,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub seconds: f64,
}

impl PushReport {
    pub fn summary(&self, store: &Store) -> String {
        let resent = if self.resent > 0 {
            format!(
                " ({} sent again after a concurrent collection)",
                self.resent
            )
        } else {
            String::new()
        };
        format!(
            "pushed ref {} to {}: {} records added{resent}, {} already there, {} deleted (needed by no ref), in {:.1}s ({:.1} MB sent, {:.1} MB received)",
            self.ref_name,
            store.url(),
            self.added,
            self.kept,
            self.deleted,
            self.seconds,
            self.bytes_sent as f64 / 1e6,
            self.bytes_received as f64 / 1e6
        )
    }
}

/// One record to push.
struct Record<'a> {
    id: String,
    key: [u8; 16],
    vector: std::borrow::Cow<'a, [f32]>,
    document: &'a str,
    metadata: Value,
}

/// [`push`] for the live index in `index_dir`, made by `model_id`.
pub fn push_index(
    store: &Store,
    index_dir: &std::path::Path,
    model_id: &str,
    ref_name: &str,
    commit: Option<&str>,
    progress: bool,
) -> Result<PushReport, StoreError> {
    let index = crate::open_index(index_dir, Some(model_id))?;
    push(store, &index, ref_name, commit, progress)
}

/// Makes the collection hold the index's records as `ref_name`'s (`commit`: its HEAD).
pub fn push(
    store: &Store,
    index: &Index,
    ref_name: &str,
    commit: Option<&str>,
    progress: bool,
) -> Result<PushReport, StoreError> {
    let started = Instant::now();
    let before = store.bytes();
    check_index(store, index)?;
    if store.is_format_1() {
        // Its metadata says format 2 from here on (a new version writes the identity).
        store.new_version()?;
    }
    let records = records(index);
    let ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
    let version = store.version()?;
    // The manifest first: from here on a collection keeps what this push needs.
    let changed = refs::write(store, ref_name, &refs::generation(), &ids, commit)?;
    let on_server = store.ids()?;
    let missing: Vec<&Record> = records
        .iter()
        .filter(|r| !on_server.contains(&r.id))
        .collect();
    let batch = PUSH_BATCH.min(store.client().max_batch_size()?.max(1));
    send(store, &missing, batch, progress)?;
    let mut again = Vec::new();
    let mut collected = gc::GcReport::default();
    // Nothing sent, the same manifest, and no record changed since before the listing
    // (every change gives the collection a new version): there is nothing to check.
    let settled = missing.is_empty() && !changed && store.version()? == version;
    if !settled {
        // Under the lock: nothing collects while the ref's records are checked.
        let _lock = Lock::take(store.client(), &store.name, gc::LOCK_WAIT)?;
        let keys: Vec<[u8; 16]> = records.iter().map(|r| r.key).collect();
        let lacking = gc::lacking(store, &keys)?;
        again = records
            .iter()
            .enumerate()
            .filter(|(i, _)| lacking.contains(i))
            .map(|(_, r)| r)
            .collect();
        send(store, &again, batch, false)?;
        // Only a ref whose manifest changed leaves records nobody needs.
        if changed {
            collected = gc::collect(store)?;
        }
    }
    let after = store.bytes();
    Ok(PushReport {
        ref_name: ref_name.to_string(),
        added: missing.len(),
        resent: again.len(),
        deleted: collected.deleted,
        kept: records.len() - missing.len(),
        bytes_sent: after.0 - before.0,
        bytes_received: after.1 - before.1,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A store takes only a complete index of its own model.
fn check_index(store: &Store, index: &Index) -> Result<(), StoreError> {
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
    Ok(())
}

/// Adds `records` in batches, the collection's version changed before the first and
/// after the last; a failure says how far it got.
fn send(
    store: &Store,
    records: &[&Record],
    batch: usize,
    progress: bool,
) -> Result<(), StoreError> {
    if records.is_empty() {
        return Ok(());
    }
    let mut sent = 0;
    let cut = |sent: usize, source: StoreError| StoreError::PushCut {
        sent,
        missing: records.len(),
        cause: Box::new(source),
    };
    // Readers re-learn what the collection holds when its version changes.
    store.new_version().map_err(|e| cut(0, e))?;
    let bar = progress_bar(progress, records.len());
    for chunk in records.chunks(batch) {
        let recs = Records {
            ids: chunk.iter().map(|r| r.id.clone()).collect(),
            embeddings: chunk.iter().map(|r| r.vector.as_ref()).collect(),
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
    store.new_version().map_err(|e| cut(sent, e))
}

/// The index's records: its chunks (path and symbol as metadata) and its vocabulary
/// terms, each once.
fn records(index: &Index) -> Vec<Record<'_>> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(index.chunks.len() + index.vocab.terms.len());
    for (i, c) in index.chunks.iter().enumerate() {
        let key = iret_index::remote::chunk_key(index, i);
        let id = hex(&key);
        if seen.insert(id.clone()) {
            out.push(Record {
                id,
                key,
                vector: index.vectors.row(i).into(),
                document: c.text,
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
        let key = iret_index::cache::key(&index.manifest.model_id, term);
        let id = hex(&key);
        if seen.insert(id.clone()) {
            out.push(Record {
                id,
                key,
                vector: index.vocab.vectors[t * dims..(t + 1) * dims].into(),
                document: term,
                metadata: json!({"kind": "term"}),
            });
        }
    }
    out
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
