//! Reading a repository's history once (HEAD's ancestry: each commit's message, time and
//! changed files, renames followed), what the first index of a clone pays.
//! `IRET_BENCH_GIT=/path/to/repo cargo bench -p iret-index --bench history` (a checkout or
//! a bare repository; without it, iret's own repository).
use criterion::{criterion_group, criterion_main, Criterion};
use iret_index::history;
use std::path::PathBuf;

fn repository() -> PathBuf {
    std::env::var_os("IRET_BENCH_GIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

fn read_once(c: &mut Criterion) {
    let root = repository();
    let h = history::update(&root, None).expect("a git repository");
    eprintln!(
        "history of {}: {} commits, {} paths, {} merges and {} huge commits not attributed",
        root.display(),
        h.commits.len(),
        h.paths.len(),
        h.merges,
        h.huge
    );
    let mut group = c.benchmark_group("history");
    group.sample_size(10);
    group.bench_function("read_once", |b| {
        b.iter(|| history::update(&root, None).unwrap())
    });
    group.finish();
}

criterion_group!(benches, read_once);
criterion_main!(benches);
