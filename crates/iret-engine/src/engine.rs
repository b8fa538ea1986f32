//! The engine: an opened index and the embedder, kept fresh.
//!
//! Reads take the current snapshot (`Arc<Corpus>`) and never wait for a refresh. Before
//! answering, a call checks the working tree (a walk and a stat per file); when files
//! changed it updates the index itself, unless another call or another process is already
//! doing so, in which case it answers from the snapshot and says so.
use crate::answer::*;
use crate::budget;
use crate::confine;
use crate::round4;
use crate::signal::Signal;
use anyhow::Context;
use iret_embed::{Embedder, TokenCounter};
use iret_index::{BuildError, BuildOptions, Index, Remote, StoreError};
use iret_retrieve::{run, search_once, Corpus, FileHit, Options, Outcome, Params, Query};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// How an engine gets its index.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Build the index when the repository was never indexed.
    pub index_if_missing: bool,
    /// Progress bar on stderr while building.
    pub progress: bool,
    /// How long to wait for another process building the first index.
    pub wait: Duration,
    /// Check the working tree before each answer and update the index when it changed.
    pub refresh: bool,
    /// A keyword tier nobody is completing (its build was stopped) is completed on a
    /// background thread: for long-lived engines (`iret mcp`). Otherwise calls answer from
    /// it by keywords until `iret index` completes it.
    pub complete_in_background: bool,
    /// A first build with at least this many texts to embed stops once its tier is
    /// live ([`Engine::deferred`]): the caller has the rest embedded elsewhere.
    pub tier_only_above: Option<usize>,
    /// A team's shared store (`--store`): builds take the vectors it holds instead of
    /// embedding them, and its search proposes the vector leg's chunks.
    pub remote: Option<Remote>,
    /// A learned ranker orders the loop's answer and gives its relevance; None: the rules.
    pub ranker: Option<Arc<dyn iret_retrieve::ranking::Ranker>>,
    /// The tuned query encoder (`--query-model tuned`): queries go through this map on
    /// the embedder's vector; None: the embedder's vector as it is.
    pub query_map: Option<Arc<iret_embed::QueryMap>>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            index_if_missing: true,
            progress: false,
            wait: Duration::from_secs(600),
            refresh: true,
            complete_in_background: false,
            tier_only_above: None,
            remote: None,
            ranker: None,
            query_map: None,
        }
    }
}

/// Whether an answer saw the working tree as it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Freshness {
    Fresh,
    /// This call updated the index for these many changed files first.
    Refreshed(usize),
    /// Another update is running: answered from the current index.
    Busy,
    /// The index is a keyword tier (embedding runs elsewhere): answered by keywords, with
    /// this share embedded so far.
    Embedding(f64),
}

impl Freshness {
    fn describe(self) -> String {
        match self {
            Freshness::Fresh => "fresh".into(),
            Freshness::Refreshed(n) => format!("refreshed {n} files"),
            Freshness::Busy => "busy".into(),
            Freshness::Embedding(share) => format!("embedding {:.0}%", share * 100.0),
        }
    }
}

pub struct Engine {
    root: PathBuf,
    index_dir: PathBuf,
    embedder: Arc<dyn Embedder>,
    tokens: Option<Arc<TokenCounter>>,
    current: RwLock<Arc<Corpus>>,
    updating: Mutex<()>,
    /// A background thread is completing a keyword tier's embedding.
    completing: Arc<std::sync::atomic::AtomicBool>,
    background: bool,
    refresh: bool,
    /// What opening did, for the caller to report (`built`, `waited`, `opened`).
    pub opened: String,
    /// Texts the first build left to embed (`OpenOptions::tier_only_above`); 0: none.
    pub deferred: usize,
    /// A watcher keeps the index fresh ([`crate::watch`]): calls skip the check for
    /// changed files while it has nothing pending.
    watch: Mutex<Option<Arc<Signal>>>,
    /// The shared store every build and query goes through (`OpenOptions::remote`).
    remote: Option<Remote>,
    /// `OpenOptions::ranker`.
    ranker: Option<Arc<dyn iret_retrieve::ranking::Ranker>>,
    /// `OpenOptions::query_map`.
    query_map: Option<Arc<iret_embed::QueryMap>>,
}

