//! `iret bench --pairs FILE`: what a query encoder is trained on. For every instance of a
//! localisation run, on the tree the task was written for: the task as the loop embeds it
//! (its visible text and the shipped model's vector), its gold files, and the chunks a
//! trained query must tell apart: every chunk of a gold file, the shipped vector leg's
//! top [`TOP`] (the hard negatives: chunks it ranks high that the change did not touch)
//! and [`RANDOM`] more drawn from the whole tree.
//!
//! One JSON line per instance in FILE; the vectors in `FILE.vec`, each once per run:
//! a 16-byte key (blake3 of the vector's f16 bytes) then `dims` little-endian f16. A
//! line names its vectors by key, so nothing the index holds is stored twice.
use half::f16;
use iret_embed::Embedder;
use iret_index::Index;
use iret_retrieve::Query;
use serde::Serialize;
use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The shipped vector leg's best chunks kept per task.
pub const TOP: usize = 200;
/// Chunks drawn at random from the tree per task.
pub const RANDOM: usize = 100;
/// At most this many chunks of one gold file.
const PER_GOLD_FILE: usize = 64;

type Key = [u8; 16];

pub struct PairSink {
    inner: Mutex<Sink>,
}

struct Sink {
    lines: BufWriter<std::fs::File>,
    vectors: BufWriter<std::fs::File>,
    written: HashSet<Key>,
}

#[derive(Serialize)]
struct Line<'a> {
    name: &'a str,
    repo: &'a str,
    text: &'a str,
    /// The key of the task's vector.
    query: String,
    gold: &'a [String],
    /// `[key, file, shipped cosine]` per chunk; a file path appears as given in `files`.
    chunks: Vec<(String, u32, f32)>,
    files: Vec<&'a str>,
}

impl PairSink {
    /// Creates `path` and `path.vec` (replacing them).
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let open = |p: &Path| {
            std::fs::File::create(p)
                .map(BufWriter::new)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))
        };
        Ok(Self {
            inner: Mutex::new(Sink {
                lines: open(path)?,
                vectors: open(&vec_path(path))?,
                written: HashSet::new(),
            }),
        })
    }

    /// The pairs of one instance on `index`.
    pub fn write(
        &self,
        name: &str,
        repo: &str,
        query: &Query,
        gold: &[String],
        index: &Index,
        embedder: &dyn Embedder,
    ) -> anyhow::Result<()> {
        if index.vectors.is_empty() || index.manifest.keyword_only() {
            return Ok(());
        }
        let visible = query.visible();
        let text = visible.task.as_str();
        let q = round(&embedder.embed(&[text])?.remove(0));
        let chosen = choose(index, &q, gold, name);
        let mut sink = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let query_key = sink.vector(&q)?;
        let mut files: Vec<&str> = Vec::new();
        let mut chunks = Vec::with_capacity(chosen.len());
        for c in chosen {
            let v = index.vectors.row(c);
            let key = sink.vector(&v)?;
            let path = index.files[index.chunks.file(c) as usize].path.as_str();
            let f = match files.iter().position(|p| *p == path) {
                Some(i) => i,
                None => {
                    files.push(path);
                    files.len() - 1
                }
            };
            chunks.push((key, f as u32, iret_embed::dot(&q, &v)));
        }
        let line = Line {
            name,
            repo,
            text,
            query: query_key,
            gold,
            chunks,
            files,
        };
        serde_json::to_writer(&mut sink.lines, &line)?;
        sink.lines.write_all(b"\n")?;
        sink.lines.flush()?;
        sink.vectors.flush()?;
        Ok(())
    }
}

impl Sink {
    /// The vector's key, writing the vector the first time it is seen.
    fn vector(&mut self, v: &[f32]) -> anyhow::Result<String> {
        let mut bytes = Vec::with_capacity(2 * v.len());
        for x in v {
            bytes.extend_from_slice(&f16::from_f32(*x).to_le_bytes());
        }
        let mut key: Key = [0; 16];
        key.copy_from_slice(&blake3::hash(&bytes).as_bytes()[..16]);
        if self.written.insert(key) {
            self.vectors.write_all(&key)?;
            self.vectors.write_all(&bytes)?;
        }
        Ok(hex(&key))
    }
}

/// Gold files' chunks, the shipped top [`TOP`], and [`RANDOM`] drawn by a generator seeded
/// by the task's name (the same run writes the same pairs); each chunk once.
fn choose(index: &Index, q: &[f32], gold: &[String], name: &str) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let mut seen = HashSet::new();
    let mut take = |c: usize, out: &mut Vec<usize>| {
        if seen.insert(c) {
            out.push(c);
        }
    };
    for f in index.files.iter().filter(|f| gold.contains(&f.path)) {
        let first = f.first_chunk as usize;
        for c in first..first + (f.chunk_count as usize).min(PER_GOLD_FILE) {
            take(c, &mut out);
        }
    }
    for (c, _) in index.vectors.exact(q, TOP, &|_| true) {
        take(c, &mut out);
    }
    let n = index.vectors.len() as u64;
    let mut state = u64::from_le_bytes(
        blake3::hash(name.as_bytes()).as_bytes()[..8]
            .try_into()
            .unwrap_or_default(),
    );
    for _ in 0..RANDOM {
        state = splitmix(state);
        take((state % n) as usize, &mut out);
    }
    out
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Rounded to f16 and back, as the index stores every vector.
fn round(v: &[f32]) -> Vec<f32> {
    v.iter().map(|x| f16::from_f32(*x).to_f32()).collect()
}

fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn vec_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".vec");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_is_written_once_and_keyed_by_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pairs.jsonl");
        let sink = PairSink::create(&path).unwrap();
        let (a, b) = {
            let mut s = sink.inner.lock().unwrap();
            let a = s.vector(&[0.5, -0.25]).unwrap();
            let again = s.vector(&[0.5, -0.25]).unwrap();
            assert_eq!(a, again);
            let b = s.vector(&[0.5, 0.25]).unwrap();
            s.vectors.flush().unwrap();
            (a, b)
        };
        assert_ne!(a, b);
        let bytes = std::fs::read(vec_path(&path)).unwrap();
        assert_eq!(
            bytes.len(),
            2 * (16 + 2 * 2),
            "two distinct vectors, once each"
        );
        assert_eq!(hex(bytes[..16].try_into().unwrap()), a);
        let x = f16::from_le_bytes([bytes[16], bytes[17]]).to_f32();
        assert_eq!(x, 0.5);
    }

    #[test]
    fn the_generator_spreads_and_repeats() {
        let a: Vec<u64> = (0..4)
            .scan(7, |s, _| {
                *s = splitmix(*s);
                Some(*s % 1000)
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .scan(7, |s, _| {
                *s = splitmix(*s);
                Some(*s % 1000)
            })
            .collect();
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| w[0] != w[1]));
    }
}
