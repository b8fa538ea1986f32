//! The chunk table: every chunk's file, lines, symbol, definitions and text.
//!
//! A build holds [`ChunkEntry`] values; a generation stores them as one record each
//! (postcard) in `chunks.dat`, with the offset of every record in `chunks.off` and each
//! chunk's file in `chunks.file` (what filters read for every candidate, without the
//! record), and a served index reads a record only when a query asks for that chunk
//! ([`Chunks::get`]: a [`Chunk`] borrowing its strings from the mapped file).
use crate::mapped::{put_u32s, put_u64s, u32_at, u64_at, Bytes};
use crate::store::{corrupt, io_err, StoreError};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkEntry {
    pub file: u32,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: String,
    pub defines: Vec<String>,
    pub text: String,
}

/// A chunk as a served index reads it (the same record as [`ChunkEntry`], borrowed).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Chunk<'a> {
    pub file: u32,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(borrow)]
    pub symbol: &'a str,
    #[serde(borrow)]
    pub defines: Vec<&'a str>,
    #[serde(borrow)]
    pub text: &'a str,
}

impl Chunk<'_> {
    pub fn to_entry(&self) -> ChunkEntry {
        ChunkEntry {
            file: self.file,
            start_line: self.start_line,
            end_line: self.end_line,
            symbol: self.symbol.to_string(),
            defines: self.defines.iter().map(|d| d.to_string()).collect(),
            text: self.text.to_string(),
        }
    }
}

const DATA_FILE: &str = "chunks.dat";
const OFFSETS_FILE: &str = "chunks.off";
const FILES_FILE: &str = "chunks.file";

pub struct Chunks {
    data: Bytes,
    /// `len + 1` little-endian u64s: where each record starts, then the end.
    offsets: Bytes,
    /// `len` little-endian u32s: each chunk's file.
    files: Bytes,
    len: usize,
}

impl Chunks {
    /// The chunk table of a generation, checked to hold `expected` records that tile
    /// the data file.
    pub fn open(dir: &Path, expected: usize) -> Result<Self, StoreError> {
        let data_path = dir.join(DATA_FILE);
        let chunks = Self::from_bytes(
            Bytes::open(&data_path, true)?,
            Bytes::open(&dir.join(OFFSETS_FILE), false)?,
            Bytes::open(&dir.join(FILES_FILE), true)?,
        )
        .map_err(|why| corrupt(&data_path, why))?;
        if chunks.len != expected {
            return Err(corrupt(
                &data_path,
                "the chunk table and the manifest disagree",
            ));
        }
        Ok(chunks)
    }

    /// Gives back the mapped pages read so far ([`Bytes::release`]).
    pub fn release(&self) {
        self.data.release();
        self.offsets.release();
        self.files.release();
    }

