//! History: what the repository's own commits say about a file
//! ([`HistoryHits`](crate::history::HistoryHits), matched once per query), one bonus
//! per signal, each with its weight in [`Params`](crate::params::Params):
//!
//! * [`messages`] — the task against the file's commit messages (BM25);
//! * [`similar`] — the file was changed by the commits most similar to the task;
//! * [`referenced`] — the file was changed by the commits that name an issue the task
//!   refers to (`#6461 had unintended consequences`);
//! * [`fixes`] — how often the file was fixed (a tie-breaker).
use crate::history::{HistoryFacts, HistoryHits};

fn bonus(map: &std::collections::HashMap<u32, f32>, file: u32, weight: f32) -> f32 {
    weight * map.get(&file).copied().unwrap_or(0.0)
}

pub fn messages(h: &HistoryHits, file: u32, weight: f32) -> f32 {
    bonus(&h.messages, file, weight)
}

pub fn similar(h: &HistoryHits, file: u32, weight: f32) -> f32 {
    bonus(&h.similar, file, weight)
}

pub fn referenced(h: &HistoryHits, file: u32, weight: f32) -> f32 {
    bonus(&h.referenced, file, weight)
}

pub fn fixes(h: &HistoryHits, file: u32, weight: f32) -> f32 {
    bonus(&h.fixes, file, weight)
}

/// The files similar past changes point at this strongly (of the best's), and those the
/// commits naming the task's issue numbers changed: candidates even when neither leg
/// finds them.
pub fn joined(h: &HistoryHits, at_least: f32) -> impl Iterator<Item = u32> + '_ {
    h.similar
        .iter()
        .chain(h.referenced.iter())
        .filter(move |(_, s)| **s >= at_least)
        .map(|(f, _)| *f)
}

/// The reason history gives for `file`: the similar commit that changed it, cited
/// ("changed in 'Fix caplog handler reset', 2019").
pub fn reason(facts: &HistoryFacts, h: &HistoryHits, file: u32) -> Option<String> {
    let strong = h.similar.get(&file).is_some_and(|s| *s >= 0.3)
        || h.referenced.get(&file).is_some_and(|s| *s >= 0.3);
    let c = h.cite.get(&file).filter(|_| strong)?;
    let (summary, year) = facts.citation(*c);
    let summary: String = summary.chars().take(80).collect();
    Some(format!("changed in '{summary}', {year}"))
}
