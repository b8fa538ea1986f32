//! A served index gives back the mapped pages it has read (`Index::release_pages`), and
//! reads the same tables after it: chunks, keyword postings, definitions, vectors.
use iret_embed::{Embedder, FakeEmbedder};
use iret_index::bm25::Bm25Params;
use iret_index::{build, BuildOptions, Index};

#[test]
fn an_index_reads_the_same_after_giving_its_pages_back() {
    let repo = tempfile::tempdir().unwrap();
    for i in 0..40 {
        let path = repo.path().join(format!("src/mod{i}.ts"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            format!(
                "export function throttleRequests{i}(limit: number) {{\n  return limit * {i};\n}}\n\n\
                 export class TokenStore{i} {{\n  expiry(): number {{ return {i}; }}\n}}\n"
            ),
        )
        .unwrap();
    }
    let idx = tempfile::tempdir().unwrap();
    let embedder = FakeEmbedder::new(64);
    let opts = BuildOptions {
        embedding_cache: Some(idx.path().join("cache")),
        ..Default::default()
    };
    build(repo.path(), idx.path(), &embedder, &opts).unwrap();
    let index = Index::open(idx.path(), None).unwrap();
    let query = embedder.embed(&["throttle requests"]).unwrap().remove(0);
    let terms = vec![("throttl".to_string(), 1.0), ("token".to_string(), 0.5)];
    let read = |index: &Index| {
        let chunks: Vec<String> = index.chunks.iter().map(|c| c.text.to_string()).collect();
        let scores = index.bm25.score(&terms, Bm25Params::default(), &|_| true);
        let nearest = index.vectors.nearest(&query, 10, &|_| true);
        let defined = index.definitions.files("tokenstore7");
        (chunks, scores, nearest, defined)
    };
    let before = read(&index);
    assert!(!before.0.is_empty() && !before.1.is_empty() && !before.2.is_empty());
    assert!(
        before.3.as_ref().is_some_and(|f| !f.is_empty()),
        "TokenStore7 is defined"
    );
    index.release_pages();
    assert_eq!(read(&index), before);
    index.release_pages();
    index.release_pages();
    assert_eq!(read(&index), before);
}