    fn from_bytes(data: Bytes, offsets: Bytes, files: Bytes) -> Result<Self, &'static str> {
        if !offsets.len().is_multiple_of(8) || offsets.is_empty() {
            return Err("the chunk offsets are truncated");
        }
        let len = offsets.len() / 8 - 1;
        if files.len() != 4 * len {
            return Err("the chunk files and offsets disagree");
        }
        let mut last = 0;
        for i in 0..=len {
            let at = u64_at(&offsets, i);
            if at < last || (i == 0 && at != 0) {
                return Err("the chunk offsets are out of order");
            }
            last = at;
        }
        if last != data.len() as u64 {
            return Err("the chunk records and their offsets disagree");
        }
        Ok(Self {
            data,
            offsets,
            files,
            len,
        })
    }

    /// The records, offsets and files of `entries`.
    fn encode(entries: &[ChunkEntry]) -> [Vec<u8>; 3] {
        let mut data = Vec::new();
        let mut offsets = Vec::with_capacity(8 * (entries.len() + 1));
        put_u64s(&mut offsets, [0]);
        for e in entries {
            data = postcard::to_extend(e, data).expect("a chunk serialises");
            put_u64s(&mut offsets, [data.len() as u64]);
        }
        let mut files = Vec::with_capacity(4 * entries.len());
        put_u32s(&mut files, entries.iter().map(|e| e.file));
        [data, offsets, files]
    }

    /// The table of `entries`, in memory.
    pub fn from_entries(entries: &[ChunkEntry]) -> Self {
        let [data, offsets, files] = Self::encode(entries);
        Self::from_bytes(
            Bytes::Owned(data),
            Bytes::Owned(offsets),
            Bytes::Owned(files),
        )
        .expect("a table just encoded reads back")
    }

    /// Writes the table of `entries` into a generation's folder ([`ChunksWriter`]).
    pub fn write(dir: &Path, entries: &[ChunkEntry]) -> Result<(), StoreError> {
        let mut out = ChunksWriter::create(dir)?;
        for e in entries {
            out.push(e)?;
        }
        out.finish()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunk `i` (panics past the end, like a slice). A record that does not decode
    /// (a damaged file whose size is intact) reads as an empty chunk of file 0.
    pub fn get(&self, i: usize) -> Chunk<'_> {
        assert!(i < self.len, "chunk {i} of {}", self.len);
        let (start, end) = (u64_at(&self.offsets, i), u64_at(&self.offsets, i + 1));
        postcard::from_bytes(&self.data[start as usize..end as usize]).unwrap_or_default()
    }

    /// The file of chunk `i`, without reading its record.
    pub fn file(&self, i: usize) -> u32 {
        assert!(i < self.len, "chunk {i} of {}", self.len);
        u32_at(&self.files, i)
    }

    pub fn iter(&self) -> impl Iterator<Item = Chunk<'_>> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Every chunk, owned (a build updating this table).
    pub fn to_vec(&self) -> Vec<ChunkEntry> {
        self.iter().map(|c| c.to_entry()).collect()
    }
}

/// Writes into `dir` the chunk table of the tables in `parts` (folders), one after the
/// other: their records and files as they are (the files already numbered for the whole),
/// their offsets moved past the parts before.
pub(crate) fn concat(parts: &[std::path::PathBuf], dir: &Path) -> Result<(), StoreError> {
    use std::io::Write;
    let create = |path: &Path| {
        std::fs::File::create(path)
            .map(std::io::BufWriter::new)
            .map_err(io_err(path))
    };
    let paths = [DATA_FILE, OFFSETS_FILE, FILES_FILE].map(|n| dir.join(n));
    let (mut data, mut offsets, mut files) =
        (create(&paths[0])?, create(&paths[1])?, create(&paths[2])?);
    let mut base = 0u64;
    let mut head = Vec::new();
    put_u64s(&mut head, [0]);
    offsets.write_all(&head).map_err(io_err(&paths[1]))?;
    for part in parts {
        let off = Bytes::open(&part.join(OFFSETS_FILE), false)?;
        let mut moved = Vec::with_capacity(off.len());
        put_u64s(
            &mut moved,
            (1..off.len() / 8).map(|i| base + u64_at(&off, i)),
        );
        offsets.write_all(&moved).map_err(io_err(&paths[1]))?;
        let from = part.join(DATA_FILE);
        let n = std::io::copy(
            &mut std::fs::File::open(&from).map_err(io_err(&from))?,
            &mut data,
        )
        .map_err(io_err(&paths[0]))?;
        if off.len() < 8 || u64_at(&off, off.len() / 8 - 1) != n {
            return Err(corrupt(
                &from,
                "the chunk records and their offsets disagree",
            ));
        }
        base += n;
        let from = part.join(FILES_FILE);
        std::io::copy(
            &mut std::fs::File::open(&from).map_err(io_err(&from))?,
            &mut files,
        )
        .map_err(io_err(&paths[2]))?;
    }
    for (mut out, path) in [(data, &paths[0]), (offsets, &paths[1]), (files, &paths[2])] {
        out.flush().map_err(io_err(path))?;
    }
    Ok(())
}

/// The chunk table written as chunks arrive: records are streamed to the file (the table
/// of a large tree is as large as its source); the offsets and files, 12 bytes a chunk,
/// are written whole by [`Self::finish`].
pub struct ChunksWriter {
    out: std::io::BufWriter<std::fs::File>,
    path: std::path::PathBuf,
    offsets: Vec<u8>,
    files: Vec<u8>,
    at: u64,
    record: Vec<u8>,
}

