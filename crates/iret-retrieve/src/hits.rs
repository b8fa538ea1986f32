//! What dispatch finds: chunks, grouped into files with the signals that ranked them.
use serde::Serialize;

/// Which leg found a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Leg {
    Vector,
    Keyword,
    Both,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChunkHit {
    pub chunk: u32,
    pub score: f32,
    pub cosine: f32,
    pub bm25: f32,
    pub leg: Leg,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileHit {
    pub file: u32,
    pub score: f32,
    /// Best chunks first (at most 3).
    pub chunks: Vec<ChunkHit>,
    /// Query identifiers this file defines.
    pub defines: Vec<String>,
    /// Query words in the file name / directories.
    pub name_words: Vec<String>,
    /// Share of the file name's words the query says (`ranking::names::file_name_words`).
    pub name_share: f32,
    pub path_words: Vec<String>,
    pub noise: bool,
    /// Refine aimed at this file (it imports, or is imported by, a relevant file).
    pub focused: bool,
    /// What the task's evidence says of this file ("named by the task", …).
    pub evidence: Vec<String>,
    /// The past change the history cites for this file ("changed in '…', 2019"); a
    /// reason, not structure.
    pub history: Option<String>,
    /// Every signal at unit weight (dispatch's; the loop adds its own), what `score`
    /// weighed.
    #[serde(skip)]
    pub features: crate::ranking::features::Features,
}
