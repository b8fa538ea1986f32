//! The stored index and what an opened one offers to retrieval: the small tables (files,
//! vocabulary, history) read whole, the large ones (chunks, keywords, vectors) mapped.
use crate::bm25::{Bm25, Bm25Builder};
pub use crate::chunks::{Chunk, ChunkEntry, Chunks};
use crate::definitions::Definitions;
use crate::history::{History, HISTORY_FILE};
use crate::store::{load_bin, save_bin, IndexDir, StoreError, FORMAT_VERSION};
use crate::vectors::{Vectors, VectorsBuilder};
use crate::vocab::{TermCounts, Vocab};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to the indexed root, `/`-separated.
    pub path: String,
    pub language: Option<String>,
    pub size: u64,
    pub mtime_ns: u128,
    /// blake3 of the content, hex.
    pub hash: String,
    pub first_chunk: u32,
    pub chunk_count: u32,
    /// The module names its head imports, as written ([`iret_chunk::imports`]: read from
    /// its first chunk when it is chunked).
    pub imports: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub model_id: String,
    pub dims: usize,
    pub chunker_version: u32,
    #[serde(default)]
    pub tokenizer_version: u32,
    pub files: usize,
    pub chunks: usize,
    pub skipped: BTreeMap<String, usize>,
    /// Source files that were skipped (binary, too large, …), relative paths.
    #[serde(default)]
    pub skipped_files: Vec<String>,
    /// Byte size of every file of the generation (a quick integrity check).
    #[serde(default)]
    pub sizes: BTreeMap<String, u64>,
    pub built_unix: u64,
    /// Chunks without an embedding yet (their vectors are zeros): a keyword-tier
    /// generation, written before a build embeds, has no graph; after a cold start all its
    /// chunks are pending, after an update those of the changed files.
    #[serde(default)]
    pub pending_vectors: usize,
    /// A static tier: the vectors are this static model's (`dims` are its), written
    /// before the transformer (`model_id`) embeds; every chunk is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_tier: Option<String>,
    /// The commit whose ancestry the history field holds (None: no git history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_head: Option<String>,
    /// Commits in the history field (those with files attributed).
    #[serde(default)]
    pub history_commits: usize,
    /// How the build walked the tree (refreshes walk the same way).
    #[serde(default)]
    pub walk: crate::walk::WalkOptions,
}

impl Manifest {
    /// Share of chunks with an embedding.
    pub fn embedded_share(&self) -> f64 {
        if self.chunks == 0 {
            1.0
        } else {
            1.0 - self.pending_vectors.min(self.chunks) as f64 / self.chunks as f64
        }
    }

    /// Nothing is embedded yet: only the keyword leg can answer.
    pub fn keyword_only(&self) -> bool {
        self.chunks > 0 && self.pending_vectors >= self.chunks && self.static_tier.is_none()
    }

    /// The model whose vectors this generation holds (a query is embedded by it).
    pub fn vectors_model(&self) -> &str {
        self.static_tier.as_deref().unwrap_or(&self.model_id)
    }

    /// Which tier answers: `full` (every chunk embedded by the model), `static` (static
    /// vectors while the transformer embeds), `keyword` (some or all chunks not embedded).
    pub fn tier(&self) -> &'static str {
        if self.static_tier.is_some() {
            "static"
        } else if self.pending() {
            "keyword"
        } else {
            "full"
        }
    }

    /// A keyword tier, whole or partial: some chunks still wait for their embedding.
    pub fn pending(&self) -> bool {
        self.pending_vectors > 0
    }
}

impl Manifest {
    /// Whether this iret can use the index: same format, chunker and tokenizer, and (when
    /// given) the same model. The reason when not.
    pub fn check_compatible(&self, model_id: Option<&str>) -> Result<(), String> {
        if self.format_version != FORMAT_VERSION {
            return Err(format!(
                "it is in index format {}, this iret reads format {FORMAT_VERSION}",
                self.format_version
            ));
        }
        if self.chunker_version != iret_chunk::CHUNKER_VERSION
            || self.tokenizer_version != crate::tokens::TOKENIZER_VERSION
        {
            return Err(format!(
                "built by chunker/tokenizer version {}/{} but this iret uses {}/{}",
                self.chunker_version,
                self.tokenizer_version,
                iret_chunk::CHUNKER_VERSION,
                crate::tokens::TOKENIZER_VERSION
            ));
        }
        match model_id {
            Some(id) if self.model_id != id => Err(format!(
                "built with model {} but the current model is {id}",
                self.model_id
            )),
            _ => Ok(()),
        }
    }
}

