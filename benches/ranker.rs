//! The learned ranker's cost per query: scoring one task's candidates (the evaluated files
//! and the rest of cycle 1's top 50: about 70) and calibrating them.
//! `cargo bench -p iret-rank --bench ranker`.
use criterion::{criterion_group, criterion_main, Criterion};
use iret_rank::OnnxRanker;
use iret_retrieve::ranking::Features;

fn rows(n: usize) -> Vec<Features> {
    (0..n)
        .map(|i| {
            let r = (i + 1) as f32;
            Features {
                cos_best: 0.6 - 0.005 * r,
                cos_rel: 1.0 - 0.01 * r,
                bm25_best: 1.0 / r,
                rules_rank: r,
                dispatch_rank: r,
                standing: 1.0 / r,
                evaluated: f32::from(u8::from(i < 20)),
                relevance: if i < 20 { 0.9 - 0.03 * r } else { f32::NAN },
                ..Features::default()
            }
        })
        .collect()
}

fn score(c: &mut Criterion) {
    let ranker = OnnxRanker::shipped().expect("the shipped ranker");
    let candidates = rows(70);
    c.bench_function("ranker/score_70", |b| {
        b.iter(|| {
            let s = ranker.score(&candidates).unwrap();
            ranker.relevance(&s)
        })
    });
}

criterion_group!(benches, score);
criterion_main!(benches);
