//! The engine: one opened index and the embedder, kept fresh, answering the four
//! questions agents ask ([`Engine::retrieve`], [`Engine::search`], [`Engine::related`],
//! [`Engine::status`]). The CLI, the MCP server and `iret bench` all query through it.
//!
//! * [`locate`] — which repository and index a path belongs to;
//! * [`confine`] — paths and globs that must stay inside the root;
//! * [`budget`] — the whole answer within N tokens, the code giving way first;
//! * [`answer`] — the answers, as JSON-ready types;
//! * [`maintain`] — building an index, its status, the embedding cache: the front ends'
//!   one way to the index crate outside a query;
//! * [`watch`] — a watcher that updates the index in the background as files change.
pub mod answer;
pub mod budget;
pub mod confine;
mod engine;
pub mod locate;
pub mod maintain;
mod related;
mod signal;
pub mod watch;

pub use answer::{
    ChunkAnswer, CycleAnswer, FileAnswer, NextRound, Related, RelatedAnswer, RelatedRequest,
    RetrieveAnswer, RetrieveRequest, SearchAnswer, SearchRequest, StatusAnswer,
};
pub use engine::{Engine, Freshness, OpenOptions};

/// Rounds a score for output (4 decimals): `0.9599999785` → `0.96`.
pub fn round4(x: f32) -> f64 {
    (x as f64 * 1e4).round() / 1e4
}
