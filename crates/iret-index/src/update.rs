//! What changed since the live generation: each walked file is reused, re-chunked or
//! skipped, and the new chunk table is assembled from the kept and the new chunks.
use crate::bm25::Bm25Builder;
use crate::index::{ChunkEntry, FileEntry};
use crate::tokens::keyword_tokens;
use crate::vectors::VectorsBuilder;
use crate::vocab::{chunk_words, Vocab};
use crate::walk::{read_text, Found, SkipReason};
use iret_chunk::{chunk, Language, Limits};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// What happens to one walked file.
pub(crate) enum Outcome {
    /// Unchanged (same size and mtime, or same content): keep this previous file's chunks.
    Reuse(usize),
    Parsed {
        /// The previous version of this file, if any (its unchanged chunks are revived).
        previous: Option<usize>,
        language: Option<Language>,
        hash: String,
        chunks: Vec<iret_chunk::Chunk>,
    },
    Skip(SkipReason),
}

/// Decides per file, reading and chunking only what changed (in parallel, order kept).
pub(crate) fn classify(walked: &[Found], old_files: &[FileEntry], limits: Limits) -> Vec<Outcome> {
    let by_path: HashMap<&str, usize> = old_files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i))
        .collect();
    walked
        .par_iter()
        .map(|f| {
            let old = by_path.get(f.rel.as_str()).map(|&i| (i, &old_files[i]));
            if let Some((i, e)) = old {
                if e.size == f.size && e.mtime_ns == f.mtime_ns {
                    return Outcome::Reuse(i);
                }
            }
            let text = match read_text(&f.abs) {
                Ok(t) => t,
                Err(reason) => return Outcome::Skip(reason),
            };
            let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
            if let Some((i, e)) = old {
                if e.hash == hash {
                    return Outcome::Reuse(i);
                }
            }
            let language = Language::from_path(&f.abs);
            Outcome::Parsed {
                previous: old.map(|(i, _)| i),
                language,
                hash,
                chunks: chunk(&text, language, limits),
            }
        })
        .collect()
}

/// The chunk table after an update. Previous chunks of reused files come first, in their
/// old order (renumbered); chunks of new and changed files follow.
pub(crate) struct Assembly {
    pub files: Vec<FileEntry>,
    pub chunks: Vec<ChunkEntry>,
    /// Previous chunk → its new number, for chunks kept as they were.
    pub remap: Vec<Option<u32>>,
    /// How many chunks were kept (they are `chunks[..kept]`).
    pub kept: usize,
    /// New chunk → the previous chunk it revives (same file, symbol and text).
    pub revived: HashMap<u32, u32>,
    /// The distinct words of every previous chunk that is gone (for the term counts).
    pub removed_words: Vec<Vec<String>>,
    pub skipped_files: Vec<String>,
    pub changed_files: usize,
    pub removed_files: usize,
}

impl Assembly {
    /// The chunks of new and changed files (after the kept ones).
    pub fn new_chunks(&self) -> &[ChunkEntry] {
        &self.chunks[self.kept..]
    }
}

/// Assembles the new file and chunk tables; skipped files are counted into `skipped`.
pub(crate) fn assemble(
    walked: &[Found],
    outcomes: Vec<Outcome>,
    old_files: Vec<FileEntry>,
    old_chunks: Vec<ChunkEntry>,
    skipped: &mut BTreeMap<SkipReason, usize>,
) -> Assembly {
    let remap = remap_kept(&outcomes, old_files.len(), &old_chunks);
    let kept = remap.iter().flatten().count();
    let removed_words: Vec<Vec<String>> = old_chunks
        .par_iter()
        .zip(&remap)
        .filter(|(_, r)| r.is_none())
        .map(|(c, _)| chunk_words(&c.text))
        .collect();
    let dropped = dropped_by_content(&old_chunks, &remap);
    let chunks = old_chunks
        .into_iter()
        .zip(&remap)
        .filter_map(|(c, r)| r.map(|_| c))
        .collect();
    let mut tables = Tables {
        files: Vec::new(),
        chunks,
        dropped,
        revived: HashMap::new(),
        changed_files: 0,
    };
    let mut skipped_files = Vec::new();
    for (outcome, found) in outcomes.into_iter().zip(walked) {
        match outcome {
            Outcome::Skip(reason) => {
                *skipped.entry(reason).or_default() += 1;
                skipped_files.push(found.rel.clone());
            }
            Outcome::Reuse(i) => tables.reuse(found, &old_files[i], &remap),
            Outcome::Parsed {
                previous,
                language,
                hash,
                chunks,
            } => tables.add_parsed(found, previous, language, hash, chunks),
        }
    }
    let walked_paths: std::collections::HashSet<&str> =
        walked.iter().map(|f| f.rel.as_str()).collect();
    let removed_files = old_files
        .iter()
        .filter(|f| !walked_paths.contains(f.path.as_str()))
        .count();
    Assembly {
        files: tables.files,
        chunks: tables.chunks,
        remap,
        kept,
        revived: tables.revived,
        removed_words,
        skipped_files,
        changed_files: tables.changed_files,
        removed_files,
    }
}

