//! A ranker learned from data over the same [`Features`] the rules weigh: it orders a
//! loop's candidates, and its calibrated output (in the seed's bands: how likely a file is one to
//! read or change) becomes their relevance. The trait is here; the shipped model
//! (LightGBM trees run by ONNX Runtime) is `iret-rank`'s, and tests use their own.
use super::candidates::{Candidate, Sighting};
use super::features::Features;
use crate::evaluate::{self, Evaluation};
use iret_index::Index;
use std::collections::HashMap;

pub trait Ranker: Send + Sync + std::fmt::Debug {
    /// What the ranker is (shown in answers and benchmarks).
    fn id(&self) -> &str;
    /// One score per candidate, higher first.
    fn score(&self, rows: &[Features]) -> anyhow::Result<Vec<f32>>;
    /// Each candidate's relevance in [0, 1], in the seed's bands (0.7 and above: a file to
    /// read or change; below 0.2: irrelevant), from the scores of one task's candidates.
    fn relevance(&self, scores: &[f32]) -> Vec<f32>;
}

/// The loop's answer in the ranker's order: every candidate, best first, its relevance
/// the ranker's relevance (two decimals, as evaluate's). A candidate evaluate never
/// judged gets its judgement from its dispatch hit (no missing concepts known).
pub(crate) fn order(
    ranker: &dyn Ranker,
    index: &Index,
    evaluated: Vec<Evaluation>,
    candidates: Vec<Candidate>,
    seen: &HashMap<u32, Sighting>,
) -> anyhow::Result<(Vec<Evaluation>, Vec<Candidate>)> {
    let rows: Vec<Features> = candidates.iter().map(|c| c.features).collect();
    let scores = ranker.score(&rows)?;
    anyhow::ensure!(
        scores.len() == candidates.len(),
        "the ranker {} scored {} of {} candidates",
        ranker.id(),
        scores.len(),
        candidates.len()
    );
    let relevance = ranker.relevance(&scores);
    let mut ranked: Vec<(f32, f32, Candidate)> = scores
        .into_iter()
        .zip(relevance)
        .zip(candidates)
        .map(|((s, p), c)| (s, p, c))
        .collect();
    // Ties keep the rules' order (candidates come in it).
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut judged: HashMap<u32, Evaluation> = evaluated.into_iter().map(|e| (e.file, e)).collect();
    let mut out = Vec::with_capacity(ranked.len());
    for (_, relevance, c) in &ranked {
        let relevance = (relevance * 100.0).round() / 100.0;
        let eval = match judged.remove(&c.file) {
            Some(e) => Some(e),
            None => seen
                .get(&c.file)
                .and_then(|s| s.hit.as_ref())
                .map(|hit| evaluate::unjudged(index, hit)),
        };
        if let Some(mut e) = eval {
            e.relevance = relevance;
            e.features = c.features;
            out.push(e);
        }
    }
    Ok((out, ranked.into_iter().map(|(_, _, c)| c).collect()))
}
