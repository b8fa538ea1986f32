//! Sorted runs on disk, the way a segmented build keeps what it must order whole: each
//! segment writes its part of a table as records in key order ([`write`]); the build
//! merges the segments' runs by key ([`Merged`]) into the table's served form
//! ([`ListsWriter`]: a term dictionary, each key's first entry, the entries), never holding
//! more than one record per run.
use crate::mapped::{put_u64s, Bytes};
use crate::store::{corrupt, io_err, StoreError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `records` (in key order) as a run.
pub(crate) fn write<T: Serialize>(
    path: &Path,
    records: impl IntoIterator<Item = T>,
) -> Result<(), StoreError> {
    let file = std::fs::File::create(path).map_err(io_err(path))?;
    let mut out = std::io::BufWriter::new(file);
    for r in records {
        postcard::to_io(&r, &mut out).map_err(|e| corrupt(path, e))?;
    }
    out.flush().map_err(io_err(path))
}

/// A run read record by record from its mapped file.
pub(crate) struct Run<T> {
    bytes: Bytes,
    at: usize,
    path: PathBuf,
    _records: std::marker::PhantomData<T>,
}

impl<T: DeserializeOwned> Run<T> {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Ok(Self {
            bytes: Bytes::open(path, false)?,
            at: 0,
            path: path.to_path_buf(),
            _records: std::marker::PhantomData,
        })
    }

    fn next(&mut self) -> Result<Option<T>, StoreError> {
        if self.at >= self.bytes.len() {
            self.bytes.release();
            return Ok(None);
        }
        let rest = &self.bytes[self.at..];
        let (record, left) =
            postcard::take_from_bytes::<T>(rest).map_err(|e| corrupt(&self.path, e))?;
        self.at += rest.len() - left.len();
        Ok(Some(record))
    }
}

/// Runs merged by key: each call to [`Merged::next_group`] gives every record of the
/// next key, with the index of its run, in run order.
pub(crate) struct Merged<T, K: Ord> {
    runs: Vec<Run<T>>,
    heads: Vec<Option<T>>,
    queue: BinaryHeap<Reverse<(K, usize)>>,
    key: fn(&T) -> K,
}

impl<T: DeserializeOwned, K: Ord + Clone> Merged<T, K> {
    /// The runs written at `paths`, merged by `key`.
    pub fn open(paths: &[PathBuf], key: fn(&T) -> K) -> Result<Self, StoreError> {
        let runs = paths
            .iter()
            .map(|p| Run::open(p))
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(runs, key)
    }

    pub fn new(mut runs: Vec<Run<T>>, key: fn(&T) -> K) -> Result<Self, StoreError> {
        let mut heads = Vec::with_capacity(runs.len());
        let mut queue = BinaryHeap::new();
        for (i, run) in runs.iter_mut().enumerate() {
            let head = run.next()?;
            if let Some(h) = &head {
                queue.push(Reverse((key(h), i)));
            }
            heads.push(head);
        }
        Ok(Self {
            runs,
            heads,
            queue,
            key,
        })
    }

    pub fn next_group(&mut self) -> Result<Option<Vec<(usize, T)>>, StoreError> {
        let Some(Reverse((first, _))) = self.queue.peek().cloned() else {
            return Ok(None);
        };
        let mut group = Vec::new();
        while let Some(Reverse((k, i))) = self.queue.peek().cloned() {
            if k != first {
                break;
            }
            self.queue.pop();
            let record = self.heads[i].take().expect("a queued run has a head");
            let next = self.runs[i].next()?;
            if let Some(n) = &next {
                let k = (self.key)(n);
                if k <= first {
                    return Err(corrupt(&self.runs[i].path, "a run out of key order"));
                }
                self.queue.push(Reverse((k, i)));
            }
            self.heads[i] = next;
            group.push((i, record));
        }
        group.sort_by_key(|(i, _)| *i);
        Ok(Some(group))
    }
}

/// A table of sorted keys, each with a list of fixed-size entries, written as it is
/// merged: the key dictionary (an fst, key → ordinal) streamed to its file, the entries
/// to a file beside the table, each key's first entry in memory (8 bytes a key); then
/// [`Self::finish`] writes the table's file: a head, the offsets, the entries.
pub(crate) struct ListsWriter {
    dict: fst::MapBuilder<std::io::BufWriter<std::fs::File>>,
    dict_path: PathBuf,
    entries: std::io::BufWriter<std::fs::File>,
    entries_path: PathBuf,
    offsets: Vec<u8>,
    at: u64,
    keys: u64,
}

