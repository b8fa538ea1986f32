//! Evaluate: a relevance in [0, 1] for every candidate file, with a reason and the task
//! concepts it leaves uncovered.
//!
//! Relevance weighs (a) similarity of the file's best chunk to the ORIGINAL task, on an
//! absolute scale, (b) coverage of the task's concepts (directly or through the aliases
//! refine learned), (c) the file's dispatch score relative to the best, and (d) structure:
//! it defines what the task names, or its name says it. Bands: 0.8–1 implements the
//! target, 0.5–0.7 related, 0.2–0.4 indirect, < 0.2 irrelevant.
use crate::abbreviations::abbreviations;
use crate::hits::{ChunkHit, FileHit, Leg};
use crate::params::Params;
use iret_index::tokens::stem;
use iret_index::Index;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Cosine (MiniLM, query ↔ chunk) below which similarity says nothing, and at which it
/// says all it can.
/// (The ceiling is `Params::similarity_ceiling`.)
const SIM_FLOOR: f32 = 0.15;
const W_SIM: f32 = 0.25;
const W_COVERAGE: f32 = 0.25;
const W_STANDING: f32 = 0.30;
const W_STRUCTURE: f32 = 0.20;

#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    pub file: u32,
    pub path: String,
    pub relevance: f32,
    pub reason: String,
    /// Task concepts this file does not cover.
    pub missing: Vec<String>,
    pub chunks: Vec<ChunkHit>,
    /// Cycle in which the file was (best) evaluated.
    pub cycle: usize,
    /// The file's features in that cycle: dispatch's, with evaluate's parts.
    #[serde(skip)]
    pub features: crate::ranking::Features,
}

/// The task's concepts and the codebase words learned for each.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Concepts {
    pub words: Vec<String>,
    /// concept → codebase terms (stemmed) that stand for it.
    pub aliases: BTreeMap<String, Vec<String>>,
}

impl Concepts {
    pub fn new(words: Vec<String>) -> Self {
        Self {
            words,
            aliases: BTreeMap::new(),
        }
    }

    /// Is `concept` covered by `file` (its word, an abbreviation code writes for it, or a
    /// learned alias is in the file: `utils.js` covers "utility")?
    pub fn covered(
        &self,
        concept: &str,
        file: u32,
        index: &Index,
        tokens: &mut FileTokens,
    ) -> bool {
        let word = stem(concept);
        tokens.has(index, file, &word)
            || abbreviations(&word)
                .iter()
                .any(|a| tokens.has(index, file, a))
            || self
                .aliases
                .get(concept)
                .is_some_and(|a| a.iter().any(|t| tokens.has(index, file, t)))
    }
}

/// Which files hold a (stemmed) term, read from the keyword index's postings (a chunk's
/// path, symbol and code) once per term and loop: far cheaper than tokenizing whole files.
#[derive(Default)]
pub struct FileTokens(HashMap<String, HashSet<u32>>);

impl FileTokens {
    pub fn has(&mut self, index: &Index, file: u32, term: &str) -> bool {
        if !self.0.contains_key(term) {
            let files = index
                .bm25
                .docs_with(term)
                .map(|c| index.chunks.file(c as usize))
                .collect();
            self.0.insert(term.to_string(), files);
        }
        self.0[term].contains(&file)
    }
}

pub struct Evaluator<'a> {
    pub index: &'a Index,
    pub task_embedding: &'a [f32],
    pub concepts: &'a Concepts,
    /// Only the best this-many dispatch files are evaluated.
    pub max_files: usize,
    /// `similarity_ceiling`.
    pub params: &'a Params,
}

impl Evaluator<'_> {
    pub fn evaluate(
        &self,
        hits: &[FileHit],
        cycle: usize,
        tokens: &mut FileTokens,
    ) -> Vec<Evaluation> {
        let top_score = hits.first().map_or(1.0, |h| h.score).max(1e-6);
        hits.iter()
            .take(self.max_files)
            .map(|hit| {
                let f = &self.index.files[hit.file as usize];
                let range = crate::corpus::chunk_range(self.index, hit.file);
                let sim = if self.task_embedding.is_empty() {
                    0.0
                } else {
                    range
                        .map(|c| self.index.vectors.dot(c, self.task_embedding))
                        .fold(f32::MIN, f32::max)
                };
                let ceil = self.params.similarity_ceiling;
                let sim_abs = ((sim - SIM_FLOOR) / (ceil - SIM_FLOOR)).clamp(0.0, 1.0);
                let (covered, missing): (Vec<&String>, Vec<&String>) = self
                    .concepts
                    .words
                    .iter()
                    .partition(|c| self.concepts.covered(c, hit.file, self.index, tokens));
                let coverage = if self.concepts.words.is_empty() {
                    0.0
                } else {
                    covered.len() as f32 / self.concepts.words.len() as f32
                };
                let structural = structure(hit, self.params.name_share_structure);
                // Standing against the best file.
                let rel_score = (hit.score / top_score).clamp(0.0, 1.0);
                let mut relevance =
                    W_COVERAGE * coverage + W_STANDING * rel_score + W_STRUCTURE * structural;
                if self.index.manifest.keyword_only() {
                    // Nothing is embedded yet: similarity is no evidence, the rest is all.
                    relevance /= 1.0 - W_SIM;
                } else {
                    relevance += W_SIM * sim_abs;
                }
                if hit.noise {
                    relevance *= 0.8;
                }
                let relevance = (relevance * 100.0).round() / 100.0;
                let features = crate::ranking::Features {
                    relevance,
                    eval_similarity: sim_abs,
                    eval_coverage: coverage,
                    eval_structure: structural,
                    evaluated: 1.0,
                    ..hit.features
                };
                Evaluation {
                    file: hit.file,
                    path: f.path.clone(),
                    relevance,
                    reason: reason(self.index, hit, sim, &covered, cycle),
                    missing: missing.into_iter().cloned().collect(),
                    chunks: hit.chunks.clone(),
                    cycle,
                    features,
                }
            })
            .collect()
    }
}

