//! Loop: dispatch → evaluate → refine, at most N cycles, stopping early once enough
//! files are strongly relevant and no critical gap remains.
use crate::dispatch::{dispatch, Params, Scope, State};
use crate::evaluate::{Concepts, Evaluation, Evaluator, FileTokens};
use crate::query::{analyse, Query};
use crate::refine::{Refinement, Refiner};
use iret_embed::Embedder;
use iret_index::Index;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Words of a task that say what to do, not what to look for.
const TASK_WORDS: &[&str] = &[
    "fix",
    "bug",
    "add",
    "support",
    "issue",
    "change",
    "update",
    "improve",
    "make",
    "need",
    "should",
    "want",
    "new",
    "problem",
    "broken",
    "wrong",
    "error",
    "properly",
    "correctly",
];

/// The lower bound of the "related" band: an excluded file never ranks above a file
/// judged at least this relevant.
const RELATED: f32 = 0.5;

#[derive(Debug, Clone)]
pub struct Options {
    pub cycles: usize,
    /// Files at or above this relevance are returned.
    pub min_relevance: f32,
    /// Stop once this many files reach `strong`.
    pub enough: usize,
    pub strong: f32,
    pub params: Params,
    /// Files evaluated per cycle.
    pub evaluate_top: usize,
    /// Weight of cycles after the first in the final order (the first weighs 1).
    pub later_cycles_weight: f32,
    /// Weight of the evaluated relevance in the final order (beside dispatch standing).
    pub relevance_weight: f32,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            cycles: 3,
            min_relevance: 0.7,
            enough: 3,
            strong: 0.7,
            params: Params::default(),
            evaluate_top: 20,
            later_cycles_weight: 0.15,
            relevance_weight: 0.15,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CycleTrace {
    pub cycle: usize,
    /// BM25 terms dispatched (task terms + learned ones).
    pub terms: Vec<String>,
    pub candidates: usize,
    /// Evaluated files, best first: (path, relevance).
    pub scores: Vec<(String, f32)>,
    pub refinement: Option<Refinement>,
    pub stop: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// Every evaluated file (best evaluation across cycles), best first: by the fused
    /// standing of the file in each cycle's dispatch (the first cycle weighs most).
    pub evaluated: Vec<Evaluation>,
    pub cycles: Vec<CycleTrace>,
    pub concepts: Concepts,
}

impl Outcome {
    /// Files at or above `min`, best first.
    pub fn relevant(&self, min: f32) -> Vec<&Evaluation> {
        self.evaluated
            .iter()
            .filter(|e| e.relevance >= min)
            .collect()
    }
}

/// The starting state for `query`: analysed words, embedding, keywords, scope.
pub fn initial_state(query: &Query, embedder: &dyn Embedder) -> anyhow::Result<State> {
    let full = if query.keywords.is_empty() {
        query.task.clone()
    } else {
        format!("{} {}", query.task, query.keywords.join(" "))
    };
    let analysis = analyse(&full);
    let mut terms: Vec<(String, f32)> = Vec::new();
    for t in &analysis.terms {
        if !terms.iter().any(|(x, _)| x == t) {
            terms.push((t.clone(), 1.0));
        }
    }
    let embedding = embedder.embed(&[&full])?.remove(0);
    Ok(State {
        embedding,
        terms,
        analysis,
        scope: Scope::new(&query.include, &query.exclude)?,
        excluded: HashSet::new(),
        focus: HashMap::new(),
    })
}

pub fn run(
    index: &Index,
    embedder: &dyn Embedder,
    query: &Query,
    opts: &Options,
) -> anyhow::Result<Outcome> {
    let mut state = initial_state(query, embedder)?;
    let task_embedding = state.embedding.clone();
    let mut concepts = Concepts::new(
        state
            .analysis
            .concepts
            .iter()
            .filter(|c| !TASK_WORDS.contains(&c.as_str()))
            .cloned()
            .collect(),
    );
    let mut tokens = FileTokens::default();
    let mut merged: HashMap<u32, Evaluation> = HashMap::new();
    let mut cycles = Vec::new();
    let mut tried = HashSet::new();
    let refiner = Refiner {
        index,
        embedder,
        task: &query.task,
        task_embedding: &task_embedding,
    };
    // Final order: a file's standing in cycle 1 (dispatch score / best score), plus
    // `later_cycles_weight` × what later cycles add on top of it. Refined queries can
    // promote a file, never demote what the task itself ranked well.
    let mut first: HashMap<u32, f32> = HashMap::new();
    let mut standing: HashMap<u32, f32> = HashMap::new();

    for cycle in 1..=opts.cycles.max(1) {
        let hits = dispatch(index, &state, &opts.params);
        let top = hits.first().map_or(1.0, |h| h.score).max(1e-6);
        for h in &hits {
            let rel = h.score / top;
            if cycle == 1 {
                first.insert(h.file, rel);
                standing.insert(h.file, rel);
            } else {
                let base = first.get(&h.file).copied().unwrap_or(0.0);
                *standing.entry(h.file).or_default() +=
                    opts.later_cycles_weight * (rel - base).max(0.0);
            }
        }
        let evaluator = Evaluator {
            index,
            task_embedding: &task_embedding,
            concepts: &concepts,
            max_files: opts.evaluate_top,
        };
        let evals = evaluator.evaluate(&hits, cycle, &mut tokens);
        for e in &evals {
            // Aliases learned later can raise a file's coverage; keep its best judgement.
            let keep = merged
                .get(&e.file)
                .is_none_or(|old| e.relevance > old.relevance);
            if keep {
                merged.insert(e.file, e.clone());
            }
        }
        let mut ranked: Vec<Evaluation> = merged
            .values()
            .filter(|e| !state.excluded.contains(&e.file))
            .cloned()
            .collect();
        sort(&mut ranked);
        let strong: Vec<&Evaluation> = ranked
            .iter()
            .filter(|e| e.relevance >= opts.strong)
            .collect();
        let critical_gaps: Vec<&String> = concepts
            .words
            .iter()
            .filter(|c| {
                !strong
                    .iter()
                    .any(|e| concepts.covered(c, tokens.get(index, e.file)))
            })
            .filter(|c| index.bm25.df(&iret_index::tokens::stem(c)) > 0)
            .collect();
        let mut trace = CycleTrace {
            cycle,
            terms: state.terms.iter().map(|(t, _)| t.clone()).collect(),
            candidates: hits.len(),
            scores: evals
                .iter()
                .map(|e| (e.path.clone(), e.relevance))
                .collect(),
            refinement: None,
            stop: None,
        };
        if strong.len() >= opts.enough && critical_gaps.is_empty() {
            trace.stop = Some("enough context".into());
            cycles.push(trace);
            break;
        }
        if cycle == opts.cycles.max(1) {
            trace.stop = Some("cycle limit".into());
            cycles.push(trace);
            break;
        }
        let refinement =
            refiner.refine(&mut state, &mut concepts, &ranked, &mut tokens, &mut tried)?;
        let nothing_new = refinement.is_empty();
        trace.refinement = Some(refinement);
        if nothing_new {
            trace.stop = Some("nothing left to learn".into());
            cycles.push(trace);
            break;
        }
        cycles.push(trace);
    }

    let mut evaluated: Vec<Evaluation> = merged.into_values().collect();
    final_order(
        &mut evaluated,
        &standing,
        &state.excluded,
        opts.relevance_weight,
    );
    Ok(Outcome {
        evaluated,
        cycles,
        concepts,
    })
}

/// The returned order: dispatch standing (cycle 1 plus later promotions) plus
/// `relevance_weight` × the evaluated relevance. Files judged irrelevant (excluded) never
/// rank above a file judged related (≥ [`RELATED`], not excluded); otherwise they keep their
/// place. They are never returned (their relevance is below any sensible
/// `--min-relevance`) but keep a ranked list whole.
pub fn final_order(
    evaluated: &mut [Evaluation],
    standing: &HashMap<u32, f32>,
    excluded: &HashSet<u32>,
    relevance_weight: f32,
) {
    let raw = |e: &Evaluation| {
        standing.get(&e.file).copied().unwrap_or(0.0) + relevance_weight * e.relevance
    };
    let floor = evaluated
        .iter()
        .filter(|e| !excluded.contains(&e.file) && e.relevance >= RELATED)
        .map(raw)
        .fold(f32::INFINITY, f32::min);
    let key = |e: &Evaluation| {
        let k = raw(e);
        if excluded.contains(&e.file) {
            k.min(floor - 1e-3)
        } else {
            k
        }
    };
    evaluated.sort_by(|a, b| {
        key(b)
            .total_cmp(&key(a))
            .then(b.relevance.total_cmp(&a.relevance))
            .then(a.path.cmp(&b.path))
    });
}

fn sort(evals: &mut [Evaluation]) {
    evals.sort_by(|a, b| {
        b.relevance
            .total_cmp(&a.relevance)
            .then(a.cycle.cmp(&b.cycle))
            .then(a.path.cmp(&b.path))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(file: u32, relevance: f32) -> Evaluation {
        Evaluation {
            file,
            path: format!("f{file}"),
            relevance,
            reason: String::new(),
            missing: Vec::new(),
            chunks: Vec::new(),
            cycle: 1,
        }
    }

    fn order(evals: &[Evaluation], standing: &[(u32, f32)], excluded: &[u32]) -> Vec<u32> {
        let mut e = evals.to_vec();
        let standing = standing.iter().copied().collect();
        let excluded = excluded.iter().copied().collect();
        final_order(&mut e, &standing, &excluded, 0.15);
        e.iter().map(|e| e.file).collect()
    }

    #[test]
    fn standing_leads_and_relevance_breaks_near_ties() {
        let evals = [eval(1, 0.3), eval(2, 0.9), eval(3, 0.5)];
        // 1: 1.0 + 0.045; 2: 0.95 + 0.135 (overtakes 1); 3: 0.5 + 0.075.
        assert_eq!(
            order(&evals, &[(1, 1.0), (2, 0.95), (3, 0.5)], &[]),
            [2, 1, 3]
        );
    }

    #[test]
    fn an_excluded_file_stays_below_related_files_but_above_weaker_ones() {
        // 4 was excluded (0.15) although it stood second in dispatch.
        let evals = [
            eval(1, 0.9),
            eval(4, 0.15),
            eval(2, 0.3),
            eval(3, 0.55),
            eval(5, 0.25),
        ];
        let standing = [(1, 1.0), (4, 0.9), (2, 0.6), (3, 0.2), (5, 0.1)];
        // Below 3, the weakest related file, so below everything ranked above it; still
        // above 5, which ranked lower in the first place.
        assert_eq!(order(&evals, &standing, &[4]), [1, 2, 3, 4, 5]);
        // Not excluded, it keeps its dispatch place.
        assert_eq!(order(&evals, &standing, &[]), [1, 4, 2, 3, 5]);
    }
}
