//! Refine: learn the codebase's own words and aim the next dispatch.
//!
//! * Task concepts that no relevant file covers are mapped to the nearest codebase terms
//!   by embedding ("rate limiting" → throttle); those become aliases and keywords.
//! * Distinctive identifiers of the most relevant chunks are harvested as keywords.
//! * The query is re-embedded with the discovered terms.
//! * Files scored below 0.2 are excluded for good; files that relevant files import (or
//!   that import them) get a bonus.
use crate::corpus::Corpus;
use crate::evaluate::{Concepts, Evaluation, FileTokens};
use crate::follow::definitions_called;
use crate::imports::{import_lines, is_import};
use crate::keywords::is_keyword;
use crate::params::Params;
use crate::query::passages::join;
use crate::query::words::{is_long, title};
use crate::query::State;
use crate::terms::Term;
use iret_embed::Embedder;
use iret_index::tokens::stem;
use iret_index::vocab::words;
use iret_index::Index;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Default, Serialize)]
pub struct Refinement {
    /// Concepts nothing relevant covered.
    pub gaps: Vec<String>,
    /// concept → learned codebase terms.
    pub learned: Vec<(String, Vec<Term>)>,
    /// Identifiers harvested from relevant chunks.
    pub harvested: Vec<Term>,
    pub excluded: Vec<String>,
    pub focus: Vec<String>,
    /// Files defining what the strongest hits call (`follow`), aimed at too.
    pub followed: Vec<String>,
}

impl Refinement {
    /// The stems added to the query: learned aliases, then harvested words.
    pub fn added_terms(&self) -> Vec<String> {
        let mut t: Vec<String> = Vec::new();
        for term in self
            .learned
            .iter()
            .flat_map(|(_, a)| a)
            .chain(&self.harvested)
        {
            if !t.contains(&term.stem) {
                t.push(term.stem.clone());
            }
        }
        t
    }

    /// The added terms as the code writes them, with their files.
    pub fn added_words(&self) -> Vec<&Term> {
        let mut out: Vec<&Term> = Vec::new();
        for term in self
            .learned
            .iter()
            .flat_map(|(_, a)| a)
            .chain(&self.harvested)
        {
            if !out.iter().any(|t| t.stem == term.stem) {
                out.push(term);
            }
        }
        out
    }
    pub fn is_empty(&self) -> bool {
        self.learned.is_empty()
            && self.harvested.is_empty()
            && self.focus.is_empty()
            && self.followed.is_empty()
    }
}

pub struct Refiner<'a> {
    corpus: &'a Corpus,
    embedder: &'a dyn Embedder,
    task: &'a str,
    /// The original task's embedding: harvested words must be about the task.
    task_embedding: &'a [f32],
    /// Probes (gap words and phrases) already mapped in an earlier cycle.
    tried: HashSet<String>,
    /// The knobs (`follow_boost`, `harvest`, `irrelevant`, …).
    params: &'a Params,
    /// Map uncovered concepts to codebase terms (for a report: `Params::report_aliases`).
    learn: bool,
    /// `Params::report_focus`, for a long task.
    focus_keywords: bool,
}

impl<'a> Refiner<'a> {
    pub fn new(
        corpus: &'a Corpus,
        embedder: &'a dyn Embedder,
        task: &'a str,
        task_embedding: &'a [f32],
        params: &'a Params,
    ) -> Self {
        Self {
            corpus,
            embedder,
            task,
            task_embedding,
            tried: HashSet::new(),
            params,
            learn: params.report_aliases || !is_long(task),
            focus_keywords: params.report_focus && is_long(task),
        }
    }

