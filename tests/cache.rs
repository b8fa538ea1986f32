//! The embedding cache shared by every index on the machine, through the real binary:
//! worktrees share it, concurrent writers and kills leave it consistent, a damaged file is
//! rebuilt.
mod common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A fresh checkout of the fixture (no index).
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join(".iret"));
    dir
}

/// `iret` with the cache in `cache`.
fn iret_with(cache: &Path) -> Command {
    let mut cmd = iret();
    cmd.env("IRET_EMBED_CACHE", cache);
    cmd
}

/// Runs `iret index` and returns its summary line.
fn index(cache: &Path, root: &Path) -> String {
    let out = run(iret_with(cache).arg("index").arg(root));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    err
}

/// How many texts the summary says the model embedded.
fn embedded(summary: &str) -> u64 {
    summary
        .split_once(" embedded")
        .and_then(|(head, _)| head.rsplit(['(', ' ']).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no embedded count in {summary:?}"))
}

fn verify(cache: &Path) {
    let out = run(iret_with(cache).args(["cache", "--verify"]));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn answers(cache: &Path, root: &Path) {
    let out = run(iret_with(cache)
        .args(["search", "token expiry", "--json", "--no-refresh", "-C"])
        .arg(root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        paths(&doc).iter().any(|p| p.starts_with("src/auth/")),
        "{doc}"
    );
}

#[test]
fn a_second_checkout_embeds_nothing_and_two_at_once_share_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let (a, b, c) = (checkout(), checkout(), checkout());
    // Two processes indexing two checkouts at once, both writing the cache.
    let spawn = |root: &Path| {
        iret_with(cache.path())
            .arg("index")
            .arg(root)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (spawn(a.path()), spawn(b.path()));
    for p in [pa, pb] {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    verify(cache.path());
    answers(cache.path(), a.path());
    answers(cache.path(), b.path());
    // A third checkout of the same tree: everything comes from the cache.
    let summary = index(cache.path(), c.path());
    assert_eq!(embedded(&summary), 0, "{summary}");
    answers(cache.path(), c.path());
    // A checkout that differs in one file embeds that file's chunks only.
    std::fs::write(
        c.path().join("src/auth/session.ts"),
        "export function sessionAge(started: number, now: number) {\n  return now - started;\n}\n",
    )
    .unwrap();
    let summary = index(cache.path(), c.path());
    let n = embedded(&summary);
    assert!((1..20).contains(&n), "{summary}");
}

#[cfg(unix)]
#[test]
fn a_kill_during_cache_writes_leaves_it_consistent() {
    let cache = tempfile::tempdir().unwrap();
    let root = checkout();
    for (i, wait_ms) in [150u64, 700, 1500, 2500].into_iter().enumerate() {
        // New code each time, so the build has texts to embed and write.
        std::fs::write(
            root.path().join(format!("src/generated{i}.ts")),
            (0..40)
                .map(|j| {
                    format!("export function step{i}x{j}(v: number) {{ return v * {j}; }}\n\n")
                })
                .collect::<String>(),
        )
        .unwrap();
        let mut child = iret_with(cache.path())
            .args(["index", "-q"])
            .arg(root.path())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(wait_ms));
        let _ = child.kill(); // SIGKILL on unix
        let _ = child.wait();
        verify(cache.path());
    }
    index(cache.path(), root.path());
    verify(cache.path());
    answers(cache.path(), root.path());
    // Everything the finished build embedded is in the cache for another checkout.
    let other = tempfile::tempdir().unwrap();
    copy_dir(root.path(), other.path());
    std::fs::remove_dir_all(other.path().join(".iret")).unwrap();
    let summary = index(cache.path(), other.path());
    assert_eq!(embedded(&summary), 0, "{summary}");
}

#[test]
fn a_damaged_cache_is_rebuilt_not_read() {
    let cache = tempfile::tempdir().unwrap();
    let root = checkout();
    index(cache.path(), root.path());
    let db = cache.path().join("embeddings.db");
    // Checkpoint the WAL first, so that the damage lands on data SQLite reads.
    verify(cache.path());
    std::fs::write(&db, vec![0x5a; 64 * 1024]).unwrap();
    let out = run(iret_with(cache.path()).args(["cache", "--verify"]));
    assert_eq!(out.status.code(), Some(1));
    let other = checkout();
    let out = run(iret_with(cache.path()).arg("index").arg(other.path()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("damaged"), "{err}");
    assert!(embedded(&err) > 0, "the damaged cache was not read: {err}");
    verify(cache.path());
    answers(cache.path(), other.path());
    let third = checkout();
    assert_eq!(embedded(&index(cache.path(), third.path())), 0);
}

#[test]
fn cache_shows_and_clears() {
    let cache = tempfile::tempdir().unwrap();
    let root = checkout();
    index(cache.path(), root.path());
    let out = run(iret_with(cache.path()).args(["cache", "--json"]));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["entries"].as_u64().unwrap() > 0, "{doc}");
    let out = run(iret_with(cache.path())
        .args(["status", "--json"])
        .arg(root.path()));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["embedding_cache"]["entries"], doc["entries"]);
    assert!(run(iret_with(cache.path()).args(["cache", "--clear"]))
        .status
        .success());
    assert!(!cache.path().join("embeddings.db").exists());
    // The index keeps its vectors: it still answers.
    answers(cache.path(), root.path());
}
