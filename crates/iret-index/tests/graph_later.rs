//! A cold build above `EXACT_UP_TO` chunks is live before its graph: one generation
//! without the graph (its vectors searched exactly), then the same with it; a build stopped
//! between the two leaves the first live, and the next `iret index` adds the graph.
use iret_embed::FakeEmbedder;
use iret_index::vectors::EXACT_UP_TO;
use iret_index::{build, BuildOptions, Index};
use std::path::Path;

const GRAPH: &str = "graph.bin";

/// A tree of about 1.2 × EXACT_UP_TO one-line chunks (shell scripts: line windows).
fn large_tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let files = 60;
    let lines = EXACT_UP_TO * 6 / 5 / files + 1;
    for f in 0..files {
        let text: String = (0..lines).map(|l| line(f * lines + l)).collect();
        std::fs::write(d.path().join(format!("s{f}.sh")), text).unwrap();
    }
    d
}

/// A word of letters only, one per number (digits would split it into shared tokens, and
/// the fake model's vectors of many chunks would tie).
fn word(mut n: usize) -> String {
    let mut w = String::from("q");
    loop {
        w.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            return w;
        }
    }
}

/// A line of two words of its own.
fn line(n: usize) -> String {
    let words: Vec<String> = (1..=2).map(|k| word(n * 3 + k)).collect();
    format!("echo {}\n", words.join(" "))
}

fn opts(index_dir: &Path) -> BuildOptions {
    BuildOptions {
        embedding_cache: Some(index_dir.join("embedding-cache")),
        limits: Some(iret_chunk::Limits { max: 16, min: 1 }),
        ..Default::default()
    }
}

fn generations(index_dir: &Path) -> Vec<std::path::PathBuf> {
    let mut gens: Vec<_> = std::fs::read_dir(index_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("gen-"))
        .collect();
    gens.sort();
    gens
}

fn manifest(gen: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(gen.join("manifest.json")).unwrap()).unwrap()
}

#[test]
fn a_large_cold_build_is_live_before_its_graph_and_a_stopped_one_gets_it_next_time() {
    let tree = large_tree();
    let idx = tempfile::tempdir().unwrap();
    let embedder = FakeEmbedder::new(16);
    let report = build(tree.path(), idx.path(), &embedder, &opts(idx.path())).unwrap();
    assert!(
        report.chunks > EXACT_UP_TO && report.chunks < EXACT_UP_TO * 3 / 2,
        "{} chunks",
        report.chunks
    );
    let gens = generations(idx.path());
    let (before, live) = (&gens[gens.len() - 2], &gens[gens.len() - 1]);
    // The one before the live generation: every vector final, no graph.
    assert_eq!(manifest(before)["pending_vectors"], 0);
    assert_eq!(manifest(before)["chunks"], report.chunks);
    assert!(!before.join(GRAPH).exists());
    assert!(live.join(GRAPH).is_file());
    // The live generation took the graph-less one's tables as they were written (its
    // build had let them go from memory) and added the graph's files.
    let sizes = |gen: &Path| manifest(gen)["sizes"].as_object().unwrap().clone();
    let (old_sizes, new_sizes) = (sizes(before), sizes(live));
    for (name, len) in &old_sizes {
        assert_eq!(new_sizes.get(name), Some(len), "{name}");
        assert_eq!(
            std::fs::read(before.join(name)).unwrap(),
            std::fs::read(live.join(name)).unwrap(),
            "{name}"
        );
    }
    assert!(new_sizes.contains_key(GRAPH), "{new_sizes:?}");
    let strip = |gen: &Path| {
        let mut m = manifest(gen);
        let o = m.as_object_mut().unwrap();
        o.remove("sizes");
        o.remove("built_unix");
        m
    };
    assert_eq!(
        strip(before),
        strip(live),
        "the same manifest but for the files"
    );

    // A build stopped after the first commit: only the graph-less generation is live.
    std::fs::remove_dir_all(live).unwrap();
    let name = before.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::write(idx.path().join("CURRENT"), format!("{name}\n")).unwrap();
    let index = Index::open(idx.path(), None).unwrap();
    let query = embedder_query(&embedder);
    let exact = index.vectors.nearest(&query, 10, &|_| true);
    assert_eq!(exact.len(), 10, "searched exactly without a graph");
    drop(index);

    let again = build(tree.path(), idx.path(), &embedder, &opts(idx.path())).unwrap();
    assert!(
        !again.up_to_date,
        "a live index without its graph is not up to date"
    );
    assert_eq!(again.embedded, 0, "nothing embedded again");
    let live = generations(idx.path()).pop().unwrap();
    assert!(live.join(GRAPH).is_file());
    let index = Index::open(idx.path(), None).unwrap();
    let by_graph = index.vectors.nearest(&query, 10, &|_| true);
    // Served by the graph now (how close it comes is the graph's tests' question: the
    // fake model's vectors tie by the thousand here).
    assert_eq!(by_graph.len(), 10);
    // And now it is up to date.
    let third = build(tree.path(), idx.path(), &embedder, &opts(idx.path())).unwrap();
    assert!(third.up_to_date);
}

fn embedder_query(embedder: &FakeEmbedder) -> Vec<f32> {
    use iret_embed::Embedder;
    embedder.embed(&[line(3017).trim()]).unwrap().remove(0)
}
