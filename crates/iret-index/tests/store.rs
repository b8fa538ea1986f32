//! The store: generations, atomic swap, lock, round trip, corruption.
use iret_embed::FakeEmbedder;
use iret_index::{build, Index, IndexDir, StoreError};

/// Build options with an embedding cache of this index's own (tests do not share one).
fn opts(index_dir: &std::path::Path) -> iret_index::BuildOptions {
    iret_index::BuildOptions {
        embedding_cache: Some(index_dir.join("embedding-cache")),
        ..Default::default()
    }
}

fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("src")).unwrap();
    std::fs::write(
        d.path().join("src/a.ts"),
        "export function alpha(x: number) { return x + 1; }\n",
    )
    .unwrap();
    std::fs::write(
        d.path().join("src/b.py"),
        "def beta(y):\n    return y * 2\n",
    )
    .unwrap();
    std::fs::write(d.path().join("notes.md"), "# not source\n").unwrap();
    d
}

#[test]
fn round_trip_keeps_files_chunks_vectors_and_keywords() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(64);
    let report = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(report.files, 2);
    let index = Index::open(idx.path(), Some("fake")).unwrap();
    assert_eq!(index.files.len(), 2);
    assert_eq!(index.chunks.len(), report.chunks);
    assert_eq!(index.vectors.len(), index.chunks.len());
    assert!(index.bm25.df("alpha") >= 1);
    assert!(index.vocab.terms.iter().any(|t| t == "alpha"));
    assert!(index.chunks.iter().any(|c| c.defines.contains(&"beta")));
    // A second build reuses every embedding.
    let again = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(again.embedded, 0);
    assert!(matches!(
        Index::open(idx.path(), Some("other-model")),
        Err(StoreError::Outdated { .. })
    ));
}

#[test]
fn new_generation_replaces_the_old_one_atomically() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(64);
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    let first = IndexDir::new(idx.path()).current().unwrap();
    std::fs::write(
        src.path().join("src/c.go"),
        "package c\n\nfunc Gamma() int { return 3 }\n",
    )
    .unwrap();
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    let second = IndexDir::new(idx.path()).current().unwrap();
    assert_ne!(first, second);
    assert_eq!(Index::open(idx.path(), None).unwrap().files.len(), 3);
}

#[test]
fn the_replaced_generation_goes_once_no_reader_can_still_be_opening_it() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(64);
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    std::fs::write(
        src.path().join("src/c.go"),
        "package c\n\nfunc Gamma() {}\n",
    )
    .unwrap();
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    let gens = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("gen-"))
            .count()
    };
    // Just replaced: kept for a reader that may be opening it.
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(gens(idx.path()), 2);
    // Replaced an hour ago: a no-change refresh removes it; the live one still opens.
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(idx.path().join("CURRENT"))
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(gens(idx.path()), 1);
    assert_eq!(Index::open(idx.path(), None).unwrap().files.len(), 3);
    // An index only read (a long-lived server that sees no change) prunes on open.
    std::fs::write(
        src.path().join("src/d.go"),
        "package d\n\nfunc Delta() {}\n",
    )
    .unwrap();
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(gens(idx.path()), 2);
    std::fs::File::options()
        .write(true)
        .open(idx.path().join("CURRENT"))
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    assert_eq!(Index::open(idx.path(), None).unwrap().files.len(), 4);
    assert_eq!(gens(idx.path()), 1);
}

#[test]
fn an_interrupted_write_leaves_the_previous_generation_live() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    build(
        src.path(),
        idx.path(),
        &FakeEmbedder::new(64),
        &opts(idx.path()),
    )
    .unwrap();
    // A writer that died mid-way leaves a tmp folder; it is never read.
    let dir = IndexDir::new(idx.path());
    let tmp = dir.begin().unwrap();
    std::fs::write(tmp.path().join("chunks.bin"), b"partial").unwrap();
    std::mem::forget(tmp);
    assert_eq!(Index::open(idx.path(), None).unwrap().files.len(), 2);
}

#[test]
fn one_writer_at_a_time() {
    let idx = tempfile::tempdir().unwrap();
    let dir = IndexDir::new(idx.path());
    let held = dir.lock().unwrap();
    assert!(matches!(dir.lock(), Err(StoreError::Locked(_))));
    drop(held);
    assert!(dir.lock().is_ok());
}