impl Engine {
    /// Opens the index of `root` in `index_dir`; builds it first when there is none (and
    /// `opts.index_if_missing`), or waits for another process building it.
    pub fn open(
        root: &Path,
        index_dir: &Path,
        embedder: Arc<dyn Embedder>,
        tokens: Option<Arc<TokenCounter>>,
        opts: &OpenOptions,
    ) -> anyhow::Result<Self> {
        if !root.is_dir() {
            anyhow::bail!("{} is not a directory", root.display());
        }
        let (index, opened, deferred) = open_or_build(root, index_dir, embedder.as_ref(), opts)?;
        let mut engine = Self::with_corpus(
            root,
            index_dir,
            Arc::new(corpus_of(index, opts.remote.as_ref())),
            embedder,
            tokens,
        );
        engine.remote = opts.remote.clone();
        engine.ranker = opts.ranker.clone();
        engine.query_map = opts.query_map.clone();
        engine.refresh = opts.refresh;
        engine.background = opts.complete_in_background;
        engine.opened = opened;
        engine.deferred = deferred;
        Ok(engine)
    }

    /// An engine over a corpus already open (the bench shares one between modes). It does
    /// not refresh.
    pub fn with_corpus(
        root: &Path,
        index_dir: &Path,
        corpus: Arc<Corpus>,
        embedder: Arc<dyn Embedder>,
        tokens: Option<Arc<TokenCounter>>,
    ) -> Self {
        Self {
            root: root.to_path_buf(),
            index_dir: index_dir.to_path_buf(),
            embedder,
            tokens,
            current: RwLock::new(corpus),
            updating: Mutex::new(()),
            completing: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            background: false,
            refresh: false,
            opened: "opened".into(),
            deferred: 0,
            watch: Mutex::new(None),
            remote: None,
            ranker: None,
            query_map: None,
        }
    }

