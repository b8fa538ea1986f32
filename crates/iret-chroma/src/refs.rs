//! Which records each push needs: one manifest per ref (a checkout's branch, or the name
//! `--store-ref` gives), kept in a side collection `<collection>.refs`. A ref's manifest
//! is the record ids of its latest push, in pages of [`PAGE`] ids, tagged with that push's
//! generation. A push writes its new generation before it deletes the ref's older ones,
//! so a reader that takes every page it finds reads a superset of what every ref needs:
//! garbage collection ([`crate::gc`]) deletes only what no page names.
use crate::client::{Collection, Records};
use crate::{Store, StoreError};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};

/// Ids per manifest page (a page is one record whose document lists them, about 165 kB).
const PAGE: usize = 5000;
/// Pages per request, reading or writing.
const PAGES_PER_CALL: usize = 16;
/// The side collection's records need a vector: one dimension, always 1.
const UNIT: [f32; 1] = [1.0];
/// Tries at reading every ref while a push replaces a generation under the reader.
const READ_TRIES: usize = 20;

/// A ref's latest complete push, as its manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefInfo {
    pub name: String,
    /// Records it holds (chunks and vocabulary terms).
    pub records: usize,
    /// When it was pushed (seconds since the Unix epoch, the pusher's clock).
    pub pushed_at: u64,
    /// The HEAD commit pushed, if the checkout is in git.
    pub commit: Option<String>,
}

/// Every ref's manifest, read at once.
pub(crate) struct Manifests {
    /// Every id any page names: what must not be collected.
    pub needed: HashSet<String>,
    pub refs: Vec<RefInfo>,
}

/// The side collection holding the manifests (`create`: made when missing).
fn collection(store: &Store, create: bool) -> Result<Option<Collection>, StoreError> {
    let name = format!("{}.refs", store.name);
    match store.client().collection(&name)? {
        Some(c) => Ok(Some(c)),
        None if create => Ok(Some(
            store
                .client()
                .create(&name, json!({"iret_refs_of": store.name}))?,
        )),
        None => Ok(None),
    }
}

/// A new generation token: ordered by time (fixed-width hex), unique per process.
pub(crate) fn generation() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{nanos:024x}-{:08x}", std::process::id())
}

/// Records `ids` as what `ref_name` needs, as generation `generation`, then deletes the
/// ref's older generations (never a newer one: of two pushes of one ref at once, the
/// later generation stands). Whether the manifest changed: a ref whose latest complete
/// generation names the same ids (by digest) is left as it is.
pub(crate) fn write(
    store: &Store,
    ref_name: &str,
    generation: &str,
    ids: &[String],
    commit: Option<&str>,
) -> Result<bool, StoreError> {
    let side = collection(store, true)?.expect("created");
    let digest = digest(ids);
    let current =
        store
            .client()
            .get_where(&side.id, Some(json!({"ref": ref_name})), &["metadatas"])?;
    let current = metadatas(&current.metadatas, current.ids.len());
    if newest_complete(&current).is_some_and(|m| m["digest"] == json!(digest)) {
        return Ok(false);
    }
    let pushed_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let pages: Vec<String> = if ids.is_empty() {
        vec![String::new()]
    } else {
        ids.chunks(PAGE).map(|p| p.join("\n")).collect()
    };
    let n = pages.len();
    let metadata = |page: usize| {
        let mut m = json!({
            "ref": ref_name,
            "generation": generation,
            "page": page,
            "pages": n,
            "records": ids.len(),
            "pushed_at": pushed_at,
            "digest": digest,
        });
        if let Some(c) = commit {
            m["commit"] = json!(c);
        }
        m
    };
    for (start, batch) in pages.chunks(PAGES_PER_CALL).enumerate() {
        let first = start * PAGES_PER_CALL;
        let records = Records {
            ids: (first..first + batch.len())
                .map(|p| format!("{generation}/{p}/{ref_name}"))
                .collect(),
            embeddings: batch.iter().map(|_| &UNIT[..]).collect(),
            documents: batch.iter().map(String::as_str).collect(),
            metadatas: (first..first + batch.len()).map(metadata).collect(),
        };
        store.client().upsert(&side.id, &records)?;
    }
    let mine =
        store
            .client()
            .get_where(&side.id, Some(json!({"ref": ref_name})), &["metadatas"])?;
    let older: Vec<String> = mine
        .ids
        .iter()
        .zip(metadatas(&mine.metadatas, mine.ids.len()))
        .filter(|(_, m)| text(m, "generation").as_str() < generation)
        .map(|(id, _)| id.clone())
        .collect();
    if !older.is_empty() {
        store.client().delete(&side.id, &older)?;
    }
    Ok(true)
}

