//! Runs retrieval modes over benchmark repos and scores every query.
use crate::dataset::{self, Task};
use crate::metrics::{hits_target, mrr, ndcg_at, paths_match, recall_at, Hit};
use anyhow::Context;
use iret_embed::Embedder;
use iret_engine::Engine;
use iret_index::Index;
use iret_retrieve::{Corpus, FileHit, Options, Params, Query};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A retrieval mode, or a named variant of hybrid for the ablation.
#[derive(Debug, Clone)]
pub struct Mode {
    pub name: String,
    kind: Kind,
    /// `-tuned`: queries through the shipped query map (`--query-model tuned`).
    tuned: bool,
}

#[derive(Debug, Clone)]
enum Kind {
    Single(Params),
    Iterative(Options),
}

impl Mode {
    /// `bm25`, `dense`, `hybrid`, `iterative`, `learned`, optionally with knob overrides:
    /// `hybrid@vw=0.7+coh=0.4`. The keys are the knob table's (`iret_retrieve::KNOBS`,
    /// printed by `iret bench --knobs`).
    pub fn parse(spec: &str) -> anyhow::Result<Self> {
        let (name, overrides) = spec.split_once('@').unwrap_or((spec, ""));
        let mut mode = Self::parse_base(name)?;
        if overrides.is_empty() {
            return Ok(mode);
        }
        for kv in overrides.split('+') {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("override {kv:?} is not key=value"))?;
            let x: f32 = v
                .parse()
                .map_err(|_| anyhow::anyhow!("override {kv:?}: not a number"))?;
            let params = match &mut mode.kind {
                Kind::Single(p) => p,
                Kind::Iterative(o) => &mut o.params,
            };
            params
                .set(k, x)
                .map_err(|e| anyhow::anyhow!("override {kv:?}: {e}"))?;
        }
        mode.name = spec.to_string();
        Ok(mode)
    }

    fn parse_base(full: &str) -> anyhow::Result<Self> {
        let p = Params::default();
        let (name, tuned) = match full.strip_suffix("-tuned") {
            Some(base) => (base, true),
            None => (full, false),
        };
        let kind = match name {
            "bm25" => Kind::Single(Params {
                use_vectors: false,
                ..p
            }),
            "dense" => Kind::Single(Params {
                use_keywords: false,
                ..p
            }),
            "hybrid" => Kind::Single(p),
            "iterative" => Kind::Iterative(Options::default()),
            "learned" => Kind::Iterative(Options {
                ranker: Some(iret_rank::OnnxRanker::shipped()?),
                ..Options::default()
            }),
            _ => anyhow::bail!(
                "unknown mode {full:?} (bm25, dense, hybrid, iterative, learned; each with \
                 -tuned: queries through the tuned query map)"
            ),
        };
        Ok(Self {
            name: full.into(),
            kind,
            tuned,
        })
    }

    /// Hybrid with one signal changed at a time: what each lever is worth.
    pub fn ablations() -> Vec<Self> {
        let defaults = Params::default();
        let vector_weight = defaults.vector_weight;
        let changed = |name: &str, change: &dyn Fn(&mut Params)| {
            let mut params = defaults.clone();
            change(&mut params);
            Mode {
                name: name.into(),
                kind: Kind::Single(params),
                tuned: false,
            }
        };
        vec![
            changed("raw-hybrid", &|p| {
                p.define_boost = 0.0;
                p.name_boost = 0.0;
                p.spelled_boost = 0.0;
                p.path_boost = 0.0;
                p.noise_factor = 1.0;
                p.coherence = 0.0;
                p.symbol_vector_weight = vector_weight;
            }),
            changed("-define", &|p| p.define_boost = 0.0),
            changed("-name", &|p| p.name_boost = 0.0),
            changed("-spelled", &|p| p.spelled_boost = 0.0),
            changed("-path", &|p| p.path_boost = 0.0),
            changed("-noise", &|p| p.noise_factor = 1.0),
            changed("-coherence", &|p| p.coherence = 0.0),
            changed("-symbol-weight", &|p| {
                p.symbol_vector_weight = vector_weight
            }),
            changed("-mention", &|p| p.mention_boost = 0.0),
            changed("-message", &|p| p.message_boost = 0.0),
            changed("-api", &|p| p.api_boost = 0.0),
            changed("-title", &|p| p.title_boost = 0.0),
            changed("rrf", &|p| p.rrf_k = 60.0),
            changed("vw0.3", &|p| p.vector_weight = 0.3),
            changed("vw0.7", &|p| p.vector_weight = 0.7),
        ]
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct QueryResult {
    pub query: String,
    pub category: String,
    /// `gap` or `control` on a vocabulary-gap set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub mode: String,
    pub ndcg10: f64,
    pub recall5: f64,
    pub recall10: f64,
    pub mrr: f64,
    pub latency_ms: f64,
    /// Iterative only: files scored ≥ 0.7, how many of them hit a target, and how many
    /// targets reached ≥ 0.7.
    pub strong_files: usize,
    pub strong_hits: usize,
    pub targets: usize,
    pub targets_strong: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct RepoRun {
    pub name: String,
    pub language: String,
    pub files: usize,
    pub chunks: usize,
    /// Seconds to build the index in this run (None: an existing index was loaded).
    pub index_seconds: Option<f64>,
    /// Texts embedded by that build (0: all came from the embedding cache).
    pub embedded: usize,
    pub results: Vec<QueryResult>,
}

pub struct Config {
    pub dataset: PathBuf,
    pub corpora: PathBuf,
    pub index_root: PathBuf,
    pub repos: Option<Vec<String>>,
    pub modes: Vec<Mode>,
    pub reindex: bool,
    pub progress: bool,
    /// A served store (`iret bench --store`): each repository's index is pushed to it,
    /// and every mode runs again with its vector leg served (`MODE+store`), side by side.
    pub serve: Option<Serve>,
    /// `--features`: every loop candidate's features, one row each; a candidate is gold
    /// when it holds one of the task's targets (relevant or secondary).
    pub features: Option<crate::features::FeatureSink>,
}

/// Pushes a repository's index (by name) to a served store and returns its search.
pub type Serve =
    Arc<dyn Fn(&str, &Index) -> anyhow::Result<Arc<dyn iret_index::RemoteNearest>> + Send + Sync>;

/// Remembers query embeddings so ablation variants do not re-embed (not used for timed modes).
pub(crate) struct Memo {
    inner: Arc<dyn Embedder>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
}

impl Memo {
    pub(crate) fn new(inner: Arc<dyn Embedder>) -> Self {
        Self {
            inner,
            cache: Mutex::new(HashMap::new()),
        }
    }
}

impl Embedder for Memo {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dims(&self) -> usize {
        self.inner.dims()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, iret_embed::EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for t in texts {
            if let Some(v) = self.cache.lock().unwrap().get(*t) {
                out.push(v.clone());
                continue;
            }
            let v = self.inner.embed(&[t])?.remove(0);
            self.cache.lock().unwrap().insert(t.to_string(), v.clone());
            out.push(v);
        }
        Ok(out)
    }
}

pub fn run_bench(cfg: &Config, embedder: Arc<dyn Embedder>) -> anyhow::Result<Vec<RepoRun>> {
    let data = dataset::load(&cfg.dataset)?;
    let mut runs = Vec::new();
    for (repo, tasks) in data.repos.iter().zip(&data.tasks) {
        if cfg
            .repos
            .as_ref()
            .is_some_and(|only| !only.contains(&repo.name))
        {
            continue;
        }
        let root = cfg.corpora.join(&repo.name);
        if !root.is_dir() {
            eprintln!(
                "iret bench: skipping {}: no corpus at {} (see scripts/extract-corpus.py)",
                repo.name,
                root.display()
            );
            continue;
        }
        let index_dir = cfg.index_root.join(&repo.name);
        // An index left as a keyword tier (a build killed while embedding) is built again
        // (the embedding cache keeps what it had embedded), never scored as it is.
        let existing = if cfg.reindex {
            None
        } else {
            Index::open(&index_dir, Some(embedder.model_id()))
                .ok()
                .filter(|index| !index.manifest.pending())
        };
        let (index, index_seconds, embedded) = match existing {
            Some(index) => (index, None, 0),
            None => {
                let t = Instant::now();
                let opts = iret_index::BuildOptions {
                    progress: cfg.progress,
                    limits: None,
                    force: true,
                    embedding_cache: None,
                    // The finished index is measured: no tier first.
                    static_tier: false,
                    tier_only_above: None,
                    remote: None,
                    walk: None,
                    segment_bytes: None,
                };
                let report = iret_index::build(&root, &index_dir, embedder.as_ref(), &opts)
                    .with_context(|| format!("indexing {}", repo.name))?;
                let seconds = t.elapsed().as_secs_f64();
                (
                    Index::open(&index_dir, Some(embedder.model_id()))?,
                    Some(seconds),
                    report.embedded,
                )
            }
        };
        let corpus = Arc::new(Corpus::new(index));
        let engines = Engines::new(&root, &index_dir, &corpus, &embedder, &cfg.modes)?;
        let mut results = Vec::new();
        let repo_id = repo_id(repo);
        for mode in &cfg.modes {
            let engine = engines.of(mode);
            for (i, task) in tasks.iter().enumerate() {
                let sink = cfg.features.as_ref().map(|sink| TaskRows {
                    sink,
                    task: format!("{}:{}", repo.name, i),
                    repo: &repo_id,
                });
                results.push(score_query(engine, &corpus, task, mode, sink)?);
            }
        }
        if let Some(serve) = &cfg.serve {
            let served = served_corpus(serve, &repo.name, &index_dir, embedder.model_id())?;
            let engine =
                Engine::with_corpus(&root, &index_dir, served.clone(), embedder.clone(), None);
            for mode in &cfg.modes {
                let mode = Mode {
                    name: format!("{}+store", mode.name),
                    ..mode.clone()
                };
                for task in tasks {
                    results.push(score_query(&engine, &served, task, &mode, None)?);
                }
            }
        }
        if cfg.progress {
            eprintln!(
                "iret bench: {} done ({} queries × {} modes)",
                repo.name,
                tasks.len(),
                cfg.modes.len()
            );
        }
        runs.push(RepoRun {
            name: repo.name.clone(),
            language: repo.language.clone(),
            files: corpus.index.files.len(),
            chunks: corpus.index.chunks.len(),
            index_seconds,
            embedded,
            results,
        });
    }
    Ok(runs)
}

/// The index at `index_dir`, pushed by `serve` as `name`, its vector leg served.
fn served_corpus(
    serve: &Serve,
    name: &str,
    index_dir: &std::path::Path,
    model_id: &str,
) -> anyhow::Result<Arc<Corpus>> {
    let index = Index::open(index_dir, Some(model_id))?;
    let nearest = serve(name, &index)?;
    Ok(Arc::new(Corpus::new(index).with_served(nearest)))
}

fn file_hits_to_results(index: &Index, files: impl Iterator<Item = (u32, u32)>) -> Vec<Hit> {
    files
        .take(10)
        .map(|(file, chunk)| {
            let c = &index.chunks.get(chunk as usize);
            Hit {
                path: index.files[file as usize].path.clone(),
                start_line: c.start_line as usize,
                end_line: c.end_line as usize,
            }
        })
        .collect()
}

/// One mode's answer to one query.
pub(crate) struct Ranking {
    /// Ranked (file, lead chunk) pairs, best first.
    pub order: Vec<(u32, u32)>,
    /// The loop's files scored ≥ 0.7 (empty for a single-shot mode).
    pub strong: Vec<String>,
    /// The loop's candidates with their features (empty for a single-shot mode).
    pub candidates: Vec<iret_retrieve::ranking::Candidate>,
}

/// The ranked files of one query under `mode` (each file's lead chunk), and for the loop
/// the files it scored ≥ 0.7 and its candidates.
pub(crate) fn ranked(
    engine: &Engine,
    corpus: &Corpus,
    query: &Query,
    mode: &Mode,
) -> anyhow::Result<Ranking> {
    Ok(match &mode.kind {
        Kind::Single(params) => {
            let hits: Vec<FileHit> = engine.hits(corpus, query, params)?;
            Ranking {
                order: hits.iter().map(|h| (h.file, h.chunks[0].chunk)).collect(),
                strong: Vec::new(),
                candidates: Vec::new(),
            }
        }
        Kind::Iterative(opts) => {
            let outcome = engine.outcome(corpus, query, opts)?;
            let strong: Vec<String> = outcome
                .relevant(opts.params.strong)
                .iter()
                .map(|e| e.path.clone())
                .collect();
            let order = outcome
                .evaluated
                .iter()
                .filter(|e| !e.chunks.is_empty())
                .map(|e| (e.file, e.chunks[0].chunk))
                .collect();
            Ranking {
                order,
                strong,
                candidates: outcome.candidates,
            }
        }
    })
}

impl Mode {
    /// The plain modes are timed with the real embedder; variants reuse query vectors.
    pub(crate) fn timed(&self) -> bool {
        matches!(
            self.name.trim_end_matches("-tuned"),
            "bm25" | "dense" | "hybrid" | "iterative" | "learned"
        )
    }
}

/// One corpus, up to four engines: the real embedder for the timed modes, a memo of
/// query vectors for the variants; each also through the tuned query map when a mode
/// asks for it.
pub(crate) struct Engines {
    timed: Engine,
    variants: Engine,
    tuned: Option<(Engine, Engine)>,
}

impl Engines {
    pub(crate) fn new(
        root: &Path,
        index_dir: &Path,
        corpus: &Arc<Corpus>,
        embedder: &Arc<dyn Embedder>,
        modes: &[Mode],
    ) -> anyhow::Result<Self> {
        let memo: Arc<dyn Embedder> = Arc::new(Memo::new(embedder.clone()));
        let pair = |map: Option<Arc<iret_embed::QueryMap>>| {
            (
                Engine::with_corpus(root, index_dir, corpus.clone(), embedder.clone(), None)
                    .with_query_map(map.clone()),
                Engine::with_corpus(root, index_dir, corpus.clone(), memo.clone(), None)
                    .with_query_map(map),
            )
        };
        let (timed, variants) = pair(None);
        let tuned = if modes.iter().any(|m| m.tuned) {
            let map = iret_embed::QueryMap::shipped()?;
            anyhow::ensure!(
                map.fits(embedder.as_ref()),
                "the -tuned modes map model {}'s queries; this run's model is {}",
                map.base_model(),
                embedder.model_id()
            );
            Some(pair(Some(map)))
        } else {
            None
        };
        Ok(Self {
            timed,
            variants,
            tuned,
        })
    }

    pub(crate) fn of(&self, mode: &Mode) -> &Engine {
        let (timed, variants) = match (&self.tuned, mode.tuned) {
            (Some((t, v)), true) => (t, v),
            _ => (&self.timed, &self.variants),
        };
        if mode.timed() {
            timed
        } else {
            variants
        }
    }
}

/// The repository a dataset entry names, as `owner/name` when its url says it (so that a
/// repository's tasks of several datasets share one name), else its name.
fn repo_id(repo: &dataset::Repo) -> String {
    repo.url
        .as_deref()
        .and_then(|u| u.split("github.com/").nth(1))
        .map(|r| r.trim_end_matches('/').trim_end_matches(".git").to_string())
        .filter(|r| r.contains('/'))
        .unwrap_or_else(|| repo.name.clone())
}

/// Where one task's candidate rows go (`--features`).
struct TaskRows<'a> {
    sink: &'a crate::features::FeatureSink,
    task: String,
    repo: &'a str,
}

fn score_query(
    engine: &Engine,
    corpus: &Corpus,
    task: &Task,
    mode: &Mode,
    rows: Option<TaskRows>,
) -> anyhow::Result<QueryResult> {
    let index = &corpus.index;
    let query = Query::new(task.query.clone());
    let targets = task.targets();
    let started = Instant::now();
    let Ranking {
        order,
        strong,
        candidates,
    } = ranked(engine, corpus, &query, mode)?;
    let results = file_hits_to_results(index, order.into_iter());
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Some(rows) = rows.filter(|_| !candidates.is_empty()) {
        let gold: Vec<String> = candidates
            .iter()
            .filter(|c| targets.iter().any(|t| paths_match(&c.path, t.path())))
            .map(|c| c.path.clone())
            .collect();
        rows.sink
            .write(&rows.task, rows.repo, &mode.name, &gold, &candidates)?;
    }
    let strong_hits = strong
        .iter()
        .filter(|p| {
            targets.iter().any(|t| {
                hits_target(
                    &Hit {
                        path: (*p).clone(),
                        start_line: 0,
                        end_line: usize::MAX,
                    },
                    t,
                )
            })
        })
        .count();
    let targets_strong = targets
        .iter()
        .filter(|t| {
            strong.iter().any(|p| {
                hits_target(
                    &Hit {
                        path: p.clone(),
                        start_line: 0,
                        end_line: usize::MAX,
                    },
                    t,
                )
            })
        })
        .count();
    Ok(QueryResult {
        query: task.query.clone(),
        category: task.category(),
        group: task.group().map(String::from),
        mode: mode.name.clone(),
        ndcg10: ndcg_at(&results, &targets, 10),
        recall5: recall_at(&results, &targets, 5),
        recall10: recall_at(&results, &targets, 10),
        mrr: mrr(&results, &targets),
        latency_ms,
        strong_files: strong.len(),
        strong_hits,
        targets: targets.len(),
        targets_strong,
    })
}

/// Repos whose index folder exists under `index_root` (for listing).
pub fn indexed(index_root: &Path) -> Vec<String> {
    std::fs::read_dir(index_root)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}
