//! File localisation benchmarks: a task (an issue report, a commit message) against the
//! checkout it was written for, scored on the files to change.
//!
//! Instances of one repository are visited in commit order. Each checkout is written from
//! a local git mirror into one folder per repository and its index carried over from the
//! previous instance (an incremental update, as a user moving between commits has), so
//! the update time per hop is measured too. Scoring is per file (a file's first
//! occurrence): Acc@k is the share of instances whose gold files are all in the top k.
use crate::checkout::{checkout, HopStats, Mirror};
use crate::dataset::{self, Task};
use crate::features::FeatureSink;
use crate::pairs::PairSink;
use crate::runner::{ranked, Engines, Mode, Ranking};
use anyhow::Context;
use iret_embed::Embedder;
use iret_index::{BuildOptions, Index};
use iret_retrieve::{Corpus, Query};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// One task on one commit of one repository.
#[derive(Debug, Clone)]
pub struct Instance {
    pub name: String,
    /// `owner/name`: the mirror and the checkout folder.
    pub repo: String,
    pub revision: String,
    pub task: Task,
}

/// Where the repositories' git directories are.
#[derive(Debug, Clone)]
pub enum Mirrors {
    /// A folder of `<owner>+<name>/repo` mirrors (see [`Mirror::find`]).
    Folder(PathBuf),
    /// One git directory serves every instance (a history run).
    One(Mirror),
}

impl Mirrors {
    fn of(&self, repo: &str) -> anyhow::Result<Mirror> {
        match self {
            Mirrors::Folder(dir) => Mirror::find(dir, repo),
            Mirrors::One(m) => Ok(m.clone()),
        }
    }
}

pub struct LocConfig {
    pub mirrors: Mirrors,
    /// One checkout folder per repository is kept here.
    pub checkouts: PathBuf,
    pub index_root: PathBuf,
    /// Only instances whose name or repository is listed.
    pub only: Option<Vec<String>>,
    /// At most this many instances per repository (the first in commit order).
    pub limit: Option<usize>,
    pub modes: Vec<Mode>,
    pub progress: bool,
    /// `--features`: every loop candidate's features, one row each.
    pub features: Option<FeatureSink>,
    /// `--pairs`: what a query encoder is trained on, one line per instance.
    pub pairs: Option<PairSink>,
}

