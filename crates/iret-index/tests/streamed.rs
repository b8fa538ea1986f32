//! A cold build with a cheap model is written segment by segment as the files are read
//! (`stream.rs`); its tables must equal the in-memory build's, whatever the segments.
use iret_embed::{EmbedError, Embedder, FakeEmbedder};
use iret_index::{build, BuildOptions, Index};
use std::path::Path;

/// The fake model, declared cheap: builds take the streamed path with it.
struct Cheap(FakeEmbedder);

/// The cheap fake model, failing once it has embedded `left` batches (a build stopped
/// midway, as by a SIGKILL, but in-process).
struct Failing(Cheap, std::sync::atomic::AtomicIsize);

impl Embedder for Failing {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn dims(&self) -> usize {
        self.0.dims()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.1.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) <= 0 {
            return Err(EmbedError::Inference("stopped".into()));
        }
        self.0.embed(texts)
    }
    fn is_cheap(&self) -> bool {
        true
    }
}

impl Embedder for Cheap {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn dims(&self) -> usize {
        self.0.dims()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.0.embed(texts)
    }
    fn is_cheap(&self) -> bool {
        true
    }
}

fn write(root: &Path, rel: &str, text: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Files of several languages, an empty one, a binary one (skipped) and one over the
/// size limit (skipped), in folders.
fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(r, "src/auth/session.py", b"import jwt\n\nclass SessionManager:\n    def refresh(self, token):\n        \"\"\"Refresh an expired token.\"\"\"\n        return jwt.decode(token)\n\n\ndef expiry(token):\n    return token.exp\n");
    write(r, "src/net/throttle.ts", b"export function throttle(limit: number) {\n  let count = 0;\n  return () => count++ < limit;\n}\n\nexport class RateLimiter {\n  constructor(private max: number) {}\n  allow(): boolean { return true; }\n}\n");
    write(r, "lib/parse.rs", b"pub struct Parser { pos: usize }\n\nimpl Parser {\n    pub fn next_token(&mut self) -> Option<char> { None }\n}\n\npub fn parse(text: &str) -> Parser { Parser { pos: text.len() } }\n");
    write(
        r,
        "scripts/deploy.sh",
        b"#!/bin/sh\nset -e\necho deploying\nrsync -a build/ host:/srv/app\n\necho done\n",
    );
    write(r, "src/empty.py", b"");
    write(r, "assets/blob.js", &[0u8, 159, 146, 150, 0, 1, 2, 3]);
    let big = "x = 1\n".repeat(400_000);
    write(r, "src/huge.py", big.as_bytes());
    for i in 0..12 {
        let text = format!("def handler_{i}(request):\n    return respond(request, code={i})\n\n\ndef helper_{i}():\n    return {i}\n");
        write(r, &format!("app/handlers/h{i}.py"), text.as_bytes());
    }
    d
}

fn opts(index_dir: &Path, segment_bytes: Option<u64>) -> BuildOptions {
    BuildOptions {
        embedding_cache: Some(index_dir.join("embedding-cache")),
        segment_bytes,
        ..Default::default()
    }
}

fn generation(index_dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(index_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("gen-"))
        .unwrap()
}

/// Every table whose bytes do not depend on a hash map's order or a parallel graph build.
const TABLES: &[&str] = &[
    "files.bin",
    "chunks.dat",
    "chunks.off",
    "chunks.file",
    "bm25.dat",
    "bm25.fst",
    "defs.dat",
    "defs.fst",
    "vectors.f16",
    "vocab.bin",
    "history.bin",
    "hnsw.slots",
];

/// Asserts each of `tables` is written in generation `a` and equal in `b`; `when` says
/// which comparison failed.
fn assert_tables_equal(a: &Path, b: &Path, tables: &[&str], when: &str) {
    for table in tables {
        let (x, y) = (std::fs::read(a.join(table)), std::fs::read(b.join(table)));
        assert!(x.is_ok(), "{table} is written");
        assert_eq!(x.unwrap(), y.unwrap(), "{table} differs {when}");
    }
}

#[test]
fn streamed_build_writes_the_tables_of_the_in_memory_one() {
    let repo = repo();
    let in_memory = tempfile::tempdir().unwrap();
    let embedder = FakeEmbedder::new(32);
    let a = build(
        repo.path(),
        in_memory.path(),
        &embedder,
        &opts(in_memory.path(), None),
    )
    .unwrap();
    assert!(a.chunks > 12, "the tree makes chunks: {}", a.chunks);
    // One segment per file or so, and one segment for everything.
    for segment_bytes in [Some(64), None] {
        let streamed = tempfile::tempdir().unwrap();
        let cheap = Cheap(FakeEmbedder::new(32));
        let o = opts(streamed.path(), segment_bytes);
        let b = build(repo.path(), streamed.path(), &cheap, &o).unwrap();
        assert_eq!(
            (a.files, a.chunks, &a.skipped),
            (b.files, b.chunks, &b.skipped)
        );
        assert_eq!(
            b.embedded,
            b.chunks
                + Index::open(streamed.path(), None)
                    .unwrap()
                    .vocab
                    .terms
                    .len()
        );
        let (ga, gb) = (generation(in_memory.path()), generation(streamed.path()));
        assert_tables_equal(&ga, &gb, TABLES, &format!("({segment_bytes:?})"));
        let terms = |g: &Path| {
            let bytes = std::fs::read(g.join("terms.bin")).unwrap();
            let counts: iret_index::vocab::TermCounts = postcard::from_bytes(&bytes).unwrap();
            counts.top(usize::MAX)
        };
        assert_eq!(terms(&ga), terms(&gb), "the word counts differ");
        let (ma, mb) = (
            iret_index::live_manifest(in_memory.path()).unwrap(),
            iret_index::live_manifest(streamed.path()).unwrap(),
        );
        assert_eq!(
            (
                ma.files,
                ma.chunks,
                &ma.skipped,
                &ma.skipped_files,
                ma.pending_vectors
            ),
            (
                mb.files,
                mb.chunks,
                &mb.skipped,
                &mb.skipped_files,
                mb.pending_vectors
            )
        );
        assert!(gb.join("graph.bin").is_file(), "the graph is built");
    }
}

