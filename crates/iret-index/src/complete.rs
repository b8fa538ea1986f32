//! The model's vectors for a live tier (a first build's static or keyword vectors, every
//! chunk left to embed), made from the tier's mapped chunks a block at a time: the next
//! generation takes every other table as it is (hard links), and only a block's texts and
//! vectors are ever in memory, however large the tree (the background `iret index` after
//! a large first build). The texts, their cache keys and so their vectors are the ones a
//! whole build embeds (`tests/streamed.rs` checks the tables equal).
use crate::cache::{key, user_dir, EmbeddingCache};
use crate::index::{finish_manifest, open_committed, with_graph, Index, Manifest};
use crate::pipeline::{embedding_text, BuildError, BuildOptions, Embedding, PROGRESS_FILE};
use crate::profile::Phases;
use crate::store::{io_err, save_bin, F16Writer, IndexDir};
use crate::vectors::{VectorsBuilder, EXACT_UP_TO, FLAT_FILE};
use crate::vocab::Vocab;
use iret_embed::Embedder;
use rayon::prelude::*;

/// Chunks whose texts are made, looked up and embedded at once.
const BLOCK: usize = 4096;

/// What a completion did: texts embedded by the model, and texts in all.
pub(crate) struct Completed {
    pub embedded: usize,
    pub texts: usize,
    pub index: Index,
}

/// Whether the live generation of `store` is a tier of `embedder`'s index with every
/// chunk left to embed (what a first build that deferred its embedding leaves).
pub(crate) fn is_pending_tier(store: &IndexDir, embedder: &dyn Embedder) -> bool {
    let Ok(live) = store.current() else {
        return false;
    };
    let Ok(bytes) = std::fs::read(live.join("manifest.json")) else {
        return false;
    };
    let Ok(m) = serde_json::from_slice::<Manifest>(&bytes) else {
        return false;
    };
    m.check_compatible(Some(embedder.model_id())).is_ok()
        && m.chunks > 0
        && m.pending_vectors == m.chunks
}

/// A table of the tier the next generation takes as it is: all but the vectors, the
/// vocabulary (its terms' vectors), the graph and the manifest.
fn taken(name: &str) -> bool {
    !(name == FLAT_FILE
        || name == "vocab.bin"
        || name == "manifest.json"
        || name.starts_with("graph")
        || name.starts_with("hnsw"))
}

/// Embeds the live tier's chunks and terms with `embedder` (through the cache) and commits
/// the generation with the model's vectors and their graph.
pub(crate) fn complete(
    store: &IndexDir,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    phases: &mut Phases,
) -> Result<Completed, BuildError> {
    let tier = Index::open(&store.dir, Some(embedder.model_id()))?;
    let tmp = store.begin()?;
    let dir = tmp.path();
    for name in tier.manifest.sizes.keys().filter(|n| taken(n)) {
        let (from, to) = (tier.generation.join(name), dir.join(name));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(io_err(&from))?;
        }
    }
    let (n, dims, model) = (tier.chunks.len(), embedder.dims(), embedder.model_id());
    let texts = n + tier.vocab.terms.len();
    let shared = opts.embedding_cache.clone().unwrap_or_else(user_dir);
    let mut cache = EmbeddingCache::open(&shared, Some(&store.dir));
    let progress = store.dir.join(PROGRESS_FILE);
    let mut embedding = Embedding::new(embedder, texts, opts.progress, progress);
    let mut vectors = F16Writer::create(&dir.join(FLAT_FILE))?;
    for start in (0..n).step_by(BLOCK) {
        let block: Vec<String> = (start..(start + BLOCK).min(n))
            .map(|i| {
                let c = tier.chunks.get(i);
                embedding_text(&tier.files[c.file as usize].path, c.symbol, c.text)
            })
            .collect();
        vectors.push(&embed_block(&block, model, &mut cache, &mut embedding)?)?;
        // The tier's pages read so far go back (file-backed: the page cache keeps them).
        tier.chunks.release();
    }
    vectors.finish()?;
    let terms = embed_block(&tier.vocab.terms, model, &mut cache, &mut embedding)?;
    cache.save();
    let embedded = embedding.embedded;
    embedding.finish();
    let vocab = Vocab {
        terms: tier.vocab.terms.clone(),
        df: tier.vocab.df.clone(),
        dims,
        vectors: terms,
    };
    save_bin(&dir.join("vocab.bin"), &vocab)?;
    drop(vocab);
    let mut manifest = tier.manifest.clone();
    drop(tier);
    phases.mark("embed");
    manifest.dims = dims;
    manifest.pending_vectors = 0;
    manifest.static_tier = None;
    manifest.built_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // As a cold build: a large tree is live with the model's vectors before its graph.
    let (tmp, manifest) = if n > EXACT_UP_TO {
        finish_manifest(dir, &mut manifest)?;
        let live = store.commit(tmp)?;
        phases.mark("live");
        with_graph(store, &live, manifest, embedder.is_cheap())?
    } else {
        VectorsBuilder::graph_from_file(dir, dims, n, embedder.is_cheap(), dir)?;
        finish_manifest(dir, &mut manifest)?;
        (tmp, manifest)
    };
    phases.mark("hnsw");
    let generation = store.commit(tmp)?;
    phases.mark("commit");
    Ok(Completed {
        embedded,
        texts,
        index: open_committed(generation, manifest)?,
    })
}

/// The vectors of `texts` in order, embedded through the cache where it lacks them; the
/// cache's view lets them go once they are stored.
fn embed_block<S: AsRef<str> + Sync>(
    texts: &[S],
    model: &str,
    cache: &mut EmbeddingCache,
    embedding: &mut Embedding,
) -> Result<Vec<f32>, BuildError> {
    let refs: Vec<&str> = texts.iter().map(AsRef::as_ref).collect();
    let keys: Vec<[u8; 16]> = refs.par_iter().map(|t| key(model, t)).collect();
    cache.load(&keys);
    let found = keys.iter().filter(|k| cache.contains(k)).count();
    embedding.missing(&refs, &keys, cache, found)?;
    let mut rows = Vec::with_capacity(keys.len() * embedding.dims());
    for k in &keys {
        let found = cache.extend_with(k, &mut rows);
        assert!(found, "every text was embedded");
    }
    cache.release();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::taken;

    #[test]
    fn the_next_generation_takes_all_but_the_vectors_vocabulary_graph_and_manifest() {
        for name in [
            "chunks.dat",
            "bm25.fst",
            "defs.dat",
            "files.bin",
            "terms.bin",
        ] {
            assert!(taken(name), "{name}");
        }
        for name in [
            "vectors.f16",
            "vocab.bin",
            "manifest.json",
            "graph.bin",
            "hnsw.slots",
        ] {
            assert!(!taken(name), "{name}");
        }
    }
}
