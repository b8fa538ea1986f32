//! A shared store beside the index (a team's Chroma collection, `iret-chroma`): vectors
//! another machine embedded, fetched by cache key instead of embedded again, and a
//! served nearest-neighbour search. The index only knows these two traits.

/// A store that may already hold the vectors of the texts a build needs.
pub trait RemoteVectors: Send + Sync + std::fmt::Debug {
    /// For each key ([`crate::cache::key`] of the model and the text), its vector when the
    /// store holds it. An error (unreachable, wrong collection) stops the build before
    /// anything is written, so the live index stays as it was.
    fn fetch(&self, keys: &[[u8; 16]]) -> Result<Vec<Option<Vec<f32>>>, String>;
}

/// A served vector search over the chunks' vectors.
pub trait RemoteNearest: Send + Sync + std::fmt::Debug {
    /// The keys of the `k` chunks nearest to `query`, best first, with their cosine.
    fn nearest(&self, query: &[f32], k: usize) -> Result<Vec<([u8; 16], f32)>, String>;

    /// A token that changes whenever the store's records may have changed (a push began
    /// or ended): what a reader learnt from [`RemoteNearest::holding`] holds while it stays.
    fn version(&self) -> Result<String, String>;

    /// For each key, whether the store holds it: a chunk it lacks is never proposed by
    /// [`RemoteNearest::nearest`], so the reader searches those itself.
    fn holding(&self, keys: &[[u8; 16]]) -> Result<Vec<bool>, String>;
}

/// The cache key of chunk `chunk` of `index` (the key its vector is stored under).
pub fn chunk_key(index: &crate::Index, chunk: usize) -> [u8; 16] {
    let c = index.chunks.get(chunk);
    let path = &index.files[c.file as usize].path;
    crate::cache::key(
        &index.manifest.model_id,
        &crate::pipeline::embedding_text(path, c.symbol, c.text),
    )
}

/// Both sides of a shared store, as the engine holds them.
#[derive(Debug, Clone)]
pub struct Remote {
    pub vectors: std::sync::Arc<dyn RemoteVectors>,
    pub nearest: std::sync::Arc<dyn RemoteNearest>,
}
