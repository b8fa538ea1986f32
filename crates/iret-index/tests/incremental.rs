//! Incremental updates: an updated index must equal a fresh build of the same tree, and
//! unchanged files must cost nothing.
use iret_embed::FakeEmbedder;
use iret_index::bm25::Bm25Params;
use iret_index::vectors::{Vectors, VectorsBuilder};
use iret_index::{build, BuildOptions, Index};
use std::path::Path;

/// Build options with an embedding cache of this index's own (tests do not share one).
fn opts(index_dir: &std::path::Path) -> iret_index::BuildOptions {
    iret_index::BuildOptions {
        embedding_cache: Some(index_dir.join("embedding-cache")),
        ..Default::default()
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "src/auth.ts",
        "export function verifyToken(token: string) {\n  return token.length > 0;\n}\n",
    );
    write(
        d.path(),
        "src/user.py",
        "class User:\n    def profile(self):\n        return self.name\n",
    );
    write(
        d.path(),
        "src/session.rs",
        "pub struct Session { expiry: u64 }\n\nimpl Session {\n    pub fn expired(&self, now: u64) -> bool { now > self.expiry }\n}\n",
    );
    d
}

/// Everything retrieval sees, in a form that does not depend on chunk numbering.
fn snapshot(index: &Index) -> Vec<String> {
    let mut out = Vec::new();
    for f in &index.files {
        out.push(format!("file {} {} {}", f.path, f.hash, f.chunk_count));
        for c in f.first_chunk..f.first_chunk + f.chunk_count {
            let chunk = &index.chunks.get(c as usize);
            assert_eq!(index.files[chunk.file as usize].path, f.path);
            let v: Vec<String> = index.vectors.row(c as usize)[..4]
                .iter()
                .map(|x| format!("{x:.5}"))
                .collect();
            out.push(format!(
                "  chunk {}-{} {} {:?} {}",
                chunk.start_line,
                chunk.end_line,
                chunk.symbol,
                v,
                chunk.text.len()
            ));
        }
    }
    for (t, df) in index.vocab.terms.iter().zip(&index.vocab.df) {
        out.push(format!("term {t} {df}"));
    }
    out
}

