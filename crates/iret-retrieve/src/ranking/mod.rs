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
pub mod coherence;
pub mod definitions;
pub mod evidence;
pub mod history;
pub mod names;
pub mod noise;

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
}

impl<'a> Signals<'a> {
    pub(crate) fn new(corpus: &'a Corpus, state: &'a State, params: &'a Params) -> Self {
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

    /// Ranks one file from its fused chunks.
    pub(crate) fn rank(&self, file: u32, chunks: Vec<ChunkHit>) -> FileHit {
        let index = &self.corpus.index;
        let p = self.params;
        let path = index.files[file as usize].path.as_str();
        let mut chunks = coherence::best_chunks(chunks);
        let mut score = coherence::score(&chunks, p.coherence);

        let identifiers = &self.state.analysis.identifiers;
        let body_share = self.body_share(file);
        let defines = definitions::defined(index, file, identifiers);
        if !defines.is_empty() {
            definitions::lead_with_definition(
                index,
                file,
                identifiers,
                &self.state.embedding,
                &mut chunks,
            );
            score += body_share * definitions::bonus(path, &defines, p.define_boost);
        }
        let name = names::FileName::of(path);
        let (name_words, name_share) = self.name_words(&name);
        score += names::name_bonus(name_share, p.name_boost);
        let spelled = names::spelled(&name, &self.state.analysis.words);
        score += names::spelled_bonus(spelled, p.spelled_boost);
        let path_words = names::folder_words(path, &self.query_stems);
        score += names::path_bonus(&path_words, p.path_boost);

        let pointers = &self.state.pointers;
        score += evidence::mentioned(pointers, file, p.mention_boost);
        score += evidence::raised(pointers, file, p.raise_boost);
        score += evidence::raises(pointers, file, p.message_boost);
        score += body_share * evidence::implements(pointers, file, p.api_boost);
        score += evidence::titled(pointers, file, p.title_boost);
        let past = &self.state.history;
        score += history::messages(past, file, p.history_messages);
        score += history::similar(past, file, p.history_similar);
        score += history::referenced(past, file, p.history_refs);
        score += history::fixes(past, file, p.history_fixes);

        let noise = noise::is_noise(path, &self.state.analysis.concepts, &self.older);
        if noise && !self.wants_noise {
            score *= p.noise_factor;
        }
        let focus = self.state.focus.get(&file).copied();
        score += focus.unwrap_or(0.0);
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
        }
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
