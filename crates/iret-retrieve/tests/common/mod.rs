//! What the retrieval tests share: a source tree written to disk, indexed with the
//! deterministic fake embedder.
use iret_embed::FakeEmbedder;
use iret_index::Index;
use iret_retrieve::Corpus;
use std::path::Path;

pub fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

pub fn embedder() -> FakeEmbedder {
    FakeEmbedder::new(256)
}

/// `src` indexed into a temporary folder (kept alive by the returned guard).
pub fn indexed(src: &Path) -> (tempfile::TempDir, Corpus) {
    let idx = tempfile::tempdir().unwrap();
    let opts = iret_index::BuildOptions {
        embedding_cache: Some(idx.path().join("embedding-cache")),
        ..Default::default()
    };
    iret_index::build(src, idx.path(), &embedder(), &opts).unwrap();
    let corpus = Corpus::new(Index::open(idx.path(), Some("fake")).unwrap());
    (idx, corpus)
}