/// Previous chunk → its new number: the chunks of reused files are kept, in order.
fn remap_kept(
    outcomes: &[Outcome],
    old_file_count: usize,
    old_chunks: &[ChunkEntry],
) -> Vec<Option<u32>> {
    let mut keep_file = vec![false; old_file_count];
    for o in outcomes {
        if let Outcome::Reuse(i) = o {
            keep_file[*i] = true;
        }
    }
    let mut kept = 0u32;
    old_chunks
        .iter()
        .map(|c| {
            keep_file[c.file as usize].then(|| {
                kept += 1;
                kept - 1
            })
        })
        .collect()
}

/// What makes a chunk the same chunk again: its symbol and text.
fn chunk_key(symbol: &str, text: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(symbol.as_bytes());
    h.update(&[0]);
    h.update(text.as_bytes());
    *h.finalize().as_bytes()
}

/// The previous chunks that are gone, by (file, content): a changed file's chunk that
/// comes back unchanged revives one of them, the earliest first.
fn dropped_by_content(
    old_chunks: &[ChunkEntry],
    remap: &[Option<u32>],
) -> HashMap<(u32, [u8; 32]), Vec<u32>> {
    let mut dropped: HashMap<(u32, [u8; 32]), Vec<u32>> = HashMap::new();
    for (c, chunk) in old_chunks.iter().enumerate().rev() {
        if remap[c].is_none() {
            dropped
                .entry((chunk.file, chunk_key(&chunk.symbol, &chunk.text)))
                .or_default()
                .push(c as u32);
        }
    }
    dropped
}

/// The file and chunk tables while they are assembled.
struct Tables {
    files: Vec<FileEntry>,
    chunks: Vec<ChunkEntry>,
    /// Gone previous chunks a changed file may revive ([`dropped_by_content`]).
    dropped: HashMap<(u32, [u8; 32]), Vec<u32>>,
    /// New chunk → the previous chunk it revives.
    revived: HashMap<u32, u32>,
    changed_files: usize,
}

impl Tables {
    /// A reused file: its kept chunks (already in the table) point at its new number.
    fn reuse(&mut self, found: &Found, old: &FileEntry, remap: &[Option<u32>]) {
        let file = self.files.len() as u32;
        let first = if old.chunk_count == 0 {
            0
        } else {
            remap[old.first_chunk as usize].expect("a reused file keeps its chunks")
        };
        for c in &mut self.chunks[first as usize..(first + old.chunk_count) as usize] {
            c.file = file;
        }
        self.files.push(FileEntry {
            path: found.rel.clone(),
            language: old.language.clone(),
            size: found.size,
            mtime_ns: found.mtime_ns,
            hash: old.hash.clone(),
            first_chunk: first,
            chunk_count: old.chunk_count,
            imports: old.imports.clone(),
        });
    }