/// A judgement of a file evaluate did not judge (a learned ranker ranks it among the
/// rest): the reason its dispatch hit gives, no relevance yet, no missing concepts known.
pub(crate) fn unjudged(index: &Index, hit: &FileHit) -> Evaluation {
    let cycle = 1;
    Evaluation {
        file: hit.file,
        path: index.files[hit.file as usize].path.clone(),
        relevance: 0.0,
        reason: reason(index, hit, hit.features.cos_best, &[], cycle),
        missing: Vec::new(),
        chunks: hit.chunks.clone(),
        cycle,
        features: hit.features,
    }
}

/// What the file's structure says, the strongest of: it defines what the task names or
/// the task's evidence points at it (1), its name says the task's words (0.8, scaled by
/// the share of the name they make with `name_share` > 0), refine aimed at it (0.6), its
/// folders say the task's words (0.4).
fn structure(hit: &FileHit, name_share: f32) -> f32 {
    let tiers = [
        (!hit.defines.is_empty() || !hit.evidence.is_empty(), 1.0),
        (
            !hit.name_words.is_empty(),
            0.8 * (1.0 - name_share + name_share * hit.name_share.min(1.0)),
        ),
        (hit.focused, 0.6),
        (!hit.path_words.is_empty(), 0.4),
    ];
    tiers
        .iter()
        .filter(|(says, _)| *says)
        .map(|(_, x)| *x)
        .fold(0.0, f32::max)
}

fn reason(index: &Index, hit: &FileHit, sim: f32, covered: &[&String], cycle: usize) -> String {
    let mut parts = Vec::new();
    if !hit.defines.is_empty() {
        parts.push(format!("defines {}", hit.defines.join(", ")));
    }
    parts.extend(hit.evidence.iter().cloned());
    parts.extend(hit.history.iter().cloned());
    if !covered.is_empty() {
        parts.push(format!(
            "covers {}",
            covered
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !hit.name_words.is_empty() {
        parts.push(format!("file name says {}", hit.name_words.join(", ")));
    }
    if hit.focused {
        parts.push("connected to a relevant file".into());
    }
    if let Some(best) = hit.chunks.first() {
        let c = &index.chunks.get(best.chunk as usize);
        let what = if c.symbol.is_empty() {
            format!("lines {}-{}", c.start_line, c.end_line)
        } else {
            c.symbol.to_string()
        };
        let leg = match best.leg {
            Leg::Both => "vector+keyword",
            Leg::Vector => "vector",
            Leg::Keyword => "keyword",
        };
        parts.push(format!(
            "best chunk {what} (cos {sim:.2}, {leg}, cycle {cycle})"
        ));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(name_words: &[&str], name_share: f32, path_words: &[&str]) -> FileHit {
        FileHit {
            file: 0,
            score: 1.0,
            chunks: Vec::new(),
            defines: Vec::new(),
            name_words: name_words.iter().map(|w| w.to_string()).collect(),
            name_share,
            path_words: path_words.iter().map(|w| w.to_string()).collect(),
            noise: false,
            focused: false,
            evidence: Vec::new(),
            history: None,
            features: Default::default(),
        }
    }

    #[test]
    fn a_name_the_task_says_wholly_is_stronger_structure_than_one_word_of_it() {
        let whole = structure(&hit(&["resolver"], 1.0, &[]), 0.75);
        let third = structure(&hit(&["object"], 1.0 / 3.0, &[]), 0.75);
        assert_eq!(whole, 0.8);
        assert!((third - 0.8 * (0.25 + 0.75 / 3.0)).abs() < 1e-6, "{third}");
        // Without the share, any said name counts in full (the tiers of before).
        assert_eq!(structure(&hit(&["object"], 1.0 / 3.0, &[]), 0.0), 0.8);
        // The strongest tier wins: a weakly said name does not hide a folder that says
        // the task's words.
        assert_eq!(structure(&hit(&["object"], 0.2, &["resolvers"]), 1.0), 0.4);
        assert_eq!(structure(&hit(&[], 0.0, &[]), 0.75), 0.0);
    }
}
