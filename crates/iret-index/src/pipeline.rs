//! `iret index`: walk → chunk → embed (cached) → BM25 + HNSW + vocabulary → atomic store.
use crate::bm25::Bm25;
use crate::cache::{key, EmbeddingCache};
use crate::index::{ChunkEntry, FileEntry, Manifest};
use crate::store::{save_bin, save_f32, IndexDir, StoreError, FORMAT_VERSION};
use crate::tokens::tokenize;
use crate::vectors::Vectors;
use crate::vocab::{collect_terms, Vocab};
use crate::walk::{read_text, walk, SkipReason};
use iret_chunk::{chunk, Language, Limits, CHUNKER_VERSION};
use iret_embed::Embedder;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Texts per model call: small batches keep memory flat (fastembed holds a whole call).
const BATCH: usize = 32;

#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Rebuild even when nothing changed.
    pub force: bool,
    pub limits: Option<Limits>,
}

#[derive(Debug, Clone)]
pub struct BuildReport {
    pub files: usize,
    pub chunks: usize,
    /// Chunks (and vocabulary terms) sent to the model this run.
    pub embedded: usize,
    /// Reused from the embedding cache.
    pub cached: usize,
    pub seconds: f64,
    pub skipped: BTreeMap<SkipReason, usize>,
    /// Nothing had changed: the live index was kept as it is.
    pub up_to_date: bool,
}

impl BuildReport {
    pub fn summary(&self) -> String {
        if self.up_to_date {
            return format!(
                "index is up to date ({} files, {} chunks; checked in {:.0} ms)",
                self.files,
                self.chunks,
                self.seconds * 1000.0
            );
        }
        let rate = self.embedded as f64 / self.seconds.max(1e-9);
        let skipped: Vec<String> = self
            .skipped
            .iter()
            .map(|(r, n)| format!("{n} {}", r.label()))
            .collect();
        format!(
            "indexed {} files, {} chunks in {:.1}s ({} embedded at {:.0} texts/s, {} cached){}",
            self.files,
            self.chunks,
            self.seconds,
            self.embedded,
            rate,
            self.cached,
            if skipped.is_empty() {
                String::new()
            } else {
                format!("; skipped {}", skipped.join(", "))
            }
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] iret_embed::EmbedError),
    #[error("{0} is not a directory")]
    NotADirectory(String),
}

/// What the model sees for a chunk: where it lives, what it is, and the code.
pub fn embedding_text(path: &str, symbol: &str, text: &str) -> String {
    format!("{path}\n{symbol}\n{text}")
}

/// What BM25 sees for a chunk: path words, symbol path and code.
pub fn keyword_tokens(path: &str, symbol: &str, text: &str) -> Vec<String> {
    let mut t = tokenize(path);
    t.extend(tokenize(symbol));
    t.extend(tokenize(text));
    t
}

