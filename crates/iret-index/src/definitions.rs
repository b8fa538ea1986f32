//! Which files define a name: every chunk's definitions, lower-cased, as a map from name
//! to the files defining it (in chunk order, each file once). Written with the generation
//! (`defs.fst`: name → ordinal; `defs.dat`: each name's first file, then the files) and
//! mapped, so a query looks a name up without reading every chunk.
use crate::chunks::ChunkEntry;
use crate::mapped::{put_u32s, put_u64s, u32_at, u64_at, Bytes};
use crate::store::{corrupt, io_err, StoreError};
use std::collections::BTreeMap;
use std::path::Path;

const DICT_FILE: &str = "defs.fst";
const DATA_FILE: &str = "defs.dat";

pub struct Definitions {
    names: fst::Map<Bytes>,
    data: Bytes,
}

impl Definitions {
    fn encode(chunks: &[ChunkEntry]) -> (Vec<u8>, Vec<u8>) {
        let mut names = DefinitionsBuilder::default();
        for c in chunks {
            names.add(c.file, &c.defines);
        }
        names.encode()
    }

    /// The table of `chunks`, in memory.
    pub fn from_chunks(chunks: &[ChunkEntry]) -> Self {
        let (dict, data) = Self::encode(chunks);
        Self::from_bytes(Bytes::Owned(dict), Bytes::Owned(data), Path::new(DICT_FILE))
            .expect("a table just encoded reads back")
    }

    pub(crate) fn write(dir: &Path, chunks: &[ChunkEntry]) -> Result<(), StoreError> {
        let (dict, data) = Self::encode(chunks);
        write_files(dir, dict, data)
    }

    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let dict = dir.join(DICT_FILE);
        Self::from_bytes(
            Bytes::open(&dict, true)?,
            Bytes::open(&dir.join(DATA_FILE), true)?,
            &dict,
        )
    }

    /// Gives back the mapped pages read so far ([`Bytes::release`]).
    pub fn release(&self) {
        self.names.as_fst().as_inner().release();
        self.data.release();
    }

    fn from_bytes(dict: Bytes, data: Bytes, path: &Path) -> Result<Self, StoreError> {
        let names = fst::Map::new(dict).map_err(|e| corrupt(path, e))?;
        let n = names.len();
        let lists = 8 * (n + 1);
        let total = (data.len() >= lists).then(|| u64_at(&data, n) as usize);
        if total.and_then(|t| t.checked_mul(4)).map(|b| b + lists) != Some(data.len()) {
            return Err(corrupt(path, "the definitions' tables disagree"));
        }
        Ok(Self { names, data })
    }

    /// The files defining `name` (lower-case), in chunk order; `None` when none does.
    pub fn files(&self, name: &str) -> Option<Vec<u32>> {
        let ord = self.names.get(name)? as usize;
        let (start, end) = (
            u64_at(&self.data, ord) as usize,
            u64_at(&self.data, ord + 1) as usize,
        );
        let base = 8 * (self.names.len() + 1);
        let list = &self.data[base + 4 * start..base + 4 * end];
        Some((0..end - start).map(|i| u32_at(list, i)).collect())
    }
}

/// The definitions gathered chunk by chunk (in chunk order), for a build that does not
/// hold its chunks.
#[derive(Debug, Default)]
pub(crate) struct DefinitionsBuilder {
    by_name: BTreeMap<String, Vec<u32>>,
}

impl DefinitionsBuilder {
    /// The names one chunk of `file` defines.
    pub fn add(&mut self, file: u32, defines: &[String]) {
        for d in defines {
            let files = self.by_name.entry(d.to_lowercase()).or_default();
            if files.last() != Some(&file) {
                files.push(file);
            }
        }
    }

    fn encode(&self) -> (Vec<u8>, Vec<u8>) {
        let by_name = &self.by_name;
        let mut dict = fst::MapBuilder::memory();
        for (ord, name) in by_name.keys().enumerate() {
            dict.insert(name.as_bytes(), ord as u64)
                .expect("names are distinct and sorted");
        }
        let mut data = Vec::new();
        let mut at = 0u64;
        put_u64s(
            &mut data,
            std::iter::once(0).chain(by_name.values().map(|f| {
                at += f.len() as u64;
                at
            })),
        );
        for files in by_name.values() {
            put_u32s(&mut data, files.iter().copied());
        }
        (dict.into_inner().expect("an in-memory map"), data)
    }

    /// The definitions as a run ([`crate::runs`]), in name order: for [`merge_runs`].
    pub fn write_run(&self, path: &Path) -> Result<(), StoreError> {
        crate::runs::write(path, self.by_name.iter())
    }
}

/// Writes a generation's definitions into `dir` from the runs of segments in chunk order
/// ([`DefinitionsBuilder::write_run`]): the same files as one builder that took every
/// segment's chunks in turn.
pub(crate) fn merge_runs(runs: &[std::path::PathBuf], dir: &Path) -> Result<(), StoreError> {
    use crate::runs::{ListsWriter, Merged};
    type Record = (String, Vec<u32>);
    let mut merged = Merged::open(runs, |r: &Record| r.0.clone())?;
    let data = dir.join(DATA_FILE);
    let mut out = ListsWriter::create(&dir.join(DICT_FILE), &data)?;
    let mut bytes = Vec::new();
    while let Some(mut group) = merged.next_group()? {
        let name = std::mem::take(&mut group[0].1 .0);
        let mut files: Vec<u32> = Vec::new();
        for (_, (_, list)) in group {
            for f in list {
                if files.last() != Some(&f) {
                    files.push(f);
                }
            }
        }
        bytes.clear();
        put_u32s(&mut bytes, files.iter().copied());
        out.push(name.as_bytes(), &bytes, files.len() as u64)?;
    }
    out.finish(&data, |_| Vec::new())
}

fn write_files(dir: &Path, dict: Vec<u8>, data: Vec<u8>) -> Result<(), StoreError> {
    for (name, bytes) in [(DICT_FILE, dict), (DATA_FILE, data)] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(io_err(&path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(file: u32, defines: &[&str]) -> ChunkEntry {
        ChunkEntry {
            file,
            start_line: 1,
            end_line: 2,
            symbol: String::new(),
            defines: defines.iter().map(|d| d.to_string()).collect(),
            text: String::new(),
        }
    }

    #[test]
    fn names_map_to_their_files_in_chunk_order_once_each() {
        let chunks = [
            chunk(2, &["Parse", "run"]),
            chunk(2, &["parse"]),
            chunk(0, &["parse"]),
            chunk(1, &[]),
        ];
        let dir = tempfile::tempdir().unwrap();
        Definitions::write(dir.path(), &chunks).unwrap();
        for defs in [
            Definitions::open(dir.path()).unwrap(),
            Definitions::from_chunks(&chunks),
        ] {
            assert_eq!(defs.files("parse"), Some(vec![2, 0]));
            assert_eq!(defs.files("run"), Some(vec![2]));
            assert_eq!(defs.files("Parse"), None, "names are lower-cased");
            assert_eq!(defs.files("missing"), None);
        }
        std::fs::write(dir.path().join(DATA_FILE), b"short").unwrap();
        assert!(Definitions::open(dir.path()).is_err());
    }
}
