//! BM25 over chunk token lists: built in memory ([`Bm25Builder`]), served from disk
//! ([`Bm25`]).
use crate::mapped::{put_u32s, put_u64s, u32_at, u64_at, Bytes};
use crate::store::{corrupt, io_err, StoreError};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Bm25Params {
    pub k1: f32,
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
    }
}

/// The keyword index as a build holds it: term → (doc, term frequency), in memory,
/// updated in place ([`Self::extend`], [`Self::retain_remap`]); [`Self::freeze`] or
/// [`Self::write`] turn it into the [`Bm25`] queries read.
#[derive(Debug, Default)]
pub struct Bm25Builder {
    postings: foldhash::HashMap<String, Postings>,
    doc_len: Vec<u32>,
    avg_len: f32,
}

impl Bm25Builder {
    pub fn build(docs: &[Vec<String>]) -> Self {
        let mut index = Self::default();
        index.extend(docs);
        index
    }

    /// The postings of a served index, to update them.
    pub fn from_served(served: &Bm25) -> Self {
        let mut postings = foldhash::HashMap::default();
        postings.reserve(served.terms.len());
        let mut stream = served.terms.stream();
        while let Some((term, ord)) = fst::Streamer::next(&mut stream) {
            let list = Postings::of(served.entries(ord as usize));
            postings.insert(String::from_utf8_lossy(term).into_owned(), list);
        }
        Self {
            postings,
            doc_len: (0..served.num_docs()).map(|d| served.doc_len(d)).collect(),
            avg_len: served.avg_len,
        }
    }

    /// Appends documents; their ids continue after the existing ones.
    pub fn extend(&mut self, docs: &[Vec<String>]) {
        for tokens in docs {
            let id = self.doc_len.len() as u32;
            let mut tf: foldhash::HashMap<&str, u16> = Default::default();
            for t in tokens {
                let n = tf.entry(t.as_str()).or_default();
                *n = n.saturating_add(1);
            }
            for (term, n) in tf {
                match self.postings.get_mut(term) {
                    Some(list) => list.push(id, n),
                    None => {
                        self.postings
                            .insert(term.to_string(), Postings::of([(id, n)]));
                    }
                }
            }
            self.doc_len.push(tokens.len() as u32);
        }
        self.update_average();
    }

    /// Keeps the documents `remap` maps to a new id (renumbered), drops the others.
    /// `remap` has one entry per current document; kept ids must stay in order.
    pub fn retain_remap(&mut self, remap: &[Option<u32>]) {
        assert_eq!(
            remap.len(),
            self.doc_len.len(),
            "one remap entry per document"
        );
        self.postings.retain(|_, list| {
            *list = Postings::of(
                list.iter()
                    .filter_map(|(doc, tf)| remap[doc as usize].map(|new| (new, tf))),
            );
            list.len > 0
        });
        let mut doc_len = Vec::with_capacity(self.doc_len.len());
        for (len, keep) in self.doc_len.iter().zip(remap) {
            if keep.is_some() {
                doc_len.push(*len);
            }
        }
        self.doc_len = doc_len;
        self.update_average();
    }

    fn update_average(&mut self) {
        self.avg_len = average(&self.doc_len);
    }

    /// Every document's length, in order.
    pub(crate) fn doc_lens(&self) -> &[u32] {
        &self.doc_len
    }

