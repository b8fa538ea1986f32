//! Embedding throughput of the shipped model (chunks/s) and indexing time of the fixture.
//! `cargo bench -p iret-retrieve --bench embed`
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use iret_embed::{locate_model_dir, Embedder, OnnxEmbedder};
use std::path::Path;

fn chunk_texts() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ts-app/src");
    let mut texts = Vec::new();
    for dir in ["auth", "middleware", "routes", "models", "services"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let src = std::fs::read_to_string(e.path()).unwrap();
            for c in iret_chunk_texts(&src) {
                texts.push(c);
            }
        }
    }
    texts.truncate(32);
    texts
}

fn iret_chunk_texts(src: &str) -> Vec<String> {
    src.split("\n\n")
        .filter(|s| s.trim().len() > 40)
        .map(String::from)
        .collect()
}

fn bench(c: &mut Criterion) {
    let model = OnnxEmbedder::load(&locate_model_dir(None).unwrap()).unwrap();
    let texts = chunk_texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut g = c.benchmark_group("embed");
    g.sample_size(10);
    g.throughput(Throughput::Elements(refs.len() as u64));
    g.bench_function("batch_of_32_chunks", |b| {
        b.iter(|| model.embed(&refs).unwrap())
    });
    g.bench_function("one_query", |b| {
        b.iter(|| {
            model
                .embed(&["Add rate limiting to API endpoints"])
                .unwrap()
        })
    });
    g.finish();

    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ts-app");
    let mut g = c.benchmark_group("index");
    g.sample_size(10);
    g.bench_function("fixture_cold_real_model", |b| {
        b.iter(|| {
            let dir = tempfile::tempdir().unwrap();
            iret_index::build(&fixture, dir.path(), &model, &Default::default()).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