    /// Queries through `map` (`OpenOptions::query_map`), for an engine made by
    /// [`Engine::with_corpus`].
    pub fn with_query_map(mut self, map: Option<Arc<iret_embed::QueryMap>>) -> Self {
        self.query_map = map;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn index_dir(&self) -> &Path {
        &self.index_dir
    }

    pub(crate) fn set_watch(&self, signal: Arc<Signal>) {
        *self.watch.lock().unwrap_or_else(|p| p.into_inner()) = Some(signal);
    }

    fn signal(&self) -> Option<Arc<Signal>> {
        self.watch.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A watcher holds the index fresh: nothing pending, watching works. While its
    /// update runs, this waits for it.
    fn watched(&self) -> bool {
        let Some(signal) = self.signal() else {
            return false;
        };
        // Every change made before this call has reached the watcher once the marker
        // written now has (one queue of events, in order); else refresh first.
        if !signal.sync(&self.index_dir) {
            return false;
        }
        if signal.busy() {
            drop(self.updating.lock().unwrap_or_else(|p| p.into_inner()));
        }
        !signal.unsure()
    }

    /// The current index, as it is.
    pub fn snapshot(&self) -> Arc<Corpus> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Gives back the pages of the index's mapped tables that earlier answers read, once
    /// the process holds more than `budget` bytes of file-backed pages (a long-lived server
    /// calls it after each answer: its resident memory then stays near `budget` plus what
    /// one answer touches, not the sum of all it has read; the pages stay in the page
    /// cache, so reading them again is a minor fault). Returns whether it released.
    pub fn release_pages_above(&self, budget: u64) -> bool {
        match iret_index::mapped::resident_file_bytes() {
            Some(resident) if resident > budget => {
                self.snapshot().index.release_pages();
                true
            }
            _ => false,
        }
    }

    /// A newer generation than the snapshot's is live (another process wrote it): load it.
    fn reload_if_newer(&self) -> anyhow::Result<Arc<Corpus>> {
        let snap = self.snapshot();
        let live = iret_index::IndexDir::new(&self.index_dir).current().ok();
        if live.is_none() || live.as_ref() == Some(&snap.index.generation) {
            return Ok(snap);
        }
        let index = Index::open(&self.index_dir, Some(self.embedder.model_id()))?;
        let corpus = Arc::new(corpus_of(index, self.remote.as_ref()));
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = corpus.clone();
        Ok(corpus)
    }

    /// The index with the working tree's changes in it (see the module docs). A keyword
    /// tier answers by keywords: a long-lived engine completes it (changes included) in
    /// the background; otherwise a tier of the tree as it is answers as it is, and once
    /// files changed, this call updates the index.
    pub fn fresh(&self) -> anyhow::Result<(Arc<Corpus>, Freshness)> {
        let watched = self.refresh && self.watched();
        let snap = self.reload_if_newer()?;
        if !self.refresh || (watched && !snap.index.manifest.pending()) {
            let freshness = if snap.index.manifest.pending() {
                Freshness::Embedding(self.embedding_progress())
            } else {
                Freshness::Fresh
            };
            return Ok((snap, freshness));
        }
        let status = iret_index::status::status_of(&self.root, &snap.index);
        let changed = status.stale();
        if changed == 0 && !snap.index.manifest.pending() {
            return Ok((snap, Freshness::Fresh));
        }
        if snap.index.manifest.pending() && (changed == 0 || self.background) {
            // A keyword tier: this call answers by keywords. A long-lived engine finishes
            // the embedding in the background, and that build takes changed files in too
            // (it commits a keyword tier with them first), so no call waits for it.
            if self.background {
                self.complete_in_background();
            }
            return Ok((snap, Freshness::Embedding(self.embedding_progress())));
        }
        // With a watcher, the update holding the lock is taking this call's changes in:
        // wait for it rather than answer without them.
        let _guard = if self.signal().is_some() {
            self.updating.lock().unwrap_or_else(|p| p.into_inner())
        } else {
            match self.updating.try_lock() {
                Ok(g) => g,
                Err(_) => return Ok((snap, Freshness::Busy)),
            }
        };
        // Another call may have updated while this one waited for the lock.
        let snap = self.reload_if_newer()?;
        let status = iret_index::status::status_of(&self.root, &snap.index);
        if status.stale() == 0 && !snap.index.manifest.pending() {
            return Ok((snap, Freshness::Refreshed(changed)));
        }
        match self.rebuild() {
            Ok(corpus) => Ok((corpus, Freshness::Refreshed(status.stale()))),
            Err(BuildError::Store(StoreError::Locked(_))) => {
                let freshness = if snap.index.manifest.pending() {
                    Freshness::Embedding(self.embedding_progress())
                } else {
                    Freshness::Busy
                };
                Ok((snap, freshness))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// [`Engine::fresh`], refused when the index holds no file: the answer says why (an
    /// ignore file's line, every file skipped) and what to do, instead of an empty list.
    fn searchable(&self) -> anyhow::Result<(Arc<Corpus>, Freshness)> {
        let (corpus, freshness) = self.fresh()?;
        if corpus.index.files.is_empty() {
            let walk = corpus.index.manifest.walk;
            let walked = iret_index::walk::walk_with(&self.root, walk);
            let why =
                iret_index::walk::why_empty(&self.root, walked.files.len(), &walked.skipped, walk)
                    .unwrap_or_else(|| {
                        format!(
                            "the index of {} holds no file; run `iret index` there",
                            self.root.display()
                        )
                    });
            anyhow::bail!("{why}");
        }
        Ok((corpus, freshness))
    }

    /// Takes the working tree's changes into the index now (the watcher's update, in the
    /// background): the files taken in. Waits for an update another call is making.
    pub fn update(&self) -> anyhow::Result<usize> {
        let _guard = self.updating.lock().unwrap_or_else(|p| p.into_inner());
        let snap = self.reload_if_newer()?;
        let stale = iret_index::status::status_of(&self.root, &snap.index).stale();
        if stale == 0 {
            return Ok(0);
        }
        if snap.index.manifest.pending() {
            // A keyword tier: its completion takes the changes in.
            if self.background {
                self.complete_in_background();
            }
            return Ok(0);
        }
        self.rebuild()?;
        Ok(stale)
    }

    /// Builds the next generation from the working tree and makes it current (the caller
    /// holds `updating`).
    fn rebuild(&self) -> Result<Arc<Corpus>, BuildError> {
        let opts = BuildOptions {
            progress: false,
            limits: None,
            force: false,
            embedding_cache: None,
            static_tier: true,
            tier_only_above: None,
            remote: self.remote.as_ref().map(|r| r.vectors.clone()),
            walk: None,
            segment_bytes: None,
        };
        // The snapshot is shared with concurrent readers, so it cannot serve as the
        // starting point; the new generation comes back opened.
        let (_, updated) = iret_index::refresh(
            &self.root,
            &self.index_dir,
            self.embedder.as_ref(),
            &opts,
            None,
        )?;
        let index = match updated {
            Some(index) => index,
            None => Index::open(&self.index_dir, Some(self.embedder.model_id()))
                .map_err(BuildError::Store)?,
        };
        let corpus = Arc::new(corpus_of(index, self.remote.as_ref()));
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = corpus.clone();
        Ok(corpus)
    }

    /// The loop's outcome for `query` on `corpus` (the bench scores this order).
    pub fn outcome(
        &self,
        corpus: &Corpus,
        query: &Query,
        opts: &Options,
    ) -> anyhow::Result<Outcome> {
        run(corpus, self.query_model(corpus)?.as_ref(), query, opts)
    }

    /// The model that embeds a query on `corpus`: the shipped static model while a
    /// static tier answers, else the engine's, through the query map when one is set
    /// and was trained for it.
    fn query_model(&self, corpus: &Corpus) -> anyhow::Result<Arc<dyn Embedder>> {
        let Some(id) = &corpus.index.manifest.static_tier else {
            let mapped = self
                .query_map
                .clone()
                .and_then(|map| iret_embed::Mapped::new(self.embedder.clone(), map));
            return Ok(match mapped {
                Some(m) => Arc::new(m),
                None => self.embedder.clone(),
            });
        };
        let model = iret_embed::shipped_static()
            .context("the index is a static tier, but the shipped static model cannot be loaded")?;
        anyhow::ensure!(
            model.model_id() == id,
            "the index's static tier holds static model {id}, this iret ships {}: run `iret index`",
            model.model_id()
        );
        Ok(model)
    }

    /// Single-shot dispatch on `corpus`: files best first.
    pub fn hits(
        &self,
        corpus: &Corpus,
        query: &Query,
        params: &Params,
    ) -> anyhow::Result<Vec<FileHit>> {
        search_once(corpus, self.query_model(corpus)?.as_ref(), query, params)
    }

    /// The loop, answered for an agent: files ≥ `min_relevance` with their best chunks,
    /// what to pass back (and with `trace`, each cycle), the whole answer's JSON within
    /// the budget.
    pub fn retrieve(&self, req: &RetrieveRequest) -> anyhow::Result<RetrieveAnswer> {
        let count = |s: &str| self.count_tokens(s);
        let whole = |r: &budget::Retrieve| budget::json_tokens(&*r.answer, &count);
        let cost = |c: &ChunkAnswer| budget::json_tokens(c, &count);
        self.retrieve_fitted(req, &whole, &cost)
    }

    /// [`Engine::retrieve`], the budget counted as `whole` counts the answer (each chunk
    /// costing about `cost`): the CLI's text counts what it prints.
    pub fn retrieve_fitted(
        &self,
        req: &RetrieveRequest,
        whole: &dyn Fn(&budget::Retrieve) -> usize,
        cost: &dyn Fn(&ChunkAnswer) -> usize,
    ) -> anyhow::Result<RetrieveAnswer> {
        let limit = budget_of(req.budget_tokens)?;
        let (query, mut opts, max_files) = loop_request(req)?;
        opts.ranker = self.ranker.clone();
        let (corpus, freshness) = self.searchable()?;
        let outcome = self.outcome(&corpus, &query, &opts)?;
        let (chosen, below_threshold) = choose(&outcome, opts.min_relevance, max_files);
        let files: Vec<FileAnswer> = chosen
            .iter()
            .map(|e| self.file_answer(&corpus.index, e))
            .collect();
        let mut cycles: Vec<CycleAnswer> = outcome.cycles.iter().map(cycle_answer).collect();
        let next = next_round(&cycles, &outcome.concepts.words, &files);
        if !req.trace {
            cycles.clear();
        }
        let mut answer = RetrieveAnswer {
            query: QueryEcho {
                task: echo(&query.task),
                keywords: query.keywords,
                include: query.include,
                exclude: query.exclude,
            },
            files,
            below_threshold,
            min_relevance: round4(opts.min_relevance),
            cycles,
            next,
            budget: Budget::default(),
            index: note(&corpus, freshness),
        };
        budget::fit(&mut budget::Retrieve::new(&mut answer), limit, whole, cost);
        Ok(answer)
    }

    /// Tokens of `text`, as the shipped tokenizer counts them (about 4 bytes a token
    /// when it cannot be loaded).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.tokens
            .as_ref()
            .map_or(text.len().div_ceil(4), |t| t.count(text))
    }

    fn file_answer(&self, index: &Index, e: &iret_retrieve::Evaluation) -> FileAnswer {
        FileAnswer {
            path: e.path.clone(),
            relevance: round4(e.relevance),
            reason: e.reason.clone(),
            missing: e.missing.clone(),
            chunks: e
                .chunks
                .iter()
                .map(|h| self.chunk_answer(index, h.chunk, h.score))
                .collect(),
        }
    }

    /// Single-shot hybrid search: each file's best chunk, best first.
    pub fn search(&self, req: &SearchRequest) -> anyhow::Result<SearchAnswer> {
        if req.query.trim().is_empty() {
            anyhow::bail!("the query is empty: say what you are looking for");
        }
        let k = req.k.unwrap_or(10);
        if !(1..=100).contains(&k) {
            anyhow::bail!("k must be 1 to 100 (got {k})");
        }
        let limit = budget_of(req.budget_tokens)?;
        let query = Query {
            task: req.query.clone(),
            keywords: Vec::new(),
            include: globs(&req.include)?,
            exclude: globs(&req.exclude)?,
        };
        let (corpus, freshness) = self.searchable()?;
        let hits = self.hits(&corpus, &query, &Params::default())?;
        let index = &corpus.index;
        let chunks: Vec<SearchHit> = hits
            .iter()
            .take(k as usize)
            .map(|h| {
                let best = &h.chunks[0];
                let c = self.chunk_answer(index, best.chunk, h.score);
                SearchHit {
                    path: index.files[h.file as usize].path.clone(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                    symbol: c.symbol,
                    score: c.score,
                    tokens: c.tokens,
                    code: c.code,
                }
            })
            .collect();
        let mut answer = SearchAnswer {
            chunks,
            budget: Budget::default(),
            index: note(&corpus, freshness),
        };
        let count = |s: &str| self.count_tokens(s);
        let whole = |r: &budget::Search| budget::json_tokens(&*r.0, &count);
        let cost = |c: &SearchHit| budget::json_tokens(c, &count);
        budget::fit(&mut budget::Search(&mut answer), limit, &whole, &cost);
        Ok(answer)
    }

    /// Files tied to `req.path` by imports, by use of what it defines, and by vectors.
    pub fn related(&self, req: &RelatedRequest) -> anyhow::Result<RelatedAnswer> {
        let rel = confine::existing(&self.root, &req.path)?;
        let k = req.k.unwrap_or(10);
        if !(1..=50).contains(&k) {
            anyhow::bail!("k must be 1 to 50 (got {k})");
        }
        let (corpus, freshness) = self.searchable()?;
        let index = &corpus.index;
        let file = index
            .files
            .iter()
            .position(|f| f.path == rel)
            .with_context(|| format!("{rel:?} is not an indexed file (see `status`)"))?;
        let related = crate::related::related(&corpus, file as u32, req.line, k as usize);
        Ok(RelatedAnswer {
            path: rel,
            related,
            index: note(&corpus, freshness),
        })
    }

    /// Finishes a keyword tier's embedding on a thread of its own (one at a time); the
    /// next call after it picks up the full generation.
    fn complete_in_background(&self) {
        use std::sync::atomic::Ordering;
        if self.completing.swap(true, Ordering::SeqCst) {
            return;
        }
        let (root, dir) = (self.root.clone(), self.index_dir.clone());
        let embedder = self.embedder.clone();
        let flag = self.completing.clone();
        let remote = self.remote.as_ref().map(|r| r.vectors.clone());
        std::thread::spawn(move || {
            let opts = BuildOptions {
                progress: false,
                limits: None,
                force: false,
                embedding_cache: None,
                static_tier: true,
                tier_only_above: None,
                remote,
                walk: None,
                segment_bytes: None,
            };
            // Locked: another process is completing it, which is as good.
            let _ = iret_index::build(&root, &dir, embedder.as_ref(), &opts);
            flag.store(false, Ordering::SeqCst);
        });
    }

    /// Share of the running build's texts embedded so far (its progress file), or of the
    /// live index's chunks.
    pub fn embedding_progress(&self) -> f64 {
        match iret_index::pipeline::Progress::read(&self.index_dir) {
            Some(p) => p.share(),
            None => self.snapshot().index.manifest.embedded_share(),
        }
    }

    /// The index and how far the working tree has moved on.
    pub fn status(&self) -> anyhow::Result<StatusAnswer> {
        let corpus = self.reload_if_newer()?;
        let s = iret_index::status::status_of(&self.root, &corpus.index);
        let stale: Vec<String> = s
            .modified
            .iter()
            .chain(&s.added)
            .chain(&s.deleted)
            .take(20)
            .cloned()
            .collect();
        let chunks = corpus.index.chunks.len();
        Ok(StatusAnswer {
            root: self.root.display().to_string(),
            files: s.files,
            chunks,
            stale_files: s.stale(),
            stale_examples: stale,
            model: s.model_id,
            tier: corpus.index.manifest.tier().into(),
            embedded_share: if corpus.index.manifest.pending() {
                round4(self.embedding_progress() as f32)
            } else {
                round4(corpus.index.manifest.embedded_share() as f32)
            },
            embedding_eta_seconds: iret_index::pipeline::Progress::read(&self.index_dir)
                .and_then(|p| p.eta_seconds())
                .map(|s| s.round() as u64),
            bytes_on_disk: s.bytes_on_disk,
            generation: s.generation,
            history_commits: s.history.commits,
        })
    }

    fn chunk_answer(&self, index: &Index, chunk: u32, score: f32) -> ChunkAnswer {
        let c = &index.chunks.get(chunk as usize);
        ChunkAnswer {
            start_line: c.start_line,
            end_line: c.end_line,
            symbol: c.symbol.to_string(),
            score: round4(score),
            tokens: self
                .tokens
                .as_ref()
                .map_or(c.text.len() / 4, |t| t.count(c.text)),
            code: c.text.to_string(),
        }
    }
}

/// A request's budget, checked.
fn budget_of(tokens: Option<u32>) -> anyhow::Result<Option<usize>> {
    match tokens {
        Some(t) if t < budget::MIN_BUDGET_TOKENS => anyhow::bail!(
            "budget_tokens must be at least {} (the frame of a one-file answer; got {t})",
            budget::MIN_BUDGET_TOKENS
        ),
        t => Ok(t.map(|t| t as usize)),
    }
}

/// The task as an answer echoes it: its first 120 characters (the agent has the rest).
fn echo(task: &str) -> String {
    let t = task.trim();
    match t.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &t[..cut]),
        None => t.to_string(),
    }
}

/// The query and loop options a request asks for, checked; and how many files at most.
fn loop_request(req: &RetrieveRequest) -> anyhow::Result<(Query, Options, usize)> {
    if req.task.trim().is_empty() {
        anyhow::bail!("the task is empty: say what you are looking for");
    }
    let defaults = Options::default();
    let cycles = req.cycles.unwrap_or(defaults.cycles as u32);
    if !(1..=10).contains(&cycles) {
        anyhow::bail!("cycles must be 1 to 10 (got {cycles})");
    }
    let min_relevance = req.min_relevance.unwrap_or(defaults.min_relevance);
    if !(0.0..=1.0).contains(&min_relevance) {
        anyhow::bail!("min_relevance must be between 0 and 1 (got {min_relevance})");
    }
    let query = Query {
        task: req.task.clone(),
        keywords: req.keywords.clone(),
        include: globs(&req.include)?,
        exclude: globs(&req.exclude)?,
    };
    let opts = Options {
        cycles: cycles as usize,
        min_relevance,
        ..defaults
    };
    Ok((query, opts, req.max_files.unwrap_or(10).max(1) as usize))
}

/// The files to return: those ≥ `min` (at most `max`), or when none reached it the best
/// three, flagged. Listed in the loop's order (`iret_retrieve::r#loop::final_order`: dispatch
/// standing plus the judged relevance), the ranking the benchmarks score.
fn choose(outcome: &Outcome, min: f32, max: usize) -> (Vec<&iret_retrieve::Evaluation>, bool) {
    let mut chosen: Vec<&iret_retrieve::Evaluation> =
        outcome.relevant(min).into_iter().take(max).collect();
    let below = chosen.is_empty();
    if below {
        chosen = outcome.evaluated.iter().take(3.min(max)).collect();
    }
    (chosen, below)
}

/// `next` stays short: at most this many keywords, excluded files and gaps.
const NEXT_KEYWORDS: usize = 8;
const NEXT_EXCLUDE: usize = 10;
const NEXT_GAPS: usize = 6;

/// What an agent can pass back: the learned words, the excluded files, and the concepts
/// no returned file covers.
fn next_round(cycles: &[CycleAnswer], concepts: &[String], files: &[FileAnswer]) -> NextRound {
    let mut keywords: Vec<String> = Vec::new();
    let mut exclude: Vec<String> = Vec::new();
    for c in cycles {
        for w in &c.learned {
            if !keywords.contains(&w.word) {
                keywords.push(w.word.clone());
            }
        }
        exclude.extend(c.excluded.iter().cloned());
    }
    let gaps = concepts
        .iter()
        .filter(|c| !files.is_empty() && files.iter().all(|f| f.missing.contains(c)))
        .take(NEXT_GAPS)
        .cloned()
        .collect();
    keywords.truncate(NEXT_KEYWORDS);
    exclude.truncate(NEXT_EXCLUDE);
    NextRound {
        keywords,
        exclude,
        gaps,
    }
}

fn note(corpus: &Corpus, freshness: Freshness) -> IndexNote {
    IndexNote {
        files: corpus.index.files.len(),
        chunks: corpus.index.chunks.len(),
        freshness: freshness.describe(),
        tier: corpus.index.manifest.tier().into(),
    }
}

fn cycle_answer(c: &iret_retrieve::r#loop::CycleTrace) -> CycleAnswer {
    let (learned, excluded, focus) = match &c.refinement {
        Some(r) => (
            r.added_words()
                .into_iter()
                .map(|t| LearnedWord {
                    word: t.word.clone(),
                    file: t.file.clone(),
                })
                .collect(),
            r.excluded.clone(),
            r.focus.clone(),
        ),
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    CycleAnswer {
        cycle: c.cycle,
        terms: c.terms.clone(),
        candidates: c.candidates,
        focus,
        evaluated: c
            .scores
            .iter()
            .take(10)
            .map(|(p, r)| Scored {
                path: p.clone(),
                relevance: round4(*r),
            })
            .collect(),
        learned,
        excluded,
        stop: c.stop.clone(),
    }
}

/// Globs of a request, each confined to the root.
fn globs(patterns: &[String]) -> anyhow::Result<Vec<String>> {
    patterns
        .iter()
        .map(|p| confine::relative(p).map_err(anyhow::Error::from))
        .collect()
}

/// The live index, built first when missing, or waited for while another process
/// builds it. Returns it and what was done.
fn open_or_build(
    root: &Path,
    index_dir: &Path,
    embedder: &dyn Embedder,
    opts: &OpenOptions,
) -> anyhow::Result<(Index, String, usize)> {
    match Index::open(index_dir, Some(embedder.model_id())) {
        Ok(index) => return Ok((index, "opened".into(), 0)),
        Err(StoreError::Missing(_)) if opts.index_if_missing => {}
        Err(StoreError::Outdated { reason, .. }) if opts.index_if_missing => {
            // Written by another iret version or model: it is rebuilt (reusing the
            // embeddings of the same model), as `iret index` would.
            eprintln!(
                "iret: rebuilding the index of {} ({reason}); the embeddings it has are kept",
                root.display()
            );
        }
        Err(e) => return Err(e.into()),
    }
    let started = Instant::now();
    let mut said = false;
    loop {
        let build_opts = BuildOptions {
            progress: opts.progress,
            limits: None,
            force: false,
            embedding_cache: None,
            static_tier: true,
            tier_only_above: opts.tier_only_above,
            remote: opts.remote.as_ref().map(|r| r.vectors.clone()),
            walk: None,
            segment_bytes: None,
        };
        match iret_index::refresh(root, index_dir, embedder, &build_opts, None) {
            Ok((report, built)) => {
                let index = match built {
                    Some(index) => index,
                    None => Index::open(index_dir, Some(embedder.model_id()))?,
                };
                let how = if said { "waited, then built" } else { "built" };
                if report.deferred > 0 {
                    let tier = index.manifest.tier();
                    return Ok((
                        index,
                        format!(
                            "{how} the {tier} tier: {} files, {} chunks; {} texts left to embed",
                            report.files, report.chunks, report.deferred
                        ),
                        report.deferred,
                    ));
                }
                return Ok((index, format!("{how}: {}", report.summary()), 0));
            }
            Err(BuildError::Store(StoreError::Locked(_))) => {
                // Another iret is building the first index: wait for it.
                if let Ok(index) = Index::open(index_dir, Some(embedder.model_id())) {
                    return Ok((
                        index,
                        "another iret is building the index; answering from what it has written"
                            .into(),
                        0,
                    ));
                }
                if !said {
                    eprintln!(
                        "iret: another iret is building the first index of {}; waiting for it",
                        root.display()
                    );
                    said = true;
                }
                if started.elapsed() > opts.wait {
                    anyhow::bail!(
                        "another iret has been building the index of {} for over {} s; try again later",
                        root.display(),
                        opts.wait.as_secs()
                    );
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The corpus of `index`, its vector leg served by the store when there is one.
fn corpus_of(index: Index, remote: Option<&Remote>) -> Corpus {
    let corpus = Corpus::new(index);
    match remote {
        Some(r) => corpus.with_served(r.nearest.clone()),
        None => corpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iret_retrieve::evaluate::{Concepts, Evaluation};

    fn judged(file: u32, relevance: f32) -> Evaluation {
        Evaluation {
            file,
            path: format!("f{file}.rs"),
            relevance,
            reason: String::new(),
            missing: Vec::new(),
            chunks: Vec::new(),
            cycle: 1,
            features: Default::default(),
        }
    }

    fn outcome(evaluated: Vec<Evaluation>) -> Outcome {
        Outcome {
            evaluated,
            cycles: Vec::new(),
            concepts: Concepts::default(),
            candidates: Vec::new(),
        }
    }

    fn files(chosen: &[&Evaluation]) -> Vec<u32> {
        chosen.iter().map(|e| e.file).collect()
    }

    #[test]
    fn the_answer_keeps_the_loops_order() {
        // The loop ranked file 0 first though file 1 was judged more relevant: the answer
        // lists what the benchmarks score, not a re-sort by relevance.
        let o = outcome(vec![judged(0, 0.75), judged(1, 0.9), judged(2, 0.4)]);
        let (chosen, below) = choose(&o, 0.7, 10);
        assert_eq!(files(&chosen), [0, 1]);
        assert!(!below);
        assert_eq!(files(&choose(&o, 0.7, 1).0), [0]);
    }

    #[test]
    fn with_nothing_strong_the_best_three_are_flagged() {
        let o = outcome((0..5).map(|f| judged(f, 0.3)).collect());
        let (chosen, below) = choose(&o, 0.7, 10);
        assert_eq!(files(&chosen), [0, 1, 2]);
        assert!(below);
    }
}
