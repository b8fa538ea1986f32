//! The embedding cache: vectors keyed by a hash of (model, text), shared by every index on
//! the machine. A checkout, worktree, clone or branch folder embeds only what no index has
//! embedded before; unchanged chunks are never embedded twice, across rebuilds, branch
//! switches and ranking experiments.
//!
//! [`EmbeddingCache`] is one build's view of it: the entries the build looked up or
//! embedded, in memory. [`db`] is the shared store behind it (SQLite, safe for several
//! processes, crash-safe, checksummed, least-recently-used pruning past a size cap);
//! [`legacy`] imports the per-index caches of earlier versions once.
pub(crate) mod db;
mod legacy;

use db::Db;
pub use db::{DbStats, DB_FILE};
use half::f16;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The cap on the shared cache's size when `IRET_EMBED_CACHE_MAX` does not set one: about
/// 2.6 million vectors of the shipped model.
pub const DEFAULT_CAP_BYTES: u64 = 2 << 30;

/// The shared cache's folder: `$IRET_EMBED_CACHE`, else `embeddings/` in the user's cache
/// folder, beside the compiled-in model (`$IRET_CACHE_DIR`, `$XDG_CACHE_HOME/iret` or
/// `~/.cache/iret`).
pub fn user_dir() -> PathBuf {
    match std::env::var_os("IRET_EMBED_CACHE") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => iret_embed::cache_dir().join("embeddings"),
    }
}

/// The size cap: `$IRET_EMBED_CACHE_MAX` (bytes, or with a K, M or G suffix), else
/// [`DEFAULT_CAP_BYTES`].
pub fn cap_bytes() -> u64 {
    std::env::var("IRET_EMBED_CACHE_MAX")
        .ok()
        .and_then(|s| parse_size(&s))
        .unwrap_or(DEFAULT_CAP_BYTES)
}

/// `"500M"` → 524288000; `"2G"`, `"64K"`, `"1000"`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, shift) = match s.chars().last()?.to_ascii_uppercase() {
        'K' => (&s[..s.len() - 1], 10),
        'M' => (&s[..s.len() - 1], 20),
        'G' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
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

pub struct EmbeddingCache {
    /// None when the store could not be opened or failed: the build goes on in memory.
    db: Option<Db>,
    entries: HashMap<[u8; 16], Box<[f16]>>,
    /// Embedded since the last checkpoint.
    pending: Vec<[u8; 16]>,
    cap: u64,
    notes: Vec<String>,
}

impl EmbeddingCache {
    /// Opens the shared cache in `dir`, first moving into it the per-index cache an earlier
    /// iret left in `index_dir`. When the store cannot be opened (a read-only folder, a
    /// full disk), the build goes on with a cache in memory and [`Self::notes`] says why.
    pub fn open(dir: &Path, index_dir: Option<&Path>) -> Self {
        let mut notes = Vec::new();
        let db = std::fs::create_dir_all(dir)
            .map_err(|e| e.to_string())
            .and_then(|()| Db::open(dir, &mut notes).map_err(|e| e.to_string()));
        let db = match db {
            Ok(db) => Some(db),
            Err(e) => {
                notes.push(format!(
                    "the embedding cache in {} is not available ({e}); embedding without it",
                    dir.display()
                ));
                None
            }
        };
        let mut cache = Self {
            db,
            entries: HashMap::new(),
            pending: Vec::new(),
            cap: cap_bytes(),
            notes,
        };
        if let Some(index_dir) = index_dir {
            cache.import_legacy(index_dir);
        }
        cache
    }

    /// Stores the entries of an earlier per-index cache, then removes its file.
    fn import_legacy(&mut self, index_dir: &Path) {
        let Some((entries, files)) = legacy::read(index_dir) else {
            return;
        };
        let Some(db) = &self.db else {
            self.entries.extend(entries);
            return;
        };
        let stored = db.put_many(entries.iter().map(|(k, v)| (k, &v[..])), db::now_secs());
        match stored {
            Ok(()) => {
                for f in files {
                    let _ = std::fs::remove_file(f);
                }
            }
            Err(e) => self.fail(e),
        }
    }

    /// The store failed: say so and go on in memory.
    fn fail(&mut self, e: rusqlite::Error) {
        if self.db.take().is_some() {
            self.notes.push(format!(
                "the embedding cache failed ({e}); going on without it{}",
                if db::is_damage(&e) {
                    " (it is rebuilt on the next run)"
                } else {
                    ""
                }
            ));
        }
    }