    /// The postings as a run ([`crate::runs`]), in term order, documents numbered as this
    /// builder numbers them: for [`merge_runs`].
    pub(crate) fn write_run(&self, path: &Path) -> Result<(), StoreError> {
        let mut terms: Vec<(&String, &Postings)> = self.postings.iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(b.0));
        crate::runs::write(
            path,
            terms
                .into_iter()
                .map(|(t, p)| (t.as_str(), p.len, p.bytes.as_slice())),
        )
    }

    pub fn num_docs(&self) -> usize {
        self.doc_len.len()
    }

    /// Terms of the index and their document counts.
    pub fn terms(&self) -> impl Iterator<Item = (&str, usize)> {
        self.postings
            .iter()
            .map(|(t, p)| (t.as_str(), p.len as usize))
    }

    /// The served form: the term dictionary (returned) and the postings, written to `out`
    /// as they are read from the lists (a large tree's postings file is hundreds of
    /// megabytes: never a second copy of them in memory).
    fn encode_into(&self, out: &mut impl std::io::Write) -> std::io::Result<Vec<u8>> {
        let mut terms: Vec<(&String, &Postings)> = self.postings.iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut dict = fst::MapBuilder::memory();
        for (ord, (term, _)) in terms.iter().enumerate() {
            dict.insert(term.as_bytes(), ord as u64)
                .expect("terms are distinct and sorted");
        }
        let mut head = Vec::with_capacity(HEADER + 4 * self.doc_len.len() + 8 * (terms.len() + 1));
        head.extend_from_slice(MAGIC);
        put_u64s(&mut head, [self.doc_len.len() as u64, terms.len() as u64]);
        put_u32s(&mut head, [self.avg_len.to_bits(), 0]);
        put_u32s(&mut head, self.doc_len.iter().copied());
        let mut at = 0u64;
        put_u64s(
            &mut head,
            std::iter::once(0).chain(terms.iter().map(|(_, l)| {
                at += l.len as u64;
                at
            })),
        );
        out.write_all(&head)?;
        drop(head);
        let mut entry = [0u8; ENTRY];
        for (_, list) in terms {
            for (doc, tf) in list.iter() {
                entry[..4].copy_from_slice(&doc.to_le_bytes());
                entry[4..].copy_from_slice(&tf.to_le_bytes());
                out.write_all(&entry)?;
            }
        }
        Ok(dict.into_inner().expect("an in-memory map"))
    }

    /// The served form, in memory.
    pub fn freeze(&self) -> Bm25 {
        let mut data = Vec::new();
        let dict = self.encode_into(&mut data).expect("writing to memory");
        Bm25::from_bytes(Bytes::Owned(dict), Bytes::Owned(data), Path::new("bm25"))
            .expect("a table just encoded reads back")
    }

    /// Writes the served form into a generation's folder.
    pub fn write(&self, dir: &Path) -> Result<(), StoreError> {
        let path = dir.join(DATA_FILE);
        let file = std::fs::File::create(&path).map_err(io_err(&path))?;
        let mut out = std::io::BufWriter::new(file);
        let dict = self.encode_into(&mut out).map_err(io_err(&path))?;
        std::io::Write::flush(&mut out).map_err(io_err(&path))?;
        let path = dir.join(DICT_FILE);
        std::fs::write(&path, dict).map_err(io_err(&path))?;
        Ok(())
    }
}

/// The mean document length, as the builder computes it.
fn average(doc_len: &[u32]) -> f32 {
    doc_len.iter().map(|&l| l as f32).sum::<f32>() / doc_len.len().max(1) as f32
}

/// A record of a postings run: the term, how many entries, the entries as [`Postings`]
/// encodes them.
type RunRecord = (String, u32, Vec<u8>);

/// Writes a generation's keyword index into `dir` from the runs of segments in document
/// order ([`Bm25Builder::write_run`]): run `i` numbers its documents from `firsts[i]`'s
/// place, `doc_len` holds every document's length. The same files as
/// [`Bm25Builder::write`] of one builder that took every segment's documents in turn.
pub(crate) fn merge_runs(
    runs: &[std::path::PathBuf],
    firsts: &[u32],
    doc_len: &[u32],
    dir: &Path,
) -> Result<(), StoreError> {
    use crate::runs::{ListsWriter, Merged};
    let mut merged = Merged::open(runs, |r: &RunRecord| r.0.clone())?;
    let data = dir.join(DATA_FILE);
    let mut out = ListsWriter::create(&dir.join(DICT_FILE), &data)?;
    let mut bytes = Vec::new();
    while let Some(mut group) = merged.next_group()? {
        let term = std::mem::take(&mut group[0].1 .0);
        bytes.clear();
        let mut n = 0u64;
        for (i, (_, len, list)) in group {
            let list = Postings {
                bytes: list,
                last: 0,
                len,
            };
            for (doc, tf) in list.iter() {
                bytes.extend_from_slice(&(doc + firsts[i]).to_le_bytes());
                bytes.extend_from_slice(&tf.to_le_bytes());
            }
            n += len as u64;
        }
        out.push(term.as_bytes(), &bytes, n)?;
    }
    let avg_len = average(doc_len);
    out.finish(&data, |terms| {
        let mut head = Vec::with_capacity(HEADER + 4 * doc_len.len());
        head.extend_from_slice(MAGIC);
        put_u64s(&mut head, [doc_len.len() as u64, terms]);
        put_u32s(&mut head, [avg_len.to_bits(), 0]);
        put_u32s(&mut head, doc_len.iter().copied());
        head
    })
}