/// Builds (or rebuilds) the index of `root` into `index_dir`.
pub fn build(
    root: &Path,
    index_dir: &Path,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
) -> Result<BuildReport, BuildError> {
    if !root.is_dir() {
        return Err(BuildError::NotADirectory(root.display().to_string()));
    }
    let started = Instant::now();
    let store = IndexDir::new(index_dir);
    let _lock = store.lock()?;
    let walked = walk(root);
    if !opts.force {
        if let Some(report) = up_to_date(&store, &walked, embedder.model_id(), started) {
            return Ok(report);
        }
    }
    let mut skipped = walked.skipped.clone();
    skipped.remove(&SkipReason::NotSource);
    let limits = opts.limits.unwrap_or_default();

    // Read and chunk in parallel; order is kept (sorted paths).
    let parsed: Vec<_> = walked
        .files
        .par_iter()
        .map(|f| {
            let text = read_text(&f.abs)?;
            let lang = Language::from_path(&f.abs);
            let chunks = chunk(&text, lang, limits);
            Ok((
                f,
                lang,
                blake3::hash(text.as_bytes()).to_hex().to_string(),
                chunks,
            ))
        })
        .collect::<Vec<Result<_, SkipReason>>>();

    let mut files = Vec::new();
    let mut chunks = Vec::new();
    let mut skipped_files = Vec::new();
    for (p, found) in parsed.into_iter().zip(&walked.files) {
        match p {
            Err(reason) => {
                *skipped.entry(reason).or_default() += 1;
                skipped_files.push(found.rel.clone());
            }
            Ok((f, lang, hash, file_chunks)) => {
                let first = chunks.len() as u32;
                for c in file_chunks {
                    chunks.push(ChunkEntry {
                        file: files.len() as u32,
                        start_line: c.start_line as u32,
                        end_line: c.end_line as u32,
                        symbol: c.symbol,
                        defines: c.defines,
                        text: c.text,
                    });
                }
                files.push(FileEntry {
                    path: f.rel.clone(),
                    language: lang.map(|l| l.name().to_string()),
                    size: f.size,
                    mtime_ns: f.mtime_ns,
                    hash,
                    first_chunk: first,
                    chunk_count: chunks.len() as u32 - first,
                });
            }
        }
    }

    let texts: Vec<String> = chunks
        .par_iter()
        .map(|c| embedding_text(&files[c.file as usize].path, &c.symbol, &c.text))
        .collect();
    let terms = collect_terms(chunks.iter().map(|c| c.text.as_str()));
    let term_texts: Vec<String> = terms.iter().map(|(t, _)| t.clone()).collect();

    let mut cache = EmbeddingCache::open(&index_dir.join("embeddings.bin"));
    let all_texts: Vec<&str> = texts
        .iter()
        .chain(term_texts.iter())
        .map(String::as_str)
        .collect();
    let total_texts = all_texts.len();
    let (vectors, embedded) = embed_all(&all_texts, embedder, &mut cache, opts.progress)?;
    drop(all_texts);
    cache.save()?;
    let dims = embedder.dims();
    let (chunk_vecs, term_vecs) = vectors.split_at(texts.len() * dims);

    let docs: Vec<Vec<String>> = chunks
        .par_iter()
        .map(|c| keyword_tokens(&files[c.file as usize].path, &c.symbol, &c.text))
        .collect();
    let bm25 = Bm25::build(&docs);
    let vocab = Vocab {
        terms: term_texts,
        df: terms.iter().map(|(_, d)| *d).collect(),
        dims,
        vectors: term_vecs.to_vec(),
    };
    let mut vecs = Vectors::new(dims, chunk_vecs.to_vec());
    vecs.build_graph();

    let mut manifest = Manifest {
        format_version: FORMAT_VERSION,
        model_id: embedder.model_id().to_string(),
        dims,
        chunker_version: CHUNKER_VERSION,
        tokenizer_version: crate::tokens::TOKENIZER_VERSION,
        files: files.len(),
        chunks: chunks.len(),
        skipped: skipped
            .iter()
            .map(|(r, n)| (r.label().to_string(), *n))
            .collect(),
        skipped_files,
        sizes: BTreeMap::new(),
        built_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let tmp = store.begin()?;
    let dir = tmp.path();
    save_bin(&dir.join("files.bin"), &files)?;
    save_bin(&dir.join("chunks.bin"), &chunks)?;
    save_bin(&dir.join("bm25.bin"), &bm25)?;
    save_bin(&dir.join("vocab.bin"), &vocab)?;
    save_f32(&dir.join("vectors.f32"), &vecs.data)?;
    vecs.dump_graph(dir)?;
    for entry in std::fs::read_dir(dir)
        .map_err(crate::store::io_err(dir))?
        .flatten()
    {
        if let (Some(name), Ok(meta)) = (
            entry.file_name().to_str().map(String::from),
            entry.metadata(),
        ) {
            manifest.sizes.insert(name, meta.len());
        }
    }
    let manifest_json = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
    std::fs::write(dir.join("manifest.json"), manifest_json).map_err(crate::store::io_err(dir))?;
    store.commit(tmp)?;

    Ok(BuildReport {
        files: files.len(),
        chunks: chunks.len(),
        embedded,
        cached: total_texts - embedded,
        seconds: started.elapsed().as_secs_f64(),
        skipped,
        up_to_date: false,
    })
}

/// When the live generation already indexes exactly these files (same size and mtime,
/// same model, chunker and tokenizer), there is nothing to do. Reads only the manifest and
/// the file table.
fn up_to_date(
    store: &IndexDir,
    walked: &crate::walk::Walked,
    model_id: &str,
    started: Instant,
) -> Option<BuildReport> {
    let gen = store.current().ok()?;
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(gen.join("manifest.json")).ok()?).ok()?;
    manifest.check_compatible(Some(model_id)).ok()?;
    let intact = !manifest.sizes.is_empty()
        && manifest
            .sizes
            .iter()
            .all(|(name, len)| std::fs::metadata(gen.join(name)).is_ok_and(|m| m.len() == *len));
    if !intact {
        return None;
    }
    let files: Vec<FileEntry> = crate::store::load_bin(&gen.join("files.bin")).ok()?;
    let indexed: std::collections::HashMap<&str, (u64, u128)> = files
        .iter()
        .map(|f| (f.path.as_str(), (f.size, f.mtime_ns)))
        .collect();
    let skipped: std::collections::HashSet<&str> =
        manifest.skipped_files.iter().map(String::as_str).collect();
    let mut seen = 0;
    for f in &walked.files {
        match indexed.get(f.rel.as_str()) {
            Some(&(size, mtime)) if size == f.size && mtime == f.mtime_ns => seen += 1,
            None if skipped.contains(f.rel.as_str()) => {}
            _ => return None,
        }
    }
    if seen != files.len() {
        return None; // something was deleted
    }
    let mut skipped_by_reason = walked.skipped.clone();
    skipped_by_reason.remove(&SkipReason::NotSource);
    Some(BuildReport {
        files: files.len(),
        chunks: manifest.chunks,
        embedded: 0,
        cached: 0,
        seconds: started.elapsed().as_secs_f64(),
        skipped: skipped_by_reason,
        up_to_date: true,
    })
}

