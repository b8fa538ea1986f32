//! A table's bytes as the served index reads them: memory-mapped from a generation's
//! file (pages are read when a query touches them, so opening costs nothing and resident
//! memory grows with what queries read, not with the repository), or owned (a table
//! just built in memory, and tests).
//!
//! A generation's files are written once into a temporary folder and never changed after
//! it is committed (see [`crate::store`]); a superseded generation is deleted, which on
//! Unix leaves existing mappings readable. That is what makes mapping them sound.
use crate::store::{corrupt, io_err, StoreError};
use std::fs::File;
use std::ops::Deref;
use std::path::Path;

pub enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    /// Maps `path` read-only. `random`: the reader jumps around (postings, vectors,
    /// chunks), so the kernel should not read ahead.
    pub fn open(path: &Path, random: bool) -> Result<Self, StoreError> {
        let file = File::open(path).map_err(|e| corrupt(path, e))?;
        let len = file.metadata().map_err(io_err(path))?.len();
        if len == 0 {
            // An empty file cannot be mapped.
            return Ok(Self::Owned(Vec::new()));
        }
        // SAFETY: generation files are immutable once committed (module doc).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err(path))?;
        #[cfg(unix)]
        if random {
            let _ = map.advise(memmap2::Advice::Random);
        }
        #[cfg(not(unix))]
        let _ = random;
        Ok(Self::Mapped(map))
    }
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Mapped(m) => m,
            Self::Owned(v) => v,
        }
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// Little-endian integers at an index of a byte table (bounds checked by the caller's
/// layout; a short read is a corrupt table and reads as 0 rather than panicking).
pub(crate) fn u32_at(bytes: &[u8], i: usize) -> u32 {
    bytes
        .get(i * 4..i * 4 + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

pub(crate) fn u64_at(bytes: &[u8], i: usize) -> u64 {
    bytes.get(i * 8..i * 8 + 8).map_or(0, |b| {
        u64::from_le_bytes(b.try_into().expect("eight bytes"))
    })
}

/// Appends `values` as little-endian u32s / u64s.
pub(crate) fn put_u32s(out: &mut Vec<u8>, values: impl IntoIterator<Item = u32>) {
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

pub(crate) fn put_u64s(out: &mut Vec<u8>, values: impl IntoIterator<Item = u64>) {
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
}
