//! The repository's history as retrieval reads it (computed once per index, from
//! [`iret_index::history::History`]): which commits touched each indexed file, BM25
//! over the commit messages (one document per commit) and over each file's messages
//! (one document per file), and how often each file was fixed. Commit messages speak
//! the reporter's language, not the code's: a new issue is often close to an old one
//! fixed in the same file (BugLocator's similar fixed reports, Zhou et al. 2012).
//!
//! [`HistoryFacts::matches`] scores a task against them; `ranking::history` turns the
//! scores into bonuses. An index without history has no facts and every score is 0.
use crate::params::Params;
use crate::query::evidence::issue_refs;
use iret_index::bm25::{Bm25, Bm25Builder, Bm25Params};
use iret_index::tokens::tokenize;
use iret_index::Index;
use std::collections::HashMap;

/// A file's messages document holds at most this many of its newest commits.
const FILE_COMMITS: usize = 50;

const BM25: Bm25Params = Bm25Params { k1: 1.2, b: 0.75 };

#[derive(Debug, Default)]
pub struct HistoryFacts {
    /// Per indexed file, the commits that touched it (into `History::commits`), newest
    /// first.
    file_commits: Vec<Vec<u32>>,
    /// Per commit, the indexed files it touched.
    commit_files: Vec<Vec<u32>>,
    /// One document per commit: its message.
    messages: Bm25,
    /// One document per indexed file: the messages of its newest commits.
    file_messages: Bm25,
    /// Per indexed file, how many of its commits say they fix something.
    fixes: Vec<u32>,
    most_fixes: u32,
    /// Per commit, its time; the newest commit's.
    times: Vec<i64>,
    newest: i64,
    /// Per commit, its first line.
    summaries: Vec<String>,
    /// Issue and pull-request numbers → the commits whose messages name them.
    referencing: HashMap<u32, Vec<u32>>,
}

/// What the history says about one task, per indexed file (each score in [0, 1]).
#[derive(Debug, Clone, Default)]
pub struct HistoryHits {
    /// BM25 of the task against the file's commit messages, over the best file's.
    pub messages: HashMap<u32, f32>,
    /// The commits most similar to the task, by similarity and recency, spread over the
    /// files they changed; over the best file's.
    pub similar: HashMap<u32, f32>,
    /// How often the file was fixed, on a log scale over the most fixed file's.
    pub fixes: HashMap<u32, f32>,
    /// Changed by the commits that name an issue the task refers to (`#6461`), shared
    /// among each commit's files, over the best file's.
    pub referenced: HashMap<u32, f32>,
    /// The commit to cite for a file: the most similar to the task that touched it.
    pub cite: HashMap<u32, u32>,
}

impl HistoryHits {
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
            && self.similar.is_empty()
            && self.fixes.is_empty()
            && self.referenced.is_empty()
    }
}

