//! Loop: dispatch → evaluate → refine, at most N cycles, stopping early once enough
//! files are strongly relevant and no critical gap remains.
use crate::corpus::Corpus;
use crate::dispatch::dispatch;
use crate::evaluate::{Concepts, Evaluation, Evaluator, FileTokens};
use crate::hits::FileHit;
use crate::params::Params;
use crate::query::words::{is_long, target_concepts};
use crate::query::{initial_state, Query, State};
use crate::ranking::candidates::{self, Candidate, Sighting};
use crate::ranking::learned::{self, Ranker};
use crate::refine::{Refinement, Refiner};
use crate::spelling::Spelling;
use iret_embed::Embedder;
use iret_index::profile::Phases;
use iret_index::Index;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Options {
    /// At most this many cycles (a request's `cycles`).
    pub cycles: usize,
    /// Files at or above this relevance are returned (a request's `min_relevance`).
    pub min_relevance: f32,
    /// The knobs (`params.rs`: one table, the loop's among them).
    pub params: Params,
    /// A learned ranker orders the final candidates and gives their relevance (its
    /// calibrated probability); None: the rules (`final_order`, evaluate's relevance).
    pub ranker: Option<Arc<dyn Ranker>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            cycles: 3,
            min_relevance: 0.7,
            params: Params::default(),
            ranker: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CycleTrace {
    pub cycle: usize,
    /// BM25 terms dispatched (task terms + learned ones), as the task or the code
    /// writes them.
    pub terms: Vec<String>,
    pub candidates: usize,
    /// Evaluated files, best first: (path, relevance).
    pub scores: Vec<(String, f32)>,
    pub refinement: Option<Refinement>,
    pub stop: Option<String>,
}

impl CycleTrace {
    /// The trace of cycle `cycle` before its stop is decided: the terms dispatch searched
    /// (spelt as the task or the code spells them), how many files it found, each judged
    /// file's relevance.
    fn of(
        cycle: usize,
        state: &State,
        spelling: &Spelling,
        candidates: usize,
        evals: &[Evaluation],
    ) -> Self {
        CycleTrace {
            cycle,
            terms: state
                .terms
                .iter()
                .map(|(t, _)| spelling.word(t).to_string())
                .collect(),
            candidates,
            scores: evals
                .iter()
                .map(|e| (e.path.clone(), e.relevance))
                .collect(),
            refinement: None,
            stop: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// Every evaluated file (best evaluation across cycles), best first: by the fused
    /// standing of the file in each cycle's dispatch (the first cycle weighs most).
    pub evaluated: Vec<Evaluation>,
    pub cycles: Vec<CycleTrace>,
    pub concepts: Concepts,
    /// `evaluated` in its order, then the rest of cycle 1's best dispatch files, each
    /// with its features (`ranking::candidates`).
    #[serde(skip)]
    pub candidates: Vec<Candidate>,
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

/// What the loop remembers across cycles: every file's best judgement, its dispatch
/// standing, and the files' token sets.
#[derive(Default)]
struct Memory {
    merged: HashMap<u32, Evaluation>,
    /// A file's standing in cycle 1 (dispatch score / best score).
    first: HashMap<u32, f32>,
    /// Cycle-1 standing plus what later cycles add above it.
    standing: HashMap<u32, f32>,
    /// Every file dispatch found: its cycle-1 rank and first features.
    seen: HashMap<u32, Sighting>,
    tokens: FileTokens,
}

impl Memory {
    /// Final order: a file's standing in cycle 1, plus `later_weight` × what later
    /// cycles add on top of it. Refined queries can promote a file, never demote what
    /// the task itself ranked well.
    fn stand(&mut self, cycle: usize, hits: &[FileHit], later_weight: f32) {
        let top = hits.first().map_or(1.0, |h| h.score).max(1e-6);
        for (i, h) in hits.iter().enumerate() {
            self.seen
                .entry(h.file)
                .or_insert_with(|| Sighting::of(h, cycle, i + 1));
            let rel = h.score / top;
            if cycle == 1 {
                self.first.insert(h.file, rel);
                self.standing.insert(h.file, rel);
            } else {
                let base = self.first.get(&h.file).copied().unwrap_or(0.0);
                *self.standing.entry(h.file).or_default() += later_weight * (rel - base).max(0.0);
            }
        }
    }

    /// Aliases learned later can raise a file's coverage; keep its best judgement.
    fn merge(&mut self, evals: &[Evaluation]) {
        for e in evals {
            let keep = self
                .merged
                .get(&e.file)
                .is_none_or(|old| e.relevance > old.relevance);
            if keep {
                self.merged.insert(e.file, e.clone());
            }
        }
    }

    /// Judged files not excluded, most relevant first.
    fn ranked(&self, excluded: &HashSet<u32>) -> Vec<Evaluation> {
        let mut ranked: Vec<Evaluation> = self
            .merged
            .values()
            .filter(|e| !excluded.contains(&e.file))
            .cloned()
            .collect();
        sort(&mut ranked);
        ranked
    }
}

pub fn run(
    corpus: &Corpus,
    embedder: &dyn Embedder,
    query: &Query,
    opts: &Options,
) -> anyhow::Result<Outcome> {
    let query = &query.visible();
    let index = &corpus.index;
    let mut phases = Phases::new();
    let mut state = initial_state(query, embedder, &opts.params)?;
    phases.mark("embed task");
    state.point(corpus, &opts.params);
    phases.mark("evidence");
    // Evaluate and refine compare in the documents' space; the vector leg searches with
    // the query encoder's vector (the same, unless a tuned map is set).
    let task_embedding = state.embedding.clone();
    state.embedding = embedder.map_query(std::mem::take(&mut state.embedding));
    let mut concepts = concepts_of(index, &state, &query.task);
    let mut memory = Memory::default();
    let mut cycles = Vec::new();
    let mut refiner = Refiner::new(corpus, embedder, &query.task, &task_embedding, &opts.params);
    let last = opts.cycles.max(1);
    let mut spelling = Spelling::of_task(&query.task);

    for cycle in 1..=last {
        let hits = dispatch(corpus, &state, &opts.params)?;
        phases.mark(format_args!("dispatch {cycle}"));
        memory.stand(cycle, &hits, opts.params.later_cycles_weight);
        let evaluator = Evaluator {
            index,
            task_embedding: &task_embedding,
            concepts: &concepts,
            max_files: opts.params.evaluate_top,
            params: &opts.params,
        };
        let evals = evaluator.evaluate(&hits, cycle, &mut memory.tokens);
        phases.mark(format_args!("evaluate {cycle}"));
        memory.merge(&evals);
        let ranked = memory.ranked(&state.excluded);
        let mut trace = CycleTrace::of(cycle, &state, &spelling, hits.len(), &evals);
        let stop = if enough(index, &ranked, &concepts, &mut memory.tokens, opts) {
            Some("enough context")
        } else if cycle == 1 && symbol_answered(&state, &hits, &evals, opts) {
            Some("symbol found")
        } else if cycle == last {
            Some("cycle limit")
        } else {
            let refinement =
                refiner.refine(&mut state, &mut concepts, &ranked, &mut memory.tokens)?;
            phases.mark(format_args!("refine {cycle}"));
            let nothing_new = refinement.is_empty();
            spelling.learn(&refinement.added_words());
            trace.refinement = Some(refinement);
            nothing_new.then_some("nothing left to learn")
        };
        trace.stop = stop.map(String::from);
        cycles.push(trace);
        if stop.is_some() {
            break;
        }
    }

    let (evaluated, candidates) = finish(corpus, query, &state, memory, opts, &mut phases)?;
    Ok(Outcome {
        evaluated,
        cycles,
        concepts,
        candidates,
    })
}

/// The concepts of the task the codebase has words for (each word weighed by its idf).
fn concepts_of(index: &Index, state: &State, task: &str) -> Concepts {
    let idf = |t: &str| {
        if index.bm25.df(t) == 0 {
            0.0
        } else {
            index.bm25.idf(t)
        }
    };
    Concepts::new(target_concepts(&state.analysis.concepts, task, &idf))
}

/// The loop's answer: every judged file in the final order, and the candidates with their
/// features, reordered by the learned ranker when one is set.
fn finish(
    corpus: &Corpus,
    query: &Query,
    state: &State,
    memory: Memory,
    opts: &Options,
    phases: &mut Phases,
) -> anyhow::Result<(Vec<Evaluation>, Vec<Candidate>)> {
    let mut evaluated: Vec<Evaluation> = memory.merged.into_values().collect();
    final_order(
        &mut evaluated,
        &memory.standing,
        &state.excluded,
        if is_long(&query.task) {
            opts.params.report_relevance_weight
        } else {
            opts.params.relevance_weight
        },
        opts.params.related,
    );
    phases.mark("final order");
    let seen = candidates::Memory {
        seen: &memory.seen,
        first: &memory.first,
        standing: &memory.standing,
    };
    let candidates = candidates::assemble(corpus, &state.analysis, &query.task, &evaluated, &seen);
    let ordered = match &opts.ranker {
        Some(ranker) => learned::order(
            ranker.as_ref(),
            &corpus.index,
            evaluated,
            candidates,
            &memory.seen,
        )?,
        None => (evaluated, candidates),
    };
    phases.mark("candidates");
    Ok(ordered)
}

/// A symbol lookup (`TRPCError`, `Sinatra::Helpers`) is answered when dispatch's best
/// file defines the name and is judged strong: later cycles would only re-rank around it.
fn symbol_answered(state: &State, hits: &[FileHit], evals: &[Evaluation], opts: &Options) -> bool {
    let Some(best) = hits.first() else {
        return false;
    };
    state.analysis.is_symbol
        && !best.defines.is_empty()
        && evals
            .iter()
            .any(|e| e.file == best.file && e.relevance >= opts.params.strong)
}

/// The stop rule: `Params::enough` files reach `Params::strong` and every concept the codebase
/// has a word for is covered by one of them.
fn enough(
    index: &Index,
    ranked: &[Evaluation],
    concepts: &Concepts,
    tokens: &mut FileTokens,
    opts: &Options,
) -> bool {
    let strong: Vec<&Evaluation> = ranked
        .iter()
        .filter(|e| e.relevance >= opts.params.strong)
        .collect();
    if strong.len() < opts.params.enough {
        return false;
    }
    let critical_gap = concepts.words.iter().any(|c| {
        !strong
            .iter()
            .any(|e| concepts.covered(c, e.file, index, tokens))
            && index.bm25.df(&iret_index::tokens::stem(c)) > 0
    });
    !critical_gap
}

/// The returned order: dispatch standing (cycle 1 plus later promotions) plus
/// `relevance_weight` × the evaluated relevance. Files judged irrelevant (excluded) never
/// rank above a file judged related (≥ `related`, `Params::related`, not excluded); otherwise they keep their
/// place. They are never returned (their relevance is below any sensible
/// `--min-relevance`) but keep a ranked list whole.
pub fn final_order(
    evaluated: &mut [Evaluation],
    standing: &HashMap<u32, f32>,
    excluded: &HashSet<u32>,
    relevance_weight: f32,
    related: f32,
) {
    let raw = |e: &Evaluation| {
        standing.get(&e.file).copied().unwrap_or(0.0) + relevance_weight * e.relevance
    };
    let floor = evaluated
        .iter()
        .filter(|e| !excluded.contains(&e.file) && e.relevance >= related)
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
            features: Default::default(),
        }
    }

    fn order(evals: &[Evaluation], standing: &[(u32, f32)], excluded: &[u32]) -> Vec<u32> {
        let mut e = evals.to_vec();
        let standing = standing.iter().copied().collect();
        let excluded = excluded.iter().copied().collect();
        final_order(&mut e, &standing, &excluded, 0.15, 0.5);
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