/// The live generation's manifest, read without loading the index.
pub fn live_manifest(index_dir: &Path) -> Result<Manifest, StoreError> {
    let gen = IndexDir::new(index_dir).current()?;
    let path = gen.join("manifest.json");
    let bytes = std::fs::read(&path).map_err(|e| crate::store::corrupt(&path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| crate::store::corrupt(&path, e))
}

/// An opened, read-only index (one generation).
pub struct Index {
    pub generation: PathBuf,
    pub manifest: Manifest,
    pub files: Vec<FileEntry>,
    pub chunks: Chunks,
    pub vectors: Vectors,
    pub bm25: Bm25,
    /// Which files define a name.
    pub definitions: Definitions,
    pub vocab: Vocab,
    /// The repository's history up to the indexed HEAD (empty outside git).
    pub history: History,
}

impl Index {
    /// Gives back the pages of the mapped tables read so far: a long-lived reader's
    /// resident memory is then what its current query touches, not every page earlier
    /// queries read (those stay in the page cache, shared and reclaimable).
    pub fn release_pages(&self) {
        self.chunks.release();
        self.bm25.release();
        self.definitions.release();
        self.vectors.release();
    }

    /// Opens the live generation under `index_dir` (usually `<root>/.iret`).
    /// `model_id`, when given, must match the model the index was built with.
    pub fn open(index_dir: &Path, model_id: Option<&str>) -> Result<Self, StoreError> {
        let store = IndexDir::new(index_dir);
        let gen = store.current()?;
        store.prune_generations();
        let corrupt = |reason: String| StoreError::Corrupt {
            path: gen.clone(),
            reason,
        };
        let manifest_path = gen.join("manifest.json");
        let text = std::fs::read_to_string(&manifest_path)
            .map_err(|e| corrupt(format!("manifest.json: {e}")))?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| corrupt(format!("manifest.json: {e}")))?;
        manifest
            .check_compatible(model_id)
            .map_err(|reason| StoreError::Outdated {
                path: index_dir.to_path_buf(),
                reason,
            })?;
        Self::open_generation(gen, manifest)
    }

    /// Opens generation `gen` whose manifest is `manifest`: the sizes it records for
    /// the files a query reads are checked, the small tables read, the large ones mapped.
    /// (hnsw_rs's dump is read only by the next build, which rebuilds a damaged graph.)
    fn open_generation(gen: PathBuf, manifest: Manifest) -> Result<Self, StoreError> {
        let mut phases = crate::profile::Phases::new();
        let corrupt = |reason: String| StoreError::Corrupt {
            path: gen.clone(),
            reason,
        };
        let served = |name: &str| !name.starts_with("hnsw.") && name != TERMS_FILE;
        for (name, size) in manifest.sizes.iter().filter(|(n, _)| served(n)) {
            let actual = std::fs::metadata(gen.join(name)).map(|m| m.len()).ok();
            if actual != Some(*size) {
                return Err(corrupt(format!(
                    "{name} is not the size the manifest records"
                )));
            }
        }
        let files: Vec<FileEntry> = load_bin(&gen.join("files.bin"))?;
        let chunks = Chunks::open(&gen, manifest.chunks)?;
        let bm25 = Bm25::open(&gen)?;
        let definitions = Definitions::open(&gen)?;
        let vocab: Vocab = load_bin(&gen.join("vocab.bin"))?;
        if bm25.num_docs() != chunks.len() {
            return Err(corrupt("chunk, vector and keyword tables disagree".into()));
        }
        if files
            .iter()
            .any(|f| f.first_chunk as usize + f.chunk_count as usize > chunks.len())
        {
            return Err(corrupt("a file points past the chunks".into()));
        }
        let vectors = Vectors::open(&gen, manifest.dims, chunks.len())?;
        // A generation written before history was indexed has none.
        let history: History = if gen.join(HISTORY_FILE).is_file() {
            load_bin(&gen.join(HISTORY_FILE))?
        } else {
            History::default()
        };
        phases.mark("index: open");
        Ok(Self {
            generation: gen,
            manifest,
            files,
            chunks,
            vectors,
            bm25,
            definitions,
            vocab,
            history,
        })
    }

    pub fn chunk_path(&self, chunk: usize) -> &str {
        let file = self.chunks.file(chunk) as usize;
        self.files.get(file).map_or("", |f| f.path.as_str())
    }
}

