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

    /// Gives back the pages of a mapped table this process has read (they leave its
    /// resident memory and stay in the page cache, so the next read of them is a minor
    /// fault, not a disk read). An owned table keeps its bytes.
    pub fn release(&self) {
        #[cfg(unix)]
        if let Self::Mapped(map) = self {
            // SAFETY: the mapping is read-only and private, and its file never changes
            // once committed (module doc): a page dropped here reads back, when next
            // touched, as the same bytes from the same file.
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
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

/// How much of this process's resident memory is file-backed pages (mapped tables, the
/// binary itself): `RssFile` of `/proc/self/status`; None where that is not known.
pub fn resident_file_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("RssFile:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_table_reads_back_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("table");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let bytes = Bytes::open(&path, true).unwrap();
        assert!(matches!(bytes, Bytes::Mapped(_)));
        assert_eq!(&bytes[..], &data[..]);
        bytes.release();
        assert_eq!(
            &bytes[..],
            &data[..],
            "read again from the file after release"
        );
        let owned = Bytes::Owned(data.clone());
        owned.release();
        assert_eq!(&owned[..], &data[..]);
        #[cfg(target_os = "linux")]
        assert!(resident_file_bytes().is_some_and(|b| b > 0));
    }
}