    /// Reads the entries of `keys` that the store holds into this build's view.
    pub fn load(&mut self, keys: &[[u8; 16]]) {
        let Some(db) = &self.db else {
            return;
        };
        let mut wanted: Vec<[u8; 16]> = keys
            .iter()
            .filter(|k| !self.entries.contains_key(*k))
            .copied()
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let entries = &mut self.entries;
        match db.get_many(&wanted, |k, v| {
            entries.insert(k, v);
        }) {
            Ok(0) => {}
            Ok(bad) => self.notes.push(format!(
                "{bad} damaged entries of the embedding cache were dropped (embedded again)"
            )),
            Err(e) => self.fail(e),
        }
    }

    /// Whether this build's view holds `k` (after [`Self::load`]).
    pub fn contains(&self, k: &[u8; 16]) -> bool {
        self.entries.contains_key(k)
    }

    /// Appends the vector of `k` to `out`; false when the view lacks it.
    pub fn extend_with(&self, k: &[u8; 16], out: &mut Vec<f32>) -> bool {
        let Some(v) = self.entries.get(k) else {
            return false;
        };
        out.extend(v.iter().map(|x| x.to_f32()));
        true
    }

    /// Holds `v` (as f16: what the index keeps) until the next checkpoint writes it.
    pub fn insert(&mut self, k: [u8; 16], v: &[f32]) {
        let v: Box<[f16]> = v.iter().map(|&x| f16::from_f32(x)).collect();
        if self.entries.insert(k, v).is_none() {
            self.pending.push(k);
        }
    }

    /// Entries in this build's view.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes what was embedded since the last checkpoint, in one transaction: a build
    /// that is stopped keeps it, and other processes can use it at once.
    pub fn checkpoint(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let Some(db) = &self.db else {
            return;
        };
        let entries = &self.entries;
        let rows = self.pending.iter().map(|k| (k, &entries[k][..]));
        match db.put_many(rows, db::now_secs()) {
            Ok(()) => self.pending.clear(),
            Err(e) => self.fail(e),
        }
    }

    /// Writes what is pending and lets go of the vectors this build's view holds: a build
    /// that reads each once (a tier completed block by block) holds no more than a block.
    /// Without a store they are dropped as well (a text met again is embedded again).
    pub fn release(&mut self) {
        self.checkpoint();
        if self.db.is_none() {
            self.pending.clear();
        }
        if self.pending.is_empty() {
            self.entries = HashMap::new();
        }
    }

    /// Writes what is pending, then prunes the least recently used entries past the cap.
    pub fn save(&mut self) {
        self.checkpoint();
        if let Some(db) = &self.db {
            if let Err(e) = db.prune(self.cap) {
                self.fail(e);
            }
        }
    }

    /// What went wrong with the store, for the build report (the build itself went on).
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }
}

/// What the shared cache in `dir` holds (None when there is none yet).
pub fn stats(dir: &Path) -> Result<Option<DbStats>, String> {
    if !dir.join(db::DB_FILE).exists() {
        return Ok(None);
    }
    let db = Db::open_at(&dir.join(db::DB_FILE)).map_err(|e| e.to_string())?;
    db.stats(cap_bytes()).map(Some).map_err(|e| e.to_string())
}

/// Checks every page and every entry of the shared cache in `dir`, changing nothing (the
/// next build rebuilds a damaged cache); returns the entries checked (0 when there is no
/// cache yet) or what is wrong.
pub fn verify(dir: &Path) -> Result<u64, String> {
    if !dir.join(db::DB_FILE).exists() {
        return Ok(0);
    }
    let db = Db::open_at(&dir.join(db::DB_FILE)).map_err(|e| e.to_string())?;
    db.verify()
}

