//! Builds and opens iret's index: source files → chunks → embeddings + BM25 + HNSW +
//! the codebase vocabulary, stored atomically under `.iret/`.
pub mod bm25;
pub mod cache;
pub mod chunks;
mod complete;
pub mod definitions;
mod graph;
pub mod history;
pub mod index;
pub mod mapped;
mod memory;
pub mod pipeline;
pub mod profile;
pub mod remote;
mod runs;
pub mod status;
pub mod store;
mod stream;
pub mod tokens;
mod update;
pub mod vectors;
pub mod vocab;
pub mod walk;

pub use index::{live_manifest, Chunk, ChunkEntry, Chunks, FileEntry, Index, Manifest};
pub use pipeline::{build, refresh, BuildError, BuildOptions, BuildReport};
pub use remote::{Remote, RemoteNearest, RemoteVectors};
pub use store::{IndexDir, StoreError};

/// Where the index of `root` lives by default.
pub fn default_index_dir(root: &std::path::Path) -> std::path::PathBuf {
    root.join(".iret")
}
