//! The loop with a learned ranker: its candidates carry their features, the ranker's order
//! is the answer's, and its relevance is the answer's. A test double ranks
//! by one feature, so what it reads is known.
mod common;
use common::{embedder, indexed, write};
use iret_retrieve::ranking::{Features, Ranker};
use iret_retrieve::{run, Corpus, Options, Query};
use std::sync::Arc;

const TASK: &str = "throttle the requests to the api router";

fn corpus() -> (tempfile::TempDir, tempfile::TempDir, Corpus) {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    write(r, "src/net/throttle.ts", "export function throttle(maxRequests: number) {\n  return (req, res, next) => next();\n}\n");
    write(r, "src/api/router.ts", "import { throttle } from '../net/throttle';\nexport function router(app) {\n  app.use(throttle(100));\n}\n");
    write(
        r,
        "src/db/users.ts",
        "export function findUser(id: string) {\n  return db.users.find(id);\n}\n",
    );
    write(
        r,
        "src/ui/button.ts",
        "export function Button(label: string) {\n  return '<button>' + label;\n}\n",
    );
    let (idx, corpus) = indexed(r);
    (src, idx, corpus)
}

/// Prefers what the rules rank last: the opposite of the rules, so a change shows.
#[derive(Debug)]
struct Reversed;

impl Ranker for Reversed {
    fn id(&self) -> &str {
        "reversed"
    }
    fn score(&self, rows: &[Features]) -> anyhow::Result<Vec<f32>> {
        Ok(rows.iter().map(|f| f.rules_rank).collect())
    }
    fn relevance(&self, scores: &[f32]) -> Vec<f32> {
        scores.iter().map(|s| (s / 10.0).min(1.0)).collect()
    }
}

#[test]
fn candidates_carry_the_features_and_the_rules_order() {
    let (_s, _i, corpus) = corpus();
    let out = run(&corpus, &embedder(), &Query::new(TASK), &Options::default()).unwrap();
    assert!(!out.candidates.is_empty());
    // The evaluated files first, in the answer's order, ranked 1, 2, …
    for (i, e) in out.evaluated.iter().enumerate() {
        let c = &out.candidates[i];
        assert_eq!(c.file, e.file);
        assert_eq!(c.features.rules_rank, (i + 1) as f32);
        assert_eq!(c.features.evaluated, 1.0);
        assert_eq!(c.features.relevance, e.relevance);
    }
    let throttle = out
        .candidates
        .iter()
        .find(|c| c.path == "src/net/throttle.ts")
        .unwrap();
    assert!(throttle.features.cos_best > 0.0, "{:?}", throttle.features);
    assert!(throttle.features.rules_score > 0.0);
    assert!(!throttle.features.dispatch_rank.is_nan());
    assert_eq!(throttle.features.language, 3.0, "TypeScript");
}

#[test]
fn a_learned_ranker_orders_the_answer_and_gives_its_relevance() {
    let (_s, _i, corpus) = corpus();
    let task = Query::new(TASK);
    let rules = run(&corpus, &embedder(), &task, &Options::default()).unwrap();
    let learned = run(
        &corpus,
        &embedder(),
        &task,
        &Options {
            ranker: Some(Arc::new(Reversed)),
            ..Options::default()
        },
    )
    .unwrap();
    let order = |o: &iret_retrieve::Outcome| {
        o.evaluated
            .iter()
            .map(|e| e.path.clone())
            .collect::<Vec<_>>()
    };
    let mut want: Vec<String> = rules.candidates.iter().map(|c| c.path.clone()).collect();
    want.reverse();
    assert_eq!(
        order(&learned),
        want,
        "every candidate, in the ranker's order"
    );
    assert_ne!(order(&learned), order(&rules));
    let n = want.len() as f32;
    assert_eq!(learned.evaluated[0].relevance, (n / 10.0).min(1.0));
    // A file evaluate never judged still comes with its best chunks and a reason.
    for e in &learned.evaluated {
        assert!(!e.chunks.is_empty() && !e.reason.is_empty(), "{e:?}");
    }
}
