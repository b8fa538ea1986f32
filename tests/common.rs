//! Shared helpers for the integration tests: run the real `iret` binary on copies of the
//! fixture repository, indexed once per test binary.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub mod chroma;
pub mod mcp_client;
pub mod proxy;

/// The binary under test: `IRET_TEST_BIN` when set (an installed `iret`, as
/// `scripts/wheel-check.sh` tests the wheel's), else the one cargo just built.
pub fn iret_bin() -> PathBuf {
    std::env::var_os("IRET_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_iret")))
}

/// The real binary, with an embedding cache of this test binary's own (shared by its
/// tests, as by a user's checkouts; not by other test binaries or the user's own runs),
/// or the calling test's own after [`synthetic_repo`].
pub fn iret() -> Command {
    let mut cmd = Command::new(iret_bin());
    match PRIVATE_CACHE.with(|c| c.borrow().as_ref().map(|d| d.path().to_path_buf())) {
        Some(own) => cmd.env("IRET_EMBED_CACHE", own),
        None => cmd.env("IRET_EMBED_CACHE", embedding_cache()),
    };
    cmd
}

thread_local! {
    /// The calling test's own embedding cache, when it has one (dropped with its thread).
    static PRIVATE_CACHE: std::cell::RefCell<Option<tempfile::TempDir>> =
        const { std::cell::RefCell::new(None) };
}

/// This test binary's embedding cache.
pub fn embedding_cache() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

/// Tokens of `text` as the shipped tokenizer counts them (the one budgets are counted
/// with), loaded from `models/` independently of the binary.
pub fn count_tokens(text: &str) -> usize {
    static COUNTER: OnceLock<iret_embed::TokenCounter> = OnceLock::new();
    COUNTER
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-minilm-l6-v2");
            iret_embed::TokenCounter::load(&dir).unwrap()
        })
        .count(text)
}

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ts-app")
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A copy of the fixture, indexed once and shared read-only by the tests of one binary.
pub fn indexed_fixture() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&fixture(), dir.path());
        // Index from scratch, whatever index the working tree's fixture may hold.
        let _ = std::fs::remove_dir_all(dir.path().join(".iret"));
        let out = iret().arg("index").arg(dir.path()).output().unwrap();
        assert!(
            out.status.success(),
            "iret index failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
    .path()
}

/// A private copy of the indexed fixture (its index; the embedding cache is shared).
pub fn private_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(indexed_fixture(), dir.path());
    dir
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

pub fn search_json(root: &Path, task: &str, extra: &[&str]) -> serde_json::Value {
    let out = run(iret()
        .args(["search", task, "--json", "-C"])
        .arg(root)
        .args(extra));
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

pub fn paths(doc: &serde_json::Value) -> Vec<String> {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// A repository of `files` TypeScript files with four small functions each.
///
/// The calling test gets an embedding cache of its own from here on: every synthetic
/// repository holds the same texts, and tests of a cold build must not find them
/// embedded by another test running beside them.
pub fn synthetic_repo(files: usize) -> tempfile::TempDir {
    PRIVATE_CACHE.with(|c| *c.borrow_mut() = Some(tempfile::tempdir().unwrap()));
    let dir = tempfile::tempdir().unwrap();
    let words = [
        "ledger", "invoice", "parcel", "voucher", "tariff", "harbor", "quarry", "lantern",
    ];
    for f in 0..files {
        let mut src = String::new();
        for i in 0..4 {
            let w = words[(f + i) % words.len()];
            src.push_str(&format!(
                "export function {w}Step{f}x{i}(amount: number) {{\n  const total{i} = amount * {f} + {i};\n  return total{i};\n}}\n\n"
            ));
        }
        let sub = dir.path().join(format!("src/{}", words[f % words.len()]));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("module{f}.ts")), src).unwrap();
    }
    dir
}

/// Starts a cold `iret index` of `root`, waits until its keyword tier is live and some
/// embedding is checkpointed, and SIGKILLs it. Returns how many texts were checkpointed.
pub fn kill_during_embedding(root: &Path) -> u64 {
    let mut child = iret().args(["index", "-q"]).arg(root).spawn().unwrap();
    let progress = root.join(".iret/embedding.json");
    let started = std::time::Instant::now();
    let done = loop {
        if let Some(n) = std::fs::read(&progress)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["embedded"].as_u64())
        {
            break n;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "no embedding checkpoint within 120 s"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the build ended before a checkpoint"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = child.kill(); // SIGKILL on unix
    let _ = child.wait();
    done
}
