//! A loop's final candidates with their features: the files it evaluated, in the rules'
//! final order, then the rest of cycle 1's best [`DISPATCH_TOP`] files by their dispatch
//! rank. Each carries its cycle-1 dispatch features (or those of the cycle that found it),
//! its standing across cycles, evaluate's parts, and the file's and the task's facts:
//! one row per candidate for `iret bench --features` and for a learned ranker.
use super::features::{self, Features, MISSING};
use crate::corpus::Corpus;
use crate::evaluate::Evaluation;
use crate::hits::FileHit;
use crate::query::Analysis;
use std::collections::{HashMap, HashSet};

/// How many of cycle 1's dispatch files are candidates besides the evaluated ones.
pub const DISPATCH_TOP: usize = 50;

#[derive(Debug, Clone)]
pub struct Candidate {
    pub file: u32,
    pub path: String,
    pub features: Features,
}

/// What the loop saw of a file in dispatch: its rank in cycle 1 (None: found later), the
/// features of the first cycle that found it, and, for cycle 1's best [`DISPATCH_TOP`]
/// (the only candidates evaluate may not have judged), the hit itself.
#[derive(Debug, Clone)]
pub(crate) struct Sighting {
    pub rank: Option<usize>,
    pub features: Features,
    pub hit: Option<FileHit>,
}

impl Sighting {
    /// A file first found in `cycle` at 1-based `rank`; only what a candidate needs is kept.
    pub(crate) fn of(hit: &FileHit, cycle: usize, rank: usize) -> Self {
        let rank = (cycle == 1).then_some(rank);
        Self {
            rank,
            features: hit.features,
            hit: rank.filter(|&r| r <= DISPATCH_TOP).map(|_| hit.clone()),
        }
    }
}

/// The loop's memory of a file across cycles.
pub(crate) struct Memory<'a> {
    pub seen: &'a HashMap<u32, Sighting>,
    /// Cycle-1 standing (score over the best's).
    pub first: &'a HashMap<u32, f32>,
    /// Cycle-1 standing plus what later cycles add.
    pub standing: &'a HashMap<u32, f32>,
}

/// The candidates, `evaluated` (in the rules' final order) first.
pub(crate) fn assemble(
    corpus: &Corpus,
    analysis: &Analysis,
    task: &str,
    evaluated: &[Evaluation],
    memory: &Memory,
) -> Vec<Candidate> {
    let task_facts = task_features(analysis, task);
    let mut files: Vec<(u32, Option<&Evaluation>)> =
        evaluated.iter().map(|e| (e.file, Some(e))).collect();
    let judged: HashSet<u32> = evaluated.iter().map(|e| e.file).collect();
    let mut rest: Vec<(usize, u32)> = memory
        .seen
        .iter()
        .filter_map(|(f, s)| s.rank.map(|r| (r, *f)))
        .filter(|(r, f)| *r <= DISPATCH_TOP && !judged.contains(f))
        .collect();
    rest.sort_unstable();
    files.extend(rest.into_iter().map(|(_, f)| (f, None)));
    let mut out: Vec<Candidate> = files
        .into_iter()
        .enumerate()
        .map(|(i, (file, eval))| {
            let mut f = memory
                .seen
                .get(&file)
                .map(|s| s.features)
                .or(eval.map(|e| e.features))
                .unwrap_or_default();
            standing(&mut f, file, memory);
            judgement(&mut f, eval);
            file_facts(&mut f, corpus, file);
            let f = Features {
                rules_rank: (i + 1) as f32,
                task_report: task_facts.task_report,
                task_words: task_facts.task_words,
                task_identifiers: task_facts.task_identifiers,
                task_symbol: task_facts.task_symbol,
                ..f
            };
            Candidate {
                file,
                path: corpus.index.files[file as usize].path.clone(),
                features: f,
            }
        })
        .collect();
    relative(&mut out);
    out
}

/// Features over the best candidate's.
fn relative(candidates: &mut [Candidate]) {
    let best = candidates
        .iter()
        .map(|c| c.features.cos_best)
        .fold(0.0, f32::max);
    for c in candidates {
        c.features.cos_rel = if best > 0.0 {
            c.features.cos_best / best
        } else {
            0.0
        };
    }
}

fn standing(f: &mut Features, file: u32, memory: &Memory) {
    let first = memory.first.get(&file).copied().unwrap_or(0.0);
    let total = memory.standing.get(&file).copied().unwrap_or(first);
    f.dispatch_rank = memory
        .seen
        .get(&file)
        .and_then(|s| s.rank)
        .map_or(MISSING, |r| r as f32);
    f.standing = first;
    f.later_gain = total - first;
}

fn judgement(f: &mut Features, eval: Option<&Evaluation>) {
    match eval {
        Some(e) => {
            f.evaluated = 1.0;
            f.relevance = e.relevance;
            f.eval_similarity = e.features.eval_similarity;
            f.eval_coverage = e.features.eval_coverage;
            f.eval_structure = e.features.eval_structure;
        }
        None => {
            f.evaluated = 0.0;
            f.relevance = MISSING;
            f.eval_similarity = MISSING;
            f.eval_coverage = MISSING;
            f.eval_structure = MISSING;
        }
    }
}

fn file_facts(f: &mut Features, corpus: &Corpus, file: u32) {
    let entry = &corpus.index.files[file as usize];
    f.file_chunks = (1.0 + entry.chunk_count as f32).ln();
    f.path_depth = features::path_depth(&entry.path);
    f.language = features::language(&entry.path);
    let (out, inbound) = corpus.facts.imports.degree(file);
    f.imports_out = out as f32;
    f.imports_in = inbound as f32;
    let history = &corpus.facts.history;
    f.history_commits = (1.0 + history.commits_of(file) as f32).ln();
    f.history_age = history.age_days(file).map_or(MISSING, |d| (1.0 + d).ln());
    f.noise_path = f32::from(u8::from(super::noise::is_noise_path(&entry.path)));
}

fn task_features(analysis: &Analysis, task: &str) -> Features {
    Features {
        task_report: f32::from(u8::from(analysis.is_report)),
        task_words: (1.0 + task.split_whitespace().count() as f32).ln(),
        task_identifiers: analysis.identifiers.len() as f32,
        task_symbol: f32::from(u8::from(analysis.is_symbol)),
        ..Features::default()
    }
}