    fn index(&self) -> &'a Index {
        &self.corpus.index
    }

    /// Updates `state` and `concepts` from the merged evaluations; returns what changed.
    pub fn refine(
        &mut self,
        state: &mut State,
        concepts: &mut Concepts,
        evals: &[Evaluation],
        tokens: &mut FileTokens,
    ) -> anyhow::Result<Refinement> {
        let mut r = Refinement {
            gaps: self.gaps(concepts, evals, tokens),
            ..Default::default()
        };
        if self.learn {
            r.learned = self.learn_aliases(state, concepts, &r.gaps)?;
        }
        r.harvested = self.harvest(state, evals, &r.added_terms());
        r.excluded = exclude_irrelevant(state, evals, self.params.irrelevant);
        r.focus = self.aim_at_neighbours(state, evals);
        r.followed = self.follow_definitions(state, evals);
        if std::mem::take(&mut self.focus_keywords) {
            // Once: later cycles' terms are the focused ones and what they add.
            focus_keywords(state, concepts, &r.added_terms());
        }
        self.requery(state, &r.added_terms())?;
        self.feed_back(state, evals);
        Ok(r)
    }

    /// With `feedback_weight` > 0, the related files' best chunks join the requery's
    /// vector at that weight (Rocchio).
    fn feed_back(&self, state: &mut State, evals: &[Evaluation]) {
        let p = self.params;
        if p.feedback_weight <= 0.0 || state.embedding.is_empty() {
            return;
        }
        let feedback = feedback_vector(self.index(), evals, p.related, p.feedback_files);
        if !feedback.is_empty() {
            state.embedding = join(&[state.embedding.clone(), feedback], p.feedback_weight);
        }
    }

    /// Concepts that no related file (≥ `Params::related`) covers.
    fn gaps(
        &self,
        concepts: &Concepts,
        evals: &[Evaluation],
        tokens: &mut FileTokens,
    ) -> Vec<String> {
        let related: Vec<&Evaluation> = evals
            .iter()
            .filter(|e| e.relevance >= self.params.related)
            .collect();
        concepts
            .words
            .iter()
            .filter(|c| {
                !related
                    .iter()
                    .any(|e| concepts.covered(c, e.file, self.index(), tokens))
            })
            .cloned()
            .collect()
    }

    /// Maps each gap to the nearest codebase terms; they become aliases of its concept.
    /// Adjacent gaps are one concept ("rate limiting"): probe the phrase, not its
    /// ambiguous words ("rate" alone is also a price).
    fn learn_aliases(
        &mut self,
        state: &State,
        concepts: &mut Concepts,
        gaps: &[String],
    ) -> anyhow::Result<Vec<(String, Vec<Term>)>> {
        let probes = self.probes(&concepts.words, gaps);
        let index = self.index();
        if probes.is_empty() || index.vocab.terms.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<&str> = probes.iter().map(|(_, t)| t.as_str()).collect();
        let vecs = self.embedder.embed(&texts)?;
        let known: HashSet<String> = state.terms.iter().map(|(t, _)| t.clone()).collect();
        let mut learned: HashMap<String, Vec<String>> = HashMap::new();
        for ((owners, probe), v) in probes.iter().zip(vecs) {
            let picks = self.nearest_terms(probe, &v, &known);
            for concept in owners {
                let entry = learned.entry(concept.clone()).or_default();
                for p in &picks {
                    if !entry.contains(p) {
                        entry.push(p.clone());
                    }
                }
            }
            learned.retain(|_, v| !v.is_empty());
        }
        let mut learned: Vec<(String, Vec<String>)> = learned.into_iter().collect();
        learned.sort();
        for (concept, terms) in &learned {
            let aliases = concepts.aliases.entry(concept.clone()).or_default();
            for t in terms {
                if !aliases.contains(t) {
                    aliases.push(t.clone());
                }
            }
        }
        Ok(learned
            .into_iter()
            .map(|(concept, stems)| {
                let terms = stems
                    .iter()
                    .map(|s| {
                        Term::in_codebase(index, s).unwrap_or_else(|| Term {
                            word: s.clone(),
                            file: String::new(),
                            stem: s.clone(),
                        })
                    })
                    .collect();
                (concept, terms)
            })
            .collect())
    }

    /// (concepts, probe text) for the gaps not tried before: adjacent gaps as a phrase.
    fn probes(&mut self, words: &[String], gaps: &[String]) -> Vec<(Vec<String>, String)> {
        let mut probes = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            let next = words.get(i + 1);
            if gaps.contains(w) && next.is_some_and(|n| gaps.contains(n)) {
                let n = next.unwrap();
                let phrase = format!("{w} {n}");
                if self.tried.insert(phrase.clone()) {
                    probes.push((vec![w.clone(), n.clone()], phrase));
                }
                i += 2;
                continue;
            }
            if gaps.contains(w) && self.tried.insert(w.clone()) {
                probes.push((vec![w.clone()], w.clone()));
            }
            i += 1;
        }
        probes
    }

    /// The codebase terms nearest to a probe's vector: similar enough, in the code, not
    /// the probe's own words and not already searched.
    fn nearest_terms(&self, probe: &str, v: &[f32], known: &HashSet<String>) -> Vec<String> {
        let index = self.index();
        let probe_words: HashSet<String> = probe.split(' ').map(stem).collect();
        let mut picks = Vec::new();
        for (i, sim) in index.vocab.nearest(v, 8) {
            let term = stem(&index.vocab.terms[i]);
            if sim < self.params.alias_min_similarity
                || probe_words.contains(&term)
                || known.contains(&term)
                || index.bm25.df(&term) == 0
            {
                continue;
            }
            if !picks.contains(&term) {
                picks.push(term);
            }
            if picks.len() == self.params.aliases_per_gap {
                break;
            }
        }
        picks
    }

    /// Distinctive words of the related files' best chunks, folders and imports.
    /// (Skipping this for symbol lookups was measured: no better on the dev benchmark.)
    fn harvest(&self, state: &State, evals: &[Evaluation], learned: &[String]) -> Vec<Term> {
        let index = self.index();
        let strong: Vec<&Evaluation> = evals
            .iter()
            .filter(|e| e.relevance >= self.params.related)
            .take(3)
            .collect();
        let n = index.bm25.num_docs().max(1) as f32;
        let known: HashSet<String> = state
            .terms
            .iter()
            .map(|(t, _)| t.clone())
            .chain(learned.iter().cloned())
            .collect();
        let mut counts: HashMap<String, usize> = HashMap::new();
        // The most relevant file a word came from.
        let mut origin: HashMap<String, u32> = HashMap::new();
        for e in &strong {
            for w in self.file_words(e) {
                origin.entry(w.clone()).or_insert(e.file);
                *counts.entry(w).or_default() += 1;
            }
        }
        // Stem → vocabulary entry, to weigh a word by its similarity to the task.
        let vocab_of: HashMap<String, usize> = index
            .vocab
            .terms
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| (stem(t), i))
            .collect();
        let mut harvest: Vec<(String, f32)> = counts
            .into_iter()
            .filter(|(w, _)| !known.contains(w) && w.len() >= 3 && !is_keyword(w))
            .filter_map(|(w, c)| {
                let df = index.bm25.df(&w) as f32;
                let about_task = match (vocab_of.get(&w), self.task_embedding.is_empty()) {
                    (Some(&i), false) => {
                        iret_embed::dot(self.task_embedding, index.vocab.vector(i)).max(0.0)
                    }
                    _ => 0.0,
                };
                // Shared by the related code, about the task, yet not everywhere in the codebase.
                (df > 0.0 && df / n < self.params.harvest_max_df && about_task > 0.0)
                    .then(|| (w.clone(), c as f32 * index.bm25.idf(&w) * about_task))
            })
            .collect();
        harvest.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        harvest
            .into_iter()
            .take(self.params.harvest)
            .map(|(w, _)| Term::in_file(index, origin[&w], &w))
            .collect()
    }

    /// A related file's distinct words (stemmed): its folder names (code is organised by
    /// concept), the code identifiers of its best chunk (comment prose is not the
    /// codebase's vocabulary), and what it imports from the codebase (its collaborators'
    /// names; not the standard library's).
    fn file_words(&self, e: &Evaluation) -> Vec<String> {
        let index = self.index();
        let mut seen: Vec<String> = e.path.rsplit_once('/').map_or(Vec::new(), |(dir, _)| {
            words(dir).map(|w| stem(&w)).collect()
        });
        let imports = &self.corpus.facts.imports;
        if let Some(best) = e.chunks.first() {
            let code = code_lines(index.chunks.get(best.chunk as usize).text);
            // An import in the chunk counts like the file head's: only the codebase's own.
            let own = code
                .lines()
                .filter(|l| !is_import(l) || imports.is_local(l));
            seen.extend(own.flat_map(|l| words(l).map(|w| stem(&w)).collect::<Vec<_>>()));
        }
        let f = &index.files[e.file as usize];
        if f.chunk_count > 0 {
            let head = &index.chunks.get(f.first_chunk as usize).text;
            seen.extend(
                import_lines(head)
                    .filter(|l| imports.is_local(l))
                    .flat_map(|l| words(l).map(|w| stem(&w)).collect::<Vec<_>>()),
            );
        }
        seen.sort();
        seen.dedup();
        seen
    }

    /// Import neighbours of the related files (≥ `Params::related`) get a bonus in the next dispatch,
    /// unless already strong or excluded.
    fn aim_at_neighbours(&self, state: &mut State, evals: &[Evaluation]) -> Vec<String> {
        let related: Vec<u32> = evals
            .iter()
            .filter(|e| e.relevance >= self.params.related)
            .map(|e| e.file)
            .collect();
        let mut aimed = Vec::new();
        for f in self.corpus.facts.imports.neighbours(&related) {
            let strong = evals
                .iter()
                .any(|e| e.file == f && e.relevance >= self.params.strong);
            if !state.excluded.contains(&f)
                && !strong
                && state.focus.insert(f, self.params.focus_bonus).is_none()
            {
                aimed.push(self.index().files[f as usize].path.clone());
            }
        }
        aimed
    }

    /// The files defining what the strongest hits call, when the task speaks of it, get
    /// `follow_boost` (the larger of it and an import neighbour's bonus).
    fn follow_definitions(&self, state: &mut State, evals: &[Evaluation]) -> Vec<String> {
        if self.params.follow_boost <= 0.0 {
            return Vec::new();
        }
        let terms: HashSet<&str> = state
            .analysis
            .terms
            .iter()
            .chain(&state.analysis.identifiers)
            .map(String::as_str)
            .collect();
        let mut followed = Vec::new();
        for f in definitions_called(self.corpus, evals, &terms, self.params.follow_hits) {
            if state.excluded.contains(&f) {
                continue;
            }
            let bonus = state.focus.entry(f).or_default();
            *bonus = bonus.max(self.params.follow_boost);
            state.joined.insert(f);
            followed.push(self.index().files[f as usize].path.clone());
        }
        followed
    }

    /// The added terms become keywords, and the query is re-embedded with them.
    fn requery(&self, state: &mut State, added: &[String]) -> anyhow::Result<()> {
        for t in added {
            if !state.terms.iter().any(|(x, _)| x == t) {
                state.terms.push((t.clone(), 0.7));
            }
        }
        if added.is_empty() {
            return Ok(());
        }
        if !is_long(self.task) || self.task_embedding.is_empty() {
            let text = format!("{} {}", self.task, added.join(" "));
            let v = self.embedder.embed(&[&text])?.remove(0);
            state.embedding = self.embedder.map_query(v);
            return Ok(());
        }
        // A long task fills the model's window: terms appended to it would be cut off.
        // Its title with the terms is embedded instead and joins the task's vector.
        let text = format!("{} {}", title(self.task), added.join(" "));
        let probe = self.embedder.embed(&[&text])?.remove(0);
        let v = join(&[self.task_embedding.to_vec(), probe], 1.0);
        state.embedding = self.embedder.map_query(v);
        Ok(())
    }
}