/// One mode's answer to one instance.
#[derive(Debug, Clone, Serialize)]
pub struct LocResult {
    pub mode: String,
    /// The top 10 files, best first.
    pub files: Vec<String>,
    /// 1-based rank by which every gold file has appeared (None: not within the ranking).
    pub rank: Option<usize>,
    pub ndcg10: f64,
    pub latency_ms: f64,
    /// Iterative: files scored ≥ 0.7.
    pub strong: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InstanceRun {
    pub name: String,
    pub repo: String,
    pub revision: String,
    pub gold: Vec<String>,
    /// Seconds to bring the checkout to this commit, and to update the index.
    pub checkout_seconds: f64,
    pub update_seconds: f64,
    pub hop: HopStats,
    pub changed_files: usize,
    pub embedded: usize,
    pub files: usize,
    pub chunks: usize,
    pub results: Vec<LocResult>,
}

/// The instances of a dataset whose `repos.json` entries name a `repo` and a `revision`
/// (SWE-bench style: one entry and one annotation file per instance).
pub fn load_instances(dir: &Path) -> anyhow::Result<Vec<Instance>> {
    let data = dataset::load(dir)?;
    let mut out = Vec::new();
    for (entry, tasks) in data.repos.into_iter().zip(data.tasks) {
        let repo = entry.repo.clone().with_context(|| {
            format!(
                "{}: a localisation dataset names each entry's `repo` (owner/name)",
                entry.name
            )
        })?;
        let revision = entry
            .revision
            .clone()
            .with_context(|| format!("{}: no `revision`", entry.name))?;
        for (i, task) in tasks.into_iter().enumerate() {
            let name = if i == 0 {
                entry.name.clone()
            } else {
                format!("{}#{i}", entry.name)
            };
            out.push(Instance {
                name,
                repo: repo.clone(),
                revision: revision.clone(),
                task,
            });
        }
    }
    Ok(out)
}

/// Instances grouped by repository (first appearance order), each group in commit order.
fn by_repository(
    cfg: &LocConfig,
    instances: Vec<Instance>,
) -> anyhow::Result<Vec<(Mirror, Vec<Instance>)>> {
    let mut groups: Vec<(String, Vec<Instance>)> = Vec::new();
    for inst in instances {
        let wanted = cfg
            .only
            .as_ref()
            .is_none_or(|o| o.contains(&inst.name) || o.contains(&inst.repo));
        if !wanted {
            continue;
        }
        match groups.iter_mut().find(|(r, _)| *r == inst.repo) {
            Some((_, list)) => list.push(inst),
            None => groups.push((inst.repo.clone(), vec![inst])),
        }
    }
    let mut out = Vec::new();
    for (repo, list) in groups {
        let mirror = cfg.mirrors.of(&repo)?;
        let mut timed = Vec::new();
        for inst in list {
            if !mirror.has_commit(&inst.revision) {
                eprintln!(
                    "iret bench: skipping {}: {} is not in the mirror of {repo}",
                    inst.name, inst.revision
                );
                continue;
            }
            timed.push((mirror.commit_time(&inst.revision)?, inst));
        }
        timed.sort_by_key(|(t, _)| *t);
        let mut list: Vec<Instance> = timed.into_iter().map(|(_, i)| i).collect();
        if let Some(n) = cfg.limit {
            list.truncate(n);
        }
        out.push((mirror, list));
    }
    Ok(out)
}

/// Runs every mode on every instance, repository by repository, in commit order.
pub fn run_localisation(
    cfg: &LocConfig,
    instances: Vec<Instance>,
    embedder: Arc<dyn Embedder>,
) -> anyhow::Result<Vec<InstanceRun>> {
    let mut runs = Vec::new();
    for (mirror, list) in by_repository(cfg, instances)? {
        let Some(first) = list.first() else {
            continue;
        };
        let slug = first.repo.replace('/', "+");
        let folder = cfg.checkouts.join(&slug);
        let index_dir = cfg.index_root.join(&slug);
        let mut open: Option<Index> = None;
        for inst in &list {
            let (run, index) = visit(cfg, &mirror, &folder, &index_dir, inst, open, &embedder)?;
            open = Some(index);
            if cfg.progress {
                let acc = run
                    .results
                    .iter()
                    .map(|r| {
                        format!(
                            "{} {}",
                            r.mode,
                            r.rank.map_or("-".into(), |k| k.to_string())
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                eprintln!(
                    "iret bench: {} (update {:.1}s, {} changed): rank {acc}",
                    inst.name, run.update_seconds, run.changed_files
                );
            }
            runs.push(run);
        }
    }
    Ok(runs)
}

/// One hop: check out, update the index, ask every mode.
fn visit(
    cfg: &LocConfig,
    mirror: &Mirror,
    folder: &Path,
    index_dir: &Path,
    inst: &Instance,
    open: Option<Index>,
    embedder: &Arc<dyn Embedder>,
) -> anyhow::Result<(InstanceRun, Index)> {
    let t = Instant::now();
    let hop = checkout(mirror, &inst.revision, folder)
        .with_context(|| format!("checking out {} at {}", inst.repo, inst.revision))?;
    let checkout_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let opts = BuildOptions {
        progress: cfg.progress,
        ..Default::default()
    };
    let (report, index) = iret_index::refresh(folder, index_dir, embedder.as_ref(), &opts, open)
        .with_context(|| format!("indexing {} at {}", inst.repo, inst.revision))?;
    let index = match index {
        Some(ix) => ix,
        None => Index::open(index_dir, Some(embedder.model_id()))?,
    };
    let update_seconds = t.elapsed().as_secs_f64();
    let corpus = Arc::new(Corpus::new(index));
    if let Some(sink) = &cfg.pairs {
        let gold = gold_paths(inst);
        let query = Query::new(inst.task.query.clone());
        sink.write(
            &inst.name,
            &inst.repo,
            &query,
            &gold,
            &corpus.index,
            embedder.as_ref(),
        )?;
    }
    let results = ask(
        folder,
        index_dir,
        &corpus,
        inst,
        &cfg.modes,
        embedder,
        cfg.features.as_ref(),
    )?;
    let run = InstanceRun {
        name: inst.name.clone(),
        repo: inst.repo.clone(),
        revision: inst.revision.clone(),
        gold: gold_paths(inst),
        checkout_seconds,
        update_seconds,
        hop,
        changed_files: report.changed_files + report.removed_files,
        embedded: report.embedded,
        files: corpus.index.files.len(),
        chunks: corpus.index.chunks.len(),
        results,
    };
    let index = Arc::try_unwrap(corpus)
        .map_err(|_| anyhow::anyhow!("the corpus is still shared"))?
        .index;
    Ok((run, index))
}

fn ask(
    folder: &Path,
    index_dir: &Path,
    corpus: &Arc<Corpus>,
    inst: &Instance,
    modes: &[Mode],
    embedder: &Arc<dyn Embedder>,
    features: Option<&FeatureSink>,
) -> anyhow::Result<Vec<LocResult>> {
    let engines = Engines::new(folder, index_dir, corpus, embedder, modes)?;
    let gold = gold_paths(inst);
    let query = Query::new(inst.task.query.clone());
    let mut out = Vec::new();
    for mode in modes {
        let engine = engines.of(mode);
        let started = Instant::now();
        let Ranking {
            order,
            strong,
            candidates,
        } = ranked(engine, corpus, &query, mode)?;
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        if let Some(sink) = features.filter(|_| !candidates.is_empty()) {
            sink.write(&inst.name, &inst.repo, &mode.name, &gold, &candidates)?;
        }
        let files: Vec<String> = order
            .iter()
            .map(|(f, _)| corpus.index.files[*f as usize].path.clone())
            .collect();
        out.push(LocResult {
            mode: mode.name.clone(),
            rank: rank_of_all(&files, &gold),
            ndcg10: file_ndcg(&files, &gold, 10),
            files: files.into_iter().take(10).collect(),
            latency_ms,
            strong,
        });
    }
    Ok(out)
}

fn gold_paths(inst: &Instance) -> Vec<String> {
    inst.task
        .targets()
        .iter()
        .map(|t| t.path().to_string())
        .collect()
}

/// The 1-based rank by which every gold file has appeared in `files`.
pub fn rank_of_all(files: &[String], gold: &[String]) -> Option<usize> {
    if gold.is_empty() {
        return None;
    }
    gold.iter()
        .map(|g| files.iter().position(|f| f == g).map(|i| i + 1))
        .try_fold(0, |acc, r| r.map(|r| acc.max(r)))
}

/// NDCG@k over files, gold files with gain 1.
pub fn file_ndcg(files: &[String], gold: &[String], k: usize) -> f64 {
    if gold.is_empty() {
        return 0.0;
    }
    let dcg: f64 = files
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, f)| gold.contains(f))
        .map(|(i, _)| 1.0 / ((i + 2) as f64).log2())
        .sum();
    let idcg: f64 = (0..gold.len().min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    dcg / idcg
}

/// Acc@1/3/5/10 and NDCG@10 of one mode over some instances.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Accuracy {
    pub instances: usize,
    pub acc1: f64,
    pub acc3: f64,
    pub acc5: f64,
    pub acc10: f64,
    pub ndcg10: f64,
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
}

impl Accuracy {
    pub fn of<'a>(results: impl Iterator<Item = &'a LocResult>) -> Self {
        let results: Vec<&LocResult> = results.collect();
        let n = results.len().max(1) as f64;
        let within = |k: usize| {
            100.0
                * results
                    .iter()
                    .filter(|r| r.rank.is_some_and(|x| x <= k))
                    .count() as f64
                / n
        };
        let mut lat: Vec<f64> = results.iter().map(|r| r.latency_ms).collect();
        lat.sort_by(f64::total_cmp);
        Self {
            instances: results.len(),
            acc1: within(1),
            acc3: within(3),
            acc5: within(5),
            acc10: within(10),
            ndcg10: results.iter().map(|r| r.ndcg10).sum::<f64>() / n,
            latency_p50_ms: percentile(&lat, 0.5),
            latency_p95_ms: percentile(&lat, 0.95),
        }
    }
}

/// The `q` quantile of sorted values (nearest rank).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// Per mode: over all instances, then per repository.
#[derive(Debug, Clone, Serialize)]
pub struct LocSummary {
    pub modes: BTreeMap<String, Accuracy>,
    pub per_repo: BTreeMap<String, BTreeMap<String, Accuracy>>,
    /// Index update seconds per hop (the first hop of a repository included).
    pub update_p50_s: f64,
    pub update_p95_s: f64,
    pub update_max_s: f64,
}

pub fn summarise(runs: &[InstanceRun], modes: &[Mode]) -> LocSummary {
    let mut out = LocSummary {
        modes: BTreeMap::new(),
        per_repo: BTreeMap::new(),
        update_p50_s: 0.0,
        update_p95_s: 0.0,
        update_max_s: 0.0,
    };
    for mode in modes {
        let of = |r: &&InstanceRun| r.results.iter().find(|x| x.mode == mode.name).cloned();
        let all: Vec<LocResult> = runs.iter().filter_map(|r| of(&r)).collect();
        out.modes
            .insert(mode.name.clone(), Accuracy::of(all.iter()));
        let mut repos: Vec<&str> = runs.iter().map(|r| r.repo.as_str()).collect();
        repos.dedup();
        for repo in repos {
            let these: Vec<LocResult> = runs
                .iter()
                .filter(|r| r.repo == repo)
                .filter_map(|r| of(&r))
                .collect();
            out.per_repo
                .entry(repo.to_string())
                .or_default()
                .insert(mode.name.clone(), Accuracy::of(these.iter()));
        }
    }
    let mut up: Vec<f64> = runs.iter().map(|r| r.update_seconds).collect();
    up.sort_by(f64::total_cmp);
    out.update_p50_s = percentile(&up, 0.5);
    out.update_p95_s = percentile(&up, 0.95);
    out.update_max_s = up.last().copied().unwrap_or(0.0);
    out
}

/// The printed table: modes side by side, overall and per repository.
pub fn table(summary: &LocSummary, modes: &[Mode]) -> String {
    let mut s = String::new();
    let row = |s: &mut String, label: &str, a: &Accuracy| {
        s.push_str(&format!(
            "{label:<34} {:>4} {:>6.1} {:>6.1} {:>6.1} {:>6.1} {:>7.4} {:>8.1} {:>8.1}\n",
            a.instances,
            a.acc1,
            a.acc3,
            a.acc5,
            a.acc10,
            a.ndcg10,
            a.latency_p50_ms,
            a.latency_p95_ms
        ));
    };
    s.push_str(&format!(
        "{:<34} {:>4} {:>6} {:>6} {:>6} {:>6} {:>7} {:>8} {:>8}\n",
        "mode / repository",
        "n",
        "Acc@1",
        "Acc@3",
        "Acc@5",
        "Acc@10",
        "NDCG@10",
        "p50 ms",
        "p95 ms"
    ));
    for mode in modes {
        if let Some(a) = summary.modes.get(&mode.name) {
            row(&mut s, &mode.name, a);
        }
        for (repo, by_mode) in &summary.per_repo {
            if let Some(a) = by_mode.get(&mode.name) {
                row(&mut s, &format!("  {repo}"), a);
            }
        }
    }
    s.push_str(&format!(
        "index update per hop: p50 {:.2} s, p95 {:.2} s, max {:.2} s\n",
        summary.update_p50_s, summary.update_p95_s, summary.update_max_s
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_gold_file_must_appear() {
        let files = v(&["a.py", "b.py", "c.py"]);
        assert_eq!(rank_of_all(&files, &v(&["b.py"])), Some(2));
        assert_eq!(rank_of_all(&files, &v(&["c.py", "a.py"])), Some(3));
        assert_eq!(rank_of_all(&files, &v(&["a.py", "z.py"])), None);
        assert_eq!(rank_of_all(&files, &[]), None);
    }

    #[test]
    fn file_ndcg_is_one_for_a_perfect_ranking() {
        let files = v(&["a.py", "b.py", "c.py"]);
        assert!((file_ndcg(&files, &v(&["a.py"]), 10) - 1.0).abs() < 1e-12);
        let second = file_ndcg(&files, &v(&["b.py"]), 10);
        assert!((second - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert_eq!(file_ndcg(&files, &v(&["z.py"]), 10), 0.0);
    }

    #[test]
    fn accuracy_counts_ranks_within_k() {
        let r = |rank| LocResult {
            mode: "m".into(),
            files: vec![],
            rank,
            ndcg10: 0.0,
            latency_ms: 1.0,
            strong: vec![],
        };
        let rs = [r(Some(1)), r(Some(4)), r(None), r(Some(10))];
        let a = Accuracy::of(rs.iter());
        assert_eq!((a.acc1, a.acc3, a.acc5, a.acc10), (25.0, 25.0, 50.0, 75.0));
    }
}