/// Word counts over all chunks (the vocabulary is their most frequent words); only
/// updates read them.
pub(crate) const TERMS_FILE: &str = "terms.bin";

/// The tables of a generation, as `build` hands them to [`write_generation`].
pub(crate) struct Tables<'a> {
    pub files: &'a [FileEntry],
    pub chunks: &'a [ChunkEntry],
    pub bm25: &'a Bm25Builder,
    pub vocab: &'a Vocab,
    pub terms: &'a TermCounts,
    pub vectors: &'a VectorsBuilder,
    pub history: &'a History,
}

impl Tables<'_> {
    /// How many files and chunks they hold.
    pub fn counts(&self) -> (usize, usize) {
        (self.files.len(), self.chunks.len())
    }
}

/// Writes a generation into a fresh folder of `store` (the manifest last, with the size
/// of every file, and returned as written); [`IndexDir::commit`] then makes it live and
/// [`open_committed`] opens it.
pub(crate) fn write_generation(
    store: &IndexDir,
    mut manifest: Manifest,
    t: &Tables,
) -> Result<(tempfile::TempDir, Manifest), StoreError> {
    let tmp = store.begin()?;
    let dir = tmp.path();
    save_bin(&dir.join("files.bin"), &t.files)?;
    Chunks::write(dir, t.chunks)?;
    t.bm25.write(dir)?;
    Definitions::write(dir, t.chunks)?;
    save_bin(&dir.join("vocab.bin"), t.vocab)?;
    save_bin(&dir.join(TERMS_FILE), t.terms)?;
    save_bin(&dir.join(HISTORY_FILE), t.history)?;
    manifest.history_head = t.history.head.clone();
    manifest.history_commits = t.history.commits.len();
    t.vectors.save(dir)?;
    finish_manifest(dir, &mut manifest)?;
    Ok((tmp, manifest))
}

/// Records the size of every file written into `dir` in the manifest, and writes it there.
pub(crate) fn finish_manifest(dir: &Path, manifest: &mut Manifest) -> Result<(), StoreError> {
    manifest.sizes.clear();
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
    let json = serde_json::to_vec_pretty(&*manifest).expect("manifest serialises");
    std::fs::write(dir.join("manifest.json"), json).map_err(crate::store::io_err(dir))
}

/// The next generation of a live one that lacked its graph (`live`): its files taken as
/// they are (hard links, copies where the file system has none), and the graph
/// [`VectorsBuilder::graph_from_file`] builds from its vectors. No table need be in
/// memory to write it.
pub(crate) fn with_graph(
    store: &IndexDir,
    live: &Path,
    mut manifest: Manifest,
    quick: bool,
) -> Result<(tempfile::TempDir, Manifest), StoreError> {
    let tmp = store.begin()?;
    let dir = tmp.path();
    for name in manifest.sizes.keys() {
        let (from, to) = (live.join(name), dir.join(name));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(crate::store::io_err(&from))?;
        }
    }
    VectorsBuilder::graph_from_file(live, manifest.dims, manifest.chunks, quick, dir)?;
    manifest.built_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    finish_manifest(dir, &mut manifest)?;
    Ok((tmp, manifest))
}

/// The generation `commit` just made live, opened (its manifest as written).
pub(crate) fn open_committed(gen: PathBuf, manifest: Manifest) -> Result<Index, StoreError> {
    Index::open_generation(gen, manifest)
}