/// A report's later cycles search by keyword for what it is about: its key concepts
/// (`concepts.words`, title first, then the rarest), the names it writes as code, and
/// the terms refine added; not every word of its prose, code and traceback, whose many
/// common words let long chunks win on length of match (query reduction for verbose
/// queries).
fn focus_keywords(state: &mut State, concepts: &Concepts, added: &[String]) {
    let mut keep: HashSet<String> = added.iter().cloned().collect();
    for c in &concepts.words {
        keep.insert(stem(c));
    }
    for name in state
        .analysis
        .identifiers
        .iter()
        .chain(&state.analysis.evidence.names)
    {
        keep.extend(iret_index::tokens::tokenize(name));
    }
    let focused: Vec<(String, f32)> = state
        .terms
        .iter()
        .filter(|(t, _)| keep.contains(t))
        .cloned()
        .collect();
    // Nothing telling in the index: keep the report's words rather than search for nothing.
    if !focused.is_empty() {
        state.terms = focused;
    }
}

/// Feedback from the judged files: the mean of the best chunks' vectors of the files
/// judged related (≥ `related`), at most `files`, unit length; empty when none is.
fn feedback_vector(index: &Index, evals: &[Evaluation], related: f32, files: usize) -> Vec<f32> {
    let best: Vec<Vec<f32>> = evals
        .iter()
        .filter(|e| e.relevance >= related)
        .take(files)
        .filter_map(|e| e.chunks.first())
        .map(|c| index.vectors.row(c.chunk as usize))
        .collect();
    join(&best, 1.0)
}

