//! iret's retrieval: a query flows through four phases, one module each.
//!
//! 1. [`dispatch`] — hybrid search (HNSW vectors + BM25), scoped by globs, ranked by file
//!    with the [`ranking`] signals.
//! 2. [`evaluate`] — relevance in [0, 1] per file, with a reason and missing concepts.
//! 3. [`refine`] — learn the codebase's words, re-embed, exclude, aim at the gaps.
//! 4. [`loop`](crate::r#loop) — at most N cycles with an early stop; [`run`] is the entry point.
//!
//! A query is [`Query`] (what an agent sends) → [`State`] (what dispatch searches with);
//! it searches a [`Corpus`]: the index with facts computed once per index.
pub mod abbreviations;
pub mod corpus;
pub mod dispatch;
pub mod evaluate;
pub mod follow;
pub mod history;
pub mod hits;
pub mod imports;
mod keywords;
pub mod r#loop;
pub mod params;
pub mod query;
pub mod ranking;
pub mod refine;
pub mod spelling;
pub mod terms;

pub use corpus::Corpus;
pub use dispatch::dispatch;
pub use evaluate::Evaluation;
pub use hits::{ChunkHit, FileHit, Leg};
pub use params::{Fusion, Knob, Params, KNOBS};
pub use query::{initial_state, Query, Scope, State};
pub use r#loop::{run, Options, Outcome};
pub use terms::Term;

/// Single-shot search (dispatch only): files best first.
pub fn search_once(
    corpus: &Corpus,
    embedder: &dyn iret_embed::Embedder,
    query: &Query,
    params: &Params,
) -> anyhow::Result<Vec<FileHit>> {
    let query = &query.visible();
    let mut state = initial_state(query, embedder, params)?;
    state.embedding = embedder.map_query(std::mem::take(&mut state.embedding));
    state.point(corpus, params);
    dispatch(corpus, &state, params)
}
