//! `iret mcp` end to end: the real binary on a copy of the fixture, spoken to over stdio
//! with newline-delimited JSON-RPC (the MCP stdio transport), by the small client of
//! `tests/common/mcp_client.rs`, independent of the server's SDK.
mod common;
use common::mcp_client::Client;
use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

fn is_error(result: &Value) -> bool {
    result["isError"].as_bool().unwrap_or(false)
}

fn error_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn file_paths(answer: &Value) -> Vec<String> {
    answer["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn lists_four_tools_with_schemas() {
    let dir = private_copy();
    let mut c = Client::start(dir.path());
    let list = c.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["find_related", "retrieve", "search", "status"]);
    let retrieve = tools.iter().find(|t| t["name"] == "retrieve").unwrap();
    let props = &retrieve["inputSchema"]["properties"];
    for field in [
        "task",
        "keywords",
        "include",
        "exclude",
        "cycles",
        "min_relevance",
        "max_files",
        "budget_tokens",
    ] {
        assert!(
            props.get(field).is_some(),
            "retrieve lacks {field}: {retrieve}"
        );
    }
    assert_eq!(retrieve["inputSchema"]["required"], json!(["task"]));
    assert!(retrieve["outputSchema"].is_object(), "{retrieve}");
}

#[test]
fn retrieve_answers_both_worked_examples() {
    let dir = private_copy();
    let mut c = Client::start(dir.path());
    let r = c.call(
        "retrieve",
        json!({"task": "Fix the authentication token expiry bug"}),
    );
    assert!(!is_error(&r), "{r}");
    let answer = &r["structuredContent"];
    let files = file_paths(answer);
    for want in [
        "src/auth/auth.ts",
        "src/auth/tokens.ts",
        "src/auth/session-manager.ts",
        "src/auth/jwt-utils.ts",
    ] {
        assert!(
            files.contains(&want.to_string()),
            "missing {want}: {files:?}"
        );
    }
    assert!(!files.iter().any(|f| f.ends_with("user.ts")), "{files:?}");
    // Every file carries relevance (rounded), reason and code.
    for f in answer["files"].as_array().unwrap() {
        let x = f["relevance"].as_f64().unwrap();
        assert!(x >= 0.7 && (x * 1e4).round() == x * 1e4, "{x}");
        assert!(!f["reason"].as_str().unwrap().is_empty());
    }
    // The same answer is in the text content, for clients that read only text.
    let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, answer);

    let r = c.call(
        "retrieve",
        json!({"task": "Add rate limiting to API endpoints", "trace": true}),
    );
    let answer = &r["structuredContent"];
    let files = file_paths(answer);
    assert!(
        files.contains(&"src/middleware/throttle.ts".to_string()),
        "{files:?}"
    );
    let learned: Vec<String> = answer["cycles"][0]["learned"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["word"].as_str().unwrap().to_lowercase())
        .collect();
    assert!(
        learned.iter().any(|w| w.contains("throttle")),
        "{learned:?}"
    );
    assert!(!answer["next"]["keywords"].as_array().unwrap().is_empty());
}