#[test]
fn a_streamed_index_updates_like_any_other() {
    let repo = repo();
    let idx = tempfile::tempdir().unwrap();
    let cheap = Cheap(FakeEmbedder::new(32));
    let o = opts(idx.path(), Some(64));
    build(repo.path(), idx.path(), &cheap, &o).unwrap();
    write(
        repo.path(),
        "src/net/backoff.ts",
        b"export function backoff(attempt: number) {\n  return 2 ** attempt;\n}\n",
    );
    let r = build(repo.path(), idx.path(), &cheap, &o).unwrap();
    assert_eq!(r.changed_files, 1, "only the new file is read");
    let index = Index::open(idx.path(), None).unwrap();
    assert!(index.chunks.iter().any(|c| c.text.contains("2 ** attempt")));
}

#[test]
fn a_streamed_build_of_nothing_says_why() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "README", b"no source here\n");
    let idx = tempfile::tempdir().unwrap();
    let cheap = Cheap(FakeEmbedder::new(32));
    let r = build(d.path(), idx.path(), &cheap, &opts(idx.path(), None)).unwrap();
    assert_eq!((r.files, r.chunks), (0, 0));
    assert!(
        r.nothing.is_some(),
        "the report says why nothing was indexed"
    );
}

/// Segments of the build so far, in the index's `building` folder.
fn segments(index_dir: &Path) -> usize {
    std::fs::read_dir(index_dir.join("building")).map_or(0, |rd| {
        rd.flatten()
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("seg-") && !n.ends_with(".tmp")
            })
            .count()
    })
}

#[test]
fn a_stopped_build_resumes_from_its_finished_segments() {
    let repo = repo();
    let in_memory = tempfile::tempdir().unwrap();
    let whole = build(
        repo.path(),
        in_memory.path(),
        &FakeEmbedder::new(32),
        &opts(in_memory.path(), None),
    )
    .unwrap();
    let idx = tempfile::tempdir().unwrap();
    let o = opts(idx.path(), Some(64));
    let failing = Failing(Cheap(FakeEmbedder::new(32)), 6.into());
    assert!(
        build(repo.path(), idx.path(), &failing, &o).is_err(),
        "the model failed"
    );
    let finished = segments(idx.path());
    assert!(
        finished >= 3,
        "segments before the failure stay: {finished}"
    );
    assert!(
        iret_index::live_manifest(idx.path()).is_err(),
        "nothing is live yet"
    );

    let cheap = Cheap(FakeEmbedder::new(32));
    let r = build(repo.path(), idx.path(), &cheap, &o).unwrap();
    assert!(
        r.reused_chunks > 0,
        "the finished segments' chunks are taken"
    );
    assert!(
        r.changed_files < whole.files,
        "only the rest is read: {} of {}",
        r.changed_files,
        whole.files
    );
    assert_eq!((r.files, r.chunks), (whole.files, whole.chunks));
    let (ga, gb) = (generation(in_memory.path()), generation(idx.path()));
    assert_tables_equal(&ga, &gb, TABLES, "after resuming");
    assert_eq!(segments(idx.path()), 0, "the segments leave once merged");
}

#[test]
fn a_segment_whose_files_changed_is_read_again() {
    let repo = repo();
    let idx = tempfile::tempdir().unwrap();
    let o = opts(idx.path(), Some(64));
    let failing = Failing(Cheap(FakeEmbedder::new(32)), 6.into());
    assert!(build(repo.path(), idx.path(), &failing, &o).is_err());
    assert!(segments(idx.path()) >= 3);
    // The first walked file changes (its size): no segment is taken.
    let first = ["app/handlers/h0.py", "app/handlers/h1.py"];
    write(
        repo.path(),
        first[0],
        b"def handler_0(request):\n    return respond(request, code=404, body='gone')\n",
    );
    let r = build(repo.path(), idx.path(), &Cheap(FakeEmbedder::new(32)), &o).unwrap();
    assert_eq!(r.reused_chunks, 0, "nothing after a changed file is taken");
    let index = Index::open(idx.path(), None).unwrap();
    assert!(index.chunks.iter().any(|c| c.text.contains("gone")));
}