/// One term's postings as a build holds them: (document, term frequency) in document
/// order, each a varint of the gap from the last document and a varint of the frequency
/// (about 2.5 bytes an entry instead of 8: the Linux kernel's 50 million entries take
/// 125 MB, not 400).
#[derive(Debug, Default)]
struct Postings {
    bytes: Vec<u8>,
    last: u32,
    len: u32,
}

impl Postings {
    fn of(entries: impl IntoIterator<Item = (u32, u16)>) -> Self {
        let mut list = Self::default();
        for (doc, tf) in entries {
            list.push(doc, tf);
        }
        list.bytes.shrink_to_fit();
        list
    }

    /// Appends a document after the last one.
    fn push(&mut self, doc: u32, tf: u16) {
        debug_assert!(self.len == 0 || doc > self.last, "documents in order");
        put_varint(&mut self.bytes, doc - self.last);
        put_varint(&mut self.bytes, tf as u32);
        self.last = doc;
        self.len += 1;
    }

    fn iter(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        let mut at = 0;
        let mut doc = 0;
        std::iter::from_fn(move || {
            if at >= self.bytes.len() {
                return None;
            }
            doc += varint(&self.bytes, &mut at);
            let tf = varint(&self.bytes, &mut at) as u16;
            Some((doc, tf))
        })
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint(bytes: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= ((b & 0x7f) as u32) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// The term dictionary: term → its ordinal in the postings file.
const DICT_FILE: &str = "bm25.fst";
/// A header, each document's length (u32), each term's first entry (u64, one past the
/// last), then the entries: (document u32, term frequency u16), in document order.
const DATA_FILE: &str = "bm25.dat";
const MAGIC: &[u8; 8] = b"IRETBM25";
const HEADER: usize = 32;
const ENTRY: usize = 6;

/// The keyword index queries read: the term dictionary and postings memory-mapped from
/// the generation (or in memory, [`Bm25Builder::freeze`]). Scores equal the builder's
/// postings scored in the same order.
pub struct Bm25 {
    terms: fst::Map<Bytes>,
    data: Bytes,
    docs: usize,
    term_count: usize,
    avg_len: f32,
}

impl Default for Bm25 {
    /// An index of no document.
    fn default() -> Self {
        Bm25Builder::default().freeze()
    }
}

impl std::fmt::Debug for Bm25 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25")
            .field("docs", &self.docs)
            .field("terms", &self.term_count)
            .finish()
    }
}

impl Bm25 {
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
        self.terms.as_fst().as_inner().release();
        self.data.release();
    }

    fn from_bytes(dict: Bytes, data: Bytes, path: &Path) -> Result<Self, StoreError> {
        let terms = fst::Map::new(dict).map_err(|e| corrupt(path, e))?;
        if data.len() < HEADER || &data[..8] != MAGIC {
            return Err(corrupt(path, "not a keyword index"));
        }
        let docs = u64_at(&data, 1) as usize;
        let term_count = u64_at(&data, 2) as usize;
        let avg_len = f32::from_bits(u32_at(&data, 6));
        let bad = || corrupt(path, "the keyword index's tables disagree");
        let offsets_at = docs
            .checked_mul(4)
            .and_then(|n| n.checked_add(HEADER))
            .ok_or_else(bad)?;
        let base = term_count
            .checked_add(1)
            .and_then(|n| n.checked_mul(8))
            .and_then(|n| n.checked_add(offsets_at))
            .filter(|&b| b <= data.len())
            .ok_or_else(bad)?;
        let total = u64_at(&data[offsets_at..], term_count) as usize;
        if terms.len() != term_count
            || total.checked_mul(ENTRY).and_then(|n| n.checked_add(base)) != Some(data.len())
        {
            return Err(bad());
        }
        Ok(Self {
            terms,
            data,
            docs,
            term_count,
            avg_len,
        })
    }

