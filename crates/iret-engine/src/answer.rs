//! Requests and answers, as agents send and read them (JSON, with schemas).
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The loop: the files that matter for a task.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct RetrieveRequest {
    /// The task in plain words, e.g. "Fix the token expiry bug".
    pub task: String,
    /// Extra words to search for: the codebase's own words, when you know them (or as
    /// `next.keywords` of an earlier answer suggests).
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Only files matching these globs, relative to the root (`src/**/*.ts`, `auth`).
    #[serde(default)]
    pub include: Vec<String>,
    /// Never files matching these globs (`tests`, or `next.exclude` of an earlier answer).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Retrieval cycles, 1 to 10 (1 = single-shot hybrid search). Default 3.
    #[serde(default)]
    pub cycles: Option<u32>,
    /// Return files judged at least this relevant, 0 to 1. Default 0.7.
    #[serde(default)]
    pub min_relevance: Option<f32>,
    /// At most this many files. Default 10.
    #[serde(default)]
    pub max_files: Option<u32>,
    /// The whole answer within this many tokens (the shipped tokenizer counts its JSON):
    /// whole chunks, best first, give way first. At least 100.
    #[serde(default)]
    pub budget_tokens: Option<u32>,
    /// Also return each cycle's trace (terms, evaluations, learned words, stop reason).
    #[serde(default)]
    pub trace: bool,
}

/// Single-shot hybrid search: chunks, best first.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct SearchRequest {
    /// What to look for: words, an identifier, or both.
    pub query: String,
    /// Only files matching these globs.
    #[serde(default)]
    pub include: Vec<String>,
    /// Never files matching these globs.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// At most this many chunks (1 to 100). Default 10.
    #[serde(default)]
    pub k: Option<u32>,
    /// The whole answer within this many tokens (its JSON, the shipped tokenizer
    /// counting): whole chunks, best first. At least 100.
    #[serde(default)]
    pub budget_tokens: Option<u32>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChunkAnswer {
    pub start_line: u32,
    pub end_line: u32,
    /// The declaration the chunk holds, when it is one.
    pub symbol: String,
    pub score: f64,
    /// Tokens of `code` (the shipped tokenizer).
    pub tokens: usize,
    pub code: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileAnswer {
    pub path: String,
    /// 0.8–1 implements the target, 0.5–0.7 related, 0.2–0.4 indirect, < 0.2 irrelevant.
    pub relevance: f64,
    pub reason: String,
    /// Task concepts this file does not cover (absent: none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Its best chunks (those the token budget kept).
    pub chunks: Vec<ChunkAnswer>,
}

/// A word learned from the codebase, as the code writes it, with where it came from.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LearnedWord {
    pub word: String,
    pub file: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Scored {
    pub path: String,
    pub relevance: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CycleAnswer {
    pub cycle: usize,
    /// Keyword terms searched in this cycle (stemmed, as BM25 sees them).
    pub terms: Vec<String>,
    /// Candidate files dispatch found.
    pub candidates: usize,
    /// Files judged in this cycle, best first (at most 10).
    pub evaluated: Vec<Scored>,
    /// Words learned for the next cycle, in the codebase's words.
    pub learned: Vec<LearnedWord>,
    /// Files judged irrelevant and excluded from then on.
    pub excluded: Vec<String>,
    /// Files refine aimed the next cycle at (import neighbours of related files).
    pub focus: Vec<String>,
    pub stop: Option<String>,
}

/// What to pass back for another round, with your own judgement added.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct NextRound {
    /// Codebase words the loop learned (`keywords`).
    pub keywords: Vec<String>,
    /// Files judged irrelevant (`exclude`).
    pub exclude: Vec<String>,
    /// Task concepts no returned file covers: what context is still missing.
    pub gaps: Vec<String>,
}

/// What the answer costs and what the budget left out.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Budget {
    /// The budget asked for, if any: the whole answer stays within it.
    pub limit: Option<usize>,
    /// Tokens of the whole answer as read (its JSON, or the text printed), counted by
    /// the shipped tokenizer.
    pub tokens: usize,
    /// Tokens of the code returned (`chunks[].tokens` summed).
    pub code_tokens: usize,
    /// Chunks left out to stay within the budget (ask again with a larger one).
    pub omitted_chunks: usize,
    /// Files left out to stay within the budget (they came after the last one shown).
    pub omitted_files: usize,
}

/// The index an answer came from.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IndexNote {
    pub files: usize,
    pub chunks: usize,
    /// `fresh`, `refreshed N files`, or `busy` (another update runs: answered from the
    /// current index).
    pub freshness: String,
    /// Which tier answered: `full` (the model's vectors), `static` (the shipped static
    /// model's, while the model embeds), `keyword` (keywords only for chunks not embedded).
    pub tier: String,
}

/// The query as it was searched (globs checked against the root).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QueryEcho {
    /// The task (its first 120 characters).
    pub task: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RetrieveAnswer {
    pub query: QueryEcho,
    /// Files at or above `min_relevance` in the loop's order (best first), or when none reached it
    /// the best three, with `below_threshold` set.
    pub files: Vec<FileAnswer>,
    pub below_threshold: bool,
    pub min_relevance: f64,
    /// Each cycle's trace, when asked for (`trace`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cycles: Vec<CycleAnswer>,
    pub next: NextRound,
    pub budget: Budget,
    pub index: IndexNote,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchHit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: String,
    pub score: f64,
    pub tokens: usize,
    pub code: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchAnswer {
    pub chunks: Vec<SearchHit>,
    pub budget: Budget,
    pub index: IndexNote,
}

/// Files tied to a file.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct RelatedRequest {
    /// A file, relative to the root.
    pub path: String,
    /// A line in it: relate the chunk holding this line rather than the whole file.
    #[serde(default)]
    pub line: Option<u32>,
    /// At most this many files (1 to 50). Default 10.
    #[serde(default)]
    pub k: Option<u32>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Related {
    pub path: String,
    pub score: f64,
    /// How it is tied: `imports it`, `imported by it`, `uses X, Y`, `similar code (cos …)`.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RelatedAnswer {
    pub path: String,
    pub related: Vec<Related>,
    pub index: IndexNote,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusAnswer {
    pub root: String,
    pub files: usize,
    pub chunks: usize,
    /// Files changed, added or deleted since the index was built.
    pub stale_files: usize,
    /// Up to 20 of them.
    pub stale_examples: Vec<String>,
    pub model: String,
    /// `full`, `static` or `keyword` (see [`IndexNote::tier`]).
    pub tier: String,
    /// Share of chunks with an embedding (1.0: the vector leg sees everything).
    pub embedded_share: f64,
    /// While a build embeds: the seconds it has left at its rate so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_eta_seconds: Option<u64>,
    pub bytes_on_disk: u64,
    pub generation: String,
    /// Commits of git history the index holds (0: none: not a git checkout).
    pub history_commits: usize,
}
