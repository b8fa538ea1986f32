//! Query latency on a 10k-chunk index: single-shot dispatch and the 3-cycle loop.
//! Uses the deterministic fake embedder so the number is about retrieval, not the model
//! (`iret bench` reports end-to-end latency with the real model on real repos).
//! `cargo bench -p iret-retrieve --bench retrieval`
use criterion::{criterion_group, criterion_main, Criterion};
use iret_embed::FakeEmbedder;
use iret_index::Index;
use iret_retrieve::{run, search_once, Corpus, Options, Params, Query};

const WORDS: &[&str] = &[
    "token",
    "session",
    "router",
    "handler",
    "cache",
    "query",
    "schema",
    "parse",
    "validate",
    "middleware",
    "throttle",
    "request",
    "response",
    "user",
    "order",
    "payment",
    "email",
    "config",
    "logger",
    "event",
    "stream",
    "buffer",
    "encode",
    "decode",
    "serialize",
    "field",
    "error",
    "retry",
    "timeout",
    "connection",
    "pool",
    "migration",
];

fn corpus(dir: &std::path::Path, files: usize, fns_per_file: usize) {
    let mut seed = 7u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    for f in 0..files {
        let mut src = String::new();
        for i in 0..fns_per_file {
            let a = WORDS[next() % WORDS.len()];
            let b = WORDS[next() % WORDS.len()];
            src.push_str(&format!(
                "export function {a}{}{i}(input: {}Options) {{\n",
                capitalise(b),
                capitalise(a)
            ));
            for _ in 0..6 {
                let c = WORDS[next() % WORDS.len()];
                src.push_str(&format!("  const {c}{i} = {b}.{c}(input.{a});\n"));
            }
            src.push_str("  return input;\n}\n\n");
        }
        let sub = WORDS[f % WORDS.len()];
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::write(
            dir.join(sub)
                .join(format!("{}_{f}.ts", WORDS[(f * 7) % WORDS.len()])),
            src,
        )
        .unwrap();
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let src = tempfile::tempdir().unwrap();
    corpus(src.path(), 500, 20);
    let idx = tempfile::tempdir().unwrap();
    let embedder = FakeEmbedder::new(384).with_concepts(&[&["rate", "throttle"]]);
    let report = iret_index::build(src.path(), idx.path(), &embedder, &Default::default()).unwrap();
    assert!(report.chunks >= 9_000, "{} chunks", report.chunks);
    let corpus = Corpus::new(Index::open(idx.path(), None).unwrap());
    let query = Query::new("Add rate limiting to the request handler middleware");
    let mut g = c.benchmark_group(format!("query_{}_chunks", report.chunks));
    g.bench_function("dispatch_single_shot", |b| {
        b.iter(|| search_once(&corpus, &embedder, &query, &Params::default()).unwrap())
    });
    // Always run all 3 cycles.
    let opts = Options {
        params: Params {
            enough: usize::MAX,
            ..Params::default()
        },
        ..Options::default()
    };
    g.bench_function("loop_3_cycles", |b| {
        b.iter(|| run(&corpus, &embedder, &query, &opts).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