fn chunk_paths(index: &Index, hits: impl IntoIterator<Item = u32>) -> Vec<String> {
    let mut v: Vec<String> = hits
        .into_iter()
        .map(|c| {
            let c = &index.chunks.get(c as usize);
            format!("{}:{}", index.files[c.file as usize].path, c.start_line)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn an_updated_index_equals_a_fresh_build() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(64);
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();

    // Edit one file, delete one, add one; session.rs stays as it was.
    write(
        src.path(),
        "src/auth.ts",
        "export function refreshToken(token: string) {\n  return token + 'x';\n}\n",
    );
    std::fs::remove_file(src.path().join("src/user.py")).unwrap();
    write(
        src.path(),
        "src/jwt.go",
        "package jwt\n\nfunc Decode(raw string) string { return raw }\n",
    );
    let report = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(report.changed_files, 2, "{report:?}");
    assert_eq!(report.removed_files, 1, "{report:?}");
    assert!(report.reused_chunks >= 1, "{report:?}");

    let fresh_dir = tempfile::tempdir().unwrap();
    let force = BuildOptions {
        force: true,
        ..opts(fresh_dir.path())
    };
    build(src.path(), fresh_dir.path(), &e, &force).unwrap();
    let updated = Index::open(idx.path(), None).unwrap();
    let fresh = Index::open(fresh_dir.path(), None).unwrap();
    assert_eq!(snapshot(&updated), snapshot(&fresh));

    // Keyword and vector legs answer the same.
    for term in ["refresh", "token", "expiry", "profile", "decode"] {
        let q = [(term.to_string(), 1.0)];
        let a = updated.bm25.score(&q, Bm25Params::default(), &|_| true);
        let b = fresh.bm25.score(&q, Bm25Params::default(), &|_| true);
        assert_eq!(
            chunk_paths(&updated, a.iter().map(|(d, _)| *d)),
            chunk_paths(&fresh, b.iter().map(|(d, _)| *d)),
            "{term}"
        );
    }
    assert_eq!(updated.bm25.df("profile"), 0);
    for c in 0..updated.chunks.len() {
        let best = updated
            .vectors
            .nearest(&updated.vectors.row(c), 1, &|_| true);
        assert_eq!(best[0].0, c, "a chunk's own vector finds it");
    }
}

#[test]
fn touching_files_without_changing_them_embeds_nothing() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(32);
    let first = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    // Same content, new mtime: re-hashed, not re-chunked.
    let text = std::fs::read_to_string(src.path().join("src/auth.ts")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(src.path(), "src/auth.ts", &text);
    let again = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert!(
        !again.up_to_date,
        "the mtime changed, so the fast path cannot answer"
    );
    assert_eq!(again.changed_files, 0);
    assert_eq!(again.embedded + again.cached, 0);
    assert_eq!(again.reused_chunks, first.chunks);
    // And now it is up to date.
    let third = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert!(third.up_to_date);
}

fn random_unit_vectors(n: usize, dims: usize, seed: &mut u64) -> Vec<f32> {
    let mut data = Vec::with_capacity(n * dims);
    for _ in 0..n {
        let mut v: Vec<f32> = (0..dims)
            .map(|_| {
                *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((*seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
            })
            .collect();
        iret_embed::normalize(&mut v);
        data.extend(v);
    }
    data
}

#[test]
fn the_graph_is_updated_in_place_then_rebuilt_when_too_sparse() {
    let dims = 32;
    let mut seed = 7;
    // Rounded to f16 as every embedding is when the build stores it.
    let mut data = random_unit_vectors(600, dims, &mut seed);
    iret_index::store::round_f16(&mut data);
    let mut old = VectorsBuilder::new(dims, data.clone());
    old.build_graph();

    // Remove every tenth vector, add 40 new ones.
    let remap: Vec<Option<u32>> = {
        let mut next = 0;
        (0..600)
            .map(|i| {
                (i % 10 != 0).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    };
    let mut kept: Vec<f32> = Vec::new();
    for (i, r) in remap.iter().enumerate() {
        if r.is_some() {
            kept.extend_from_slice(&data[i * dims..(i + 1) * dims]);
        }
    }
    let first_new = kept.len() / dims;
    let mut fresh = random_unit_vectors(40, dims, &mut seed);
    iret_index::store::round_f16(&mut fresh);
    kept.extend(fresh);
    let mut updated = VectorsBuilder::new(dims, kept);
    assert!(
        updated.update_graph(old, &remap, first_new),
        "updated in place"
    );
    assert_eq!(updated.dead_points(), 60);
    // The served graph walks through the removed chunks' points but never returns them.
    let served = updated.freeze();
    assert_eq!(served.dead_points(), 60);
    for c in (0..updated.len()).step_by(7) {
        let hits = served
            .nearest_by_graph(updated.get(c), 5, &|_| true)
            .unwrap();
        assert_eq!(hits[0].0, c);
        assert!(hits.iter().all(|h| h.0 < updated.len()));
    }

    // The graph survives a dump and load with its slot table; the served files open.
    let dir = tempfile::tempdir().unwrap();
    updated.save(dir.path()).unwrap();
    let loaded = VectorsBuilder::load(dir.path(), dims, updated.len()).unwrap();
    assert_eq!(loaded.dead_points(), 60);
    assert_eq!(loaded.data, updated.data);
    let opened = Vectors::open(dir.path(), dims, updated.len()).unwrap();
    assert_eq!(opened.row(100), updated.get(100));
    assert_eq!(
        opened
            .nearest_by_graph(loaded.get(100), 1, &|_| true)
            .unwrap()[0]
            .0,
        100
    );

    // Dropping half of what is left crosses the threshold: a clean rebuild.
    let n = loaded.len();
    let remap: Vec<Option<u32>> = (0..n as u32)
        .map(|i| (i < n as u32 / 2).then_some(i))
        .collect();
    let half = loaded.data[..(n / 2) * dims].to_vec();
    let mut smaller = VectorsBuilder::new(dims, half);
    assert!(!smaller.update_graph(loaded, &remap, n / 2));
    assert_eq!(smaller.dead_points(), 0);
    assert_eq!(
        smaller
            .freeze()
            .nearest_by_graph(smaller.get(3), 1, &|_| true)
            .unwrap()[0]
            .0,
        3
    );
}

#[test]
fn switching_a_branch_and_back_embeds_nothing_new() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(32);
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    let main = std::fs::read_to_string(src.path().join("src/auth.ts")).unwrap();
    // "Check out" a branch that rewrites auth.ts, then come back.
    write(
        src.path(),
        "src/auth.ts",
        "export function signJwt(claims: object) {\n  return JSON.stringify(claims);\n}\n",
    );
    let branch = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert!(branch.embedded > 0, "new code meets the model: {branch:?}");
    write(src.path(), "src/auth.ts", &main);
    let back = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(back.changed_files, 1);
    assert_eq!(back.embedded, 0, "every text is in the cache: {back:?}");
    assert!(back.cached > 0);
}

#[test]
fn an_edit_costs_the_chunks_it_changed_not_the_whole_file() {
    let src = repo();
    let body = "  total += 1;\n".repeat(150);
    let file = |last: &str| {
        format!(
            "export function first() {{\n{body}}}\n\nexport function second() {{\n{body}}}\n\nexport function third() {{\n{body}{last}}}\n"
        )
    };
    write(src.path(), "src/big.ts", &file(""));
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(32);
    build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    let before = Index::open(idx.path(), None).unwrap();
    let big = before
        .files
        .iter()
        .find(|f| f.path == "src/big.ts")
        .unwrap();
    assert!(big.chunk_count >= 3, "{big:?}");
    drop(before);

    write(src.path(), "src/big.ts", &file("  return total;\n"));
    let report = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(report.changed_files, 1);
    assert_eq!(
        report.embedded + report.cached,
        1,
        "only `third` is new: {report:?}"
    );
    let updated = Index::open(idx.path(), None).unwrap();
    assert_eq!(updated.vectors.dead_points(), 1, "one graph point replaced");

    let fresh_dir = tempfile::tempdir().unwrap();
    let force = BuildOptions {
        force: true,
        ..opts(fresh_dir.path())
    };
    build(src.path(), fresh_dir.path(), &e, &force).unwrap();
    let fresh = Index::open(fresh_dir.path(), None).unwrap();
    assert_eq!(snapshot(&updated), snapshot(&fresh));
    // Every chunk is reachable in the graph (the repeated bodies embed alike, so check
    // the similarity rather than the id).
    for c in 0..updated.chunks.len() {
        let best = updated
            .vectors
            .nearest_by_graph(&updated.vectors.row(c), 1, &|x| x == c)
            .expect("the index has a graph");
        assert_eq!(
            best.first().map(|b| b.0),
            Some(c),
            "chunk {c} has a live point"
        );
    }
}

#[test]
fn refresh_starts_from_the_open_index_and_hands_back_the_new_one() {
    let src = repo();
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(64);
    let opts = opts(idx.path());
    build(src.path(), idx.path(), &e, &opts).unwrap();
    let open = Index::open(idx.path(), None).unwrap();
    write(
        src.path(),
        "src/auth.ts",
        "export function refreshToken(token: string) {\n  return token + 'x';\n}\n",
    );
    let (report, updated) =
        iret_index::refresh(src.path(), idx.path(), &e, &opts, Some(open)).unwrap();
    assert_eq!(report.changed_files, 1, "{report:?}");
    let updated = updated.expect("the open index was live, so the new one comes back");
    // What came back is what is on disk now, including the graph.
    let reopened = Index::open(idx.path(), None).unwrap();
    assert_eq!(updated.generation, reopened.generation);
    assert_eq!(updated.manifest.sizes, reopened.manifest.sizes);
    assert_eq!(snapshot(&updated), snapshot(&reopened));
    for c in 0..updated.chunks.len() {
        let q = &updated.vectors.row(c);
        assert_eq!(
            updated.vectors.nearest(q, 3, &|_| true),
            reopened.vectors.nearest(q, 3, &|_| true)
        );
    }
    let q = [("refresh".to_string(), 1.0)];
    let a = updated.bm25.score(&q, Bm25Params::default(), &|_| true);
    assert_eq!(
        chunk_paths(&updated, a.iter().map(|(d, _)| *d)),
        ["src/auth.ts:1"]
    );

    // Nothing changed since: the open index comes back as it is.
    let (report, same) =
        iret_index::refresh(src.path(), idx.path(), &e, &opts, Some(reopened)).unwrap();
    assert!(report.up_to_date);
    assert_eq!(same.unwrap().generation, updated.generation);

    // An open index that is no longer live is not used as the starting point.
    write(src.path(), "src/extra.ts", "export const extra = 1;\n");
    build(src.path(), idx.path(), &e, &opts).unwrap();
    let (report, back) =
        iret_index::refresh(src.path(), idx.path(), &e, &opts, Some(updated)).unwrap();
    assert!(report.up_to_date, "{report:?}");
    assert!(
        back.is_none(),
        "a stale snapshot is not handed back as current"
    );
}

#[test]
fn editing_one_function_embeds_that_chunk_only() {
    let src = repo();
    let body = |n: u32| -> String {
        (0..12)
            .map(|i| format!("    let step_{i} = input.wrapping_mul({n}).rotate_left({i});\n"))
            .collect()
    };
    let file = |first: u32| {
        format!(
            "pub fn checksum(input: u64) -> u64 {{\n{}    input\n}}\n\npub fn digest(input: u64) -> u64 {{\n{}    input\n}}\n",
            body(first),
            body(7)
        )
    };
    write(src.path(), "src/hash.rs", &file(3));
    let idx = tempfile::tempdir().unwrap();
    let e = FakeEmbedder::new(32);
    let first = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    write(src.path(), "src/hash.rs", &file(5));
    let again = build(src.path(), idx.path(), &e, &opts(idx.path())).unwrap();
    assert_eq!(again.changed_files, 1, "{again:?}");
    // `digest` comes back as it was: its vector is revived, not embedded or looked up.
    assert_eq!(again.embedded + again.cached, 1, "{again:?}");
    assert_eq!(again.chunks, first.chunks);
    let index = Index::open(idx.path(), None).unwrap();
    let digest = index
        .chunks
        .iter()
        .position(|c| c.symbol.contains("digest"))
        .expect("digest has a chunk");
    let best = index
        .vectors
        .nearest(&index.vectors.row(digest), 1, &|_| true);
    assert_eq!(best[0].0, digest, "the revived vector is digest's own");
}
