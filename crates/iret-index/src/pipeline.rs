//! `iret index`: walk → chunk → embed (cached) → BM25 + HNSW + vocabulary → atomic store.
use crate::bm25::Bm25Builder;
use crate::cache::{key, user_dir, EmbeddingCache};
use crate::history::History;
use crate::index::{
    open_committed, with_graph, write_generation, ChunkEntry, FileEntry, Index, Manifest, Tables,
    TERMS_FILE,
};
use crate::profile::Phases;
use crate::store::{load_bin, IndexDir, StoreError, FORMAT_VERSION};
use crate::update::{
    assemble, carry_vectors, carry_vocab, classify, update_bm25, update_graph, Assembly,
};
use crate::vectors::{VectorsBuilder, EXACT_UP_TO};
use crate::vocab::{chunk_words, TermCounts, Vocab, MAX_TERMS};
use crate::walk::{walk_with, why_empty, SkipReason, WalkOptions, Walked};
use iret_chunk::{Limits, CHUNKER_VERSION};
use iret_embed::Embedder;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Texts per embedder call: the unit of progress. (The model itself runs one text at a
/// time; see `OnnxEmbedder::embed`.)
const BATCH: usize = 32;

/// A build with at least this many texts to embed (a cold build, a branch switch) first
/// writes a keyword-tier generation (chunks, BM25, every ranking signal that needs no
/// vectors, the vectors it carries over): searchable at once, while the model works.
pub const KEYWORD_TIER_MIN: usize = 256;

/// While embedding, what was embedded is written to the cache at most this often, so a
/// stopped build keeps its finished work and other processes can use it;
/// `embedding.json` beside the index says how far it got. The next checkpoint also waits
/// [`CHECKPOINT_SPACING`] times as long as the last took: checkpoints cost at most about
/// a tenth of the embedding time.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
const CHECKPOINT_SPACING: u32 = 10;

/// Progress of the embedding phase, for `iret status` while a build runs.
pub const PROGRESS_FILE: &str = "embedding.json";

/// How far a running build's embedding phase has got (`<index>/embedding.json`).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub embedded: usize,
    pub total: usize,
    /// Seconds the embedding had run when this was written (0 from a build before it was
    /// recorded).
    #[serde(default)]
    pub seconds: f64,
}

impl Progress {
    /// The progress a running build last wrote, if one is embedding in `index_dir`.
    pub fn read(index_dir: &Path) -> Option<Self> {
        serde_json::from_slice(&std::fs::read(index_dir.join(PROGRESS_FILE)).ok()?).ok()
    }

    /// Share of the texts embedded, 0 to 1.
    pub fn share(&self) -> f64 {
        (self.embedded as f64 / self.total.max(1) as f64).clamp(0.0, 1.0)
    }

    /// Seconds left at the rate so far (None before a rate is known).
    pub fn eta_seconds(&self) -> Option<f64> {
        (self.embedded > 0 && self.seconds > 0.0).then(|| {
            let rate = self.embedded as f64 / self.seconds;
            self.total.saturating_sub(self.embedded) as f64 / rate
        })
    }