/// Removes the shared cache in `dir`; returns the bytes its files held.
pub fn clear(dir: &Path) -> std::io::Result<u64> {
    let mut freed = 0;
    for name in [
        "embeddings.db",
        "embeddings.db-wal",
        "embeddings.db-shm",
        "embeddings.db.damaged",
    ] {
        let path = dir.join(name);
        match std::fs::metadata(&path) {
            Ok(m) => {
                std::fs::remove_file(&path)?;
                freed += m.len();
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(freed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &Path) -> EmbeddingCache {
        EmbeddingCache::open(dir, None)
    }

    #[test]
    fn entries_survive_a_save_and_an_open_rounded_to_f16() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = open(dir.path());
        let v = [0.1f32, -0.25, 0.333_333, 1.0];
        c.insert(key("m", "a"), &v);
        c.save();
        assert!(c.take_notes().is_empty());
        let mut again = open(dir.path());
        again.load(&[key("m", "a"), key("m", "b")]);
        assert_eq!(again.len(), 1);
        let mut out = Vec::new();
        assert!(again.extend_with(&key("m", "a"), &mut out));
        let mut rounded = v;
        crate::store::round_f16(&mut rounded);
        assert_eq!(out, rounded);
        assert!(!again.contains(&key("m", "b")));
        assert_eq!(stats(dir.path()).unwrap().unwrap().entries, 1);
        assert_eq!(verify(dir.path()), Ok(1));
    }

    #[test]
    fn a_per_index_cache_moves_into_the_shared_one() {
        let shared = tempfile::tempdir().unwrap();
        let index = tempfile::tempdir().unwrap();
        let mut old = b"IRETEMB2".to_vec();
        old.extend_from_slice(&key("m", "a"));
        old.extend_from_slice(&1u16.to_le_bytes());
        old.extend_from_slice(&f16::from_f32(0.5).to_le_bytes());
        std::fs::write(index.path().join(legacy::CACHE_FILE), &old).unwrap();
        drop(EmbeddingCache::open(shared.path(), Some(index.path())));
        assert!(!index.path().join(legacy::CACHE_FILE).exists());
        let mut c = open(shared.path());
        c.load(&[key("m", "a")]);
        let mut out = Vec::new();
        assert!(c.extend_with(&key("m", "a"), &mut out));
        assert_eq!(out, vec![0.5]);
    }

    #[test]
    fn a_damaged_file_is_set_aside_and_a_new_cache_started() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(db::DB_FILE), vec![7u8; 8192]).unwrap();
        let mut c = open(dir.path());
        let notes = c.take_notes();
        assert!(notes.iter().any(|n| n.contains("damaged")), "{notes:?}");
        c.insert(key("m", "a"), &[1.0]);
        c.save();
        assert!(c.take_notes().is_empty());
        assert_eq!(stats(dir.path()).unwrap().unwrap().entries, 1);
        assert!(dir.path().join("embeddings.db.damaged").exists());
    }

    #[test]
    fn a_row_that_fails_its_checksum_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = open(dir.path());
        c.insert(key("m", "a"), &[1.0, 2.0]);
        c.insert(key("m", "b"), &[3.0, 4.0]);
        c.save();
        drop(c);
        let conn = rusqlite::Connection::open(dir.path().join(db::DB_FILE)).unwrap();
        let bad = f16::from_f32(9.0).to_le_bytes().repeat(2);
        conn.execute(
            "UPDATE vectors SET vec = ?1 WHERE key = ?2",
            rusqlite::params![bad, &key("m", "a")[..]],
        )
        .unwrap();
        drop(conn);
        assert!(verify(dir.path()).unwrap_err().contains("1 of 2"));
        let mut again = open(dir.path());
        again.load(&[key("m", "a"), key("m", "b")]);
        assert!(!again.contains(&key("m", "a")));
        assert!(again.contains(&key("m", "b")));
        assert!(again.take_notes()[0].contains("1 damaged"));
        assert_eq!(stats(dir.path()).unwrap().unwrap().entries, 1);
    }

    #[test]
    fn past_the_cap_the_least_recently_used_go() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = open(dir.path());
        let v = vec![0.5f32; 384];
        let old: Vec<_> = (0..2000).map(|i| key("m", &format!("old {i}"))).collect();
        {
            let db = c.db.as_ref().unwrap();
            let rows: Vec<Box<[f16]>> = old
                .iter()
                .map(|_| v.iter().map(|&x| f16::from_f32(x)).collect())
                .collect();
            db.put_many(old.iter().zip(rows.iter().map(|r| &r[..])), 1)
                .unwrap();
        }
        for i in 0..2000 {
            c.insert(key("m", &format!("new {i}")), &v);
        }
        c.checkpoint();
        let full = stats(dir.path()).unwrap().unwrap();
        assert_eq!(full.entries, 4000);
        c.cap = full.bytes / 2;
        c.save();
        let after = stats(dir.path()).unwrap().unwrap();
        assert!(after.bytes <= full.bytes / 2, "{after:?} vs {full:?}");
        let mut again = open(dir.path());
        again.load(&old);
        assert!(again.is_empty(), "the old entries went first");
        let new: Vec<_> = (0..2000).map(|i| key("m", &format!("new {i}"))).collect();
        again.load(&new);
        assert!(again.len() > 1000, "{}", again.len());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("500M"), Some(500 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("lots"), None);
    }
}