/// Embeds `texts` through the cache; returns the flat vectors and how many were new.
fn embed_all(
    texts: &[&str],
    embedder: &dyn Embedder,
    cache: &mut EmbeddingCache,
    progress: bool,
) -> Result<(Vec<f32>, usize), BuildError> {
    let dims = embedder.dims();
    let model = embedder.model_id();
    let keys: Vec<[u8; 16]> = texts.par_iter().map(|t| key(model, t)).collect();
    let mut missing: Vec<usize> = (0..texts.len())
        .filter(|&i| cache.get(&keys[i]).is_none())
        .collect();
    // Similar lengths per batch: less padding, faster and closer to single-text results.
    missing.sort_by_key(|&i| texts[i].len());
    missing.dedup_by_key(|i| keys[*i]);
    let bar = if progress && !missing.is_empty() {
        let bar = indicatif::ProgressBar::new(missing.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "embedding {bar:40} {pos}/{len} chunks ({per_sec}, eta {eta})",
            )
            .expect("valid template"),
        );
        Some(bar)
    } else {
        None
    };
    for batch in missing.chunks(BATCH) {
        let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
        let out = embedder.embed(&batch_texts)?;
        for (&i, v) in batch.iter().zip(out) {
            cache.insert(keys[i], v);
        }
        if let Some(b) = &bar {
            b.inc(batch.len() as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut flat = Vec::with_capacity(texts.len() * dims);
    for k in &keys {
        let v = cache.get(k).expect("every text was embedded");
        flat.extend_from_slice(v);
    }
    Ok((flat, missing.len()))
}
