//! Learned terms in the codebase's own words: the stem dispatch searches for, the
//! identifier the code writes it in (`throttle`, `bodyLimit`), and the file it came from.
use iret_index::bm25::Bm25Params;
use iret_index::tokens::{identifiers, split_identifier, stem};
use iret_index::Index;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Term {
    /// The identifier as the code writes it.
    pub word: String,
    /// Where it was found (relative path).
    pub file: String,
    /// The stemmed form searched for.
    pub stem: String,
}

impl Term {
    /// `stem` as found in `file`: the identifier there that contains it most often (the
    /// stem itself when the file does not, e.g. it came from a path).
    pub fn in_file(index: &Index, file: u32, stem: &str) -> Self {
        let f = &index.files[file as usize];
        Self {
            word: code_word(index, file, stem).unwrap_or_else(|| stem.to_string()),
            file: f.path.clone(),
            stem: stem.to_string(),
        }
    }

    /// `stem` where the codebase uses it most: the file of its best BM25 chunk.
    pub fn in_codebase(index: &Index, stem: &str) -> Option<Self> {
        let terms = [(stem.to_string(), 1.0)];
        let params = Bm25Params { k1: 1.2, b: 0.75 };
        let (doc, _) = index
            .bm25
            .score(&terms, params, &|_| true)
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        Some(Self::in_file(index, index.chunks.file(doc as usize), stem))
    }
}

/// Chunks of a file read for a term's spelling, at most: the word is the same in each.
const SPELLING_CHUNKS: usize = 4;

/// The most frequent identifier of `file` with a part that stems to `stem` (the first
/// seen on a tie), read from the file's first chunks that hold the stem (the keyword
/// index says which), not the whole file.
fn code_word(index: &Index, file: u32, wanted: &str) -> Option<String> {
    let f = &index.files[file as usize];
    let range = f.first_chunk..f.first_chunk + f.chunk_count;
    let mut holding: Vec<u32> = index
        .bm25
        .docs_with(wanted)
        .filter(|c| range.contains(c))
        .collect();
    holding.sort_unstable();
    holding.truncate(SPELLING_CHUNKS);
    let chunks = holding.iter().map(|&c| index.chunks.get(c as usize));
    let mut counts: HashMap<&str, (usize, usize)> = HashMap::new(); // id → (count, first seen)
    let mut seen = 0;
    for c in chunks {
        for id in identifiers(c.text) {
            if id.len() > 48 {
                continue;
            }
            let hit = split_identifier(id)
                .iter()
                .any(|p| stem(&p.to_lowercase()) == wanted)
                || stem(&id.to_lowercase()) == wanted;
            if hit {
                let e = counts.entry(id).or_insert((0, seen));
                e.0 += 1;
                seen += 1;
            }
        }
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.cmp(&a.1 .1)))
        .map(|(id, _)| id.to_string())
}
