//! Aggregation (mean per repo, then over repos) and the printed table.
use crate::runner::{QueryResult, RepoRun};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Scores {
    pub ndcg10: f64,
    pub recall5: f64,
    pub recall10: f64,
    pub mrr: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModeSummary {
    pub mode: String,
    /// Mean of repo means.
    pub overall: Scores,
    pub per_repo: BTreeMap<String, Scores>,
    pub per_language: BTreeMap<String, f64>,
    pub per_category: BTreeMap<String, f64>,
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
    /// Iterative: share of files scored ≥ 0.7 that are targets, and of targets that reach 0.7.
    pub calibration: Option<(f64, f64)>,
    /// Vocabulary-gap sets: `gap` and `control` tasks apart (mean per repo, then over repos).
    pub per_group: BTreeMap<String, GroupSummary>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupSummary {
    pub ndcg10: f64,
    pub queries: usize,
    /// Iterative: as [`ModeSummary::calibration`], over this group's tasks.
    pub calibration: Option<(f64, f64)>,
}

/// Calibration counts: files scored ≥ 0.7, those hitting a target, targets, targets ≥ 0.7.
#[derive(Default, Clone, Copy)]
struct Strong {
    files: usize,
    hits: usize,
    targets: usize,
    targets_strong: usize,
}

impl Strong {
    fn add(&mut self, r: &QueryResult) {
        self.files += r.strong_files;
        self.hits += r.strong_hits;
        self.targets += r.targets;
        self.targets_strong += r.targets_strong;
    }
    fn shares(&self) -> (f64, f64) {
        (
            self.hits as f64 / self.files.max(1) as f64,
            self.targets_strong as f64 / self.targets.max(1) as f64,
        )
    }
}

/// The loop's modes (rules or learned ranker): they judge files, so their strong shares count.
fn is_iterative(mode: &str) -> bool {
    mode.starts_with("iterative") || mode.starts_with("learned")
}

/// Gap and control tasks apart: per repo, then over repos.
fn groups(runs: &[RepoRun], mode: &str) -> BTreeMap<String, GroupSummary> {
    let mut repo_means: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut counts: BTreeMap<String, (usize, Strong)> = BTreeMap::new();
    for run in runs {
        let mut by: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for r in run.results.iter().filter(|r| r.mode == mode) {
            let Some(g) = r.group.as_deref() else {
                continue;
            };
            by.entry(g).or_default().push(r.ndcg10);
            let c = counts.entry(g.to_string()).or_default();
            c.0 += 1;
            c.1.add(r);
        }
        for (g, v) in by {
            repo_means
                .entry(g.to_string())
                .or_default()
                .push(mean(v.into_iter()));
        }
    }
    repo_means
        .into_iter()
        .map(|(g, v)| {
            let (queries, strong) = counts[&g];
            let summary = GroupSummary {
                ndcg10: mean(v.into_iter()),
                queries,
                calibration: is_iterative(mode).then(|| strong.shares()),
            };
            (g, summary)
        })
        .collect()
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn scores(rs: &[&QueryResult]) -> Scores {
    Scores {
        ndcg10: mean(rs.iter().map(|r| r.ndcg10)),
        recall5: mean(rs.iter().map(|r| r.recall5)),
        recall10: mean(rs.iter().map(|r| r.recall10)),
        mrr: mean(rs.iter().map(|r| r.mrr)),
    }
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let idx = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[idx]
}

pub fn summarise(runs: &[RepoRun]) -> Vec<ModeSummary> {
    let mut modes: Vec<String> = Vec::new();
    for r in runs.iter().flat_map(|r| &r.results) {
        if !modes.contains(&r.mode) {
            modes.push(r.mode.clone());
        }
    }
    modes
        .into_iter()
        .map(|mode| {
            let mut per_repo = BTreeMap::new();
            let mut lang: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            let mut cat: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            let mut lat = Vec::new();
            let mut strong = Strong::default();
            for run in runs {
                let rs: Vec<&QueryResult> = run.results.iter().filter(|r| r.mode == mode).collect();
                if rs.is_empty() {
                    continue;
                }
                let s = scores(&rs);
                lang.entry(run.language.clone()).or_default().push(s.ndcg10);
                let mut cats: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
                for r in &rs {
                    cats.entry(r.category.as_str()).or_default().push(r.ndcg10);
                    lat.push(r.latency_ms);
                    strong.add(r);
                }
                for (c, v) in cats {
                    cat.entry(c.to_string())
                        .or_default()
                        .push(mean(v.into_iter()));
                }
                per_repo.insert(run.name.clone(), s);
            }
            let overall = Scores {
                ndcg10: mean(per_repo.values().map(|s| s.ndcg10)),
                recall5: mean(per_repo.values().map(|s| s.recall5)),
                recall10: mean(per_repo.values().map(|s| s.recall10)),
                mrr: mean(per_repo.values().map(|s| s.mrr)),
            };
            ModeSummary {
                calibration: is_iterative(&mode).then(|| strong.shares()),
                per_group: groups(runs, &mode),
                mode,
                overall,
                per_repo,
                per_language: lang
                    .into_iter()
                    .map(|(k, v)| (k, mean(v.into_iter())))
                    .collect(),
                per_category: cat
                    .into_iter()
                    .map(|(k, v)| (k, mean(v.into_iter())))
                    .collect(),
                latency_p50_ms: percentile(lat.clone(), 0.5),
                latency_p95_ms: percentile(lat, 0.95),
            }
        })
        .collect()
}

/// The printed report: NDCG@10 per repo, per language, per category, the vocabulary-gap
/// groups, the overall metrics and the calibration lines, one column per mode.
pub fn table(runs: &[RepoRun], summary: &[ModeSummary]) -> String {
    let mut out = String::new();
    repo_rows(&mut out, runs, summary);
    keyed_rows(
        &mut out,
        "per language (mean of repo NDCG@10)",
        "language",
        summary,
        |s| &s.per_language,
    );
    keyed_rows(
        &mut out,
        "per category (category mean per repo, then over repos)",
        "category",
        summary,
        |s| &s.per_category,
    );
    group_rows(&mut out, summary);
    overall_rows(&mut out, summary);
    calibration_lines(&mut out, summary);
    out
}

/// A header row: the first column's title, then one column per mode.
fn header(out: &mut String, first: &str, summary: &[ModeSummary]) {
    let _ = write!(out, "{first:<20}");
    for s in summary {
        let _ = write!(out, " {:>11}", s.mode);
    }
    out.push('\n');
}

/// One value per mode, after the row's label.
fn values(out: &mut String, summary: &[ModeSummary], value: impl Fn(&ModeSummary) -> f64) {
    for s in summary {
        let _ = write!(out, " {:>11.4}", value(s));
    }
    out.push('\n');
}

fn repo_rows(out: &mut String, runs: &[RepoRun], summary: &[ModeSummary]) {
    let _ = writeln!(out, "NDCG@10 per repo");
    let _ = write!(
        out,
        "{:<20} {:<11} {:>6} {:>7} {:>9}",
        "repo", "language", "files", "chunks", "index s"
    );
    for s in summary {
        let _ = write!(out, " {:>11}", s.mode);
    }
    out.push('\n');
    for run in runs {
        let idx = run
            .index_seconds
            .map_or("loaded".to_string(), |s| format!("{s:.1}"));
        let _ = write!(
            out,
            "{:<20} {:<11} {:>6} {:>7} {:>9}",
            run.name, run.language, run.files, run.chunks, idx
        );
        values(out, summary, |s| {
            s.per_repo.get(&run.name).map_or(f64::NAN, |x| x.ndcg10)
        });
    }
}

/// A section of one row per key of a per-mode map (languages, categories).
fn keyed_rows(
    out: &mut String,
    title: &str,
    first: &str,
    summary: &[ModeSummary],
    map: impl Fn(&ModeSummary) -> &BTreeMap<String, f64>,
) {
    let _ = writeln!(out, "\n{title}");
    header(out, first, summary);
    let keys: Vec<&String> = summary
        .first()
        .map(|s| map(s).keys().collect())
        .unwrap_or_default();
    for k in keys {
        let _ = write!(out, "{k:<20}");
        values(out, summary, |s| map(s).get(k).copied().unwrap_or(f64::NAN));
    }
}

/// Vocabulary-gap sets: the gap and control tasks apart (nothing for other sets).
fn group_rows(out: &mut String, summary: &[ModeSummary]) {
    let Some(first) = summary.first().filter(|s| !s.per_group.is_empty()) else {
        return;
    };
    let _ = writeln!(
        out,
        "\nvocabulary gap (NDCG@10, mean per repo, then over repos)"
    );
    header(out, "tasks", summary);
    for (g, gs) in &first.per_group {
        let _ = write!(out, "{:<20}", format!("{g} (n={})", gs.queries));
        values(out, summary, |s| {
            s.per_group.get(g).map_or(f64::NAN, |x| x.ndcg10)
        });
    }
}

/// One overall figure of a mode.
type Metric = fn(&ModeSummary) -> f64;

fn overall_rows(out: &mut String, summary: &[ModeSummary]) {
    let _ = writeln!(out, "\noverall (mean over repos)");
    header(out, "metric", summary);
    let metrics: [(&str, Metric); 6] = [
        ("NDCG@10", |s| s.overall.ndcg10),
        ("Recall@5", |s| s.overall.recall5),
        ("Recall@10", |s| s.overall.recall10),
        ("MRR", |s| s.overall.mrr),
        ("latency p50 ms", |s| s.latency_p50_ms),
        ("latency p95 ms", |s| s.latency_p95_ms),
    ];
    for (name, metric) in metrics {
        let _ = write!(out, "{name:<20}");
        values(out, summary, metric);
    }
}

/// How well the 0.7 threshold separates targets (iterative modes only).
fn calibration_lines(out: &mut String, summary: &[ModeSummary]) {
    let line = |out: &mut String, what: &str, (p, r): (f64, f64)| {
        let _ = writeln!(
            out,
            "calibration ({what}): {:.1}% of files scored >= 0.7 are targets; {:.1}% of targets reach >= 0.7",
            p * 100.0,
            r * 100.0
        );
    };
    for s in summary {
        if let Some(c) = s.calibration {
            out.push('\n');
            line(out, &s.mode, c);
        }
        for (g, gs) in &s.per_group {
            if let Some(c) = gs.calibration {
                line(out, &format!("{}, {g} tasks", s.mode), c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(mode: &str, group: Option<&str>, ndcg10: f64, strong: (usize, usize)) -> QueryResult {
        QueryResult {
            query: String::new(),
            category: "semantic".into(),
            group: group.map(String::from),
            mode: mode.into(),
            ndcg10,
            recall5: 0.0,
            recall10: 0.0,
            mrr: 0.0,
            latency_ms: 1.0,
            strong_files: strong.0,
            strong_hits: strong.1,
            targets: 2,
            targets_strong: strong.1,
        }
    }

    fn repo(name: &str, results: Vec<QueryResult>) -> RepoRun {
        RepoRun {
            name: name.into(),
            language: "go".into(),
            files: 1,
            chunks: 1,
            index_seconds: None,
            embedded: 0,
            results,
        }
    }

    #[test]
    fn gap_and_control_tasks_are_reported_apart_per_repo_then_over_repos() {
        let runs = [
            repo(
                "a",
                vec![
                    result("iterative", Some("gap"), 0.2, (2, 1)),
                    result("iterative", Some("gap"), 0.4, (1, 0)),
                    result("iterative", Some("control"), 1.0, (1, 1)),
                ],
            ),
            repo("b", vec![result("iterative", Some("gap"), 0.9, (1, 1))]),
        ];
        let s = &summarise(&runs)[0];
        let gap = &s.per_group["gap"];
        // Repo a: (0.2 + 0.4) / 2 = 0.3; repo b: 0.9; over repos 0.6.
        assert!((gap.ndcg10 - 0.6).abs() < 1e-9, "{}", gap.ndcg10);
        assert_eq!(gap.queries, 3);
        // 4 strong files of which 2 hit; 6 targets of which 2 strong.
        assert_eq!(gap.calibration, Some((0.5, 2.0 / 6.0)));
        assert_eq!(s.per_group["control"].queries, 1);
        assert!(table(&runs, &summarise(&runs)).contains("gap (n=3)"));
    }

    #[test]
    fn sets_without_gap_labels_have_no_groups() {
        let runs = [repo("a", vec![result("hybrid", None, 0.5, (0, 0))])];
        assert!(summarise(&runs)[0].per_group.is_empty());
        assert!(!table(&runs, &summarise(&runs)).contains("vocabulary gap"));
    }
}
