//! The query as dispatch sees it: refine changes it between cycles.
use super::passages::{join, passages};
use super::pointers::{self, Pointers};
use super::{analyse, Analysis, Query, Scope};
use crate::corpus::Corpus;
use crate::params::Params;
use iret_embed::Embedder;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
pub struct State {
    pub embedding: Vec<f32>,
    /// BM25 terms with weights.
    pub terms: Vec<(String, f32)>,
    /// Analysis of the original task (drives query-type and structural signals).
    pub analysis: Analysis,
    pub scope: Scope,
    /// Files that must not come back (scored irrelevant in an earlier cycle).
    pub excluded: HashSet<u32>,
    /// Files refine aims at (imports of relevant files), with a bonus.
    pub focus: HashMap<u32, f32>,
    /// Files the task's evidence points at (resolved once per query, see [`State::point`]).
    pub pointers: Pointers,
    /// Files refine brings in as candidates even when neither leg finds them (the
    /// definitions the strongest hits call).
    pub joined: HashSet<u32>,
}

impl State {
    /// Resolves the task's evidence (paths, names, messages) against `corpus`.
    pub fn point(&mut self, corpus: &Corpus) {
        self.pointers = pointers::resolve(corpus, &self.analysis.evidence);
    }
}

/// The starting state for `query`: analysed words, embedding, keywords, scope.
pub fn initial_state(
    query: &Query,
    embedder: &dyn Embedder,
    params: &Params,
) -> anyhow::Result<State> {
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
    let texts = passages(&full, params.passages);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embedding = join(&embedder.embed(&refs)?, params.passage_weight);
    Ok(State {
        embedding,
        terms,
        analysis,
        scope: Scope::new(&query.include, &query.exclude)?,
        excluded: HashSet::new(),
        focus: HashMap::new(),
        pointers: Pointers::default(),
        joined: HashSet::new(),
    })
}