    /// A new or changed file: its chunks are appended; those unchanged since its previous
    /// version (`previous`) revive their old chunk (vector and graph point).
    fn add_parsed(
        &mut self,
        found: &Found,
        previous: Option<usize>,
        language: Option<Language>,
        hash: String,
        parsed: Vec<iret_chunk::Chunk>,
    ) {
        self.changed_files += 1;
        let file = self.files.len() as u32;
        let first = self.chunks.len() as u32;
        if let Some(i) = previous {
            for (j, c) in parsed.iter().enumerate() {
                let k = (i as u32, chunk_key(&c.symbol, &c.text));
                if let Some(old) = self.dropped.get_mut(&k).and_then(Vec::pop) {
                    self.revived.insert(first + j as u32, old);
                }
            }
        }
        self.chunks.extend(parsed.into_iter().map(|c| ChunkEntry {
            file,
            start_line: c.start_line as u32,
            end_line: c.end_line as u32,
            symbol: c.symbol,
            defines: c.defines,
            text: c.text,
        }));
        self.files.push(FileEntry {
            path: found.rel.clone(),
            language: language.map(|l| l.name().to_string()),
            size: found.size,
            mtime_ns: found.mtime_ns,
            hash,
            first_chunk: first,
            chunk_count: self.chunks.len() as u32 - first,
            imports: self
                .chunks
                .get(first as usize)
                .filter(|_| self.chunks.len() as u32 > first)
                .map(|c| {
                    iret_chunk::imports::module_names(&c.text)
                        .into_iter()
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
}

/// The vector table: rows of kept chunks come from the previous table (in their new
/// order), then for each new chunk (`new`) its revived row or the next `fresh` one.
pub(crate) fn carry_vectors(
    old: Option<&VectorsBuilder>,
    remap: &[Option<u32>],
    revived: &HashMap<u32, u32>,
    new: Range<usize>,
    fresh: &[f32],
    dims: usize,
) -> Vec<f32> {
    let mut data = Vec::with_capacity(new.end * dims);
    if let Some(v) = old {
        for (c, r) in remap.iter().enumerate() {
            if r.is_some() {
                data.extend_from_slice(v.get(c));
            }
        }
    }
    let mut fresh_rows = fresh.chunks_exact(dims.max(1));
    for j in new {
        match (revived.get(&(j as u32)), old) {
            (Some(&prev), Some(v)) => data.extend_from_slice(v.get(prev as usize)),
            _ => data.extend_from_slice(fresh_rows.next().expect("every new chunk was embedded")),
        }
    }
    data
}

/// The vocabulary of the `top` terms: vectors of terms the previous vocabulary had are
/// kept, the others come from `fresh` in order.
pub(crate) fn carry_vocab(
    top: Vec<(String, u32)>,
    old_terms: &HashMap<String, usize>,
    old: Option<&Vocab>,
    fresh: &[f32],
    dims: usize,
) -> Vocab {
    let mut vocab = Vocab {
        terms: Vec::with_capacity(top.len()),
        df: Vec::with_capacity(top.len()),
        dims,
        vectors: Vec::with_capacity(top.len() * dims),
    };
    let mut fresh = fresh.chunks_exact(dims.max(1));
    for (term, df) in top {
        match (old_terms.get(term.as_str()), old) {
            (Some(&i), Some(v)) => vocab.vectors.extend_from_slice(v.vector(i)),
            _ => vocab
                .vectors
                .extend_from_slice(fresh.next().expect("every new term was embedded")),
        }
        vocab.terms.push(term);
        vocab.df.push(df);
    }
    vocab
}

/// Chunks tokenized at once (in parallel) before their tokens are counted: the tokens of
/// every chunk of a large tree at once would take gigabytes (the Linux kernel's 802k
/// chunks: several).
pub(crate) const TOKEN_BATCH: usize = 16_384;

/// Keyword postings: the previous ones renumbered (gone chunks dropped), then the new
/// chunks appended (tokenized a batch at a time; the postings are the same).
pub(crate) fn update_bm25(
    old: Option<Bm25Builder>,
    remap: &[Option<u32>],
    files: &[FileEntry],
    new_chunks: &[ChunkEntry],
) -> Bm25Builder {
    let mut bm25 = match old {
        Some(mut b) => {
            b.retain_remap(remap);
            b
        }
        None => Bm25Builder::default(),
    };
    extend_bm25(&mut bm25, files, new_chunks);
    bm25
}

/// `chunks` (of `files`) appended to the keyword postings, tokenized a batch at a time.
pub(crate) fn extend_bm25(bm25: &mut Bm25Builder, files: &[FileEntry], chunks: &[ChunkEntry]) {
    for batch in chunks.chunks(TOKEN_BATCH) {
        let docs: Vec<Vec<String>> = batch
            .par_iter()
            .map(|c| keyword_tokens(&files[c.file as usize].path, &c.symbol, &c.text))
            .collect();
        bm25.extend(&docs);
    }
}

/// The HNSW graph over `vectors`: the previous graph updated in place (its points of
/// kept and revived chunks stay, the others die, new chunks are inserted), or a new one.
pub(crate) fn update_graph(
    mut vectors: VectorsBuilder,
    old: Option<VectorsBuilder>,
    remap: &[Option<u32>],
    revived: &HashMap<u32, u32>,
    kept: usize,
) -> VectorsBuilder {
    match old {
        Some(old) => {
            let mut graph_remap = remap.to_vec();
            for (&new, &prev) in revived {
                graph_remap[prev as usize] = Some(new);
            }
            vectors.update_graph(old, &graph_remap, kept);
        }
        None => vectors.build_graph(),
    }
    vectors
}
