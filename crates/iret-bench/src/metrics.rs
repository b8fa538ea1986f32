//! Scoring exactly as the semble protocol says (PROTOCOL.md): NDCG@10 over chunk results,
//! targets = relevant + secondary with gain 1, plus Recall@k and MRR.
use crate::dataset::Target;

/// One search result: a path (relative to the indexed folder) and a line span.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// Paths match when equal or when either ends with `/` + the other (after `\` → `/`).
pub fn paths_match(a: &str, b: &str) -> bool {
    let a = a.replace('\\', "/");
    let b = b.replace('\\', "/");
    a == b || a.ends_with(&format!("/{b}")) || b.ends_with(&format!("/{a}"))
}

pub fn hits_target(hit: &Hit, target: &Target) -> bool {
    match target {
        Target::Path(p) => paths_match(&hit.path, p),
        Target::Span {
            path,
            start_line,
            end_line,
        } => {
            paths_match(&hit.path, path)
                && !(hit.end_line < *start_line || hit.start_line > *end_line)
        }
    }
}

/// 1-based rank of the first result hitting each target (None: not in `results`).
fn first_ranks(results: &[Hit], targets: &[&Target]) -> Vec<Option<usize>> {
    targets
        .iter()
        .map(|t| {
            results
                .iter()
                .position(|h| hits_target(h, t))
                .map(|i| i + 1)
        })
        .collect()
}

pub fn ndcg_at(results: &[Hit], targets: &[&Target], k: usize) -> f64 {
    if targets.is_empty() {
        return 0.0;
    }
    let results = &results[..results.len().min(k)];
    let mut rel = vec![false; k + 1];
    for r in first_ranks(results, targets).into_iter().flatten() {
        rel[r] = true;
    }
    let dcg: f64 = (1..=k)
        .filter(|&i| rel[i])
        .map(|i| 1.0 / ((i + 1) as f64).log2())
        .sum();
    let idcg: f64 = (1..=k.min(targets.len()))
        .map(|i| 1.0 / ((i + 1) as f64).log2())
        .sum();
    dcg / idcg
}

/// Share of targets hit in the top k.
pub fn recall_at(results: &[Hit], targets: &[&Target], k: usize) -> f64 {
    if targets.is_empty() {
        return 0.0;
    }
    let results = &results[..results.len().min(k)];
    first_ranks(results, targets)
        .iter()
        .filter(|r| r.is_some())
        .count() as f64
        / targets.len() as f64
}

/// Reciprocal rank of the first result that hits any target (within 10).
pub fn mrr(results: &[Hit], targets: &[&Target]) -> f64 {
    let results = &results[..results.len().min(10)];
    first_ranks(results, targets)
        .into_iter()
        .flatten()
        .min()
        .map_or(0.0, |r| 1.0 / r as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(p: &str) -> Hit {
        Hit {
            path: p.into(),
            start_line: 1,
            end_line: 10,
        }
    }

    #[test]
    fn path_matching_rules() {
        assert!(paths_match("a/b.ts", "a/b.ts"));
        assert!(paths_match("src/a/b.ts", "a/b.ts"));
        assert!(paths_match("b.ts", "pkg/src/b.ts"));
        assert!(paths_match("pkg\\src\\b.ts", "src/b.ts"));
        assert!(
            !paths_match("ab.ts", "b.ts"),
            "suffix must start at a separator"
        );
        assert!(!paths_match("a/b.ts", "a/c.ts"));
    }

    #[test]
    fn span_targets_need_overlap() {
        let t = Target::Span {
            path: "x.rs".into(),
            start_line: 20,
            end_line: 30,
        };
        let mk = |s, e| Hit {
            path: "x.rs".into(),
            start_line: s,
            end_line: e,
        };
        assert!(hits_target(&mk(25, 40), &t));
        assert!(hits_target(&mk(30, 31), &t));
        assert!(!hits_target(&mk(31, 40), &t));
        assert!(!hits_target(&mk(1, 19), &t));
    }

    #[test]
    fn ndcg_hand_computed() {
        let a = Target::Path("a.ts".into());
        let b = Target::Path("b.ts".into());
        let c = Target::Path("c.ts".into());
        // Targets a, b; results: x, a, y, b. DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
        let res = vec![hit("x.ts"), hit("a.ts"), hit("y.ts"), hit("b.ts")];
        let expected = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg_at(&res, &[&a, &b], 10) - expected).abs() < 1e-12);
        // An unreachable target still counts in IDCG.
        let exp3 = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2() + 0.5);
        assert!((ndcg_at(&res, &[&a, &b, &c], 10) - exp3).abs() < 1e-12);
        // The same file twice counts once; perfect order scores 1.
        let perfect = vec![hit("a.ts"), hit("a.ts"), hit("b.ts")];
        let two = (1.0 + 0.5) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg_at(&perfect, &[&a, &b], 10) - two).abs() < 1e-12);
        assert_eq!(ndcg_at(&[hit("a.ts"), hit("b.ts")], &[&a, &b], 10), 1.0);
        assert_eq!(ndcg_at(&res, &[], 10), 0.0);
    }

    #[test]
    fn one_result_hitting_two_targets_is_one_gain() {
        let a = Target::Path("a.ts".into());
        let a2 = Target::Span {
            path: "a.ts".into(),
            start_line: 1,
            end_line: 5,
        };
        let res = vec![hit("a.ts")];
        let expected = 1.0 / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg_at(&res, &[&a, &a2], 10) - expected).abs() < 1e-12);
    }

    #[test]
    fn results_past_k_do_not_count() {
        let a = Target::Path("a.ts".into());
        let mut res: Vec<Hit> = (0..10).map(|i| hit(&format!("f{i}.ts"))).collect();
        res.push(hit("a.ts"));
        assert_eq!(ndcg_at(&res, &[&a], 10), 0.0);
        assert_eq!(recall_at(&res, &[&a], 10), 0.0);
        assert_eq!(mrr(&res, &[&a]), 0.0);
        assert_eq!(mrr(&[hit("x.ts"), hit("a.ts")], &[&a]), 0.5);
        assert_eq!(
            recall_at(
                &[hit("x.ts"), hit("a.ts")],
                &[&a, &Target::Path("z".into())],
                5
            ),
            0.5
        );
    }
}
