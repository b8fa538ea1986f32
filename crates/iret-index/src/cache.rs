//! Embedding cache keyed by a hash of (model, text): unchanged chunks are never embedded
//! twice, across rebuilds, branch switches and ranking experiments.
//!
//! On disk (`embeddings.f16`): the magic `IRETEMB2`, then per entry a 16-byte key, the
//! vector's length (u16) and its values as little-endian f16. The cache of format 1
//! (`embeddings.bin`, bincode 1.3, f32) is read once and converted, so upgrading iret does
//! not embed anything again.
use crate::store::{write_atomic, StoreError};
use half::f16;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Entries kept beyond the ones the current index uses (old branches, old variants).
const SPARE_ENTRIES: usize = 100_000;
/// The cache's file in the index folder.
pub const CACHE_FILE: &str = "embeddings.f16";
/// Format 1's cache, converted when found.
const LEGACY_FILE: &str = "embeddings.bin";
const MAGIC: &[u8; 8] = b"IRETEMB2";

pub struct EmbeddingCache {
    path: PathBuf,
    entries: HashMap<[u8; 16], Box<[f16]>>,
    used: HashSet<[u8; 16]>,
    /// A format-1 cache this one was converted from (removed once the new one is saved).
    legacy: Option<PathBuf>,
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
    /// Opens the cache of the index folder `dir`; a missing or unreadable cache starts
    /// empty (an unreadable one is only a loss of time: its texts are embedded again).
    pub fn open_in(dir: &Path) -> Self {
        let path = dir.join(CACHE_FILE);
        let legacy_path = dir.join(LEGACY_FILE);
        let (entries, legacy) = match std::fs::read(&path) {
            Ok(bytes) => (decode(&bytes).unwrap_or_default(), None),
            Err(_) => match std::fs::read(&legacy_path) {
                Ok(bytes) => (decode_legacy(&bytes).unwrap_or_default(), Some(legacy_path)),
                Err(_) => (HashMap::new(), None),
            },
        };
        Self {
            path,
            entries,
            used: HashSet::new(),
            legacy,
        }
    }

    /// Whether the cache holds `k` (and marks it used).
    pub fn contains(&mut self, k: &[u8; 16]) -> bool {
        let hit = self.entries.contains_key(k);
        if hit {
            self.used.insert(*k);
        }
        hit
    }

    /// Appends the vector of `k` to `out`; false when the cache lacks it.
    pub fn extend_with(&mut self, k: &[u8; 16], out: &mut Vec<f32>) -> bool {
        let Some(v) = self.entries.get(k) else {
            return false;
        };
        self.used.insert(*k);
        out.extend(v.iter().map(|x| x.to_f32()));
        true
    }

    /// Stores `v` (as f16: what the index keeps).
    pub fn insert(&mut self, k: [u8; 16], v: &[f32]) {
        self.used.insert(k);
        self.entries
            .insert(k, v.iter().map(|&x| f16::from_f32(x)).collect());
    }

    /// Keeps these entries when pruning (texts the index still uses).
    pub fn mark_used(&mut self, keys: impl IntoIterator<Item = [u8; 16]>) {
        self.used.extend(keys);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the entries as they are (no pruning), atomically, so a build that is
    /// stopped keeps what it embedded so far.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        write_atomic(&self.path, &encode(&self.entries))?;
        if let Some(old) = self.legacy.take() {
            let _ = std::fs::remove_file(old);
        }
        Ok(())
    }