impl ListsWriter {
    /// A table whose dictionary goes to `dict_path` and whose data file will be
    /// `data_path` (its entries wait in `data_path` + ".entries").
    pub fn create(dict_path: &Path, data_path: &Path) -> Result<Self, StoreError> {
        let file = std::fs::File::create(dict_path).map_err(io_err(dict_path))?;
        let dict = fst::MapBuilder::new(std::io::BufWriter::new(file))
            .map_err(|e| corrupt(dict_path, e))?;
        let entries_path = data_path.with_extension("entries");
        let file = std::fs::File::create(&entries_path).map_err(io_err(&entries_path))?;
        let mut offsets = Vec::new();
        put_u64s(&mut offsets, [0]);
        Ok(Self {
            dict,
            dict_path: dict_path.to_path_buf(),
            entries: std::io::BufWriter::new(file),
            entries_path,
            offsets,
            at: 0,
            keys: 0,
        })
    }

    /// The next key (greater than the last) and its `n` entries, encoded in `bytes`.
    pub fn push(&mut self, key: &[u8], bytes: &[u8], n: u64) -> Result<(), StoreError> {
        self.dict
            .insert(key, self.keys)
            .map_err(|e| corrupt(&self.dict_path, e))?;
        self.entries
            .write_all(bytes)
            .map_err(io_err(&self.entries_path))?;
        self.at += n;
        self.keys += 1;
        put_u64s(&mut self.offsets, [self.at]);
        Ok(())
    }

    /// Writes `data_path`: `head(keys)`, the offsets (keys + 1 u64s), the entries.
    pub fn finish(
        self,
        data_path: &Path,
        head: impl FnOnce(u64) -> Vec<u8>,
    ) -> Result<(), StoreError> {
        let Self {
            dict,
            dict_path,
            entries,
            entries_path,
            offsets,
            keys,
            ..
        } = self;
        dict.finish().map_err(|e| corrupt(&dict_path, e))?;
        let entries = entries
            .into_inner()
            .map_err(|e| io_err(&entries_path)(e.into_error()))?;
        drop(entries);
        let file = std::fs::File::create(data_path).map_err(io_err(data_path))?;
        let mut out = std::io::BufWriter::new(file);
        out.write_all(&head(keys)).map_err(io_err(data_path))?;
        out.write_all(&offsets).map_err(io_err(data_path))?;
        let mut from = std::fs::File::open(&entries_path).map_err(io_err(&entries_path))?;
        std::io::copy(&mut from, &mut out).map_err(io_err(data_path))?;
        out.flush().map_err(io_err(data_path))?;
        std::fs::remove_file(&entries_path).map_err(io_err(&entries_path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_by_key_in_run_order() {
        let dir = tempfile::tempdir().unwrap();
        let runs = [
            vec![("a", 1u32), ("c", 2)],
            vec![("b", 3), ("c", 4)],
            vec![],
            vec![("a", 5), ("d", 6)],
        ];
        let mut paths = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            let p = dir.path().join(format!("run{i}"));
            write(&p, r.iter().map(|(k, v)| (k.to_string(), *v))).unwrap();
            paths.push(p);
        }
        let opened: Vec<Run<(String, u32)>> = paths.iter().map(|p| Run::open(p).unwrap()).collect();
        let mut merged = Merged::new(opened, |r: &(String, u32)| r.0.clone()).unwrap();
        let mut groups = Vec::new();
        while let Some(g) = merged.next_group().unwrap() {
            groups.push(
                g.into_iter()
                    .map(|(i, (k, v))| (i, k, v))
                    .collect::<Vec<_>>(),
            );
        }
        let s = |i, k: &str, v| (i, k.to_string(), v);
        assert_eq!(
            groups,
            vec![
                vec![s(0, "a", 1), s(3, "a", 5)],
                vec![s(1, "b", 3)],
                vec![s(0, "c", 2), s(1, "c", 4)],
                vec![s(3, "d", 6)],
            ]
        );
    }

    #[test]
    fn a_run_out_of_order_is_an_error_not_a_wrong_table() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        write(&p, [("b".to_string(), 1u32), ("a".to_string(), 2)]).unwrap();
        let mut merged = Merged::new(vec![Run::open(&p).unwrap()], |r: &(String, u32)| {
            r.0.clone()
        })
        .unwrap();
        assert!(merged.next_group().is_err());
    }
}
