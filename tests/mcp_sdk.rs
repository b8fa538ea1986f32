//! `iret mcp` spoken to by the official MCP Python SDK (`mcp` on PyPI), an independent
//! client: the real binary, spawned by the SDK's stdio client, through
//! `scripts/mcp-bench.py` (the same client the MCP benchmark uses).
//!
//! `.ci/run` installs the SDK (`python3 -m pip install mcp==2.3.0`). Where it is not
//! installed these tests say so and pass, except under CI (`CI` set), where a missing SDK
//! is a failure: CI must run them.
mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp-bench.py")
}

/// Whether the SDK can be imported; under CI it must be.
fn sdk_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the MCP Python SDK is not installed (python3 -m pip install mcp==2.3.0): \
             CI must run the SDK tests"
        );
        eprintln!(
            "skipped: the MCP Python SDK is not installed (python3 -m pip install mcp==2.3.0)"
        );
    }
    ok
}

/// Runs `scripts/mcp-bench.py ARGS` against the real binary; its output on success.
fn client(args: &[&Path], mode: &str) -> String {
    let out = Command::new("python3")
        .arg(script())
        .arg("--bin")
        .arg(iret_bin())
        .arg(mode)
        .args(args)
        .env("IRET_EMBED_CACHE", embedding_cache())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the SDK client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_official_sdk_lists_the_tools_and_retrieves_both_worked_examples() {
    if !sdk_available() {
        return;
    }
    let repo = private_copy();
    let out = client(&[repo.path()], "--smoke");
    // The script asserts the four tool names and each task's file; check it got there.
    assert!(
        out.contains("tools: find_related, retrieve, search, status"),
        "{out}"
    );
    assert!(out.contains("src/auth/tokens.ts"), "{out}");
    assert!(out.contains("src/middleware/throttle.ts"), "{out}");
    assert!(out.trim_end().ends_with("smoke: ok"), "{out}");
}

#[test]
fn the_official_sdk_gets_whole_answers_within_300_1000_and_8000_tokens() {
    if !sdk_available() {
        return;
    }
    let repo = private_copy();
    let out = client(&[repo.path()], "--budgets");
    let calls: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(calls.len(), 6, "{out}");
    for c in &calls {
        let budget = c["budget"].as_u64().unwrap() as usize;
        let text = c["text"].as_str().unwrap();
        // Counted here, independently of the server: the whole text the client received.
        let tokens = count_tokens(text);
        assert!(tokens <= budget, "{tokens} tokens over {budget}: {text}");
        assert!(
            c["tokens"].as_u64().unwrap() as usize >= tokens.saturating_sub(2),
            "the server's figure is the whole answer's: {c}"
        );
        let files: Vec<&str> = c["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert!(!files.is_empty(), "{c}");
        if budget == 8000 {
            // Both worked examples, whole, within the default budget.
            let want = if c["task"].as_str().unwrap().contains("rate limiting") {
                "src/middleware/throttle.ts"
            } else {
                "src/auth/tokens.ts"
            };
            assert!(files.contains(&want), "{c}");
        }
    }
    // A small budget is used, not wasted: 300 holds less than 1,000, which holds less than 8,000.
    let size = |i: usize| calls[i]["tokens"].as_u64().unwrap();
    assert!(size(0) < size(1) && size(1) < size(2), "{out}");
}

#[test]
fn the_official_sdk_is_served_two_repositories_and_its_own_root_and_refused_outside() {
    if !sdk_available() {
        return;
    }
    let (a, b, c) = (private_copy(), private_copy(), private_copy());
    let out = client(&[a.path(), b.path(), c.path()], "--roots-check");
    // Three roots served, a path outside them refused, an edit in each seen.
    assert!(out.contains("outside:"), "{out}");
    assert_eq!(
        out.matches("first hit iret_roots_check_probe_").count(),
        3,
        "{out}"
    );
    assert!(out.trim_end().ends_with("roots check: ok"), "{out}");
}
