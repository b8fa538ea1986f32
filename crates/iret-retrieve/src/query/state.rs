//! The query as dispatch sees it: refine changes it between cycles.
use super::passages::{join, passages};
use super::pointers::{self, Pointers};
use super::{analyse, Analysis, Query, Scope};
use crate::abbreviations;
use crate::corpus::Corpus;
use crate::history::HistoryHits;
use crate::params::Params;
use iret_embed::Embedder;
use iret_index::tokens::{stem, tokenize};
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
    /// Terms added for the abbreviations code writes of the task's words (`config` for
    /// "configuration"): searched by keyword, not words the task says.
    pub abbreviated: HashSet<String>,
    /// What the repository's history says about the task (resolved once per query).
    pub history: HistoryHits,
}

impl State {
    /// Resolves the task's evidence (paths, names, messages) against `corpus`, and
    /// matches the task's summary (its title and keywords) against its history: commit
    /// messages are one-line summaries, which a whole report's boilerplate would drown.
    pub fn point(&mut self, corpus: &Corpus, params: &Params) {
        self.pointers = pointers::resolve(corpus, &self.analysis.evidence);
        let refs = &self.analysis.evidence.refs;
        self.history = corpus
            .facts
            .history
            .matches(&self.analysis.summary, refs, params);
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
    let mut analysis = analyse(&full);
    for k in &query.keywords {
        analysis.summary.extend(tokenize(k));
    }
    let mut terms: Vec<(String, f32)> = Vec::new();
    for t in &analysis.terms {
        if !terms.iter().any(|(x, _)| x == t) {
            terms.push((t.clone(), 1.0));
        }
    }
    let weight = if analysis.is_symbol {
        0.0
    } else {
        params.abbreviation_terms
    };
    let abbreviated = abbreviate(&mut terms, &prose_stems(&full), weight);
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
        abbreviated,
        history: HistoryHits::default(),
    })
}

/// Adds, at `weight`, the abbreviations code writes for the words of the task's prose
/// (`prose`: stems); 0 adds none. Names the task writes as code are not expanded.
fn abbreviate(
    terms: &mut Vec<(String, f32)>,
    prose: &HashSet<String>,
    weight: f32,
) -> HashSet<String> {
    let mut added = HashSet::new();
    if weight <= 0.0 {
        return added;
    }
    // In the terms' order, so that the query is the same every run.
    let longs: Vec<String> = terms
        .iter()
        .map(|(t, _)| t.clone())
        .filter(|t| prose.contains(t))
        .collect();
    for long in &longs {
        for &short in abbreviations::abbreviations(long) {
            if !terms.iter().any(|(t, _)| t == short) {
                terms.push((short.to_string(), weight));
                added.insert(short.to_string());
            }
        }
    }
    added
}

/// Stems of the task's plain words: lower-case letters only (`configuration`, not
/// `HttpClientConfig` or `request_id`).
fn prose_stems(text: &str) -> HashSet<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase()))
        .map(stem)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_words_bring_the_abbreviations_code_writes() {
        let task = "load the configuration from HttpClientConfig, see request_id";
        let prose = prose_stems(task);
        assert!(prose.contains(&stem("configuration")));
        assert!(!prose.contains(&stem("HttpClientConfig")));
        let mut terms = vec![(stem("configuration"), 1.0), ("config".to_string(), 1.0)];
        let added = abbreviate(&mut terms, &prose, 0.5);
        // `config` is already a term at full weight: only the others join, at 0.5.
        assert_eq!(
            terms,
            vec![
                (stem("configuration"), 1.0),
                ("config".to_string(), 1.0),
                ("conf".to_string(), 0.5),
                ("cfg".to_string(), 0.5),
            ]
        );
        assert_eq!(added.len(), 2);
        let mut none = vec![(stem("configuration"), 1.0)];
        assert!(abbreviate(&mut none, &prose, 0.0).is_empty());
        assert_eq!(none.len(), 1);
    }
}