#[test]
fn missing_and_corrupt_indexes_are_errors_not_panics() {
    let idx = tempfile::tempdir().unwrap();
    assert!(matches!(
        Index::open(idx.path(), None),
        Err(StoreError::Missing(_))
    ));
    std::fs::write(idx.path().join("CURRENT"), "../../etc\n").unwrap();
    assert!(matches!(
        Index::open(idx.path(), None),
        Err(StoreError::Corrupt { .. })
    ));

    let src = repo();
    build(
        src.path(),
        idx.path(),
        &FakeEmbedder::new(64),
        &opts(idx.path()),
    )
    .unwrap();
    let gen = IndexDir::new(idx.path()).current().unwrap();
    for file in [
        "chunks.dat",
        "chunks.off",
        "chunks.file",
        "bm25.dat",
        "bm25.fst",
        "vectors.f16",
        "graph.bin",
        "files.bin",
        "vocab.bin",
        "manifest.json",
    ] {
        let backup = std::fs::read(gen.join(file)).unwrap();
        std::fs::write(gen.join(file), &backup[..backup.len() / 3]).unwrap();
        assert!(
            Index::open(idx.path(), None).is_err(),
            "truncated {file} must not load"
        );
        std::fs::write(gen.join(file), backup).unwrap();
    }
    // A file damaged in place (its size intact) is refused too.
    let graph = std::fs::read(gen.join("graph.bin")).unwrap();
    let mut damaged = graph.clone();
    damaged[..8].copy_from_slice(b"garbage!");
    std::fs::write(gen.join("graph.bin"), &damaged).unwrap();
    assert!(matches!(
        Index::open(idx.path(), None),
        Err(StoreError::Corrupt { .. })
    ));
    std::fs::write(gen.join("graph.bin"), graph).unwrap();
    // hnsw_rs's dump is read only to update the graph: damaged, the next build rebuilds
    // the graph from the vectors, and the index it serves answers.
    std::fs::write(gen.join("hnsw.hnsw.graph"), b"garbage").unwrap();
    assert!(Index::open(idx.path(), None).is_ok());
    std::fs::write(src.path().join("extra.py"), "def extra():\n    return 1\n").unwrap();
    build(
        src.path(),
        idx.path(),
        &FakeEmbedder::new(64),
        &opts(idx.path()),
    )
    .unwrap();
    let rebuilt = Index::open(idx.path(), None).unwrap();
    assert_eq!(rebuilt.vectors.len(), rebuilt.chunks.len());
    let first = rebuilt.vectors.row(0);
    assert_eq!(rebuilt.vectors.nearest(&first, 1, &|_| true)[0].0, 0);
    assert_eq!(
        rebuilt
            .vectors
            .nearest_by_graph(&first, 1, &|_| true)
            .unwrap()[0]
            .0,
        0
    );
}

#[test]
fn hnsw_neighbours_match_exact_search() {
    // 3,000 random unit vectors; the graph's top 20 must agree with brute force.
    let dims = 64;
    let mut seed = 42u64;
    let mut data = Vec::new();
    for _ in 0..3000 {
        let mut v: Vec<f32> = (0..dims)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
            })
            .collect();
        iret_embed::normalize(&mut v);
        data.extend(v);
    }
    let mut built = iret_index::vectors::VectorsBuilder::new(dims, data);
    built.build_graph();
    // Searched as a served index walks it: the adjacency tables, not hnsw_rs.
    let vectors = built.freeze();
    let mut hits = 0;
    for q in 0..50 {
        let query = vectors.row(q * 7);
        let exact: Vec<usize> = vectors
            .exact(&query, 20, &|_| true)
            .into_iter()
            .map(|x| x.0)
            .collect();
        let approx: Vec<usize> = vectors
            .nearest_by_graph(&query, 20, &|_| true)
            .unwrap()
            .into_iter()
            .map(|x| x.0)
            .collect();
        hits += approx.iter().filter(|i| exact.contains(i)).count();
    }
    let recall = hits as f64 / (50.0 * 20.0);
    assert!(recall >= 0.9, "HNSW recall@20 {recall}");
}