impl HistoryFacts {
    pub fn of(index: &Index) -> Self {
        let h = &index.history;
        if h.is_empty() {
            return Self::default();
        }
        let paths: Vec<&str> = index.files.iter().map(|f| f.path.as_str()).collect();
        let file_commits = h.file_commits(&paths);
        let mut commit_files = vec![Vec::new(); h.commits.len()];
        for (f, commits) in file_commits.iter().enumerate() {
            for &c in commits {
                commit_files[c as usize].push(f as u32);
            }
        }
        let tokens: Vec<Vec<String>> = h.commits.iter().map(|c| tokenize(&c.message)).collect();
        let fix = |t: &[String]| t.iter().any(|w| w == "fix" || w == "bug");
        let is_fix: Vec<bool> = tokens.iter().map(|t| fix(t)).collect();
        let file_docs: Vec<Vec<String>> = file_commits
            .iter()
            .map(|cs| {
                cs.iter()
                    .take(FILE_COMMITS)
                    .flat_map(|&c| tokens[c as usize].iter().cloned())
                    .collect()
            })
            .collect();
        let fixes: Vec<u32> = file_commits
            .iter()
            .map(|cs| cs.iter().filter(|&&c| is_fix[c as usize]).count() as u32)
            .collect();
        let times: Vec<i64> = h.commits.iter().map(|c| c.time).collect();
        let mut referencing: HashMap<u32, Vec<u32>> = HashMap::new();
        for (c, commit) in h.commits.iter().enumerate() {
            for n in issue_refs(&commit.message) {
                referencing.entry(n).or_default().push(c as u32);
            }
        }
        Self {
            most_fixes: fixes.iter().copied().max().unwrap_or(0),
            newest: times.iter().copied().max().unwrap_or(0),
            summaries: (0..h.commits.len())
                .map(|c| h.summary(c).to_string())
                .collect(),
            messages: Bm25Builder::build(&tokens).freeze(),
            file_messages: Bm25Builder::build(&file_docs).freeze(),
            file_commits,
            commit_files,
            fixes,
            times,
            referencing,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The first line of commit `c`'s message and its year.
    pub fn citation(&self, c: u32) -> (String, i32) {
        let year = 1970 + (self.times[c as usize] / 31_556_952) as i32;
        (self.summaries[c as usize].clone(), year)
    }

    /// Days from `file`'s newest change to the history's newest commit (None: no
    /// history, or no commit touched it).
    pub fn age_days(&self, file: u32) -> Option<f32> {
        let newest = *self.file_commits.get(file as usize)?.first()?;
        Some((self.newest - self.times[newest as usize]).max(0) as f32 / 86_400.0)
    }

    /// How many commits touched `file`.
    pub fn commits_of(&self, file: u32) -> usize {
        self.file_commits.get(file as usize).map_or(0, Vec::len)
    }

    /// Scores the task (its BM25 terms, the issue numbers it refers to) against the
    /// history. Signals whose weight is 0 are not computed.
    pub fn matches(&self, terms: &[String], refs: &[u32], p: &Params) -> HistoryHits {
        let mut hits = HistoryHits::default();
        if self.is_empty() {
            return hits;
        }
        if p.history_refs > 0.0 {
            self.referenced(refs, &mut hits);
        }
        if terms.is_empty() {
            return hits;
        }
        let mut uniq: Vec<(String, f32)> = Vec::new();
        for t in terms {
            if !uniq.iter().any(|(u, _)| u == t) {
                uniq.push((t.clone(), 1.0));
            }
        }
        if p.history_messages > 0.0 {
            let scored = self.file_messages.score(&uniq, BM25, &|_| true);
            hits.messages = normalised(scored);
        }
        if p.history_similar > 0.0 || p.history_messages > 0.0 {
            self.similar(&uniq, p, &mut hits);
        }
        if p.history_fixes > 0.0 && self.most_fixes > 0 {
            let top = (1.0 + self.most_fixes as f32).ln();
            for (f, &n) in self.fixes.iter().enumerate() {
                if n > 0 {
                    hits.fixes.insert(f as u32, (1.0 + n as f32).ln() / top);
                }
            }
        }
        hits
    }

    /// The `history_commits` commits most similar to the task, each weighing its
    /// similarity (over the best's) times its recency, shared among the files it changed.
    fn similar(&self, terms: &[(String, f32)], p: &Params, hits: &mut HistoryHits) {
        let mut scored = self
            .messages
            .score(terms, BM25, &|c| !self.commit_files[c as usize].is_empty());
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(p.history_commits.max(1));
        let Some(&(_, best)) = scored.first() else {
            return;
        };
        let mut similar: Vec<(u32, f32)> = Vec::new();
        let mut seen: HashMap<u32, usize> = HashMap::new();
        for &(c, s) in &scored {
            let files = &self.commit_files[c as usize];
            let weight =
                s / best * self.recency(c, p.history_half_life_days) / (files.len() as f32).sqrt();
            for &f in files {
                hits.cite.entry(f).or_insert(c);
                match seen.get(&f) {
                    Some(&i) => similar[i].1 += weight,
                    None => {
                        seen.insert(f, similar.len());
                        similar.push((f, weight));
                    }
                }
            }
        }
        if p.history_similar > 0.0 {
            hits.similar = normalised(similar);
        }
    }

    /// [`HistoryHits::referenced`]: the files of the commits that name the task's issue
    /// numbers, each commit's weight shared among its files; such a commit is the one
    /// cited for its files.
    fn referenced(&self, refs: &[u32], hits: &mut HistoryHits) {
        let mut files: Vec<(u32, f32)> = Vec::new();
        for n in refs {
            for &c in self.referencing.get(n).map_or(&[][..], Vec::as_slice) {
                let changed = &self.commit_files[c as usize];
                let weight = 1.0 / (changed.len().max(1) as f32).sqrt();
                for &f in changed {
                    hits.cite.insert(f, c);
                    match files.iter_mut().find(|(g, _)| *g == f) {
                        Some((_, w)) => *w += weight,
                        None => files.push((f, weight)),
                    }
                }
            }
        }
        hits.referenced = normalised(files);
    }

    /// 1 for the newest commit, halving every `half_life` days before it.
    fn recency(&self, c: u32, half_life: f32) -> f32 {
        if half_life <= 0.0 {
            return 1.0;
        }
        let days = (self.newest - self.times[c as usize]).max(0) as f32 / 86_400.0;
        0.5f32.powf(days / half_life)
    }
}

/// Scores over the best one's (the best is 1).
fn normalised(scored: Vec<(u32, f32)>) -> HashMap<u32, f32> {
    let best = scored.iter().map(|s| s.1).fold(0.0f32, f32::max);
    if best <= 0.0 {
        return HashMap::new();
    }
    scored
        .into_iter()
        .filter(|s| s.1 > 0.0)
        .map(|(f, s)| (f, s / best))
        .collect()
}
