//! The codebase's own words: identifier parts with their document frequency and
//! embeddings, so a task's words ("rate limiting") can be mapped to the code's
//! ("throttle", "limiter").
use crate::tokens::{identifiers, is_stopword, split_identifier};
use serde::{Deserialize, Serialize};

/// At most this many terms are kept (the most frequent).
pub const MAX_TERMS: usize = 6000;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Vocab {
    pub terms: Vec<String>,
    pub df: Vec<u32>,
    pub dims: usize,
    #[serde(with = "crate::store::as_f16")]
    pub vectors: Vec<f32>,
}

/// Lower-case identifier parts of `text` worth learning (letters only, 3+ chars).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    identifiers(text).flat_map(|id| {
        split_identifier(id)
            .into_iter()
            .filter(|p| p.len() >= 3 && p.len() <= 24 && p.chars().all(|c| c.is_ascii_alphabetic()))
            .map(|p| p.to_ascii_lowercase())
            .filter(|p| !is_stopword(p))
            .collect::<Vec<_>>()
    })
}

/// In how many chunks each word occurs, over the whole index (stored with it, so an
/// incremental update only counts the chunks that changed).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TermCounts {
    df: foldhash::HashMap<String, u32>,
}

/// The distinct words of one chunk.
pub fn chunk_words(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = words(text).collect();
    seen.sort();
    seen.dedup();
    seen
}

impl TermCounts {
    /// Counts one chunk's distinct words (from [`chunk_words`]).
    pub fn add(&mut self, words: Vec<String>) {
        for w in words {
            *self.df.entry(w).or_default() += 1;
        }
    }

    /// Every word and its count (in no order).
    pub fn counts(&self) -> impl Iterator<Item = (&str, u32)> {
        self.df.iter().map(|(w, n)| (w.as_str(), *n))
    }

    /// Adds `n` chunks' counts of `word` (another table's, [`Self::counts`]).
    pub fn add_count(&mut self, word: &str, n: u32) {
        match self.df.get_mut(word) {
            Some(c) => *c += n,
            None => {
                self.df.insert(word.to_string(), n);
            }
        }
    }

    /// Forgets one chunk's distinct words.
    pub fn remove(&mut self, words: &[String]) {
        for w in words {
            if let Some(n) = self.df.get_mut(w) {
                *n -= 1;
                if *n == 0 {
                    self.df.remove(w);
                }
            }
        }
    }

    /// The `k` most frequent words (ties by word), most frequent first.
    pub fn top(&self, k: usize) -> Vec<(String, u32)> {
        let mut terms: Vec<(String, u32)> = self.df.iter().map(|(t, n)| (t.clone(), *n)).collect();
        terms.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        terms.truncate(k);
        terms
    }
}

impl Vocab {
    pub fn vector(&self, i: usize) -> &[f32] {
        &self.vectors[i * self.dims..(i + 1) * self.dims]
    }

    pub fn position(&self, term: &str) -> Option<usize> {
        self.terms.iter().position(|t| t == term)
    }

    /// The `k` terms closest to `query`, best first.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        if self.dims == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f32)> = (0..self.terms.len())
            .map(|i| (i, iret_embed::dot(query, self.vector(i))))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(k);
        scored
    }
}
