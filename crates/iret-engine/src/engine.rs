//! The engine: an opened index and the embedder, kept fresh.
//!
//! Reads take the current snapshot (`Arc<Corpus>`) and never wait for a refresh. Before
//! answering, a call checks the working tree (a walk and a stat per file); when files
//! changed it updates the index itself, unless another call or another process is already
//! doing so, in which case it answers from the snapshot and says so.
use crate::answer::*;
use crate::budget::{pack, Offer};
use crate::confine;
use crate::round4;
use anyhow::Context;
use iret_embed::{Embedder, TokenCounter};
use iret_index::{BuildError, BuildOptions, Index, StoreError};
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
            Arc::new(Corpus::new(index)),
            embedder,
            tokens,
        );
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
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The current index, as it is.
    pub fn snapshot(&self) -> Arc<Corpus> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A newer generation than the snapshot's is live (another process wrote it): load it.
    fn reload_if_newer(&self) -> anyhow::Result<Arc<Corpus>> {
        let snap = self.snapshot();
        let live = iret_index::IndexDir::new(&self.index_dir).current().ok();
        if live.is_none() || live.as_ref() == Some(&snap.index.generation) {
            return Ok(snap);
        }
        let index = Index::open(&self.index_dir, Some(self.embedder.model_id()))?;
        let corpus = Arc::new(Corpus::new(index));
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = corpus.clone();
        Ok(corpus)
    }

    /// The index with the working tree's changes in it (see the module docs). A keyword
    /// tier answers by keywords: a long-lived engine completes it (changes included) in
    /// the background; otherwise a tier of the tree as it is answers as it is, and once
    /// files changed, this call updates the index.
    pub fn fresh(&self) -> anyhow::Result<(Arc<Corpus>, Freshness)> {
        let snap = self.reload_if_newer()?;
        if !self.refresh {
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
        let Ok(_guard) = self.updating.try_lock() else {
            return Ok((snap, Freshness::Busy));
        };
        // Another call may have updated while this one waited for the lock.
        let snap = self.reload_if_newer()?;
        let status = iret_index::status::status_of(&self.root, &snap.index);
        if status.stale() == 0 && !snap.index.manifest.pending() {
            return Ok((snap, Freshness::Refreshed(changed)));
        }
        let opts = BuildOptions {
            progress: false,
            limits: None,
            force: false,
            embedding_cache: None,
            static_tier: true,
            tier_only_above: None,
        };
        // The snapshot is shared with concurrent readers, so it cannot serve as the
        // starting point; the new generation comes back loaded.
        let updated = match iret_index::refresh(
            &self.root,
            &self.index_dir,
            self.embedder.as_ref(),
            &opts,
            None,
        ) {
            Ok((_, updated)) => updated,
            Err(BuildError::Store(StoreError::Locked(_))) => {
                let freshness = if snap.index.manifest.pending() {
                    Freshness::Embedding(self.embedding_progress())
                } else {
                    Freshness::Busy
                };
                return Ok((snap, freshness));
            }
            Err(e) => return Err(e.into()),
        };
        let index = match updated {
            Some(index) => index,
            None => Index::open(&self.index_dir, Some(self.embedder.model_id()))?,
        };
        let corpus = Arc::new(Corpus::new(index));
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = corpus.clone();
        Ok((corpus, Freshness::Refreshed(status.stale())))
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
    /// static tier answers, else the engine's.
    fn query_model(&self, corpus: &Corpus) -> anyhow::Result<Arc<dyn Embedder>> {
        let Some(id) = &corpus.index.manifest.static_tier else {
            return Ok(self.embedder.clone());
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

    /// The loop, answered for an agent: files ≥ `min_relevance` with their best chunks
    /// (packed into the budget), what each cycle learned, and what to pass back.
    pub fn retrieve(&self, req: &RetrieveRequest) -> anyhow::Result<RetrieveAnswer> {
        let (query, opts, max_files) = loop_request(req)?;
        let (corpus, freshness) = self.fresh()?;
        let outcome = self.outcome(&corpus, &query, &opts)?;
        let (chosen, below_threshold) = choose(&outcome, opts.min_relevance, max_files);
        let mut files: Vec<FileAnswer> = chosen
            .iter()
            .map(|e| self.file_answer(&corpus.index, e))
            .collect();
        let budget = self.pack_files(&mut files, req.budget_tokens);
        let cycles: Vec<CycleAnswer> = outcome.cycles.iter().map(cycle_answer).collect();
        let next = next_round(&cycles, &outcome.concepts.words, &files);
        Ok(RetrieveAnswer {
            query: QueryEcho {
                task: query.task,
                keywords: query.keywords,
                include: query.include,
                exclude: query.exclude,
            },
            files,
            below_threshold,
            min_relevance: round4(opts.min_relevance),
            cycles,
            next,
            budget,
            index: note(&corpus, freshness),
        })
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
        let query = Query {
            task: req.query.clone(),
            keywords: Vec::new(),
            include: globs(&req.include)?,
            exclude: globs(&req.exclude)?,
        };
        let (corpus, freshness) = self.fresh()?;
        let hits = self.hits(&corpus, &query, &Params::default())?;
        let index = &corpus.index;
        let mut chunks: Vec<SearchHit> = hits
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
        let offers: Vec<Offer> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| Offer {
                file: i,
                rank: 0,
                tokens: c.tokens,
                path: c.path.clone(),
                start_line: c.start_line,
                end_line: c.end_line,
            })
            .collect();
        let (keep, budget) = pack(&offers, req.budget_tokens.map(|b| b as usize));
        let mut keep = keep.into_iter();
        chunks.retain(|_| keep.next().unwrap_or(false));
        Ok(SearchAnswer {
            chunks,
            budget,
            index: note(&corpus, freshness),
        })
    }

    /// Files tied to `req.path` by imports, by use of what it defines, and by vectors.
    pub fn related(&self, req: &RelatedRequest) -> anyhow::Result<RelatedAnswer> {
        let rel = confine::existing(&self.root, &req.path)?;
        let k = req.k.unwrap_or(10);
        if !(1..=50).contains(&k) {
            anyhow::bail!("k must be 1 to 50 (got {k})");
        }
        let (corpus, freshness) = self.fresh()?;
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
        std::thread::spawn(move || {
            let opts = BuildOptions {
                progress: false,
                limits: None,
                force: false,
                embedding_cache: None,
                static_tier: true,
                tier_only_above: None,
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
            bytes_on_disk: s.bytes_on_disk,
            generation: s.generation,
            history_commits: s.history.commits,
        })
    }

    fn chunk_answer(&self, index: &Index, chunk: u32, score: f32) -> ChunkAnswer {
        let c = &index.chunks[chunk as usize];
        ChunkAnswer {
            start_line: c.start_line,
            end_line: c.end_line,
            symbol: c.symbol.clone(),
            score: round4(score),
            tokens: self
                .tokens
                .as_ref()
                .map_or(c.text.len() / 4, |t| t.count(&c.text)),
            code: c.text.clone(),
        }
    }

    /// Keeps the chunks that fit `limit` (every file's best first); says what was left.
    fn pack_files(&self, files: &mut [FileAnswer], limit: Option<u32>) -> Budget {
        let offers: Vec<Offer> = files
            .iter()
            .enumerate()
            .flat_map(|(i, f)| {
                f.chunks.iter().enumerate().map(move |(rank, c)| Offer {
                    file: i,
                    rank,
                    tokens: c.tokens,
                    path: f.path.clone(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                })
            })
            .collect();
        let (keep, budget) = pack(&offers, limit.map(|l| l as usize));
        let mut keep = keep.into_iter();
        for f in files.iter_mut() {
            f.chunks.retain(|_| keep.next().unwrap_or(false));
        }
        budget
    }
}

/// The query and loop options a request asks for, checked; and how many files at most.
fn loop_request(req: &RetrieveRequest) -> anyhow::Result<(Query, Options, usize)> {
    if req.task.trim().is_empty() {
        anyhow::bail!("the task is empty: say what you are looking for");
    }
    let cycles = req.cycles.unwrap_or(3);
    if !(1..=10).contains(&cycles) {
        anyhow::bail!("cycles must be 1 to 10 (got {cycles})");
    }
    let min_relevance = req.min_relevance.unwrap_or(0.7);
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
        ..Options::default()
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
        .cloned()
        .collect();
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
        }
    }

    fn outcome(evaluated: Vec<Evaluation>) -> Outcome {
        Outcome {
            evaluated,
            cycles: Vec::new(),
            concepts: Concepts::default(),
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
