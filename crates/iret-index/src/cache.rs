//! Embedding cache keyed by a hash of (model, text): unchanged chunks are never embedded
//! twice, across rebuilds, branch switches and ranking experiments.
use crate::store::{load_bin, write_atomic, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Entries kept beyond the ones the current index uses (old branches, old variants).
const SPARE_ENTRIES: usize = 100_000;

#[derive(Default, Serialize, Deserialize)]
struct Stored {
    entries: HashMap<[u8; 16], Vec<f32>>,
}

pub struct EmbeddingCache {
    path: PathBuf,
    stored: Stored,
    used: std::collections::HashSet<[u8; 16]>,
}

pub fn key(model_id: &str, text: &str) -> [u8; 16] {
    let mut h = blake3::Hasher::new();
    h.update(model_id.as_bytes());
    h.update(&[0]);
    h.update(text.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&h.finalize().as_bytes()[..16]);
    k
}

impl EmbeddingCache {
    /// Opens the cache at `path`; a missing or unreadable cache starts empty.
    pub fn open(path: &Path) -> Self {
        let stored = load_bin(path).unwrap_or_default();
        Self {
            path: path.to_path_buf(),
            stored,
            used: Default::default(),
        }
    }

    pub fn get(&mut self, k: &[u8; 16]) -> Option<&Vec<f32>> {
        let v = self.stored.entries.get(k)?;
        self.used.insert(*k);
        Some(v)
    }

    pub fn insert(&mut self, k: [u8; 16], v: Vec<f32>) {
        self.used.insert(k);
        self.stored.entries.insert(k, v);
    }

    /// Keeps these entries when pruning (texts the index still uses).
    pub fn mark_used(&mut self, keys: impl IntoIterator<Item = [u8; 16]>) {
        self.used.extend(keys);
    }

    pub fn len(&self) -> usize {
        self.stored.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stored.entries.is_empty()
    }

    /// Writes the entries as they are (no pruning), atomically, so a build that is
    /// stopped keeps what it embedded so far.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let bytes = bincode::serialize(&self.stored).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        write_atomic(&self.path, &bytes)
    }

    /// Saves atomically, dropping unused entries beyond the spare allowance.
    pub fn save(&mut self) -> Result<(), StoreError> {
        if self.stored.entries.len() > self.used.len() + SPARE_ENTRIES {
            let used = &self.used;
            let mut spare = SPARE_ENTRIES;
            self.stored.entries.retain(|k, _| {
                if used.contains(k) {
                    return true;
                }
                if spare > 0 {
                    spare -= 1;
                    return true;
                }
                false
            });
        }
        let bytes = bincode::serialize(&self.stored).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            reason: e.to_string(),
        })?;
        write_atomic(&self.path, &bytes)
    }
}
