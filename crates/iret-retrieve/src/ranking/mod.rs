//! Ranking signals: how dispatch turns a file's fused chunks into a file score. One
//! module per signal, each a small function with its weight in [`Params`]:
//!
//! * [`coherence`] — the best chunk plus a share of the next two;
//! * [`definitions`] — the file defines an identifier the query names (that chunk leads);
//! * [`names`] — the file name or its folders say the query's words, or its prose spells
//!   the file's name out;
//! * [`noise`] — tests, examples, legacy and superseded code are damped;
//! * [`evidence`] — the task names the file, quotes its message, or uses what it defines;
//! * [`history`] — the repository's commits: the task against the file's messages, the
//!   files of similar past changes, how often it was fixed;
//! * focus — refine aimed at the file (an import neighbour of a relevant file).
pub mod candidates;
pub mod coherence;
pub mod definitions;
pub mod evidence;
pub mod features;
pub mod history;
pub mod learned;
pub mod names;
pub mod noise;
pub mod rules;

pub use candidates::Candidate;
pub use features::Features;
pub use learned::Ranker;

use crate::corpus::Corpus;
use crate::hits::{ChunkHit, FileHit};
use crate::params::Params;
use crate::query::State;
use std::collections::HashSet;

/// The query-wide inputs of the signals, computed once per dispatch.
pub(crate) struct Signals<'a> {
    corpus: &'a Corpus,
    state: &'a State,
    params: &'a Params,
    /// Task terms and the codebase words refine learned for them (stemmed).
    query_stems: HashSet<String>,
    /// A report's title terms (stemmed; its summary); empty for a one-line task.
    title_stems: HashSet<String>,
    /// The task asks for tests or examples: noise is not damped.
    wants_noise: bool,
    /// Superseded version folders the task does not name.
    older: Vec<String>,
    /// The keyword leg's best BM25 (normalises the file's).
    max_bm25: f32,
}

impl<'a> Signals<'a> {
    pub(crate) fn new(
        corpus: &'a Corpus,
        state: &'a State,
        params: &'a Params,
        max_bm25: f32,
    ) -> Self {
        Self {
            corpus,
            state,
            params,
            query_stems: state
                .terms
                .iter()
                .map(|(t, _)| t.clone())
                .filter(|t| !state.abbreviated.contains(t))
                .collect(),
            title_stems: if state.analysis.is_report {
                state.analysis.summary.iter().cloned().collect()
            } else {
                HashSet::new()
            },
            wants_noise: state.analysis.wants_noise,
            older: corpus.facts.older_versions(&state.analysis.versions),
            max_bm25: max_bm25.max(1e-6),
        }
    }

    /// How much defining the task's code names counts for `file`: all of it, except in a
    /// report for a file that defines nothing its title names
    /// (`Params::report_body_share`): the body's example code names what it uses.
    fn body_share(&self, file: u32) -> f32 {
        let titled = self.state.pointers.titled.contains_key(&file);
        if self.state.analysis.is_report && !titled {
            self.params.report_body_share
        } else {
            1.0
        }
    }

    /// The file name's words the task says and their share of the name; in a report, the
    /// words only its body says count `Params::report_body_name_share` of what the
    /// title's do.
    fn name_words(&self, name: &names::FileName) -> (Vec<String>, f32) {
        let abbreviation = self.params.abbreviation_weight;
        let (words, share) = names::file_name_words(name, &self.query_stems, abbreviation);
        if !self.state.analysis.is_report {
            return (words, share);
        }
        let (_, title) = names::file_name_words(name, &self.title_stems, abbreviation);
        let body = self.params.report_body_name_share;
        (words, title + body * (share - title).max(0.0))
    }

    /// Ranks one file from its fused chunks: its features, scored by the rules.
    pub(crate) fn rank(&self, file: u32, chunks: Vec<ChunkHit>) -> FileHit {
        let index = &self.corpus.index;
        let p = self.params;
        let path = index.files[file as usize].path.as_str();
        let mut chunks = coherence::best_chunks(chunks);
        let mut f = legs(&chunks, self.max_bm25);
        f.coherence = coherence::score(&chunks, p.coherence);

        let identifiers = &self.state.analysis.identifiers;
        f.body_share = self.body_share(file);
        let defines = definitions::defined(index, file, identifiers);
        if !defines.is_empty() {
            definitions::lead_with_definition(
                index,
                file,
                identifiers,
                &self.state.embedding,
                &mut chunks,
            );
            f.defines = definitions::bonus(path, &defines, 1.0);
        }
        let name = names::FileName::of(path);
        let (name_words, name_share) = self.name_words(&name);
        f.name_share = names::name_bonus(name_share, 1.0);
        let spelled = names::spelled(&name, &self.state.analysis.words);
        f.spelled = names::spelled_bonus(spelled, 1.0);
        let path_words = names::folder_words(path, &self.query_stems);
        f.path_words = names::path_bonus(&path_words, 1.0);

        let pointers = &self.state.pointers;
        f.mentioned = evidence::mentioned(pointers, file, 1.0);
        f.raised = evidence::raised(pointers, file, 1.0);
        f.raises = evidence::raises(pointers, file, 1.0);
        f.implements = evidence::implements(pointers, file, 1.0);
        f.titled = evidence::titled(pointers, file, 1.0);
        let past = &self.state.history;
        f.history_messages = history::messages(past, file, 1.0);
        f.history_similar = history::similar(past, file, 1.0);
        f.history_refs = history::referenced(past, file, 1.0);
        f.history_fixes = history::fixes(past, file, 1.0);

        let noise = noise::is_noise(path, &self.state.analysis.concepts, &self.older);
        f.noise = if noise && !self.wants_noise { 1.0 } else { 0.0 };
        let focus = self.state.focus.get(&file).copied();
        f.focus = focus.unwrap_or(0.0);
        let score = rules::score(&f, p);
        f.rules_score = score;
        FileHit {
            file,
            score,
            chunks,
            defines,
            name_words,
            name_share,
            path_words,
            noise,
            focused: focus.is_some(),
            evidence: evidence::reasons(pointers, file),
            history: history::reason(&self.corpus.facts.history, past, file),
            features: f,
        }
    }
}

/// The legs' features of a file's best chunks (before any reordering).
fn legs(chunks: &[ChunkHit], max_bm25: f32) -> Features {
    let n = chunks.len().max(1) as f32;
    Features {
        cos_best: chunks.iter().map(|c| c.cosine).fold(0.0, f32::max),
        cos_top3: chunks.iter().map(|c| c.cosine).sum::<f32>() / n,
        bm25_best: chunks.iter().map(|c| c.bm25).fold(0.0, f32::max) / max_bm25,
        fused_best: chunks.first().map_or(0.0, |c| c.score),
        chunk_hits: chunks.iter().filter(|c| c.score > 0.0).count() as f32,
        ..Features::default()
    }
}

/// The file name without folders and its extension: `src/user.service.ts` →
/// `user.service`.
pub(crate) fn file_name(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(n, _)| n)
}

/// The file name without folders and extensions: `src/auth.test.ts` → `auth`.
pub(crate) fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}
