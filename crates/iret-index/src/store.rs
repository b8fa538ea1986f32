//! On-disk layout of `.iret/` with atomic generations and a lock file.
//!
//! ```text
//! .iret/lock              held (advisory) by the one indexer that writes
//! .iret/CURRENT           name of the live generation, replaced by rename
//! .iret/gen-000007/       one complete index: manifest.json, files/chunks/vectors/…
//! ```
//! Embeddings are cached once per machine, outside the index (see [`crate::cache`]).
//! Small tables are postcard, read whole; the large ones are laid out to be mapped
//! ([`crate::chunks`], [`crate::bm25`], [`crate::vectors`]).
//! A writer fills `tmp-*/`, renames it to the next `gen-*`, then swaps CURRENT. A crash
//! at any point leaves the previous generation live; readers never see a partial one.
use serde::{de::DeserializeOwned, Serialize};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// How long the generation before the live one is kept once it has been replaced: a
/// reader that read `CURRENT` just before the swap may still be opening it (a reader that
/// has opened it maps its files, which stay readable after they are deleted).
const SUPERSEDED_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

/// Bumped whenever any stored structure changes shape. 1: bincode tables, f32 vectors
/// held three times; 2: postcard tables, f16 vectors held once (plus the cache); 3: the
/// large tables laid out to be memory-mapped (chunk records with offsets, the keyword
/// index as a term dictionary and flat postings, the graph as adjacency tables); 4: each
/// file's imports stored with it.
pub const FORMAT_VERSION: u32 = 4;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no index at {0}: run `iret index` first")]
    Missing(PathBuf),
    #[error("the index at {path} is unreadable ({reason}); run `iret index` to rebuild it")]
    Corrupt { path: PathBuf, reason: String },
    #[error(
        "the index at {path} cannot be used by this iret ({reason}); run `iret index` to \
         rebuild it (embeddings already computed are kept)"
    )]
    Outdated { path: PathBuf, reason: String },
    #[error("another `iret index` is writing {0}; try again when it finishes")]
    Locked(PathBuf),
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub struct IndexDir {
    pub dir: PathBuf,
}

/// Holds the writer lock until dropped.
pub struct WriteLock {
    _file: File,
}

impl IndexDir {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Creates the folder, with a `.gitignore` that ignores all of it: an index is never
    /// part of the repository it indexes, without the user having to say so (as build
    /// tools do with their own folders).
    fn ensure(&self) -> Result<(), StoreError> {
        std::fs::create_dir_all(&self.dir).map_err(io_err(&self.dir))?;
        let ignore = self.dir.join(".gitignore");
        if !ignore.exists() {
            write_atomic(
                &ignore,
                b"# written by iret: its index is not part of the repository\n*\n",
            )?;
        }
        Ok(())
    }

    /// Takes the writer lock without waiting.
    pub fn lock(&self) -> Result<WriteLock, StoreError> {
        self.ensure()?;
        let path = self.dir.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(WriteLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Locked(self.dir.clone())),
            Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Io { path, source: e }),
        }
    }

    /// The live generation's folder.
    pub fn current(&self) -> Result<PathBuf, StoreError> {
        let pointer = self.dir.join("CURRENT");
        let name = match std::fs::read_to_string(&pointer) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Missing(self.dir.clone()))
            }
            Err(e) => {
                return Err(StoreError::Io {
                    path: pointer,
                    source: e,
                })
            }
        };
        let name = name.trim();
        if !name.starts_with("gen-") || name.contains('/') {
            return Err(StoreError::Corrupt {
                path: pointer,
                reason: "CURRENT names no generation".into(),
            });
        }
        let gen = self.dir.join(name);
        if !gen.is_dir() {
            return Err(StoreError::Corrupt {
                path: gen,
                reason: "the live generation is missing".into(),
            });
        }
        Ok(gen)
    }

    /// A fresh temporary folder to write the next generation into.
    pub fn begin(&self) -> Result<tempfile::TempDir, StoreError> {
        self.ensure()?;
        tempfile::Builder::new()
            .prefix("tmp-")
            .tempdir_in(&self.dir)
            .map_err(io_err(&self.dir))
    }

    /// Publishes a fully written temporary folder as the live generation.
    pub fn commit(&self, tmp: tempfile::TempDir) -> Result<PathBuf, StoreError> {
        let next = self.next_generation();
        let target = self.dir.join(format!("gen-{next:06}"));
        let tmp_path = tmp.keep();
        sync_dir(&tmp_path);
        std::fs::rename(&tmp_path, &target).map_err(io_err(&target))?;
        write_atomic(
            &self.dir.join("CURRENT"),
            format!("gen-{next:06}\n").as_bytes(),
        )?;
        self.prune_generations();
        self.prune_leftovers();
        Ok(target)
    }

    fn generations(&self) -> Vec<u64> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut gens: Vec<u64> = rd
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("gen-")?
                    .parse()
                    .ok()
            })
            .collect();
        gens.sort_unstable();
        gens
    }

    fn next_generation(&self) -> u64 {
        self.generations().last().map_or(1, |g| g + 1)
    }

    /// Removes the generations no reader can need: every one older than the one before
    /// the live one, and that one too once it was replaced more than [`SUPERSEDED_GRACE`]
    /// ago (`CURRENT`'s modification time), so an index at rest holds one generation.
    /// Safe without the writer lock: it never touches the live generation or one replaced
    /// recently, and nothing else writes older ones. Writers call it on commit and on a
    /// no-change refresh, readers when they open the index.
    pub fn prune_generations(&self) {
        let pointer = self.dir.join("CURRENT");
        let Some(live) = std::fs::read_to_string(&pointer).ok().and_then(|n| {
            n.trim()
                .strip_prefix("gen-")
                .and_then(|g| g.parse::<u64>().ok())
        }) else {
            return;
        };
        let replaced_long_ago = std::fs::metadata(&pointer)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|d| d > SUPERSEDED_GRACE));
        for g in self.generations() {
            if g + 1 < live || (g < live && replaced_long_ago) {
                let _ = std::fs::remove_dir_all(self.dir.join(format!("gen-{g:06}")));
            }
        }
    }

    /// Removes leftovers of interrupted writers (with the writer lock held).
    fn prune_leftovers(&self) {
        if let Ok(rd) = std::fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let stale = e
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with("tmp-"));
                if stale
                    && e.metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t.elapsed().is_ok_and(|d| d.as_secs() > 3600))
                {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io_err(dir))?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    tmp.as_file().sync_all().map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| StoreError::Io {
        path: path.to_path_buf(),
        source: e.error,
    })?;
    Ok(())
}