#[test]
fn budget_tokens_bounds_the_whole_answer_and_says_what_was_left_out() {
    let dir = private_copy();
    let mut c = Client::start(dir.path());
    let task = json!("Fix the authentication token expiry bug");
    let full = c.call("retrieve", json!({"task": task, "budget_tokens": 100000}));
    let full_tokens = full["structuredContent"]["budget"]["tokens"]
        .as_u64()
        .unwrap();
    assert!(
        full_tokens > 400,
        "the fixture answer is larger than the budget: {full_tokens}"
    );
    let small = c.call("retrieve", json!({"task": task, "budget_tokens": 400}));
    let text = small["content"][0]["text"].as_str().unwrap();
    assert!(count_tokens(text) <= 400, "{text}");
    let b = &small["structuredContent"]["budget"];
    assert!(b["tokens"].as_u64().unwrap() <= 400, "{b}");
    let left_out = b["omitted_chunks"].as_u64().unwrap() + b["omitted_files"].as_u64().unwrap();
    assert!(left_out > 0, "{b}");
    let kept: u64 = small["structuredContent"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["chunks"].as_array().unwrap())
        .map(|c| c["tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(kept, b["code_tokens"].as_u64().unwrap());
    // The trace is opt-in; `next` is always there.
    assert!(small["structuredContent"].get("cycles").is_none());
    assert!(small["structuredContent"]["next"].is_object());
    // By default an answer stays far under the 25k-token cap of agent clients.
    let default = c.call("retrieve", json!({"task": task}));
    let text = default["content"][0]["text"].as_str().unwrap();
    assert!(count_tokens(text) <= 8000);
    // Too small a budget to hold any answer is refused, and says why.
    let refused = c.call("retrieve", json!({"task": task, "budget_tokens": 20}));
    assert!(is_error(&refused), "{refused}");
    assert!(error_text(&refused).contains("at least 100"), "{refused}");
}

#[test]
fn malformed_calls_get_tool_errors_and_the_server_keeps_serving() {
    let dir = private_copy();
    let mut c = Client::start(dir.path());
    for args in [
        json!({"task": 5}),
        json!({}),
        json!({"task": "x", "cycles": "three"}),
        json!({"task": "x", "cycles": 0}),
        json!({"task": "x", "min_relevance": 3}),
        json!({"task": "   "}),
    ] {
        let r = c.call("retrieve", args.clone());
        assert!(is_error(&r), "{args} should be a tool error: {r}");
        assert!(!error_text(&r).is_empty());
    }
    let r = c.call("search", json!({"query": "token", "k": 1000}));
    assert!(is_error(&r), "{r}");
    let r = c.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert!(r.get("error").is_some() || is_error(&r["result"]), "{r}");
    // Still serving.
    let s = c.call("status", json!({}));
    assert!(!is_error(&s), "{s}");
    assert!(s["structuredContent"]["files"].as_u64().unwrap() > 10);
    assert_eq!(s["structuredContent"]["embedded_share"], 1.0);
}

#[test]
fn paths_outside_the_root_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.ts"),
        "export const secret = 1;\n",
    )
    .unwrap();
    let dir = private_copy();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), dir.path().join("src/escape")).unwrap();
    let mut c = Client::start(dir.path());
    for args in [
        json!({"path": "../secret.ts"}),
        json!({"path": outside.path().join("secret.ts")}),
        json!({"path": "src/../../secret.ts"}),
        json!({"path": "src/escape/secret.ts"}),
    ] {
        let r = c.call("find_related", args.clone());
        assert!(is_error(&r), "{args}: {r}");
    }
    for args in [
        json!({"task": "token", "include": ["../**"]}),
        json!({"task": "token", "exclude": ["/etc"]}),
    ] {
        let r = c.call("retrieve", args.clone());
        assert!(is_error(&r), "{args}: {r}");
        assert!(error_text(&r).contains("root"), "{r}");
    }
    // Nothing from outside was indexed through the link either.
    let r = c.call("search", json!({"query": "secret"}));
    let hits = r["structuredContent"]["chunks"].as_array().unwrap();
    assert!(
        hits.iter()
            .all(|h| !h["path"].as_str().unwrap().contains("escape")),
        "{r}"
    );
    // Inside the root it answers.
    let r = c.call("find_related", json!({"path": "src/auth/auth.ts"}));
    assert!(!is_error(&r), "{r}");
    let related = r["structuredContent"]["related"].as_array().unwrap();
    assert!(!related.is_empty());
    assert!(related
        .iter()
        .all(|x| !x["reasons"].as_array().unwrap().is_empty()));
}

#[test]
fn concurrent_calls_are_each_answered_correctly() {
    let dir = private_copy();
    let mut c = Client::start(dir.path());
    let tasks = [
        (
            "Fix the authentication token expiry bug",
            "src/auth/tokens.ts",
        ),
        (
            "Add rate limiting to API endpoints",
            "src/middleware/throttle.ts",
        ),
        (
            "Fix the authentication token expiry bug",
            "src/auth/auth.ts",
        ),
        (
            "Add rate limiting to API endpoints",
            "src/middleware/throttle.ts",
        ),
    ];
    let ids: Vec<u64> = tasks
        .iter()
        .map(|(t, _)| {
            c.submit(
                "tools/call",
                json!({"name": "retrieve", "arguments": {"task": t}}),
            )
        })
        .collect();
    let status = c.submit("tools/call", json!({"name": "status", "arguments": {}}));
    for (id, (task, want)) in ids.into_iter().zip(tasks) {
        let r = c.wait(id);
        let files = file_paths(&r["result"]["structuredContent"]);
        assert!(files.contains(&want.to_string()), "{task}: {files:?}");
    }
    assert!(!is_error(&c.wait(status)["result"]));
}