    /// "about 2 h 5 min left", "about 40 s left", or "" before a rate is known.
    pub fn eta_text(&self) -> String {
        let Some(s) = self.eta_seconds() else {
            return String::new();
        };
        let s = s.round() as u64;
        match s {
            0..=59 => format!("about {s} s left"),
            60..=3599 => format!("about {} min left", s.div_ceil(60)),
            _ => format!("about {} h {} min left", s / 3600, (s % 3600) / 60),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Rebuild even when nothing changed.
    pub force: bool,
    pub limits: Option<Limits>,
    /// Folder of the shared embedding cache (None: the user's, [`crate::cache::user_dir`]).
    pub embedding_cache: Option<PathBuf>,
    /// A cold build's first tier carries the shipped static model's vectors (a static
    /// tier: hybrid answers within seconds) instead of none (a keyword tier).
    pub static_tier: bool,
    /// With at least this many texts to embed, stop once the first tier is live
    /// ([`BuildReport::deferred`]): the caller has the embedding finished elsewhere.
    pub tier_only_above: Option<usize>,
    /// A shared store asked for the vectors of new texts before the model embeds them
    /// (`iret index --store`): what it holds is not embedded again.
    pub remote: Option<std::sync::Arc<dyn crate::RemoteVectors>>,
    /// How to walk the tree; `None`: as the live index was built (the default for a new
    /// one).
    pub walk: Option<WalkOptions>,
    /// Source bytes a cold build with a cheap model reads, chunks and writes at once
    /// (`None`: [`crate::stream::SEGMENT_BYTES`]).
    pub segment_bytes: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct BuildReport {
    pub files: usize,
    pub chunks: usize,
    /// Files read and chunked this run (new or changed).
    pub changed_files: usize,
    /// Files of the previous index that are gone (deleted or renamed).
    pub removed_files: usize,
    /// Chunks (and vocabulary terms) sent to the model this run.
    pub embedded: usize,
    /// New texts found in the embedding cache.
    pub cached: usize,
    /// New texts whose vectors came from the shared store ([`BuildOptions::remote`]).
    pub fetched: usize,
    /// Chunks kept from the previous index as they were.
    pub reused_chunks: usize,
    pub seconds: f64,
    pub skipped: BTreeMap<SkipReason, usize>,
    /// Nothing had changed: the live index was kept as it is.
    pub up_to_date: bool,
    /// What went wrong on the side without stopping the build (an unusable cache).
    pub notes: Vec<String>,
    /// Texts left to embed: the build stopped at its first tier
    /// ([`BuildOptions::tier_only_above`]); 0 when it embedded everything.
    pub deferred: usize,
    /// The index holds no file: why, and what to do ([`crate::walk::why_empty`]).
    pub nothing: Option<String>,
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
        // A rate over a handful of texts mostly measures loading the model.
        let embedded = if self.embedded >= 64 {
            let rate = self.embedded as f64 / self.seconds.max(1e-9);
            format!("{} embedded at {rate:.0} texts/s", self.embedded)
        } else {
            format!("{} embedded", self.embedded)
        };
        let skipped: Vec<String> = self
            .skipped
            .iter()
            .map(|(r, n)| format!("{n} {}", r.label()))
            .collect();
        let updated = if self.reused_chunks > 0 {
            format!(
                " ({} changed, {} removed; {} chunks kept)",
                self.changed_files, self.removed_files, self.reused_chunks
            )
        } else {
            String::new()
        };
        let fetched = if self.fetched > 0 {
            format!(", {} from the store", self.fetched)
        } else {
            String::new()
        };
        format!(
            "indexed {} files, {} chunks{updated} in {:.1}s ({embedded}, {} cached{fetched}){}",
            self.files,
            self.chunks,
            self.seconds,
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
    #[error("store: {0}")]
    Remote(String),
    #[error(transparent)]
    Grammars(#[from] iret_chunk::GrammarError),
}

/// What the model sees for a chunk: where it lives, what it is, and the code.
pub fn embedding_text(path: &str, symbol: &str, text: &str) -> String {
    format!("{path}\n{symbol}\n{text}")
}

/// The live generation, when this build can update it instead of starting over.
struct Previous {
    files: Vec<FileEntry>,
    chunks: Vec<ChunkEntry>,
    vectors: VectorsBuilder,
    bm25: Bm25Builder,
    vocab: Vocab,
    terms: TermCounts,
    history: History,
}

impl Previous {
    /// None when there is no usable live index (missing, other model or version, corrupt,
    /// or written before term counts were stored): the build starts from scratch.
    fn load(index_dir: &Path, model_id: &str) -> Option<Self> {
        Self::from_index(Index::open(index_dir, Some(model_id)).ok()?, model_id)
    }

    /// The live generation as the caller already has it open.
    fn from_index(index: Index, model_id: &str) -> Option<Self> {
        index.manifest.check_compatible(Some(model_id)).ok()?;
        // A keyword tier has no vectors to carry over: build again (the cache has what
        // it had embedded).
        if index.manifest.pending_vectors > 0 {
            return None;
        }
        let terms = load_bin(&index.generation.join(TERMS_FILE)).ok()?;
        let vectors =
            VectorsBuilder::load(&index.generation, index.manifest.dims, index.chunks.len())
                .ok()?;
        Some(Self {
            files: index.files,
            chunks: index.chunks.to_vec(),
            vectors,
            bm25: index.bm25.to_builder(),
            vocab: index.vocab,
            terms,
            history: index.history,
        })
    }
}

/// Builds the index of `root` into `index_dir`, or updates it: files whose size and mtime
/// (or content hash) are unchanged keep their chunks, vectors and keyword postings; only
/// changed files are chunked and only new texts are embedded (through the cache).
pub fn build(
    root: &Path,
    index_dir: &Path,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
) -> Result<BuildReport, BuildError> {
    run(root, index_dir, embedder, opts, None).map(|(report, _)| report)
}

/// [`build`] that hands the new generation back opened. A caller that holds the live generation open (and can give it up, as
/// `iret search` can) passes it as `open`: it then serves as the previous generation if it
/// still is the live one, and nothing is read from disk twice. Returns `None` for the
/// index only when nothing needed rebuilding and `open` was not the live generation (or
/// was not given); open the index again then.
pub fn refresh(
    root: &Path,
    index_dir: &Path,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    open: Option<Index>,
) -> Result<(BuildReport, Option<Index>), BuildError> {
    run(root, index_dir, embedder, opts, open)
}

fn run(
    root: &Path,
    index_dir: &Path,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    open: Option<Index>,
) -> Result<(BuildReport, Option<Index>), BuildError> {
    if !root.is_dir() {
        return Err(BuildError::NotADirectory(root.display().to_string()));
    }
    // Without its grammars a build would chunk every file into line windows: stop instead.
    iret_chunk::grammars_ready()?;
    let started = Instant::now();
    let mut phases = Phases::new();
    let store = IndexDir::new(index_dir);
    let _lock = store.lock()?;
    // A first build's tier with every chunk left to embed, and a caller that embeds now
    // (the background `iret index`): the model's vectors from the tier's mapped chunks, in
    // bounded memory; then the tree as it is now, as an update of that generation.
    let completing = !opts.force
        && opts.tier_only_above.is_none()
        && opts.remote.is_none()
        && !embedder.is_cheap()
        && crate::complete::is_pending_tier(&store, embedder);
    if completing {
        let done = crate::complete::complete(&store, embedder, opts, &mut phases)?;
        let (report, index) = run_locked(
            root,
            &store,
            embedder,
            opts,
            Some(done.index),
            (started, phases),
        )?;
        return Ok((
            BuildReport {
                embedded: report.embedded + done.embedded,
                cached: report.cached + done.texts - done.embedded,
                up_to_date: false,
                ..report
            },
            index,
        ));
    }
    run_locked(root, &store, embedder, opts, open, (started, phases))
}

/// [`run`] once the index folder is locked.
fn run_locked(
    root: &Path,
    store: &IndexDir,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    open: Option<Index>,
    (started, mut phases): (Instant, Phases),
) -> Result<(BuildReport, Option<Index>), BuildError> {
    let index_dir = store.dir.as_path();
    let live_walk = crate::index::live_manifest(index_dir).ok().map(|m| m.walk);
    let walk_opts = opts.walk.or(live_walk).unwrap_or_default();
    let walked = walk_with(root, walk_opts);
    phases.mark("walk");
    let live = store.current().ok();
    let open = open.filter(|ix| live.as_ref() == Some(&ix.generation));
    // Walked another way than the live index was: its files may differ though none changed.
    if !opts.force && live_walk.is_none_or(|w| w == walk_opts) {
        if let Some(mut report) = up_to_date(root, store, &walked, embedder.model_id(), started) {
            store.prune_generations();
            report.nothing = why_empty(root, report.files, &report.skipped, walk_opts);
            return Ok((report, open));
        }
    }
    let previous = previous_of(store, embedder, opts, open);
    phases.mark("load");
    let mut skipped = walked.skipped.clone();
    skipped.remove(&SkipReason::NotSource);
    if previous.is_none() {
        // A cheap model's build, or a large tree's static tier: in segments, bounded.
        let tier = segmented_tier(embedder, opts, &walked);
        if embedder.is_cheap() || tier.is_some() {
            let at = (started, &mut phases);
            let models = (embedder, tier.as_deref());
            return crate::stream::build(
                root, store, &walked, models, opts, walk_opts, skipped, at,
            );
        }
    }

    // Decide per file, reading and chunking only what changed (in parallel, order kept);
    // previous chunks of reused files keep their order (renumbered), new ones follow.
    let (old_files, old_chunks, mut carried) = Carried::split(previous.map(|p| *p));
    let outcomes = classify(&walked.files, &old_files, opts.limits.unwrap_or_default());
    phases.mark("read+chunk");
    let asm = assemble(&walked.files, outcomes, old_files, old_chunks, &mut skipped);
    let old_terms = carried.term_positions();
    // Term counts and keyword postings read the same new chunks independently: side by
    // side, each one's single-threaded table inserts overlap the other's tokenizing.
    let old_bm25 = carried.bm25.take();
    let (top, bm25) = rayon::join(
        || update_terms(&mut carried.terms, &asm),
        || update_bm25(old_bm25, &asm.remap, &asm.files, asm.new_chunks()),
    );
    phases.mark("terms+bm25");
    let (history, history_note) = read_history(root, carried.history.take());
    phases.mark("history");

    let new = NewTexts::of(&asm, &top, &old_terms);
    let built = Built {
        asm: &asm,
        bm25: &bm25,
        terms: &carried.terms,
        top: &top,
        old_terms: &old_terms,
        skipped: &skipped,
        history: &history,
        walk: walk_opts,
    };
    let (fresh, embedded, fetched, mut notes) = if new.is_empty() {
        (Vec::new(), 0, 0, Vec::new())
    } else {
        match embed_new(store, embedder, opts, &new, &built, &carried, &mut phases)? {
            Embedded::Done(fresh, embedded, fetched, notes) => (fresh, embedded, fetched, notes),
            Embedded::Deferred(missing) => {
                let mut report = updated(&asm, started, skipped);
                report.cached = new.len() - missing;
                report.deferred = missing;
                return Ok((report, None));
            }
        }
    };
    phases.mark("cache");
    let new_texts = new.len();
    let new_chunks = new.chunks;
    drop(new);
    let old = (carried.vocab.as_ref(), carried.vectors.take());
    let (vocab, flat) = flat_tables(embedder, &built, (old.0, old.1.as_ref()), fresh, new_chunks);
    notes.extend(history_note);
    let mut report = BuildReport {
        embedded,
        fetched,
        cached: new_texts - embedded - fetched,
        notes,
        nothing: why_empty(root, asm.files.len(), &skipped, walk_opts),
        ..updated(&asm, started, skipped.clone())
    };
    // A graph built from nothing is the longest step of a large cold build: the index is
    // live without it first (its vectors searched exactly), then with it. Once live, every
    // table but the vectors is on disk, so it leaves memory before the graph is built, and
    // the next generation takes those files as they are.
    if old.1.is_none() && flat.len() > EXACT_UP_TO {
        let (live, live_manifest) = commit_tier(store, embedder, &built, (&vocab, &flat), 0, None)?;
        phases.mark("live");
        drop((asm, bm25, vocab, history, carried, flat));
        crate::memory::give_back();
        let (tmp, manifest) = with_graph(store, &live, live_manifest, embedder.is_cheap())?;
        phases.mark("hnsw");
        let generation = store.commit(tmp)?;
        phases.mark("commit");
        let index = open_committed(generation, manifest)?;
        report.seconds = started.elapsed().as_secs_f64();
        return Ok((report, Some(index)));
    }
    let vectors = graph_of(embedder, &built, flat, old.1);
    phases.mark("hnsw");

    let tables = built.tables(&vocab, &vectors);
    let mut manifest = manifest_of(
        embedder,
        tables.counts(),
        &skipped,
        asm.skipped_files.clone(),
        0,
    );
    manifest.walk = walk_opts;
    let (tmp, manifest) = write_generation(store, manifest, &tables)?;
    phases.mark("write");
    let generation = store.commit(tmp)?;
    phases.mark("commit");
    drop((asm, bm25, vectors, vocab, history));
    let index = open_committed(generation, manifest)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok((report, Some(index)))
}

/// Source bytes per text to embed below which a first build's tier is made in memory: a
/// tree with more source than `tier_only_above` texts of this size surely defers its
/// embedding (chunks take 1.4 KB of the kernel's source each), and its static tier is
/// built in segments, in bounded memory.
pub const SEGMENTED_TIER_BYTES_PER_TEXT: u64 = 2048;

/// The static model a cold build of a transformer makes its first tier with in segments:
/// for a tree large enough that its embedding goes to the background (see
/// [`SEGMENTED_TIER_BYTES_PER_TEXT`]); `None` otherwise (the in-memory path decides, and
/// a store's build embeds everything first).
fn segmented_tier(
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    walked: &Walked,
) -> Option<std::sync::Arc<dyn Embedder>> {
    let above = opts.tier_only_above?;
    let bytes: u64 = walked.files.iter().map(|f| f.size).sum();
    let large = bytes >= above as u64 * SEGMENTED_TIER_BYTES_PER_TEXT;
    if embedder.is_cheap() || !opts.static_tier || opts.remote.is_some() || !large {
        return None;
    }
    iret_embed::shipped_static()
}

/// The previous generation to update, from `open` when it is still the live one (`None`:
/// a cold or forced build).
fn previous_of(
    store: &IndexDir,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    open: Option<Index>,
) -> Option<Box<Previous>> {
    match (opts.force, open) {
        (true, _) => None,
        (false, Some(ix)) => Previous::from_index(ix, embedder.model_id()),
        (false, None) => Previous::load(&store.dir, embedder.model_id()),
    }
    .map(Box::new)
}

/// The vocabulary and the chunk vectors (no graph yet) of the new generation: the old
/// generation's vectors kept, `fresh` ones (the new chunks', then the new terms') taken in order.
fn flat_tables(
    embedder: &dyn Embedder,
    built: &Built,
    (old_vocab, old_vectors): (Option<&Vocab>, Option<&VectorsBuilder>),
    fresh: Vec<f32>,
    new_chunks: usize,
) -> (Vocab, VectorsBuilder) {
    let dims = embedder.dims();
    let (vocab, data) = built.vocab_and_vectors(old_vocab, old_vectors, fresh, new_chunks, dims);
    (vocab, VectorsBuilder::new(dims, data))
}

/// `flat` with its graph: the old generation's updated, or a new one (built with less care
/// for a cheap model's vectors).
fn graph_of(
    embedder: &dyn Embedder,
    built: &Built,
    flat: VectorsBuilder,
    old_vectors: Option<VectorsBuilder>,
) -> VectorsBuilder {
    update_graph(
        if embedder.is_cheap() {
            flat.quick()
        } else {
            flat
        },
        old_vectors,
        &built.asm.remap,
        &built.asm.revived,
        built.asm.kept,
    )
}

/// The report of a build that assembled `asm` (nothing embedded yet, nothing deferred).
fn updated(asm: &Assembly, started: Instant, skipped: BTreeMap<SkipReason, usize>) -> BuildReport {
    BuildReport {
        files: asm.files.len(),
        chunks: asm.chunks.len(),
        changed_files: asm.changed_files,
        removed_files: asm.removed_files,
        embedded: 0,
        cached: 0,
        fetched: 0,
        reused_chunks: asm.kept + asm.revived.len(),
        seconds: started.elapsed().as_secs_f64(),
        skipped,
        up_to_date: false,
        notes: Vec::new(),
        deferred: 0,
        nothing: None,
    }
}

/// The previous generation's tables that a build carries over (empty for a cold build).
struct Carried {
    vectors: Option<VectorsBuilder>,
    bm25: Option<Bm25Builder>,
    vocab: Option<Vocab>,
    terms: TermCounts,
    history: Option<History>,
}

impl Carried {
    /// The previous generation's file and chunk tables, and the rest.
    fn split(previous: Option<Previous>) -> (Vec<FileEntry>, Vec<ChunkEntry>, Self) {
        match previous {
            Some(p) => (
                p.files,
                p.chunks,
                Self {
                    vectors: Some(p.vectors),
                    bm25: Some(p.bm25),
                    vocab: Some(p.vocab),
                    terms: p.terms,
                    history: Some(p.history),
                },
            ),
            None => (
                Vec::new(),
                Vec::new(),
                Self {
                    vectors: None,
                    bm25: None,
                    vocab: None,
                    terms: TermCounts::default(),
                    history: None,
                },
            ),
        }
    }

    /// Where each term of the previous vocabulary is.
    fn term_positions(&self) -> HashMap<String, usize> {
        self.vocab.as_ref().map_or_else(HashMap::new, |v| {
            v.terms
                .iter()
                .enumerate()
                .map(|(i, t)| (t.clone(), i))
                .collect()
        })
    }
}

/// Term counts updated by the removed and the new chunks; the vocabulary's terms.
fn update_terms(terms: &mut TermCounts, asm: &Assembly) -> Vec<(String, u32)> {
    for words in &asm.removed_words {
        terms.remove(words);
    }
    count_words(terms, asm.new_chunks());
    terms.top(MAX_TERMS)
}

/// The words of `chunks` added to the term counts, in batches: the words of every chunk
/// of a large tree at once would take gigabytes.
pub(crate) fn count_words(terms: &mut TermCounts, chunks: &[ChunkEntry]) {
    for batch in chunks.chunks(crate::update::TOKEN_BATCH) {
        let added: Vec<Vec<String>> = batch.par_iter().map(|c| chunk_words(&c.text)).collect();
        for words in added {
            terms.add(words);
        }
    }
}

/// What this build sends to the model (through the cache): the chunks of changed files
/// that no previous chunk revives, then the terms that joined the vocabulary. A chunk's
/// text is made when asked for (`text`): a large tree's texts, all at once, would take as
/// much memory again as its chunks.
struct NewTexts<'a> {
    asm: &'a Assembly,
    /// Where each new chunk text's chunk sits in `asm.chunks`.
    rows: Vec<u32>,
    terms: Vec<String>,
    /// The first this-many texts are chunks.
    chunks: usize,
}

impl<'a> NewTexts<'a> {
    fn of(asm: &'a Assembly, top: &[(String, u32)], old_terms: &HashMap<String, usize>) -> Self {
        let rows: Vec<u32> = (asm.kept..asm.chunks.len())
            .map(|j| j as u32)
            .filter(|j| !asm.revived.contains_key(j))
            .collect();
        let terms: Vec<String> = top
            .iter()
            .filter(|(t, _)| !old_terms.contains_key(t))
            .map(|(t, _)| t.clone())
            .collect();
        Self {
            asm,
            chunks: rows.len(),
            rows,
            terms,
        }
    }

    fn len(&self) -> usize {
        self.chunks + self.terms.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th text: a chunk's embedding text, or a term.
    fn text(&self, i: usize) -> std::borrow::Cow<'_, str> {
        match self.rows.get(i) {
            Some(&row) => {
                let c = &self.asm.chunks[row as usize];
                embedding_text(&self.asm.files[c.file as usize].path, &c.symbol, &c.text).into()
            }
            None => self.terms[i - self.chunks].as_str().into(),
        }
    }

    /// The texts of `range`, made now.
    fn texts(&self, range: std::ops::Range<usize>) -> Vec<String> {
        range.map(|i| self.text(i).into_owned()).collect()
    }
}

/// The new generation's tables other than vectors and vocabulary, and what those are
/// made of.
struct Built<'a> {
    asm: &'a Assembly,
    bm25: &'a Bm25Builder,
    terms: &'a TermCounts,
    top: &'a [(String, u32)],
    old_terms: &'a HashMap<String, usize>,
    skipped: &'a BTreeMap<SkipReason, usize>,
    history: &'a History,
    walk: WalkOptions,
}

impl<'a> Built<'a> {
    /// The vocabulary: previous terms keep their vectors, new ones take `fresh` in order.
    fn vocab(&self, old: Option<&Vocab>, fresh: &[f32], dims: usize) -> Vocab {
        carry_vocab(self.top.to_vec(), self.old_terms, old, fresh, dims)
    }

    /// The vocabulary and the flat vectors from `fresh` (the new chunks' rows, then the new
    /// terms'). A cold build's chunk rows are `fresh` itself, not a copy of it.
    fn vocab_and_vectors(
        &self,
        old_vocab: Option<&Vocab>,
        old_vectors: Option<&VectorsBuilder>,
        mut fresh: Vec<f32>,
        new_chunks: usize,
        dims: usize,
    ) -> (Vocab, Vec<f32>) {
        let terms = fresh.split_off(new_chunks * dims);
        let vocab = self.vocab(old_vocab, &terms, dims);
        let a = self.asm;
        let cold = old_vectors.is_none() && a.kept == 0 && fresh.len() == a.chunks.len() * dims;
        let data = if cold {
            fresh
        } else {
            self.vectors(old_vectors, &fresh, dims)
        };
        (vocab, data)
    }

    /// The flat vectors: kept and revived chunks carry theirs, new ones take `fresh`.
    fn vectors(&self, old: Option<&VectorsBuilder>, fresh: &[f32], dims: usize) -> Vec<f32> {
        let a = self.asm;
        carry_vectors(
            old,
            &a.remap,
            &a.revived,
            a.kept..a.chunks.len(),
            fresh,
            dims,
        )
    }

    fn tables(&self, vocab: &'a Vocab, vectors: &'a VectorsBuilder) -> Tables<'a> {
        Tables {
            files: &self.asm.files,
            chunks: &self.asm.chunks,
            bm25: self.bm25,
            vocab,
            terms: self.terms,
            vectors,
            history: self.history,
        }
    }
}

/// What [`embed_new`] did.
enum Embedded {
    /// The vectors of the new texts, how many the model embedded, how many came from
    /// the shared store, what went wrong with the cache.
    Done(Vec<f32>, usize, usize, Vec<String>),
    /// A tier is live; these many texts are left to embed (`tier_only_above`).
    Deferred(usize),
}

/// Embeds the new texts through the cache (first committing a static or keyword tier
/// when there are many to embed, and stopping there past `opts.tier_only_above`).
fn embed_new(
    store: &IndexDir,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    new: &NewTexts,
    built: &Built,
    carried: &Carried,
    phases: &mut Phases,
) -> Result<Embedded, BuildError> {
    if embedder.is_cheap() {
        let vectors = embed_directly(new, embedder)?;
        phases.mark("embed");
        return Ok(Embedded::Done(vectors, new.len(), 0, Vec::new()));
    }
    let shared = opts.embedding_cache.clone().unwrap_or_else(user_dir);
    let mut cache = EmbeddingCache::open(&shared, Some(&store.dir));
    let model = embedder.model_id();
    let keys: Vec<[u8; 16]> = (0..new.len())
        .into_par_iter()
        .map(|i| key(model, &new.text(i)))
        .collect();
    cache.load(&keys);
    let fetched = match &opts.remote {
        Some(remote) => fetch_remote(remote.as_ref(), &keys, &mut cache, embedder.dims())?,
        None => 0,
    };
    let missing = count_missing(&keys, &cache);
    if missing >= KEYWORD_TIER_MIN {
        // Static vectors only where nothing is carried over: one generation, one space.
        let fast = opts
            .static_tier
            .then(iret_embed::shipped_static)
            .flatten()
            .filter(|_| carried.vectors.is_none());
        match fast {
            Some(fast) => {
                commit_static_tier(store, embedder, fast.as_ref(), new, built)?;
                phases.mark("static tier");
            }
            None => {
                commit_keyword_tier(store, embedder, new, built, carried)?;
                phases.mark("keyword tier");
            }
        }
        if opts.tier_only_above.is_some_and(|n| missing >= n) {
            return Ok(Embedded::Deferred(missing));
        }
    }
    let texts = new.texts(0..new.len());
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let progress_file = store.dir.join(PROGRESS_FILE);
    let embedding = Embedding::new(embedder, missing, opts.progress, progress_file);
    let (vectors, embedded) = embed_all(&refs, &keys, &mut cache, embedding)?;
    phases.mark("embed");
    cache.save();
    Ok(Embedded::Done(
        vectors,
        embedded,
        fetched,
        cache.take_notes(),
    ))
}

/// Takes the vectors the shared store holds for keys the cache lacks into the cache: the
/// texts fetched. A vector of the wrong length is refused (another model's collection).
fn fetch_remote(
    remote: &dyn crate::RemoteVectors,
    keys: &[[u8; 16]],
    cache: &mut EmbeddingCache,
    dims: usize,
) -> Result<usize, BuildError> {
    let mut wanted: Vec<[u8; 16]> = keys
        .iter()
        .filter(|k| !cache.contains(k))
        .copied()
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    if wanted.is_empty() {
        return Ok(0);
    }
    let found = remote.fetch(&wanted).map_err(BuildError::Remote)?;
    let mut fetched = 0;
    for (k, v) in wanted.iter().zip(found) {
        let Some(v) = v else { continue };
        if v.len() != dims {
            return Err(BuildError::Remote(format!(
                "the store holds {}-dimensional vectors; this model makes {dims}",
                v.len()
            )));
        }
        cache.insert(*k, &v);
        fetched += 1;
    }
    Ok(fetched)
}

/// Every text embedded by a cheap model (a static table), in parallel: no cache, no tier.
fn embed_directly(new: &NewTexts, embedder: &dyn Embedder) -> Result<Vec<f32>, BuildError> {
    embed_rows(embedder, new.len(), |i| new.text(i).into_owned())
}

/// The vectors of `n` texts (`text(i)`, made batch by batch) by a cheap model, in
/// parallel, into one flat table: each batch writes its own rows (one vector per text at
/// once would double a large tree's vectors in memory).
pub(crate) fn embed_rows(
    embedder: &dyn Embedder,
    n: usize,
    text: impl Fn(usize) -> String + Sync,
) -> Result<Vec<f32>, BuildError> {
    let dims = embedder.dims();
    let mut flat = vec![0f32; n * dims];
    flat.par_chunks_mut(BATCH * dims.max(1))
        .enumerate()
        .try_for_each(|(b, rows)| {
            let start = b * BATCH;
            let texts: Vec<String> = (start..(start + BATCH).min(n)).map(&text).collect();
            let vectors = embedder.embed(&texts.iter().map(String::as_str).collect::<Vec<_>>())?;
            for (row, v) in rows.chunks_exact_mut(dims.max(1)).zip(vectors) {
                row.copy_from_slice(&v);
            }
            Ok::<_, BuildError>(())
        })?;
    Ok(flat)
}

/// The keyword tier: every chunk searchable by keywords now. Vectors the build carries
/// over stay (searched exactly, without a graph); new chunks and terms are zeros until
/// embedded.
fn commit_keyword_tier(
    store: &IndexDir,
    embedder: &dyn Embedder,
    new: &NewTexts,
    built: &Built,
    carried: &Carried,
) -> Result<(), BuildError> {
    let dims = embedder.dims();
    let zero_terms = vec![0.0; (new.len() - new.chunks) * dims];
    let vocab = built.vocab(carried.vocab.as_ref(), &zero_terms, dims);
    let zero_chunks = vec![0.0; new.chunks * dims];
    let vectors = VectorsBuilder::new(
        dims,
        built.vectors(carried.vectors.as_ref(), &zero_chunks, dims),
    );
    let pending = if carried.vectors.is_none() {
        built.asm.chunks.len()
    } else {
        new.chunks
    };
    commit_tier(store, embedder, built, (&vocab, &vectors), pending, None).map(|_| ())
}

/// The static tier of a cold build: every chunk and term embedded by the static model
/// (`fast`) now; the transformer's vectors replace them in the next generation.
fn commit_static_tier(
    store: &IndexDir,
    embedder: &dyn Embedder,
    fast: &dyn Embedder,
    new: &NewTexts,
    built: &Built,
) -> Result<(), BuildError> {
    let dims = fast.dims();
    let all = embed_directly(new, fast)?;
    let (vocab, data) = built.vocab_and_vectors(None, None, all, new.chunks, dims);
    let vectors = VectorsBuilder::new(dims, data);
    let pending = built.asm.chunks.len();
    commit_tier(
        store,
        embedder,
        built,
        (&vocab, &vectors),
        pending,
        Some(fast),
    )
    .map(|_| ())
}

/// Writes and commits a tier generation of `built` with these vocabulary and vectors,
/// `pending` chunks still to embed by `embedder`; `fast`: the static model whose vectors
/// these are (a static tier), None for a keyword tier.
fn commit_tier(
    store: &IndexDir,
    embedder: &dyn Embedder,
    built: &Built,
    (vocab, vectors): (&Vocab, &VectorsBuilder),
    pending: usize,
    fast: Option<&dyn Embedder>,
) -> Result<(PathBuf, Manifest), BuildError> {
    let tables = built.tables(vocab, vectors);
    let skipped_files = built.asm.skipped_files.clone();
    let mut manifest = manifest_of(
        embedder,
        tables.counts(),
        built.skipped,
        skipped_files,
        pending,
    );
    manifest.walk = built.walk;
    if let Some(fast) = fast {
        manifest.dims = fast.dims();
        manifest.static_tier = Some(fast.model_id().to_string());
    }
    let (tmp, manifest) = write_generation(store, manifest, &tables)?;
    Ok((store.commit(tmp)?, manifest))
}

/// The history of `root` at its HEAD, updated from the previous generation's; a
/// repository libgit2 cannot read builds without history (and says so in the report).
pub(crate) fn read_history(root: &Path, previous: Option<History>) -> (History, Option<String>) {
    match crate::history::update(root, previous) {
        Ok(h) => (h, None),
        Err(e) => (
            History::default(),
            Some(format!("{e}; indexed without history")),
        ),
    }
}

/// The manifest of a generation of these tables, `pending` chunks not embedded yet.
pub(crate) fn manifest_of(
    embedder: &dyn Embedder,
    (files, chunks): (usize, usize),
    skipped: &BTreeMap<SkipReason, usize>,
    skipped_files: Vec<String>,
    pending: usize,
) -> Manifest {
    Manifest {
        format_version: FORMAT_VERSION,
        model_id: embedder.model_id().to_string(),
        dims: embedder.dims(),
        chunker_version: CHUNKER_VERSION,
        tokenizer_version: crate::tokens::TOKENIZER_VERSION,
        files,
        chunks,
        skipped: skipped
            .iter()
            .map(|(r, n)| (r.label().to_string(), *n))
            .collect(),
        skipped_files,
        sizes: BTreeMap::new(),
        built_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        pending_vectors: pending,
        static_tier: None,
        history_head: None,
        history_commits: 0,
        walk: WalkOptions::default(),
    }
}

/// How many distinct keys the cache lacks.
fn count_missing(keys: &[[u8; 16]], cache: &EmbeddingCache) -> usize {
    let mut keys = keys.to_vec();
    keys.sort_unstable();
    keys.dedup();
    keys.iter().filter(|k| !cache.contains(k)).count()
}

/// When the live generation already indexes exactly these files (same size and mtime,
/// same model, chunker and tokenizer), there is nothing to do. Reads only the manifest and
/// the file table.
fn up_to_date(
    root: &Path,
    store: &IndexDir,
    walked: &Walked,
    model_id: &str,
    started: Instant,
) -> Option<BuildReport> {
    let gen = store.current().ok()?;
    let manifest: Manifest =
        serde_json::from_slice(&std::fs::read(gen.join("manifest.json")).ok()?).ok()?;
    manifest.check_compatible(Some(model_id)).ok()?;
    if manifest.pending_vectors > 0 {
        return None; // a keyword tier: embedding is still to do
    }
    if manifest.chunks > EXACT_UP_TO && !gen.join(crate::graph::FILE).is_file() {
        return None; // live before its graph, and the build that was to add it stopped
    }
    let intact = !manifest.sizes.is_empty()
        && manifest
            .sizes
            .iter()
            .all(|(name, len)| std::fs::metadata(gen.join(name)).is_ok_and(|m| m.len() == *len));
    if !intact {
        return None;
    }
    // HEAD moved (a commit, a checkout): the history field is behind.
    if manifest.history_head != crate::history::head_of(root) {
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
        changed_files: 0,
        removed_files: 0,
        embedded: 0,
        cached: 0,
        fetched: 0,
        reused_chunks: manifest.chunks,
        seconds: started.elapsed().as_secs_f64(),
        skipped: skipped_by_reason,
        up_to_date: true,
        notes: Vec::new(),
        deferred: 0,
        nothing: None,
    })
}

/// Embeds, through the cache, the texts it lacks, a batch at a time: a progress bar on a
/// terminal, and every few seconds a checkpoint of the cache and of the progress file
/// (`iret status` reads it), so a build that is stopped keeps what it embedded.
pub(crate) struct Embedding<'a> {
    embedder: &'a dyn Embedder,
    progress_file: PathBuf,
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    last_checkpoint: Instant,
    wait: std::time::Duration,
    /// Texts embedded or found so far, of `total`.
    done: usize,
    total: usize,
    /// Texts the model embedded.
    pub embedded: usize,
}