fn sync_dir(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if let Ok(f) = File::open(e.path()) {
                let _ = f.sync_all();
            }
        }
    }
}

pub(crate) fn corrupt(path: &Path, reason: impl ToString) -> StoreError {
    StoreError::Corrupt {
        path: path.into(),
        reason: reason.to_string(),
    }
}

pub(crate) fn save_bin<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let file = File::create(path).map_err(io_err(path))?;
    let mut w = BufWriter::new(file);
    postcard::to_io(value, &mut w).map_err(|e| corrupt(path, e))?;
    w.flush().map_err(io_err(path))
}

pub(crate) fn load_bin<T: DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| corrupt(path, e))?;
    postcard::from_bytes(&bytes).map_err(|e| corrupt(path, e))
}

/// Vectors as little-endian f16: half the bytes of f32, and the precision an embedding
/// keeps (the embedding cache stores every new embedding as f16 and the build takes the
/// vectors from it, so a vector is the same just embedded, cached or loaded).
pub(crate) fn f16_bytes(values: &[f32]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(values.len() * 2);
    for v in values {
        bytes.extend_from_slice(&half::f16::from_f32(*v).to_le_bytes());
    }
    bytes
}

pub(crate) fn f32s_of_f16_bytes(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
    )
}

/// `v` rounded to the f16 values the store keeps (what a build's vectors are).
pub fn round_f16(v: &mut [f32]) {
    for x in v {
        *x = half::f16::from_f32(*x).to_f32();
    }
}

/// Streamed a block at a time (a large tree's vectors are hundreds of megabytes).
pub(crate) fn save_f16(path: &Path, values: &[f32]) -> Result<(), StoreError> {
    let mut w = F16Writer::create(path)?;
    for block in values.chunks(1 << 16) {
        w.push(block)?;
    }
    w.finish()
}

/// A file of f16 values written as they come ([`save_f16`]'s format).
pub(crate) struct F16Writer {
    out: BufWriter<File>,
    path: std::path::PathBuf,
}

impl F16Writer {
    pub fn create(path: &Path) -> Result<Self, StoreError> {
        let file = File::create(path).map_err(io_err(path))?;
        Ok(Self {
            out: BufWriter::new(file),
            path: path.to_path_buf(),
        })
    }

    pub fn push(&mut self, values: &[f32]) -> Result<(), StoreError> {
        self.out
            .write_all(&f16_bytes(values))
            .map_err(io_err(&self.path))
    }

    pub fn finish(mut self) -> Result<(), StoreError> {
        self.out.flush().map_err(io_err(&self.path))
    }
}

pub(crate) fn load_f16(path: &Path) -> Result<Vec<f32>, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| corrupt(path, e))?;
    f32s_of_f16_bytes(&bytes).ok_or_else(|| corrupt(path, "truncated vector file"))
}

/// serde for a `Vec<f32>` field stored as f16 bytes.
pub(crate) mod as_f16 {
    use serde::de::{Error, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[f32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&super::f16_bytes(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
        d.deserialize_bytes(F16Bytes)
    }

    struct F16Bytes;

    impl Visitor<'_> for F16Bytes {
        type Value = Vec<f32>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("f16 values as bytes")
        }

        fn visit_bytes<E: Error>(self, bytes: &[u8]) -> Result<Vec<f32>, E> {
            super::f32s_of_f16_bytes(bytes).ok_or_else(|| E::custom("odd length of f16 bytes"))
        }
    }
}