#[test]
fn without_the_watcher_a_call_after_an_edit_refreshes_first() {
    let dir = private_copy();
    let mut c = Client::start_flags(&[dir.path()], &["--no-watch"], None);
    let before = c.call("search", json!({"query": "calculateRefundWindow"}));
    let paths = |r: &Value| -> Vec<String> {
        r["structuredContent"]["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!paths(&before).contains(&"src/billing/refunds.ts".to_string()));
    std::fs::create_dir_all(dir.path().join("src/billing")).unwrap();
    std::fs::write(
        dir.path().join("src/billing/refunds.ts"),
        "export function calculateRefundWindow(days: number) {\n  return days * 24;\n}\n",
    )
    .unwrap();
    let after = c.call("search", json!({"query": "calculateRefundWindow"}));
    assert_eq!(paths(&after)[0], "src/billing/refunds.ts", "{after}");
    assert!(
        after["structuredContent"]["index"]["freshness"]
            .as_str()
            .unwrap()
            .starts_with("refreshed"),
        "{after}"
    );
    let status = c.call("status", json!({}));
    assert_eq!(status["structuredContent"]["stale_files"], 0);
}

#[test]
fn the_watcher_takes_an_edit_in_before_the_next_call() {
    let dir = private_copy();
    let mut c = Client::start(dir.path());
    c.call("search", json!({"query": "warm up"}));
    std::fs::create_dir_all(dir.path().join("src/billing")).unwrap();
    std::fs::write(
        dir.path().join("src/billing/refunds.ts"),
        "export function calculateRefundWindow(days: number) {\n  return days * 24;\n}\n",
    )
    .unwrap();
    // No call is made: the index takes the edit in by itself (status only looks).
    let mut stale = 1;
    for _ in 0..300 {
        let status = c.call("status", json!({}));
        stale = status["structuredContent"]["stale_files"].as_u64().unwrap();
        if stale == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(stale, 0, "the watcher never updated the index");
    let after = c.call("search", json!({"query": "calculateRefundWindow"}));
    let first = &after["structuredContent"]["chunks"][0];
    assert_eq!(first["path"], "src/billing/refunds.ts", "{after}");
    // Answered from the index as the watcher left it: this call refreshed nothing.
    assert_eq!(
        after["structuredContent"]["index"]["freshness"], "fresh",
        "{after}"
    );
}

#[test]
fn an_index_of_an_older_format_is_rebuilt_and_served() {
    let dir = private_copy();
    let iret_dir = dir.path().join(".iret");
    let gen = std::fs::read_to_string(iret_dir.join("CURRENT")).unwrap();
    let manifest = iret_dir.join(gen.trim()).join("manifest.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    doc["format_version"] = 1.into();
    std::fs::write(&manifest, serde_json::to_vec(&doc).unwrap()).unwrap();
    let mut c = Client::start(dir.path());
    let r = c.call(
        "retrieve",
        json!({"task": "Fix the authentication token expiry bug"}),
    );
    assert!(!is_error(&r), "{r}");
    assert!(
        file_paths(&r["structuredContent"])
            .iter()
            .any(|p| p.contains("token")),
        "{r}"
    );
    let live = iret_dir.join(
        std::fs::read_to_string(iret_dir.join("CURRENT"))
            .unwrap()
            .trim(),
    );
    let rebuilt: Value =
        serde_json::from_slice(&std::fs::read(live.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        rebuilt["format_version"],
        iret_engine::maintain::FORMAT_VERSION
    );
}

#[cfg(unix)]
#[test]
fn a_keyword_tier_left_by_a_killed_build_answers_at_once_and_is_completed_in_the_background() {
    let repo = synthetic_repo(220);
    let root = repo.path();
    kill_during_embedding(root);
    let mut c = Client::start(root);
    let r = c.call("search", json!({"query": "quarryStep13x1"}));
    let answer = &r["structuredContent"];
    assert!(
        answer["index"]["freshness"]
            .as_str()
            .unwrap()
            .starts_with("embedding"),
        "{answer}"
    );
    assert_eq!(
        answer["chunks"][0]["path"], "src/harbor/module13.ts",
        "{answer}"
    );
    assert_eq!(answer["index"]["tier"], "static", "{answer}");
    // The server finishes the embedding on its own; status follows it to the end.
    let started = std::time::Instant::now();
    loop {
        let s = c.call("status", json!({}));
        if s["structuredContent"]["embedded_share"] == 1.0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{s}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = c.call("search", json!({"query": "quarryStep13x1"}));
    assert_eq!(r["structuredContent"]["index"]["freshness"], "fresh", "{r}");
    assert_eq!(r["structuredContent"]["index"]["tier"], "full", "{r}");
    assert_eq!(
        r["structuredContent"]["chunks"][0]["path"],
        "src/harbor/module13.ts"
    );
}

#[cfg(unix)]
#[test]
fn an_edit_during_the_background_embedding_is_taken_in_without_a_call_waiting() {
    let repo = synthetic_repo(220);
    let root = repo.path();
    kill_during_embedding(root);
    let mut c = Client::start(root);
    std::fs::write(
        root.join("src/lanternQuay.ts"),
        "export function lanternQuayTally(n: number) {\n  return n * 7;\n}\n",
    )
    .unwrap();
    // Answered from the first tier at once: the update goes to the background build
    // (which, on a slow build of the tests, may already have finished: then the answer
    // is the full index's).
    let r = c.call("search", json!({"query": "lanternQuayTally"}));
    assert!(!is_error(&r), "{r}");
    let index = &r["structuredContent"]["index"];
    assert!(
        index["freshness"]
            .as_str()
            .unwrap()
            .starts_with("embedding")
            || index["tier"] == "full",
        "{r}"
    );
    // The background build commits a keyword tier with the new file, then the whole index.
    let started = std::time::Instant::now();
    loop {
        let r = c.call("search", json!({"query": "lanternQuayTally"}));
        let chunks = &r["structuredContent"]["chunks"];
        if chunks[0]["path"] == "src/lanternQuay.ts"
            && r["structuredContent"]["index"]["freshness"] == "fresh"
        {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{r}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// An agent passes an issue report as it is: prose, a code block, a stack trace and the
/// message it printed. `retrieve` reads the evidence (the quoted message is raised in
/// `session-manager.ts`, the trace names it) and its answer stays within the budget.
#[test]
fn retrieve_takes_an_issue_report_as_it_is_within_the_budget() {
    let dir = private_copy();
    let mut c = Client::start(dir.path());
    let issue = "Refreshing a session after a restart fails with \"unknown refresh token\"\n\
        \n\
        **Describe the bug**\n\
        After the server restarts, every client that tries to refresh its session gets an \
        error, although the refresh token it sends was issued a minute before. Users are \
        logged out and have to sign in again. It looks like the tokens issued before the \
        restart are forgotten.\n\
        \n\
        **To reproduce**\n\
        ```ts\n\
        const pair = await sessions.create(user);\n\
        await restart();\n\
        await sessions.refresh(pair.refreshToken);\n\
        ```\n\
        \n\
        ```\n\
        Error: unknown refresh token\n\
            at SessionManager.refresh (src/auth/session-manager.ts:34:13)\n\
            at processTicksAndRejections (node:internal/process/task_queues:95:5)\n\
        ```\n\
        \n\
        **Expected behavior**\n\
        A refresh token stays valid until it expires, across restarts.\n\
        \n\
        **Environment**: node 20, linux, the latest release.";
    let answer = c.call("retrieve", json!({"task": issue, "budget_tokens": 1500}));
    assert!(!is_error(&answer), "{}", error_text(&answer));
    let files = file_paths(&answer["structuredContent"]);
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/auth/session-manager.ts"),
        "{files:?}"
    );
    let used = answer["structuredContent"]["budget"]["tokens"]
        .as_u64()
        .unwrap();
    assert!(
        used > 0 && used <= 1500,
        "{}",
        answer["structuredContent"]["budget"]
    );
}

/// A small repository of its own: one Python module.
fn small_repo(module: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(module);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    dir
}

fn first_path(answer: &Value) -> String {
    answer["chunks"][0]["path"]
        .as_str()
        .or_else(|| answer["files"][0]["path"].as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn one_process_serves_two_repositories_and_the_clients_roots() {
    let a = private_copy();
    let b = small_repo(
        "billing/invoice.py",
        "def compute_invoice_total(lines):\n    return sum(l.amount for l in lines)\n",
    );
    let c = small_repo(
        "shipping/parcel.py",
        "def parcel_weight_limit(parcel):\n    return parcel.kind == 'heavy'\n",
    );
    let elsewhere = small_repo("x.py", "x = 1\n");
    let mut client = Client::start_with(&[a.path(), b.path()], Some(vec![c.path().to_path_buf()]));
    // The client's root joins the two of the command line once the server has asked.
    let mut roots = Vec::new();
    for _ in 0..100 {
        let status = client.call("status", json!({}));
        roots = status["structuredContent"]["roots"]
            .as_array()
            .unwrap()
            .clone();
        if roots.len() == 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(roots.len(), 3, "{roots:?}");
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(roots[0]["root"], canon(a.path()));
    assert_eq!(roots[0]["opened"], true);
    assert_eq!(roots[1]["opened"], false, "opened on first use only");

    // No root: the first repository.
    let r = client.call("retrieve", json!({"task": "token expiry bug"}));
    assert!(!is_error(&r), "{}", error_text(&r));
    assert!(file_paths(&r["structuredContent"])
        .iter()
        .any(|p| p.starts_with("src/auth/")));
    // A root, or a folder inside one.
    for root in [b.path().to_path_buf(), b.path().join("billing")] {
        let r = client.call(
            "search",
            json!({"query": "compute_invoice_total", "root": root}),
        );
        assert!(!is_error(&r), "{}", error_text(&r));
        assert_eq!(first_path(&r["structuredContent"]), "billing/invoice.py");
    }
    let r = client.call(
        "search",
        json!({"query": "parcel weight limit", "root": c.path()}),
    );
    assert!(!is_error(&r), "{}", error_text(&r));
    assert_eq!(first_path(&r["structuredContent"]), "shipping/parcel.py");
    let status = client.call("status", json!({"root": b.path()}));
    assert_eq!(status["structuredContent"]["root"], canon(b.path()));
    assert_eq!(status["structuredContent"]["files"], 1);

    // Outside every root, and a path leaving the named root: refused, still serving.
    let r = client.call("search", json!({"query": "x", "root": elsewhere.path()}));
    assert!(is_error(&r));
    assert!(
        error_text(&r).contains("outside every served repository"),
        "{}",
        error_text(&r)
    );
    let escape = format!(
        "../{}/src/auth/session.ts",
        a.path().file_name().unwrap().to_str().unwrap()
    );
    let r = client.call("find_related", json!({"path": escape, "root": b.path()}));
    assert!(is_error(&r), "{r}");

    // An edit in either repository is seen by the next call.
    std::fs::write(
        b.path().join("billing/refund.py"),
        "def issue_partial_refund(invoice, amount):\n    return invoice.total - amount\n",
    )
    .unwrap();
    let r = client.call(
        "search",
        json!({"query": "issue_partial_refund", "root": b.path()}),
    );
    assert_eq!(first_path(&r["structuredContent"]), "billing/refund.py");
    std::fs::write(
        a.path().join("src/auth/lockout.ts"),
        "export function lockAccountAfterFailures(count: number) {\n  return count > 5;\n}\n",
    )
    .unwrap();
    let r = client.call("search", json!({"query": "lockAccountAfterFailures"}));
    assert_eq!(first_path(&r["structuredContent"]), "src/auth/lockout.ts");
}

#[test]
fn a_static_index_is_served_with_the_static_model() {
    let dir = private_copy();
    let out = run(iret().args(["index", "--static", "-q"]).arg(dir.path()));
    assert!(out.status.success());
    let mut c = Client::start(dir.path());
    let r = c.call(
        "retrieve",
        json!({"task": "token expiry", "min_relevance": 0.0}),
    );
    assert!(!is_error(&r), "{r}");
    assert!(!file_paths(&r["structuredContent"]).is_empty(), "{r}");
    let s = c.call("status", json!({}));
    let model = s["structuredContent"]["model"].as_str().unwrap_or_default();
    assert!(model.starts_with("static-"), "{s}");
}

#[test]
fn a_first_build_in_the_background_uses_the_servers_model() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join(".iret"));
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/static-minilm");
    let mut c = Client::start_flags(
        &[dir.path()],
        &["--model-dir", model.to_str().unwrap()],
        None,
    );
    let s = c.call("status", json!({}));
    let status = &s["structuredContent"];
    let model = status["model"].as_str().unwrap_or_default();
    assert!(model.starts_with("static-"), "{s}");
    // Built once, by the background build, with this model: not built with the default
    // model and then rebuilt by the server.
    assert_eq!(status["generation"], "gen-000001", "{s}");
}