/// What a set of ids is, in 32 hex digits (their order does not count).
fn digest(ids: &[String]) -> String {
    let mut sorted: Vec<&String> = ids.iter().collect();
    sorted.sort_unstable();
    let mut h = blake3::Hasher::new();
    for id in sorted {
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    h.finalize().to_hex()[..32].to_string()
}

/// The metadata of one page of the newest generation that has all its pages.
fn newest_complete(metas: &[Value]) -> Option<&Value> {
    let mut gens: BTreeMap<&str, (u64, &Value)> = BTreeMap::new();
    for m in metas {
        gens.entry(m["generation"].as_str().unwrap_or_default())
            .or_insert((0, m))
            .0 += 1;
    }
    gens.into_values()
        .rev()
        .find(|(seen, m)| *seen == m["pages"].as_u64().unwrap_or(0))
        .map(|(_, m)| m)
}

/// Every ref's manifest; `None` for a collection no push has recorded one in (made by
/// an older iret). A page that vanishes between listing and reading (a push replacing
/// its generation) makes the read start again, so the ids returned include every page
/// of one moment.
pub(crate) fn read(store: &Store) -> Result<Option<Manifests>, StoreError> {
    let Some(side) = collection(store, false)? else {
        return Ok(None);
    };
    for _ in 0..READ_TRIES {
        let listed = store.client().get_where(&side.id, None, &["metadatas"])?;
        let metas = metadatas(&listed.metadatas, listed.ids.len());
        let mut needed = HashSet::new();
        let mut complete = true;
        for batch in listed.ids.chunks(PAGES_PER_CALL) {
            let got = store
                .client()
                .get(&side.id, Some(batch), None, &["documents"])?;
            if got.ids.len() != batch.len() {
                complete = false;
                break;
            }
            for doc in got.documents.unwrap_or_default().into_iter().flatten() {
                needed.extend(doc.lines().filter(|l| !l.is_empty()).map(str::to_string));
            }
        }
        if complete {
            return Ok(Some(Manifests {
                needed,
                refs: latest(&metas),
            }));
        }
    }
    Err(StoreError::Protocol(format!(
        "the manifests of {} kept changing while being read ({READ_TRIES} tries)",
        store.name
    )))
}

/// Each ref's latest complete push, from the pages' metadata alone (no ids read); empty
/// for a collection no push has recorded one in.
pub(crate) fn list(store: &Store) -> Result<Vec<RefInfo>, StoreError> {
    let Some(side) = collection(store, false)? else {
        return Ok(Vec::new());
    };
    let listed = store.client().get_where(&side.id, None, &["metadatas"])?;
    Ok(latest(&metadatas(&listed.metadatas, listed.ids.len())))
}

/// Each ref's newest generation with all its pages.
fn latest(metas: &[Value]) -> Vec<RefInfo> {
    let mut by_ref: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for m in metas {
        by_ref.entry(text(m, "ref")).or_default().push(m.clone());
    }
    by_ref
        .into_iter()
        .filter_map(|(name, pages)| {
            let m = newest_complete(&pages)?;
            Some(RefInfo {
                name,
                records: m["records"].as_u64().unwrap_or(0) as usize,
                pushed_at: m["pushed_at"].as_u64().unwrap_or(0),
                commit: m["commit"].as_str().map(str::to_string),
            })
        })
        .collect()
}

/// Deletes every page of `ref_name`; whether there were any.
pub(crate) fn forget(store: &Store, ref_name: &str) -> Result<bool, StoreError> {
    let Some(side) = collection(store, false)? else {
        return Ok(false);
    };
    let pages = store
        .client()
        .get_where(&side.id, Some(json!({"ref": ref_name})), &[])?;
    if pages.ids.is_empty() {
        return Ok(false);
    }
    store.client().delete(&side.id, &pages.ids)?;
    Ok(true)
}

fn metadatas(m: &Option<Vec<Option<serde_json::Map<String, Value>>>>, n: usize) -> Vec<Value> {
    let mut out: Vec<Value> = m
        .iter()
        .flatten()
        .map(|m| Value::Object(m.clone().unwrap_or_default()))
        .collect();
    out.resize(n, Value::Null);
    out
}

fn text(m: &Value, key: &str) -> String {
    m[key].as_str().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ref_is_its_newest_complete_generation() {
        let page = |gen: &str, page: u64, pages: u64, records: u64| json!({"ref": "main", "generation": gen, "page": page, "pages": pages, "records": records, "pushed_at": 5});
        // Generation b has one of its two pages so far: a is the ref's latest complete push.
        let metas = vec![page("a", 0, 1, 10), page("b", 0, 2, 7000)];
        assert_eq!(latest(&metas)[0].records, 10);
        let metas = vec![
            page("a", 0, 1, 10),
            page("b", 0, 2, 7000),
            page("b", 1, 2, 7000),
        ];
        assert_eq!(latest(&metas)[0].records, 7000);
        assert!(
            generation() < {
                std::thread::sleep(std::time::Duration::from_millis(2));
                generation()
            }
        );
    }
}