    /// Saves atomically, dropping unused entries beyond the spare allowance.
    pub fn save(&mut self) -> Result<(), StoreError> {
        if self.entries.len() > self.used.len() + SPARE_ENTRIES {
            let used = &self.used;
            let mut spare = SPARE_ENTRIES;
            self.entries.retain(|k, _| {
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
        self.checkpoint()
    }
}

fn encode(entries: &HashMap<[u8; 16], Box<[f16]>>) -> Vec<u8> {
    let per = entries.values().next().map_or(0, |v| v.len());
    let mut out = Vec::with_capacity(MAGIC.len() + entries.len() * (18 + 2 * per));
    out.extend_from_slice(MAGIC);
    for (k, v) in entries {
        out.extend_from_slice(k);
        out.extend_from_slice(&(v.len() as u16).to_le_bytes());
        for x in v.iter() {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out
}

fn decode(bytes: &[u8]) -> Option<HashMap<[u8; 16], Box<[f16]>>> {
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let mut entries = HashMap::new();
    while !rest.is_empty() {
        let (k, r) = rest.split_first_chunk::<16>()?;
        let (len, r) = r.split_first_chunk::<2>()?;
        let len = u16::from_le_bytes(*len) as usize;
        let values = r.get(..2 * len)?;
        let v: Box<[f16]> = values
            .chunks_exact(2)
            .map(|b| f16::from_le_bytes([b[0], b[1]]))
            .collect();
        entries.insert(*k, v);
        rest = &r[2 * len..];
    }
    Some(entries)
}

/// Format 1's cache: bincode 1.3's fixed-width little-endian encoding of
/// `HashMap<[u8; 16], Vec<f32>>` (a u64 count, then per entry the key, a u64 length and
/// the f32 values), read by hand so that no bincode is needed to upgrade.
fn decode_legacy(bytes: &[u8]) -> Option<HashMap<[u8; 16], Box<[f16]>>> {
    let (count, mut rest) = bytes.split_first_chunk::<8>()?;
    let count = u64::from_le_bytes(*count) as usize;
    let mut entries = HashMap::with_capacity(count.min(rest.len() / 24));
    for _ in 0..count {
        let (k, r) = rest.split_first_chunk::<16>()?;
        let (len, r) = r.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        let values = r.get(..len.checked_mul(4)?)?;
        let v: Box<[f16]> = values
            .chunks_exact(4)
            .map(|b| f16::from_f32(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect();
        entries.insert(*k, v);
        rest = &r[4 * len..];
    }
    rest.is_empty().then_some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_a_save_and_an_open_rounded_to_f16() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = EmbeddingCache::open_in(dir.path());
        let v = [0.1f32, -0.25, 0.333_333, 1.0];
        c.insert(key("m", "a"), &v);
        c.save().unwrap();
        let mut again = EmbeddingCache::open_in(dir.path());
        assert_eq!(again.len(), 1);
        let mut out = Vec::new();
        assert!(again.extend_with(&key("m", "a"), &mut out));
        let mut rounded = v;
        crate::store::round_f16(&mut rounded);
        assert_eq!(out, rounded);
        assert!(!again.contains(&key("m", "b")));
    }

    #[test]
    fn a_format_1_cache_is_converted_then_removed() {
        let dir = tempfile::tempdir().unwrap();
        // What bincode 1.3 wrote for one entry of two values.
        let mut old = Vec::new();
        old.extend_from_slice(&1u64.to_le_bytes());
        old.extend_from_slice(&key("m", "a"));
        old.extend_from_slice(&2u64.to_le_bytes());
        old.extend_from_slice(&0.5f32.to_le_bytes());
        old.extend_from_slice(&(-0.75f32).to_le_bytes());
        std::fs::write(dir.path().join(LEGACY_FILE), &old).unwrap();
        let mut c = EmbeddingCache::open_in(dir.path());
        let mut out = Vec::new();
        assert!(c.extend_with(&key("m", "a"), &mut out));
        assert_eq!(out, vec![0.5, -0.75]);
        c.save().unwrap();
        assert!(!dir.path().join(LEGACY_FILE).exists());
        assert_eq!(EmbeddingCache::open_in(dir.path()).len(), 1);
        // A truncated legacy file is not half-read.
        std::fs::remove_file(dir.path().join(CACHE_FILE)).unwrap();
        std::fs::write(dir.path().join(LEGACY_FILE), &old[..old.len() - 1]).unwrap();
        assert!(EmbeddingCache::open_in(dir.path()).is_empty());
    }

    #[test]
    fn a_corrupt_cache_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CACHE_FILE), b"IRETEMB2\x01\x02").unwrap();
        assert!(EmbeddingCache::open_in(dir.path()).is_empty());
    }
}