impl ChunksWriter {
    pub fn create(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(DATA_FILE);
        let file = std::fs::File::create(&path).map_err(io_err(&path))?;
        let mut offsets = Vec::new();
        put_u64s(&mut offsets, [0]);
        Ok(Self {
            out: std::io::BufWriter::new(file),
            path,
            offsets,
            files: Vec::new(),
            at: 0,
            record: Vec::new(),
        })
    }

    /// Appends one chunk's record.
    pub fn push(&mut self, e: &ChunkEntry) -> Result<(), StoreError> {
        self.record.clear();
        self.record =
            postcard::to_extend(e, std::mem::take(&mut self.record)).expect("a chunk serialises");
        std::io::Write::write_all(&mut self.out, &self.record).map_err(io_err(&self.path))?;
        self.at += self.record.len() as u64;
        put_u64s(&mut self.offsets, [self.at]);
        put_u32s(&mut self.files, [e.file]);
        Ok(())
    }

    /// Chunks pushed so far.
    pub fn len(&self) -> usize {
        self.files.len() / 4
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Flushes the records and writes the offsets and files beside them.
    pub fn finish(mut self) -> Result<(), StoreError> {
        std::io::Write::flush(&mut self.out).map_err(io_err(&self.path))?;
        let dir = self
            .path
            .parent()
            .expect("a file in a folder")
            .to_path_buf();
        for (name, bytes) in [(OFFSETS_FILE, self.offsets), (FILES_FILE, self.files)] {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(io_err(&path))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(file: u32, text: &str, defines: &[&str]) -> ChunkEntry {
        ChunkEntry {
            file,
            start_line: file + 1,
            end_line: file + 3,
            symbol: format!("sym{file}"),
            defines: defines.iter().map(|d| d.to_string()).collect(),
            text: text.into(),
        }
    }

    #[test]
    fn records_read_back_from_disk_one_at_a_time() {
        let entries = vec![
            entry(0, "fn a() {}", &["a"]),
            entry(1, "", &[]),
            entry(1, "é ü \n tabs\t", &["b", "c"]),
        ];
        let dir = tempfile::tempdir().unwrap();
        Chunks::write(dir.path(), &entries).unwrap();
        let chunks = Chunks::open(dir.path(), 3).unwrap();
        assert_eq!(chunks.len(), 3);
        let c = chunks.get(2);
        assert_eq!((c.file, c.start_line, c.end_line), (1, 2, 4));
        assert_eq!((c.symbol, c.text), ("sym1", "é ü \n tabs\t"));
        assert_eq!(c.defines, ["b", "c"]);
        let back = chunks.to_vec();
        assert_eq!(back.len(), 3);
        assert_eq!(back[0].defines, ["a"]);
        assert_eq!(Chunks::from_entries(&entries).get(0).text, "fn a() {}");
        assert_eq!((chunks.file(0), chunks.file(2)), (0, 1));
        assert!(Chunks::open(dir.path(), 4).is_err(), "count checked");
    }

    #[test]
    fn truncated_or_disordered_tables_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        Chunks::write(dir.path(), &[entry(0, "x", &[]), entry(0, "y", &[])]).unwrap();
        let data = dir.path().join(DATA_FILE);
        let bytes = std::fs::read(&data).unwrap();
        std::fs::write(&data, &bytes[..bytes.len() - 1]).unwrap();
        assert!(Chunks::open(dir.path(), 2).is_err());
        std::fs::write(&data, &bytes).unwrap();
        let offsets = dir.path().join(OFFSETS_FILE);
        let mut off = std::fs::read(&offsets).unwrap();
        off.swap(8, 16);
        std::fs::write(&offsets, &off).unwrap();
        assert!(Chunks::open(dir.path(), 2).is_err());
        std::fs::write(&offsets, b"short").unwrap();
        assert!(Chunks::open(dir.path(), 2).is_err());
    }
}