/// [`repo`] without the file over the size limit, and with more files: some 20 KB of
/// source, more texts than a build embeds without a tier first.
fn routes_repo() -> tempfile::TempDir {
    let repo = repo();
    std::fs::remove_file(repo.path().join("src/huge.py")).unwrap();
    for i in 0..250 {
        let text = format!("def route_{i}(path):\n    return dispatch_{i}(path, weight_{i}=True)\n\n\nclass Handler{i}:\n    limit_{i} = {i}\n");
        write(repo.path(), &format!("app/routes/r{i}.py"), text.as_bytes());
    }
    repo
}

/// A transformer's first build of a tree too large to embed at once (more source than
/// `tier_only_above` texts of `SEGMENTED_TIER_BYTES_PER_TEXT`) makes its static tier in
/// segments: the tables of the in-memory path's static tier, every chunk left to embed.
#[test]
fn a_large_first_build_makes_its_static_tier_in_segments() {
    let repo = routes_repo();
    let model = FakeEmbedder::new(32);
    let tier = |n: usize, segment_bytes: Option<u64>| {
        let dir = tempfile::tempdir().unwrap();
        let o = BuildOptions {
            static_tier: true,
            tier_only_above: Some(n),
            ..opts(dir.path(), segment_bytes)
        };
        let report = build(repo.path(), dir.path(), &model, &o).unwrap();
        (dir, report)
    };
    // 260 texts' worth of source is more than this tree: the in-memory path's tier.
    let (in_memory, a) = tier(260, None);
    // Three texts' worth is less: its tier in segments (one per file or so).
    let (streamed, b) = tier(3, Some(64));
    assert!(a.deferred > 0 && b.deferred > 0, "{a:?} {b:?}");
    assert_eq!(
        (a.files, a.chunks, &a.skipped),
        (b.files, b.chunks, &b.skipped)
    );
    let (ga, gb) = (generation(in_memory.path()), generation(streamed.path()));
    // (A tier has no graph: its slots are not written.)
    assert_tables_equal(&ga, &gb, &TABLES[..TABLES.len() - 1], "in the tier");
    let (ma, mb) = (
        iret_index::live_manifest(in_memory.path()).unwrap(),
        iret_index::live_manifest(streamed.path()).unwrap(),
    );
    assert!(mb.static_tier.is_some(), "a static tier: {mb:?}");
    assert_eq!(mb.model_id, model.model_id(), "the model's index");
    assert_eq!(mb.pending_vectors, mb.chunks, "every chunk left to embed");
    assert_eq!(
        (&ma.static_tier, ma.dims, ma.pending_vectors),
        (&mb.static_tier, mb.dims, mb.pending_vectors)
    );
    assert!(
        !streamed.path().join("building").exists(),
        "segments merged"
    );
    // The background build then embeds the tier's chunks from its mapped tables: the
    // tables of a build that embedded everything at once.
    let full = build(
        repo.path(),
        streamed.path(),
        &model,
        &opts(streamed.path(), None),
    )
    .unwrap();
    assert_eq!((full.deferred, full.chunks), (0, b.chunks));
    assert_eq!(full.embedded + full.cached, b.deferred, "{full:?}");
    let m = iret_index::live_manifest(streamed.path()).unwrap();
    assert_eq!((m.pending_vectors, m.static_tier, m.dims), (0, None, 32));
    let whole = tempfile::tempdir().unwrap();
    build(repo.path(), whole.path(), &model, &opts(whole.path(), None)).unwrap();
    let (gw, gc) = (generation(whole.path()), generation(streamed.path()));
    assert_tables_equal(&gw, &gc, TABLES, "once completed");
    assert!(!streamed.path().join("embedding.json").exists());
    // Then it is up to date; a changed file is an update of the completed generation.
    let again = build(
        repo.path(),
        streamed.path(),
        &model,
        &opts(streamed.path(), None),
    )
    .unwrap();
    assert!(again.up_to_date, "{again:?}");
}

/// A tier whose tree changed before its embedding finished is completed, then updated.
#[test]
fn a_tier_is_completed_then_updated_with_what_changed() {
    let repo = routes_repo();
    let model = FakeEmbedder::new(32);
    let dir = tempfile::tempdir().unwrap();
    let o = BuildOptions {
        static_tier: true,
        tier_only_above: Some(3),
        ..opts(dir.path(), Some(64))
    };
    let tier = build(repo.path(), dir.path(), &model, &o).unwrap();
    assert!(tier.deferred > 0);
    write(
        repo.path(),
        "src/net/backoff.ts",
        b"export function backoff(attempt: number) {\n  return 2 ** attempt;\n}\n",
    );
    let r = build(repo.path(), dir.path(), &model, &opts(dir.path(), None)).unwrap();
    assert_eq!((r.changed_files, r.deferred), (1, 0), "{r:?}");
    let index = Index::open(dir.path(), Some(model.model_id())).unwrap();
    assert!(!index.manifest.pending());
    assert!(index.chunks.iter().any(|c| c.text.contains("2 ** attempt")));
}