impl<'a> Embedding<'a> {
    /// An embedding of `total` texts, its progress in `progress_file`.
    pub(crate) fn new(
        embedder: &'a dyn Embedder,
        total: usize,
        progress: bool,
        progress_file: PathBuf,
    ) -> Self {
        let bar = (progress && total > 0).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "embedding {bar:40} {pos}/{len} chunks ({per_sec}, eta {eta})",
                )
                .expect("valid template"),
            );
            bar
        });
        Self {
            embedder,
            progress_file,
            bar,
            started: Instant::now(),
            last_checkpoint: Instant::now(),
            wait: CHECKPOINT_EVERY,
            done: 0,
            total,
            embedded: 0,
        }
    }

    /// Embeds those of `texts` (keyed `keys`) the cache lacks, each distinct text once,
    /// into the cache; `found`: texts of these the cache had, counted as done.
    pub(crate) fn missing(
        &mut self,
        texts: &[&str],
        keys: &[[u8; 16]],
        cache: &mut EmbeddingCache,
        found: usize,
    ) -> Result<(), BuildError> {
        let mut missing: Vec<usize> = (0..texts.len())
            .filter(|&i| !cache.contains(&keys[i]))
            .collect();
        // The same text twice (a copied file) is embedded once.
        missing.sort_by_key(|&i| keys[i]);
        missing.dedup_by_key(|i| keys[*i]);
        self.step(found);
        for batch in missing.chunks(BATCH) {
            let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            let out = self.embedder.embed(&batch_texts)?;
            for (&i, v) in batch.iter().zip(out) {
                cache.insert(keys[i], &v);
            }
            self.embedded += batch.len();
            self.step(batch.len());
            if self.last_checkpoint.elapsed() >= self.wait && self.done < self.total {
                let took = Instant::now();
                cache.checkpoint();
                let note = Progress {
                    embedded: self.done,
                    total: self.total,
                    seconds: self.started.elapsed().as_secs_f64(),
                };
                let bytes = serde_json::to_vec(&note).expect("progress serialises");
                crate::store::write_atomic(&self.progress_file, &bytes)?;
                self.wait = CHECKPOINT_EVERY.max(took.elapsed() * CHECKPOINT_SPACING);
                self.last_checkpoint = Instant::now();
            }
        }
        Ok(())
    }

    pub(crate) fn dims(&self) -> usize {
        self.embedder.dims()
    }

    fn step(&mut self, n: usize) {
        self.done += n;
        if let Some(b) = &self.bar {
            b.inc(n as u64);
        }
    }

    /// The bar cleared and the progress file removed: the texts are embedded.
    pub(crate) fn finish(self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
        let _ = std::fs::remove_file(&self.progress_file);
    }
}

