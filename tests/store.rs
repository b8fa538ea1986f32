//! `--store`: a team's index in Chroma, tested against the real server (`chroma run` from
//! the `chromadb` package on PyPI, which `.ci/run` installs). Each test starts its own
//! server on a free loopback port and stops it at the end.
//!
//! The server is `$IRET_TEST_CHROMA` (the `chroma` executable), else `chroma` on the PATH.
//! Without one the tests say so and pass, except under `CI=true`, where they fail.
mod common;
use common::chroma::*;
use common::mcp_client::Client;
use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_second_checkout_on_an_empty_cache_answers_the_worked_examples_from_the_store() {
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.url("team-fixture");
    let first = private_copy();
    let out = run(iret().args(["--store", &url, "index"]).arg(first.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    let added = number_before(&stderr(&out), "records added");
    assert!(added > 0, "{}", stderr(&out));
    assert_eq!(server.count("team-fixture"), added);

    // Another machine: another folder, nothing in its embedding cache.
    let cache = tempfile::tempdir().unwrap();
    let second = private_copy();
    std::fs::remove_dir_all(second.path().join(".iret")).unwrap();
    let out = run(fresh_machine(cache.path())
        .args(["--store", &url, "index"])
        .arg(second.path()));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("(0 embedded"), "{err}");
    assert_eq!(number_before(&err, "from the store"), added, "{err}");
    assert_eq!(number_before(&err, "records added"), 0, "{err}");

    let search = |task: &str| -> Value {
        let out = run(fresh_machine(cache.path())
            .args(["--store", &url, "search", task, "--json", "-C"])
            .arg(second.path()));
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_worked_examples(search);

    // `status --store` says what the store holds of this index.
    let out = run(fresh_machine(cache.path())
        .args(["--store", &url, "status", "--json"])
        .arg(second.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["store"]["chunks_present"], s["store"]["chunks"], "{s}");
}

#[test]
fn a_push_sends_only_what_changed_and_deletes_what_is_gone() {
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.url("team-updates");
    let repo = private_copy();
    let root = repo.path();
    let out = run(iret().args(["--store", &url, "index", "-q"]).arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    let before = server.count("team-updates");
    let first = server.version("team-updates");
    assert!(!first.is_empty());
    // A search through the store remembers, in the index folder, what the store holds.
    let out = run(iret()
        .args(["--store", &url, "search", "token expiry", "-C"])
        .arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    let memo = root.join(".iret/store-holding");
    assert_eq!(std::fs::read_dir(&memo).unwrap().count(), 1);

    // An unchanged index pushes nothing, and leaves the version as it was.
    let out = run(iret().args(["--store", &url, "index", "--force"]).arg(root));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(number_before(&err, "records added"), 0, "{err}");
    assert_eq!(number_before(&err, "deleted"), 0, "{err}");
    assert_eq!(server.version("team-updates"), first);

    // A new file: its chunks go up. A removed file: its chunks go away.
    std::fs::write(
        root.join("src/ledger.ts"),
        "export function reconcileLedger(entries: number[]): number {\n  return entries.reduce((a, b) => a + b, 0);\n}\n",
    )
    .unwrap();
    std::fs::remove_file(root.join("src/middleware/throttle.ts")).unwrap();
    let out = run(iret().args(["--store", &url, "index"]).arg(root));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let added = number_before(&err, "records added");
    let deleted = number_before(&err, "deleted");
    assert!(added >= 1 && deleted >= 1, "{err}");
    assert_eq!(server.count("team-updates"), before + added - deleted);
    // A push that changed records gives the collection a new version: readers ask again.
    assert_ne!(server.version("team-updates"), first);

    // A push cut short (records missing on the server) is completed by the next one.
    server.delete_some("team-updates", 7);
    let out = run(iret().args(["--store", &url, "index", "--force"]).arg(root));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(number_before(&err, "records added"), 7, "{err}");
    assert_eq!(server.count("team-updates"), before + added - deleted);
}

#[test]
fn a_bad_or_unreachable_store_is_a_clear_error_and_leaves_the_index_as_it_was() {
    let repo = private_copy();
    let root = repo.path();
    let out = run(iret().args(["index", "-q"]).arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    let live = generation(root);

    // Not an address.
    let out = run(iret().args(["--store", "http://x", "index"]).arg(root));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("chroma+https://HOST:PORT"),
        "{}",
        stderr(&out)
    );
    // Nothing listens there.
    let nobody = format!("chroma://127.0.0.1:{}/x-team", free_port());
    for args in [
        &["index"][..],
        &["search", "token expiry", "-C"][..],
        &["status"][..],
    ] {
        let out = run(iret().args(["--store", &nobody]).args(args).arg(root));
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(err.contains("cannot reach the store"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(generation(root), live);
}

#[test]
fn a_collection_of_another_model_is_refused() {
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.url("team-static");
    let repo = private_copy();
    let root = repo.path();
    // The collection is made by the shipped static model…
    let out = run(iret()
        .args(["--store", &url, "index", "--static", "-q"])
        .arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    let records = server.count("team-static");
    // …and the transformer's build is refused it, its local index untouched.
    let other = private_copy();
    let out = run(iret().args(["index", "-q"]).arg(other.path()));
    assert!(out.status.success());
    let live = generation(other.path());
    let out = run(iret().args(["--store", &url, "index"]).arg(other.path()));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("was made for"), "{err}");
    assert_eq!(generation(other.path()), live);
    let out = run(iret()
        .args(["--store", &url, "search", "token expiry", "-C"])
        .arg(other.path()));
    assert!(!out.status.success());
    assert!(stderr(&out).contains("was made for"), "{}", stderr(&out));
    assert_eq!(server.count("team-static"), records);
}

#[test]
fn a_server_gone_before_a_query_is_an_error_not_a_silently_worse_answer() {
    let Some(mut server) = Server::start() else {
        return;
    };
    let url = server.url("team-gone");
    let repo = private_copy();
    let root = repo.path();
    let out = run(iret().args(["--store", &url, "index", "-q"]).arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    let live = generation(root);
    server.kill();
    let out = run(iret()
        .args(["--store", &url, "search", "rate limiting", "--json", "-C"])
        .arg(root));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains("cannot reach the store"), "{err}");
    assert_eq!(generation(root), live);
    // Without --store the local index answers as ever.
    let doc = search_json(root, "rate limiting", &[]);
    assert_eq!(paths(&doc)[0], "src/middleware/throttle.ts", "{doc}");
}

#[test]
fn the_mcp_server_answers_from_the_store_on_an_empty_cache() {
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.url("team-mcp");
    let first = private_copy();
    let out = run(iret()
        .args(["--store", &url, "index", "-q"])
        .arg(first.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    let cache = tempfile::tempdir().unwrap();
    let second = private_copy();
    std::fs::remove_dir_all(second.path().join(".iret")).unwrap();
    let out = run(fresh_machine(cache.path())
        .args(["--store", &url, "index", "-q", "--no-push"])
        .arg(second.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut mcp = Client::start_command(
        fresh_machine(cache.path())
            .args(["--store", &url, "mcp"])
            .arg(second.path()),
        None,
    );
    let answer = mcp.call("retrieve", json!({"task": "rate limiting"}));
    let files = &answer["structuredContent"]["files"];
    assert_eq!(files[0]["path"], "src/middleware/throttle.ts", "{answer}");
}

#[test]
fn a_store_killed_under_a_serving_mcp_server_gives_tool_errors_until_it_is_back() {
    let Some(mut server) = Server::start() else {
        return;
    };
    let url = server.url("team-mcp-killed");
    let repo = private_copy();
    let out = run(iret()
        .args(["--store", &url, "index", "-q"])
        .arg(repo.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut mcp =
        Client::start_command(iret().args(["--store", &url, "mcp"]).arg(repo.path()), None);
    let task = json!({"task": "rate limiting"});
    let top = |result: &Value| result["structuredContent"]["files"][0]["path"].clone();
    let first = mcp.call("retrieve", task.clone());
    assert_eq!(top(&first), "src/middleware/throttle.ts", "{first}");

    // The store goes away under the serving process: an error reply, never an answer
    // without its vector leg, and the server keeps serving.
    server.kill();
    let gone = mcp.call("retrieve", task.clone());
    assert_eq!(gone["isError"], true, "{gone}");
    assert!(
        gone.to_string().contains("cannot reach the store"),
        "{gone}"
    );

    // Back on the same database: the same answer as before.
    server.restart();
    let back = mcp.call("retrieve", task);
    assert_eq!(top(&back), "src/middleware/throttle.ts", "{back}");
    assert_eq!(
        back["structuredContent"]["files"],
        first["structuredContent"]["files"]
    );
}

#[test]
fn a_server_killed_mid_push_fails_the_push_and_the_next_push_resumes() {
    let Some(mut server) = Server::start() else {
        return;
    };
    let url = server.url("team-killed");
    // Thousands of records (the static model indexes them in seconds): a push of several
    // batches, long enough to be cut.
    let repo = synthetic_repo(3000);
    let root = repo.path();
    let mut push = iret()
        .args(["--store", &url, "index", "--static", "-q"])
        .arg(root)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut cut = false;
    while started.elapsed() < Duration::from_secs(300) {
        if push.try_wait().unwrap().is_some() {
            break;
        }
        let count = server.try_count("team-killed").unwrap_or(0);
        if count > 0 {
            server.kill();
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = push.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if !cut {
        // The push finished before it could be cut (a fast machine): nothing to resume.
        assert!(out.status.success(), "{err}");
        return;
    }
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("cannot reach the store"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // The local index was built before the push: it answers without the store.
    let doc = search_json(root, "quarryStep13x1", &["--cycles", "1"]);
    assert_eq!(paths(&doc)[0], "src/harbor/module13.ts", "{doc}");

    server.restart();
    let kept = the_next_push_sends_the_rest(&server, "team-killed", root);
    assert!(kept > 0, "the push was cut after its first batch");
}

/// Pushes `root` again after a cut push: it succeeds, finds what the server kept and
/// sends only the rest. Returns how many records the server had kept.
fn the_next_push_sends_the_rest(server: &Server, collection: &str, root: &Path) -> usize {
    let kept = server.try_count(collection).unwrap_or(0);
    eprintln!("the push was cut with {kept} records on the server");
    let out = run(iret()
        .args([
            "--store",
            &server.url(collection),
            "index",
            "--static",
            "--force",
        ])
        .arg(root));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let added = number_before(&err, "records added");
    assert_eq!(number_before(&err, "already there"), kept, "{err}");
    assert!(added > 0, "{err}");
    assert_eq!(server.count(collection), added + kept);
    kept
}

#[test]
fn a_server_out_of_disk_fails_the_push_clearly_and_the_next_push_resumes() {
    // 4 MB holds a few hundred records; the push has thousands.
    let Some(mut server) = Server::start_on_small_disk() else {
        return;
    };
    let url = server.url("team-full");
    let repo = synthetic_repo(3000);
    let root = repo.path();
    let out = run(iret()
        .args(["--store", &url, "index", "--static", "-q"])
        .arg(root));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("the push stopped after"), "{err}");
    assert!(err.contains("sends only what is still missing"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let live = generation(root);
    assert!(!live.is_empty());

    // The local index answers, and so does the full store: what it lacks is searched here.
    let doc = search_json(root, "quarryStep13x1", &["--cycles", "1"]);
    assert_eq!(paths(&doc)[0], "src/harbor/module13.ts", "{doc}");
    let out = run(iret()
        .args([
            "--store",
            &url,
            "search",
            "quarryStep13x1",
            "--json",
            "--cycles",
            "1",
            "-C",
        ])
        .arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(paths(&doc)[0], "src/harbor/module13.ts", "{doc}");

    // Room again: the next push sends only what the store still lacks.
    server.grow();
    the_next_push_sends_the_rest(&server, "team-full", root);
}

#[test]
fn a_collection_of_another_index_format_is_refused() {
    let Some(server) = Server::start() else {
        return;
    };
    let repo = private_copy();
    let root = repo.path();
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = status["model_id"].clone();
    assert!(model.is_string(), "{status}");
    // The shipped model's dimensions: only the format differs.
    let dims = 384;
    // A collection an older iret made: same model, another index format.
    let metadata = serde_json::json!({
        "iret_model": model, "iret_dims": dims, "iret_format": 1, "iret_store_format": 1});
    make_collection(&server, "team-old", metadata);
    let live = generation(root);
    let url = server.url("team-old");
    let out = run(iret().args(["--store", &url, "index"]).arg(root));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("was made for") && err.contains("index format 1"),
        "{err}"
    );
    assert_eq!(generation(root), live);
    assert_eq!(server.count("team-old"), 0);
}

#[test]
fn a_collection_of_store_format_1_is_read_and_its_first_push_makes_it_format_2() {
    let Some(server) = Server::start() else {
        return;
    };
    let repo = private_copy();
    let root = repo.path();
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    // What an iret of store format 1 made: this model and index format, no refs.
    let metadata = serde_json::json!({
        "iret_model": status["model_id"], "iret_dims": 384,
        "iret_format": status["format_version"], "iret_store_format": 1});
    make_collection(&server, "team-f1", metadata.clone());
    let url = server.url("team-f1");
    let out = run(iret().args(["--store", &url, "index"]).arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    // As the older iret leaves it after its own push: every record there, format 1.
    let id = server.collection_id("team-f1");
    let (code, text) = http(
        server.port,
        "PUT",
        &format!("{DB}/collections/{id}"),
        Some(&serde_json::json!({ "new_metadata": metadata }).to_string()),
    )
    .unwrap();
    assert_eq!(code, 200, "{text}");
    // A push that has nothing to send still marks it format 2.
    let out = run(iret().args(["--store", &url, "index"]).arg(root));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(number_before(&err, "records added"), 0, "{err}");
    let (_, body) = http(
        server.port,
        "GET",
        &format!("{DB}/collections/team-f1"),
        None,
    )
    .unwrap();
    let v: Value = serde_json::from_str(&body).unwrap();
    // An iret of format 1 refuses it now: its push would delete other refs' records.
    assert_eq!(v["metadata"]["iret_store_format"], 2, "{v}");
    assert!(server.count("team-f1") > 0);
}