/// Files judged irrelevant (< `irrelevant`) are excluded for good.
fn exclude_irrelevant(state: &mut State, evals: &[Evaluation], irrelevant: f32) -> Vec<String> {
    let mut out = Vec::new();
    for e in evals.iter().filter(|e| e.relevance < irrelevant) {
        if state.excluded.insert(e.file) {
            out.push(e.path.clone());
        }
    }
    out
}

/// The lines of `text` that are code, not comments.
fn code_lines(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("//")
                || t.starts_with("/*")
                || t.starts_with('*')
                || t.starts_with('#')
                || t.starts_with("--")
                || t.starts_with("\"\"\""))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{analyse, Scope};

    fn state_of(task: &str) -> State {
        let analysis = analyse(task);
        State {
            embedding: Vec::new(),
            terms: analysis.terms.iter().map(|t| (t.clone(), 1.0)).collect(),
            analysis,
            scope: Scope::new(&[], &[]).unwrap(),
            excluded: HashSet::new(),
            focus: HashMap::new(),
            pointers: Default::default(),
            joined: HashSet::new(),
            abbreviated: HashSet::new(),
            history: Default::default(),
        }
    }

    #[test]
    fn a_reports_focused_keywords_are_its_concepts_code_names_and_learned_terms() {
        let mut state =
            state_of("Pickling fails after calling `align_labels()` on the figure, see below");
        let concepts = Concepts::new(vec!["pickling".into(), "figure".into()]);
        focus_keywords(&mut state, &concepts, &["grouper".to_string()]);
        let terms: Vec<&str> = state.terms.iter().map(|(t, _)| t.as_str()).collect();
        for kept in [
            stem("pickling"),
            stem("figure"),
            stem("align_labels"),
            stem("labels"),
        ] {
            assert!(terms.contains(&kept.as_str()), "{kept} in {terms:?}");
        }
        for dropped in ["fails", "calling", "below"] {
            assert!(
                !terms.contains(&stem(dropped).as_str()),
                "{dropped} in {terms:?}"
            );
        }
        // Learned terms join later, by requery; focusing never empties the keyword leg.
        let mut prose = state_of("nothing here names code");
        focus_keywords(&mut prose, &Concepts::default(), &[]);
        assert!(!prose.terms.is_empty());
    }
}