/// Embeds, through the cache, the texts it lacks (`embedding` counts them); returns every
/// text's vector in order and how many were embedded.
fn embed_all(
    texts: &[&str],
    keys: &[[u8; 16]],
    cache: &mut EmbeddingCache,
    mut embedding: Embedding,
) -> Result<(Vec<f32>, usize), BuildError> {
    let out = embedding.missing(texts, keys, cache, 0);
    let (embedded, dims) = (embedding.embedded, embedding.dims());
    embedding.finish();
    out?;
    let mut flat = Vec::with_capacity(texts.len() * dims);
    for k in keys {
        let found = cache.extend_with(k, &mut flat);
        assert!(found, "every text was embedded");
    }
    Ok((flat, embedded))
}

#[cfg(test)]
mod tests {
    use super::Progress;

    #[test]
    fn the_time_left_follows_the_rate_so_far() {
        let p = |embedded, total, seconds| Progress {
            embedded,
            total,
            seconds,
        };
        // 100 texts in 10 s: 900 more take 90 s.
        assert_eq!(p(100, 1000, 10.0).eta_seconds(), Some(90.0));
        assert_eq!(p(100, 1000, 10.0).eta_text(), "about 2 min left");
        assert_eq!(p(100, 130, 10.0).eta_text(), "about 3 s left");
        assert_eq!(p(1000, 800_000, 10.0).eta_text(), "about 2 h 13 min left");
        // Nothing embedded yet, or a progress file from before the time was recorded.
        assert_eq!(p(0, 1000, 10.0).eta_seconds(), None);
        assert_eq!(p(100, 1000, 0.0).eta_text(), "");
        let old: Progress = serde_json::from_str(r#"{"embedded": 5, "total": 9}"#).unwrap();
        assert_eq!(old.eta_seconds(), None);
    }
}
