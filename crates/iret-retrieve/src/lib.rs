//! iret's retrieval: a query flows through four phases, one module each.
//!
//! 1. [`dispatch`] — hybrid search (HNSW vectors + BM25), scoped by globs, ranked by file.
//! 2. [`evaluate`] — relevance in [0, 1] per file, with a reason and missing concepts.
//! 3. [`refine`] — learn the codebase's words, re-embed, exclude, aim at the gaps.
//! 4. [`loop`](crate::r#loop) — at most N cycles with an early stop; [`run`] is the entry point.
pub mod dispatch;
pub mod evaluate;
pub mod imports;
pub mod r#loop;
pub mod query;
pub mod refine;

pub use dispatch::{dispatch, FileHit, Params, Scope, State};
pub use evaluate::Evaluation;
pub use query::Query;
pub use r#loop::{initial_state, run, Options, Outcome};

/// Single-shot search (dispatch only): files best first.
pub fn search_once(
    index: &iret_index::Index,
    embedder: &dyn iret_embed::Embedder,
    query: &Query,
    params: &Params,
) -> anyhow::Result<Vec<FileHit>> {
    let state = initial_state(query, embedder)?;
    Ok(dispatch(index, &state, params))
}