    /// A copy to update (see [`Bm25Builder::from_served`]).
    pub fn to_builder(&self) -> Bm25Builder {
        Bm25Builder::from_served(self)
    }

    pub fn num_docs(&self) -> usize {
        self.docs
    }

    fn doc_len(&self, doc: usize) -> u32 {
        u32_at(&self.data[HEADER..], doc)
    }

    /// The entry range of term `ord`.
    fn range(&self, ord: usize) -> (usize, usize) {
        let offsets = &self.data[HEADER + 4 * self.docs..];
        (
            u64_at(offsets, ord) as usize,
            u64_at(offsets, ord + 1) as usize,
        )
    }

    fn entries(&self, ord: usize) -> impl Iterator<Item = (u32, u16)> + '_ {
        let (start, end) = self.range(ord);
        let base = HEADER + 4 * self.docs + 8 * (self.term_count + 1);
        self.data[base + ENTRY * start..base + ENTRY * end]
            .chunks_exact(ENTRY)
            .map(|e| {
                (
                    u32::from_le_bytes([e[0], e[1], e[2], e[3]]),
                    u16::from_le_bytes([e[4], e[5]]),
                )
            })
    }

    fn ordinal(&self, term: &str) -> Option<usize> {
        self.terms.get(term).map(|o| o as usize)
    }

    /// Number of documents containing `term`.
    pub fn df(&self, term: &str) -> usize {
        self.ordinal(term).map_or(0, |o| {
            let (start, end) = self.range(o);
            end - start
        })
    }

    /// The documents containing `term`.
    pub fn docs_with(&self, term: &str) -> impl Iterator<Item = u32> + '_ {
        self.ordinal(term)
            .into_iter()
            .flat_map(|o| self.entries(o).map(|(doc, _)| doc))
    }

    pub fn idf(&self, term: &str) -> f32 {
        let n = self.num_docs() as f32;
        let df = self.df(term) as f32;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// Scores every document matching at least one of `terms` (weights per term), in
    /// document order. `allow` filters documents before ranking. Scores accumulate in a
    /// dense table (a long task's hundred terms touch most documents), each document's
    /// terms summed in the order given.
    pub fn score(
        &self,
        terms: &[(String, f32)],
        params: Bm25Params,
        allow: &dyn Fn(u32) -> bool,
    ) -> Vec<(u32, f32)> {
        let mut acc = vec![0f32; self.docs];
        let mut hit = vec![false; self.docs];
        let mut touched: Vec<u32> = Vec::new();
        let avg = self.avg_len.max(1.0);
        for (term, weight) in terms {
            let Some(ord) = self.ordinal(term) else {
                continue;
            };
            let idf = self.idf(term) * weight;
            for (doc, tf) in self.entries(ord) {
                let d = doc as usize;
                if d >= self.docs {
                    continue;
                }
                if !hit[d] {
                    if !allow(doc) {
                        continue;
                    }
                    hit[d] = true;
                    touched.push(doc);
                }
                let tf = tf as f32;
                let len = self.doc_len(d) as f32;
                let norm = params.k1 * (1.0 - params.b + params.b * len / avg);
                acc[d] += idf * tf * (params.k1 + 1.0) / (tf + norm);
            }
        }
        touched.sort_unstable();
        touched.into_iter().map(|d| (d, acc[d as usize])).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_read_back_as_pushed_whatever_the_gaps() {
        let entries = vec![
            (0u32, 1u16),
            (1, u16::MAX),
            (127, 3),
            (128, 1),
            (16_511, 2),
            (u32::MAX - 1, 7),
        ];
        let list = Postings::of(entries.clone());
        assert_eq!(list.len as usize, entries.len());
        assert_eq!(list.iter().collect::<Vec<_>>(), entries);
        assert!(Postings::default().iter().next().is_none());
    }
    use std::collections::HashMap;

    fn docs(texts: &[&str]) -> Vec<Vec<String>> {
        texts
            .iter()
            .map(|t| t.split_whitespace().map(String::from).collect())
            .collect()
    }

    #[test]
    fn matches_hand_computed_score() {
        let idx = Bm25Builder::build(&docs(&[
            "token expiry token",
            "user profile",
            "session token",
        ]))
        .freeze();
        let p = Bm25Params { k1: 1.2, b: 0.75 };
        let s: HashMap<u32, f32> = idx
            .score(&[("expiry".into(), 1.0)], p, &|_| true)
            .into_iter()
            .collect();
        // df=1, N=3: idf = ln((3-1+0.5)/(1+0.5)+1) = ln(2.6667); tf=1, len=3, avg=7/3.
        let idf = (2.5f32 / 1.5 + 1.0).ln();
        let norm = 1.2 * (1.0 - 0.75 + 0.75 * 3.0 / (7.0 / 3.0));
        let expected = idf * 2.2 / (1.0 + norm);
        assert!((s[&0] - expected).abs() < 1e-5, "{} vs {expected}", s[&0]);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn rarer_terms_and_higher_tf_score_higher() {
        let idx = Bm25Builder::build(&docs(&[
            "token token expiry",
            "token",
            "token user",
            "user",
        ]))
        .freeze();
        let s: HashMap<u32, f32> = idx
            .score(
                &[("token".into(), 1.0), ("expiry".into(), 1.0)],
                Bm25Params::default(),
                &|_| true,
            )
            .into_iter()
            .collect();
        assert!(s[&0] > s[&1] && s[&0] > s[&2]);
        let filtered = idx.score(&[("token".into(), 1.0)], Bm25Params::default(), &|d| d != 0);
        assert_eq!(filtered.iter().map(|(d, _)| *d).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn removing_and_appending_matches_a_fresh_build() {
        let mut idx = Bm25Builder::build(&docs(&["token expiry", "user profile", "session token"]));
        // Drop "user profile", keep the others (renumbered), append one.
        idx.retain_remap(&[Some(0), None, Some(1)]);
        idx.extend(&docs(&["refresh token token"]));
        let fresh = Bm25Builder::build(&docs(&[
            "token expiry",
            "session token",
            "refresh token token",
        ]))
        .freeze();
        assert_eq!(idx.num_docs(), 3);
        assert!(idx.terms().all(|(t, _)| t != "profile" && t != "user"));
        let idx = idx.freeze();
        assert_eq!(idx.df("user"), 0);
        let q = [("token".into(), 1.0), ("refresh".into(), 1.0)];
        let (a, b) = (
            idx.score(&q, Bm25Params::default(), &|_| true),
            fresh.score(&q, Bm25Params::default(), &|_| true),
        );
        assert_eq!(a.len(), b.len());
        for ((da, sa), (db, sb)) in a.iter().zip(&b) {
            assert_eq!(da, db);
            assert!((sa - sb).abs() < 1e-6);
        }
    }

    #[test]
    fn the_served_form_reads_back_from_disk_and_into_a_builder() {
        let built = Bm25Builder::build(&docs(&["a b b", "b c", "", "c c c d"]));
        let dir = tempfile::tempdir().unwrap();
        built.write(dir.path()).unwrap();
        let opened = Bm25::open(dir.path()).unwrap();
        let again = opened.to_builder().freeze();
        let q = [("b".into(), 1.0), ("c".into(), 0.5), ("zz".into(), 1.0)];
        let expected = built.freeze().score(&q, Bm25Params::default(), &|_| true);
        assert_eq!(expected.len(), 3);
        for served in [&opened, &again] {
            assert_eq!(served.num_docs(), 4);
            assert_eq!(served.df("c"), 2);
            assert_eq!(served.docs_with("b").collect::<Vec<_>>(), [0, 1]);
            assert_eq!(served.score(&q, Bm25Params::default(), &|_| true), expected);
        }
    }

    #[test]
    fn a_damaged_postings_file_is_refused_not_read() {
        let built = Bm25Builder::build(&docs(&["a b", "b c"]));
        let dir = tempfile::tempdir().unwrap();
        built.write(dir.path()).unwrap();
        let data = dir.path().join(DATA_FILE);
        let bytes = std::fs::read(&data).unwrap();
        std::fs::write(&data, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(
            Bm25::open(dir.path()),
            Err(StoreError::Corrupt { .. })
        ));
        std::fs::write(&data, b"not a table").unwrap();
        assert!(Bm25::open(dir.path()).is_err());
    }
}
