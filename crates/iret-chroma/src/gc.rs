//! `iret store gc` (and the end of every push): deletes the records no ref's manifest
//! names, under the collection's lock.
//!
//! Safe against a concurrent push: a push writes its manifest before it looks at what
//! the collection holds, and checks that every record it needs is there under the same
//! lock, once its records are sent. So a collection that read the manifests before the
//! push wrote its own (and deleted a record the push had found) ran before the push's
//! check, which sends the record again; one that ran later read the push's manifest.
use crate::lock::Lock;
use crate::{refs, Store, StoreError};
use std::collections::HashSet;
use std::time::Duration;

/// How long a collection waits for another push's check or collection to end.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(300);
/// Ids per delete request.
const DELETE_BATCH: usize = 1000;

/// What a collection did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Records deleted: no ref needs them.
    pub deleted: usize,
    /// Records kept.
    pub kept: usize,
    /// Refs whose manifests were read.
    pub refs: usize,
}

/// Collects the collection's garbage, taking its lock.
pub fn gc(store: &Store) -> Result<GcReport, StoreError> {
    let _lock = Lock::take(store.client(), &store.name, LOCK_WAIT)?;
    collect(store)
}

/// Collects, the lock held by the caller. A collection no push has recorded a manifest
/// in (made by an older iret) is left as it is: nothing says what is garbage.
pub(crate) fn collect(store: &Store) -> Result<GcReport, StoreError> {
    // The ids first, the manifests after: a record added after the listing is not
    // looked at, one added before it was named by a manifest written before it.
    let ids = store.ids()?;
    let Some(manifests) = refs::read(store)? else {
        return Ok(GcReport {
            deleted: 0,
            kept: ids.len(),
            refs: 0,
        });
    };
    let stale: Vec<String> = ids.difference(&manifests.needed).cloned().collect();
    test_pause();
    delete(store, &stale)?;
    Ok(GcReport {
        deleted: stale.len(),
        kept: ids.len() - stale.len(),
        refs: manifests.refs.len(),
    })
}

/// A test hook: `IRET_TEST_GC_PAUSE_MS` holds a collection between deciding and deleting,
/// the window a slow network opens, so that a test can push into it for certain.
fn test_pause() {
    let Some(ms) = std::env::var("IRET_TEST_GC_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    eprintln!("iret: test hook: collection paused for {ms} ms");
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

/// Deletes `ids`, the collection's version changed before and after.
fn delete(store: &Store, ids: &[String]) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    store.new_version()?;
    for batch in ids.chunks(DELETE_BATCH) {
        store.client().delete(store.id(), batch)?;
    }
    store.new_version()
}

/// Forgets `ref_name`'s manifest and collects what only it needed.
pub fn forget(store: &Store, ref_name: &str) -> Result<Option<GcReport>, StoreError> {
    let _lock = Lock::take(store.client(), &store.name, LOCK_WAIT)?;
    if !refs::forget(store, ref_name)? {
        return Ok(None);
    }
    collect(store).map(Some)
}

/// Ids of `needed` the collection lacks.
pub(crate) fn lacking(store: &Store, needed: &[[u8; 16]]) -> Result<HashSet<usize>, StoreError> {
    Ok(store
        .holding(needed)?
        .into_iter()
        .enumerate()
        .filter(|(_, held)| !held)
        .map(|(i, _)| i)
        .collect())
}
