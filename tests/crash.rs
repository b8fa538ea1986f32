//! Crash safety: `iret index` killed with SIGKILL at many points never leaves an index
//! that `iret search` cannot answer from, and the next `iret index` completes.
mod common;
use common::*;
use std::time::Duration;

#[cfg(unix)]
#[test]
fn sigkill_during_index_leaves_a_usable_index() {
    let dir = private_copy();
    let root = dir.path();
    for run_no in 0..20u64 {
        // Change the tree so every run has real work; every third run also drops the
        // embedding cache so the kill can land while the model is embedding.
        std::fs::write(
            root.join("src/generated.ts"),
            format!("export const build{run_no} = {run_no};\n"),
        )
        .unwrap();
        if run_no % 3 == 0 {
            assert!(run(iret().args(["cache", "--clear"])).status.success());
        }
        let mut child = iret().args(["index", "-q"]).arg(root).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(5 + run_no * 37 % 400));
        let _ = child.kill(); // SIGKILL on unix
        let _ = child.wait();
        let out = run(iret()
            .args([
                "search",
                "token expiry",
                "--no-refresh",
                "--min-relevance",
                "0",
                "-C",
            ])
            .arg(root));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "run {run_no}: search failed after kill: {err}"
        );
        assert!(!err.contains("panicked"), "run {run_no}: {err}");
    }
    let out = run(iret().args(["index", "-q"]).arg(root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        status["modified"].as_array().unwrap().len() + status["added"].as_array().unwrap().len(),
        0
    );
    // The kills never left the shared cache inconsistent.
    let out = run(iret().args(["cache", "--verify"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn search_refreshes_changed_files_first() {
    let dir = private_copy();
    let root = dir.path();
    std::fs::write(
        root.join("src/auth/password-reset.ts"),
        "export function sendPasswordResetLink(email: string) {\n  return `reset link for ${email}`;\n}\n",
    )
    .unwrap();
    let stale = search_json(
        root,
        "sendPasswordResetLink",
        &["--no-refresh", "--min-relevance", "0", "--cycles", "1"],
    );
    assert!(!paths(&stale)
        .iter()
        .any(|p| p.ends_with("password-reset.ts")));
    let fresh = search_json(
        root,
        "sendPasswordResetLink",
        &["--min-relevance", "0", "--cycles", "1"],
    );
    assert_eq!(paths(&fresh)[0], "src/auth/password-reset.ts");
}

#[test]
fn search_answers_from_the_current_index_while_another_iret_is_indexing() {
    let dir = private_copy();
    let root = dir.path();
    std::fs::write(
        root.join("src/auth/password-reset.ts"),
        "export function sendPasswordResetLink(email: string) {\n  return email;\n}\n",
    )
    .unwrap();
    // Hold the writer lock as a running `iret index` would.
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join(".iret/lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let out = run(iret()
        .args(["search", "token expiry", "--min-relevance", "0", "-C"])
        .arg(root));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("answering from the current one"), "{err}");
    drop(lock);
    // Once the lock is free, the next search refreshes.
    let fresh = search_json(root, "sendPasswordResetLink", &["--min-relevance", "0"]);
    assert_eq!(paths(&fresh)[0], "src/auth/password-reset.ts");
}

#[test]
fn search_waits_while_another_iret_builds_the_first_index() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join(".iret"));
    std::fs::create_dir_all(dir.path().join(".iret")).unwrap();
    // Another iret holds the writer lock of an index that has no generation yet.
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.path().join(".iret/lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let child = iret()
        .args(["search", "token expiry", "--json", "-C"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // The other build "finishes" (here: gives up the lock); the search then goes on.
    drop(lock);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("waiting for it"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        paths(&doc).iter().any(|p| p.starts_with("src/auth/")),
        "{doc}"
    );
}

#[cfg(unix)]
#[test]
fn a_cold_index_is_searchable_by_keyword_while_embedding_and_resumes_after_sigkill() {
    let repo = synthetic_repo(220);
    let root = repo.path();
    let progress = root.join(".iret/embedding.json");
    let done_before_kill = kill_during_embedding(root);
    assert!(done_before_kill > 0);

    // The first tier answers, and says so.
    let out = run(iret()
        .args([
            "search",
            "quarryStep13x1",
            "--json",
            "--no-refresh",
            "--no-index",
            "--cycles",
            "1",
            "-C",
        ])
        .arg(root));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() != Some(2), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(paths(&doc)[0], "src/harbor/module13.ts", "{doc}");
    // The defining file is strong, and the answer says the index is still being embedded.
    assert!(out.status.success(), "{err}");
    assert!(
        doc["files"][0]["relevance"].as_f64().unwrap() >= 0.8,
        "{doc}"
    );
    assert!(
        doc["index"]["freshness"]
            .as_str()
            .unwrap()
            .starts_with("embedding"),
        "{doc}"
    );
    // A cold build's first tier carries the shipped static model's vectors.
    assert_eq!(doc["index"]["tier"], "static", "{doc}");
    assert!(err.contains("answered from the static tier"), "{err}");
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(status["pending_vectors"].as_u64().unwrap() > 0, "{status}");

    // The next build resumes: what was embedded before the kill comes from the cache.
    let out = run(iret().arg("index").arg(root));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let cached: u64 = err
        .rsplit_once(", ")
        .and_then(|(_, tail)| tail.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cached count in {err:?}"));
    assert!(
        cached >= done_before_kill,
        "{cached} texts came from the cache, {done_before_kill} were embedded before the kill: {err}"
    );
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["pending_vectors"], 0, "{status}");
    assert!(!progress.exists());
}

#[cfg(unix)]
#[test]
fn a_large_update_is_searchable_by_keyword_while_its_new_chunks_embed() {
    let repo = synthetic_repo(220);
    let root = repo.path();
    let out = run(iret().args(["index", "-q"]).arg(root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A branch switch: 150 of the 220 files now hold other functions.
    let words = [
        "ledger", "invoice", "parcel", "voucher", "tariff", "harbor", "quarry", "lantern",
    ];
    for f in 0..150 {
        let mut src = String::new();
        for i in 0..4 {
            let w = words[(f + i) % words.len()];
            // Long enough that each function is a chunk of its own.
            let body: String = (0..8)
                .map(|k| format!("  const step{k} = amount * {k} - {f} * {i};\n"))
                .collect();
            src.push_str(&format!(
                "export function {w}Phase{f}x{i}(amount: number) {{\n{body}  return step7;\n}}\n\n"
            ));
        }
        let dir = root.join(format!("src/{}", words[f % words.len()]));
        std::fs::write(dir.join(format!("module{f}.ts")), src).unwrap();
    }
    kill_during_embedding(root);
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pending = status["pending_vectors"].as_u64().unwrap();
    assert!(
        pending > 0 && pending < status["chunks"].as_u64().unwrap(),
        "{status}"
    );
    // The changed code is found by its new names; the unchanged files are still there.
    for (query, want) in [
        ("quarryPhase13x1", "src/harbor/module13.ts"),
        ("voucherStep200x3", "src/ledger/module200.ts"),
    ] {
        let doc = search_json(
            root,
            query,
            &["--no-refresh", "--no-index", "--cycles", "1"],
        );
        assert_eq!(paths(&doc)[0], want, "{query}: {doc}");
        assert!(
            doc["index"]["freshness"]
                .as_str()
                .unwrap()
                .starts_with("embedding"),
            "{doc}"
        );
    }
    let out = run(iret().args(["index", "-q"]).arg(root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["pending_vectors"], 0, "{status}");
}
