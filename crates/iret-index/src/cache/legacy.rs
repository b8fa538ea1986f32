//! The per-index caches of earlier versions (`.iret/embeddings.f16`, format 2, and
//! `.iret/embeddings.bin`, format 1), read once into the shared cache so that upgrading
//! iret embeds nothing again.
//!
//! Format 2: the magic `IRETEMB2`, then per entry a 16-byte key, the vector's length (u16)
//! and its values as little-endian f16. Format 1: bincode 1.3, f32.
use half::f16;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Format 2's file in the index folder.
pub const CACHE_FILE: &str = "embeddings.f16";
/// Format 1's file.
const LEGACY_FILE: &str = "embeddings.bin";
const MAGIC: &[u8; 8] = b"IRETEMB2";

/// Vectors by key, as a per-index cache held them.
pub(crate) type Entries = HashMap<[u8; 16], Box<[f16]>>;

/// The entries of the per-index caches in `index_dir` and the files they came from
/// (to remove once stored). An unreadable file gives no entries and is removed too: it
/// was only a cache.
pub(crate) fn read(index_dir: &Path) -> Option<(Entries, Vec<PathBuf>)> {
    let mut entries = HashMap::new();
    let mut files = Vec::new();
    for (name, decoder) in [
        (CACHE_FILE, decode as fn(&[u8]) -> Option<Entries>),
        (LEGACY_FILE, decode_legacy),
    ] {
        let path = index_dir.join(name);
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        entries.extend(decoder(&bytes).unwrap_or_default());
        files.push(path);
    }
    (!files.is_empty()).then_some((entries, files))
}

fn decode(bytes: &[u8]) -> Option<Entries> {
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
fn decode_legacy(bytes: &[u8]) -> Option<Entries> {
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
    use crate::cache::key;

    /// Format 2, as iret wrote it.
    fn encode(entries: &Entries) -> Vec<u8> {
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

    #[test]
    fn both_formats_are_read_and_a_truncated_file_gives_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut two = HashMap::new();
        two.insert(key("m", "b"), vec![f16::from_f32(0.25)].into_boxed_slice());
        std::fs::write(dir.path().join(CACHE_FILE), encode(&two)).unwrap();
        // What bincode 1.3 wrote for one entry of two values.
        let mut old = Vec::new();
        old.extend_from_slice(&1u64.to_le_bytes());
        old.extend_from_slice(&key("m", "a"));
        old.extend_from_slice(&2u64.to_le_bytes());
        old.extend_from_slice(&0.5f32.to_le_bytes());
        old.extend_from_slice(&(-0.75f32).to_le_bytes());
        std::fs::write(dir.path().join(LEGACY_FILE), &old).unwrap();
        let (entries, files) = read(dir.path()).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(entries.len(), 2);
        let a: Vec<f32> = entries[&key("m", "a")].iter().map(|x| x.to_f32()).collect();
        assert_eq!(a, vec![0.5, -0.75]);
        std::fs::remove_file(dir.path().join(CACHE_FILE)).unwrap();
        std::fs::write(dir.path().join(LEGACY_FILE), &old[..old.len() - 1]).unwrap();
        let (entries, files) = read(dir.path()).unwrap();
        assert!(entries.is_empty());
        assert_eq!(files.len(), 1);
        assert!(read(tempfile::tempdir().unwrap().path()).is_none());
    }
}
