//! The `iret` binary end to end: index, search (text, JSON, stdin JSON, globs), errors on
//! missing/corrupt indexes and hostile input.
mod common;
use common::*;

#[test]
fn token_expiry_single_shot_puts_a_token_file_in_the_top_3() {
    let doc = search_json(
        indexed_fixture(),
        "token expiry",
        &["--cycles", "1", "--min-relevance", "0"],
    );
    let top3: Vec<String> = paths(&doc).into_iter().take(3).collect();
    assert!(
        top3.iter()
            .any(|p| p.ends_with("tokens.ts") || p.ends_with("jwt-utils.ts")),
        "{top3:?}"
    );
}

#[test]
fn text_output_is_path_and_lines() {
    let out = run(iret()
        .args(["search", "token expiry", "-C"])
        .arg(indexed_fixture()));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("src/auth/") && l.contains(".ts:")),
        "{text}"
    );
}

#[test]
fn include_and_exclude_globs_apply_before_ranking() {
    let doc = search_json(
        indexed_fixture(),
        "token expiry",
        &["--min-relevance", "0", "--include", "src/middleware/**"],
    );
    let files = paths(&doc);
    assert!(!files.is_empty());
    assert!(
        files.iter().all(|p| p.starts_with("src/middleware/")),
        "{files:?}"
    );

    let doc = search_json(
        indexed_fixture(),
        "token expiry",
        &["--min-relevance", "0", "--exclude", "auth"],
    );
    assert!(
        paths(&doc).iter().all(|p| !p.contains("/auth/")),
        "{:?}",
        paths(&doc)
    );
}

#[test]
fn a_glob_flag_takes_one_glob_so_the_task_may_follow_it() {
    let out = run(iret().args([
        "search",
        "-C",
        indexed_fixture().to_str().unwrap(),
        "-g",
        "src/middleware/**",
        "-x",
        "**/cors*",
        "rate limiting",
        "--json",
        "--min-relevance",
        "0",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["query"]["task"], "rate limiting");
    let found = paths(&doc);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|p| p.starts_with("src/middleware/")),
        "{found:?}"
    );
    assert!(found.iter().all(|p| !p.contains("cors")), "{found:?}");
    let zero = run(iret().args(["search", "x", "--top", "0"]));
    assert_eq!(zero.status.code(), Some(2));
}

#[test]
fn stdin_json_query() {
    use std::io::Write;
    let mut child = iret()
        .args(["search", "--stdin-json", "--json", "-C"])
        .arg(indexed_fixture())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"task": "token expiry", "keywords": ["isTokenExpired"], "include": ["src/auth/**"]}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["query"]["keywords"][0], "isTokenExpired");
    assert!(paths(&doc).iter().all(|p| p.starts_with("src/auth/")));
}

#[test]
fn search_with_no_index_allowed_says_to_run_iret_index() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(iret()
        .args(["search", "anything", "--no-index", "-C"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("iret index"), "{err}");
    assert!(!dir.path().join(".iret/CURRENT").exists());
}

#[test]
fn a_tree_its_ignore_file_hides_is_explained_and_indexed_with_no_ignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Debian's packaged kernel source ignores its whole top level.
    std::fs::write(root.join(".gitignore"), "*.o\n# packaging\n/*\n!/debian/\n").unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::write(
        root.join("lib/crc32.c"),
        "unsigned int crc32(const char *p, int n) {\n  return n;\n}\n",
    )
    .unwrap();
    let out = run(iret().arg("index").arg(root));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(".gitignore line 3 (`/*`)") && err.contains("--no-ignore"),
        "{err}"
    );
    // A search says the same instead of an empty answer.
    let out = run(iret().args(["search", "crc32 checksum", "-C"]).arg(root));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".gitignore line 3"));

    let out = run(iret().args(["index", "--no-ignore"]).arg(root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Remembered: a search refreshes the index the same way, status sees nothing stale.
    let out = run(iret()
        .args(["search", "crc32 checksum", "--json", "-C"])
        .arg(root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        paths(&doc).first().map(String::as_str),
        Some("lib/crc32.c"),
        "{doc}"
    );
    let out = run(iret().args(["status", "--json"]).arg(root));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["files"], 1, "{status}");
    assert_eq!(
        status["added"].as_array().map(Vec::len),
        Some(0),
        "{status}"
    );
    assert_eq!(status["no_ignore"], true, "{status}");
    // --ignore goes back to honouring the ignore file.
    let out = run(iret().args(["index", "--ignore"]).arg(root));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn search_in_a_repository_never_indexed_indexes_it_first() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    // A working tree may hold an index of the fixture (the README's first command).
    let _ = std::fs::remove_dir_all(dir.path().join(".iret"));
    let out = run(iret()
        .args(["search", "token expiry", "--json", "-C"])
        .arg(dir.path()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("indexing it first"), "{err}");
    assert!(dir.path().join(".iret/CURRENT").is_file());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        paths(&doc).iter().any(|p| p.starts_with("src/auth/")),
        "{doc}"
    );
}

#[test]
fn search_and_status_from_a_subdirectory_use_the_repository_index() {
    let root = indexed_fixture();
    let sub = root.join("src/auth");
    let out = run(iret()
        .args(["search", "token expiry", "--json", "--no-index"])
        .current_dir(&sub));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Paths are relative to the repository root, not to the subdirectory.
    assert!(
        paths(&doc).iter().any(|p| p == "src/auth/tokens.ts"),
        "{doc}"
    );
    assert!(!sub.join(".iret").exists());
    let out = run(iret().args(["status", "--json"]).current_dir(&sub));
    assert!(out.status.success());
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(s["files"].as_u64().unwrap() > 10, "{s}");
}

#[test]
fn budget_bounds_the_whole_answer_as_printed_json_or_text() {
    let task = "Fix the authentication token expiry bug";
    let doc = search_json(indexed_fixture(), task, &["--budget", "300"]);
    let b = &doc["budget"];
    assert_eq!(b["limit"], 300);
    let printed = serde_json::to_string_pretty(&doc).unwrap();
    assert!(count_tokens(&printed) <= 300, "{printed}");
    assert!(b["tokens"].as_u64().unwrap() <= 300, "{b}");
    let left_out = b["omitted_chunks"].as_u64().unwrap() + b["omitted_files"].as_u64().unwrap();
    assert!(left_out > 0, "{b}");
    let kept: u64 = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["chunks"].as_array().unwrap())
        .map(|c| c["tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(kept, b["code_tokens"].as_u64().unwrap());
    assert!(doc.get("cycles").is_none(), "the trace is opt-in: {doc}");

    for budget in ["100", "300"] {
        let out = run(iret()
            .args(["search", task, "--budget", budget, "-C"])
            .arg(indexed_fixture()));
        let text = String::from_utf8_lossy(&out.stdout);
        let limit: usize = budget.parse().unwrap();
        assert!(count_tokens(&text) <= limit, "{text}");
        assert!(text.contains("src/auth/"), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("-token budget"), "{err}");
    }
    let out = run(iret()
        .args(["search", task, "--budget", "50", "-C"])
        .arg(indexed_fixture()));
    assert!(!out.status.success());
}

#[test]
fn json_scores_are_rounded_and_fewer_files_are_the_head_of_the_list() {
    let doc = search_json(indexed_fixture(), "token expiry", &["--min-relevance", "0"]);
    // The files are listed in the loop's order: asking for two gives the first two.
    let two = search_json(
        indexed_fixture(),
        "token expiry",
        &["--min-relevance", "0", "--top", "2"],
    );
    let all = paths(&doc);
    assert!(all.len() > 2, "{all:?}");
    assert_eq!(paths(&two), all[..2], "{all:?}");
    let text = serde_json::to_string(&doc).unwrap();
    // No float noise such as 0.9599999785423279 anywhere in the answer.
    let long = text
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|n| n.contains('.'))
        .find(|n| n.split('.').nth(1).is_some_and(|d| d.len() > 4));
    assert!(long.is_none(), "unrounded number {long:?}");
}

#[test]
fn index_of_a_missing_folder_fails_cleanly() {
    let out = run(iret().args(["index", "/nonexistent/iret-test-path"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

#[test]
fn search_in_a_missing_folder_says_so_and_indexes_nothing() {
    let out = run(iret().args(["search", "-C", "/nonexistent/iret-test-path", "a task"]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/iret-test-path does not exist"),
        "{err}"
    );
    assert!(!err.contains("indexing it first"), "{err}");
}

#[test]
fn corrupt_index_is_a_clear_error_then_rebuilds() {
    let dir = private_copy();
    let gen = std::fs::read_to_string(dir.path().join(".iret/CURRENT")).unwrap();
    let chunks = dir.path().join(".iret").join(gen.trim()).join("chunks.dat");
    let len = std::fs::metadata(&chunks).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&chunks)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let out = run(iret()
        .args(["search", "token expiry", "-C"])
        .arg(dir.path()));
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unreadable") && err.contains("iret index"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    let out = run(iret().arg("index").arg(dir.path()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = search_json(dir.path(), "token expiry", &["--min-relevance", "0"]);
    assert!(!paths(&doc).is_empty());
}

#[test]
fn an_index_of_an_older_format_is_named_and_rebuilt() {
    let dir = private_copy();
    let iret_dir = dir.path().join(".iret");
    let gen = std::fs::read_to_string(iret_dir.join("CURRENT")).unwrap();
    let manifest = iret_dir.join(gen.trim()).join("manifest.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    doc["format_version"] = 1.into();
    std::fs::write(&manifest, serde_json::to_vec(&doc).unwrap()).unwrap();

    // Told what it is and what to do, when searching may not index.
    let out = run(iret()
        .args(["search", "token expiry", "--no-index", "-C"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("index format 1") && err.contains("run `iret index`"),
        "{err}"
    );

    // By default the search rebuilds it (from the embedding cache) and answers.
    let out = run(iret()
        .args(["search", "token expiry", "--json", "-C"])
        .arg(dir.path()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("rebuilding the index"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!paths(&doc).is_empty(), "{doc}");
    let gen = std::fs::read_to_string(iret_dir.join("CURRENT")).unwrap();
    let rebuilt: serde_json::Value = serde_json::from_slice(
        &std::fs::read(iret_dir.join(gen.trim()).join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        rebuilt["format_version"],
        iret_engine::maintain::FORMAT_VERSION,
        "rebuilt in this iret's format"
    );
}

#[test]
fn hostile_files_are_skipped_and_counted() {
    let dir = private_copy();
    let root = dir.path();
    std::fs::write(root.join("src/blob.ts"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    std::fs::write(root.join("src/latin1.ts"), b"const caf\xe9 = 1;\n").unwrap();
    // 50 MB (sparse: skipped on its size, never read).
    std::fs::File::create(root.join("src/huge.ts"))
        .unwrap()
        .set_len(50 << 20)
        .unwrap();
    // Minified by its content; generated by its name.
    std::fs::write(root.join("src/packed.js"), "var a=1;".repeat(4000)).unwrap();
    std::fs::write(root.join("src/app.min.js"), "var a=1;\n").unwrap();
    std::fs::write(
        root.join("src/broken.ts"),
        "export class { function ((( {{{ <<<",
    )
    .unwrap();
    // 20,000 levels of nesting, one per line (so not "minified"): a recursive tree walk
    // would overflow its stack.
    std::fs::write(
        root.join("src/deep.ts"),
        format!(
            "{}{}",
            "function f() {\n".repeat(20_000),
            "}\n".repeat(20_000)
        ),
    )
    .unwrap();
    std::fs::write(
        root.join("src/deep.py"),
        format!("x = {}1{}\n", "(\n".repeat(20_000), ")\n".repeat(20_000)),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        std::os::unix::fs::symlink(root.join("src"), root.join("src/loop")).unwrap();
        let bad_name = std::ffi::OsStr::from_bytes(b"src/bad\xffname.ts");
        std::fs::write(root.join(bad_name), "export const x = 1;\n").unwrap();
        let locked = root.join("src/locked.ts");
        std::fs::write(&locked, "export const secret = 1;\n").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    // Root reads files whatever their mode: only expect "unreadable" when it really is.
    let unreadable = std::fs::read(root.join("src/locked.ts")).is_err();
    let out = run(iret().arg("index").arg(root));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = String::from_utf8_lossy(&out.stderr);
    let mut reasons = vec![
        "binary",
        "invalid UTF-8",
        "over 1 MB",
        "minified",
        "1 generated",
    ];
    if cfg!(unix) {
        reasons.push("1 non-UTF-8 name");
    }
    if unreadable {
        reasons.push("1 unreadable");
    }
    for reason in reasons {
        assert!(
            summary.contains(reason),
            "summary lacks {reason}: {summary}"
        );
    }
    let status = run(iret().arg("status").arg(root));
    assert!(status.status.success());
    let nested = search_json(root, "function f", &["--min-relevance", "0"]);
    assert!(
        paths(&nested).iter().any(|p| p == "src/deep.ts"),
        "deeply nested code is indexed, not skipped"
    );
    let doc = search_json(root, "token expiry", &["--min-relevance", "0"]);
    assert!(
        !paths(&doc).iter().any(|p| p.contains("loop/")),
        "symlinks are not followed"
    );
}

#[test]
fn empty_task_is_rejected() {
    let out = run(iret().args(["search", "  ", "-C"]).arg(indexed_fixture()));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));
}

#[test]
fn a_copied_binary_runs_from_an_empty_folder_on_its_bundled_model() {
    // As after `cargo install`: the binary alone, no checkout beside it, a fresh cache.
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("iret");
    std::fs::copy(env!("CARGO_BIN_EXE_iret"), &exe).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let repo = private_copy();
    let out = std::process::Command::new(&exe)
        .args(["search", "token expiry", "--json", "-C"])
        .arg(repo.path())
        .current_dir(empty.path())
        .env("IRET_CACHE_DIR", cache.path())
        .env_remove("IRET_MODEL_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        paths(&doc).iter().any(|p| p.starts_with("src/auth/")),
        "{doc}"
    );
    let models: Vec<_> = std::fs::read_dir(cache.path().join("models"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(models.len(), 1);
    assert!(models[0].path().join("model.onnx").is_file());
    // A model folder named explicitly but missing is an error, not a silent fallback.
    let out = std::process::Command::new(&exe)
        .args(["search", "token expiry", "-C"])
        .arg(repo.path())
        .env("IRET_CACHE_DIR", cache.path())
        .env("IRET_MODEL_DIR", empty.path().join("nothing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no embedding model found"));
}

#[test]
fn a_damaged_cache_of_the_grammars_is_named_then_written_again() {
    // The grammars are written to the cache once; a copy damaged there (same length,
    // other bytes) must stop a build with a sentence, not chunk everything as plain lines.
    let cache = tempfile::tempdir().unwrap();
    let repo = private_copy();
    let index = |root: &std::path::Path| {
        iret()
            .args(["index", "--static"])
            .arg(root)
            .env("IRET_CACHE_DIR", cache.path())
            .output()
            .unwrap()
    };
    let out = index(repo.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("grammars-"))
        .expect("the grammars were written to the cache")
        .path()
        .join("libiret-grammars.so");
    let len = std::fs::metadata(&lib).unwrap().len() as usize;
    std::fs::write(&lib, vec![0u8; len]).unwrap();
    let other = private_copy();
    let out = index(other.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("grammars cannot be loaded"), "{err}");
    assert!(err.contains("libiret-grammars.so"), "{err}");
    // Removed, it is written again and the build goes through.
    std::fs::remove_file(&lib).unwrap();
    let out = index(other.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn mcp_help_explains_the_four_tools() {
    let out = run(iret().args(["mcp", "--help"]));
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for tool in [
        "retrieve",
        "search",
        "find_related",
        "status",
        "budget_tokens",
    ] {
        assert!(help.contains(tool), "{tool} missing from:\n{help}");
    }
}

#[test]
fn git_status_shows_nothing_of_a_fresh_index() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join(".iret"));
    let git = |args: &[&str]| {
        let out = run(std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path()));
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "fixture",
    ]);
    let out = run(iret().arg("index").arg(dir.path()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join(".iret/CURRENT").is_file());
    assert_eq!(
        git(&["status", "--porcelain"]),
        "",
        "the index shows in git status"
    );
}

/// `iret … | head`: a reader that stops early ends iret quietly, never with a panic.
#[cfg(unix)]
#[test]
fn a_closed_pipe_is_not_a_panic() {
    let root = indexed_fixture();
    let mut child = iret()
        .args([
            "search",
            "token expiry",
            "--json",
            "--min-relevance",
            "0",
            "-C",
        ])
        .arg(root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes before iret has loaded its model: the answer meets a closed pipe.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_static_index_is_read_by_the_static_model_until_indexed_again() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let _ = std::fs::remove_dir_all(dir.path().join(".iret"));
    let model = |dir: &std::path::Path| {
        let out = run(iret().args(["status", "--json"]).arg(dir));
        assert!(out.status.success());
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        s["model_id"].as_str().unwrap().to_string()
    };
    let out = run(iret().args(["index", "--static", "-q"]).arg(dir.path()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(model(dir.path()).starts_with("static-"));
    // A search reads it with the static model: it answers and rebuilds nothing.
    let doc = search_json(dir.path(), "token expiry", &["--min-relevance", "0"]);
    assert!(
        paths(&doc).iter().any(|p| p.starts_with("src/auth/")),
        "{doc}"
    );
    assert!(model(dir.path()).starts_with("static-"));
    // `iret index` without the flag embeds it with the transformer.
    let out = run(iret().args(["index", "-q"]).arg(dir.path()));
    assert!(out.status.success());
    assert!(!model(dir.path()).starts_with("static-"));
    // --static is the shipped static model: another model folder beside it is refused.
    let out = run(iret()
        .args([
            "--model-dir",
            "models/all-minilm-l6-v2",
            "index",
            "--static",
        ])
        .arg(dir.path()));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--static"));
}

#[cfg(unix)]
#[test]
fn a_large_build_answers_from_its_static_tier_and_embeds_in_the_background() {
    let repo = synthetic_repo(220);
    let root = repo.path();
    let out = run(iret()
        .args(["index", "--background-above", "100"])
        .arg(root));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("background"), "{err}");
    // Searchable at once, from static vectors, without waiting for the transformer.
    let doc = search_json(root, "quarryStep13x1", &["--no-refresh", "--cycles", "1"]);
    assert_eq!(paths(&doc)[0], "src/harbor/module13.ts", "{doc}");
    // (The transformer needs seconds for these texts: the tier is still the static one.)
    assert_eq!(doc["index"]["tier"], "static", "{doc}");
    wait_for_the_full_tier(root);
    let doc = search_json(root, "quarryStep13x1", &["--no-refresh", "--cycles", "1"]);
    assert_eq!(doc["index"]["tier"], "full", "{doc}");
}

#[cfg(unix)]
#[test]
fn a_first_search_on_a_large_repository_answers_from_the_static_tier() {
    let repo = synthetic_repo(220);
    let root = repo.path();
    let out = run(iret()
        .env("IRET_BACKGROUND_ABOVE", "100")
        .args(["search", "quarryStep13x1", "--json", "--cycles", "1", "-C"])
        .arg(root));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("background"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(paths(&doc)[0], "src/harbor/module13.ts", "{doc}");
    assert_eq!(doc["index"]["tier"], "static", "{doc}");
    // The background build finishes the index.
    wait_for_the_full_tier(root);
}

/// Waits (at most 180 s) until `iret status` says the index at `root` is the full tier:
/// the background build finished.
fn wait_for_the_full_tier(root: &std::path::Path) {
    let started = std::time::Instant::now();
    loop {
        let out = run(iret().args(["status", "--json"]).arg(root));
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if s["tier"] == "full" {
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(180),
            "the background build did not finish: {s} {}",
            std::fs::read_to_string(root.join(".iret/background-index.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn the_learned_ranker_orders_the_answer_and_a_wrong_ranker_name_is_refused() {
    let doc = search_json(
        indexed_fixture(),
        "Add rate limiting to API endpoints",
        &["--ranker", "learned", "--min-relevance", "0", "-k", "3"],
    );
    let files = paths(&doc);
    assert!(
        files.iter().any(|f| f.ends_with("middleware/throttle.ts")),
        "throttle.ts in the learned top 3: {files:?}"
    );
    let relevance: Vec<f64> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["relevance"].as_f64().unwrap())
        .collect();
    assert!(
        relevance.iter().all(|r| (0.0..=1.0).contains(r)),
        "{relevance:?}"
    );
    let out = run(iret()
        .args(["--ranker", "trees", "search", "x", "-C"])
        .arg(indexed_fixture()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rules") && err.contains("learned"), "{err}");
}

#[test]
fn the_tuned_query_model_answers_the_worked_examples_and_a_bad_map_is_refused() {
    for (task, want) in [
        (
            "Add rate limiting to API endpoints",
            "middleware/throttle.ts",
        ),
        ("token expiry bug", "auth/tokens.ts"),
    ] {
        let doc = search_json(
            indexed_fixture(),
            task,
            &["--query-model", "tuned", "--min-relevance", "0", "-k", "3"],
        );
        let files = paths(&doc);
        assert!(
            files.iter().any(|f| f.ends_with(want)),
            "{want} in the tuned top 3 for {task:?}: {files:?}"
        );
    }
    // Only the vector leg searches with the mapped vector: evaluate and refine compare in
    // the documents' space, so refine still learns the codebase's words and aims with them
    // (with every query vector mapped, cycle 2 lost "middleware").
    let doc = search_json(
        indexed_fixture(),
        "Add rate limiting to API endpoints",
        &["--query-model", "tuned", "--trace"],
    );
    let terms2: Vec<&str> = doc["cycles"][1]["terms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        terms2.iter().any(|t| t.starts_with("middlewar"))
            && terms2.iter().any(|t| t.starts_with("throttl")),
        "cycle 2 dispatches with throttle and middleware: {terms2:?}"
    );
    assert!(
        paths(&doc)
            .iter()
            .any(|f| f.ends_with("middleware/throttle.ts")),
        "{:?}",
        paths(&doc)
    );
    // A map trained for another model's vectors is refused, naming both models; a
    // truncated one with its reason. Both exit 2.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("manifest.json"),
        r#"{"kind":"linear","dims":1,"base_model":"another-model"}"#,
    )
    .unwrap();
    let refusal = |map: &[u8]| {
        std::fs::write(dir.path().join("map.bin"), map).unwrap();
        let out = run(iret()
            .env("IRET_QUERY_MAP_DIR", dir.path())
            .args(["--query-model", "tuned", "search", "rate limiting", "-C"])
            .arg(indexed_fixture()));
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refusal(&[0u8; 8]);
    assert!(
        err.contains("another-model") && err.contains("--query-model shipped"),
        "{err}"
    );
    let err = refusal(&[0u8; 5]);
    assert!(err.contains("map.bin holds 5 bytes"), "{err}");
}

#[test]
fn bench_writes_the_candidates_of_a_question_set_with_their_labels() {
    let dir = tempfile::tempdir().unwrap();
    let corpora = dir.path().join("corpora");
    copy_dir(&fixture(), &corpora.join("ts-app"));
    let _ = std::fs::remove_dir_all(corpora.join("ts-app/.iret"));
    let dataset = question_set(
        dir.path(),
        "ts-app",
        r#"[{"name": "ts-app", "language": "typescript",
             "url": "https://github.com/acme/ts-app.git"}]"#,
        r#"[{"query": "Add rate limiting to API endpoints",
             "relevant": [{"path": "src/middleware/throttle.ts", "start_line": 1, "end_line": 5}],
             "secondary": []},
            {"query": "token expiry bug", "relevant": ["src/auth/tokens.ts"]}]"#,
    );
    let table = dir.path().join("rows.tsv");
    bench_set(
        &dataset,
        &corpora,
        &dir.path().join("idx"),
        &[
            "--modes",
            "iterative,hybrid",
            "--features",
            table.to_str().unwrap(),
        ],
    );
    let text = std::fs::read_to_string(&table).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(rows
        .iter()
        .all(|r| r[1] == "acme/ts-app" && r[2] == "iterative"));
    let gold = |task: &str| -> Vec<&str> {
        rows.iter()
            .filter(|r| r[0] == task && r[4] == "1")
            .map(|r| r[3])
            .collect()
    };
    assert_eq!(gold("ts-app:0"), vec!["src/middleware/throttle.ts"]);
    assert_eq!(gold("ts-app:1"), vec!["src/auth/tokens.ts"]);
    assert!(rows.iter().filter(|r| r[0] == "ts-app:0").count() > 1);
}

#[test]
fn bench_completes_an_index_a_killed_build_left_as_a_tier_before_scoring_it() {
    let repo = synthetic_repo(220);
    kill_during_embedding(repo.path());
    let dir = tempfile::tempdir().unwrap();
    let (corpora, idx) = (dir.path().join("corpora"), dir.path().join("idx"));
    copy_dir(repo.path(), &corpora.join("synth"));
    let _ = std::fs::remove_dir_all(corpora.join("synth/.iret"));
    copy_dir(&repo.path().join(".iret"), &idx.join("synth"));
    let manifest = |root: &std::path::Path| -> serde_json::Value {
        let live = std::fs::read_to_string(root.join("CURRENT")).unwrap();
        let path = root.join(live.trim()).join("manifest.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    assert_ne!(
        manifest(&idx.join("synth"))["pending_vectors"],
        0,
        "a tier to start from"
    );
    let dataset = question_set(
        dir.path(),
        "synth",
        r#"[{"name": "synth", "language": "typescript"}]"#,
        r#"[{"query": "ledger step", "relevant": ["src/ledger/module0.ts"]}]"#,
    );
    bench_set(&dataset, &corpora, &idx, &["--modes", "hybrid"]);
    let m = manifest(&idx.join("synth"));
    assert_eq!(m["pending_vectors"], 0, "{m}");
    assert!(m["static_tier"].is_null(), "{m}");
}

#[test]
fn bench_help_lists_the_knobs_and_a_wrong_override_names_the_keys() {
    let help = run(iret().args(["bench", "--help"]));
    let text = String::from_utf8_lossy(&help.stdout);
    for line in [
        "vw     vector_weight = 0.6 (dispatch)",
        "eno    enough = 3 (loop)",
        "irr    irrelevant = 0.2 (refine)",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    let dir = tempfile::tempdir().unwrap();
    let dataset = question_set(
        dir.path(),
        "x",
        r#"[{"name": "x", "language": "typescript"}]"#,
        r#"[{"query": "q", "relevant": ["a.ts"]}]"#,
    );
    let bench = |mode: &str| {
        iret()
            .args(["bench", "--modes", mode, "--dataset"])
            .arg(&dataset)
            .arg("--corpora")
            .arg(dir.path().join("corpora"))
            .output()
            .unwrap()
    };
    let out = bench("hybrid@nope=1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("unknown override key \"nope\"") && err.contains(" vw "),
        "{err}"
    );
    let out = bench("iterative@eno=2.5");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("not a count"), "{err}");
}

/// A semble-format set of one repository under `dir`: its repos.json and annotations.
fn question_set(dir: &std::path::Path, name: &str, repos: &str, tasks: &str) -> std::path::PathBuf {
    let dataset = dir.join("set");
    std::fs::create_dir_all(dataset.join("annotations")).unwrap();
    std::fs::write(dataset.join("repos.json"), repos).unwrap();
    std::fs::write(dataset.join(format!("annotations/{name}.json")), tasks).unwrap();
    dataset
}

/// `iret bench` on a set, which must succeed.
fn bench_set(
    dataset: &std::path::Path,
    corpora: &std::path::Path,
    idx: &std::path::Path,
    args: &[&str],
) {
    let out = run(iret()
        .arg("bench")
        .args(args)
        .arg("--dataset")
        .arg(dataset)
        .arg("--corpora")
        .arg(corpora)
        .arg("--index-root")
        .arg(idx));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn setup_writes_each_agents_configuration_once_keeping_what_is_there() {
    let home = tempfile::tempdir().unwrap();
    let cursor = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(
        &cursor,
        "{\n  // mine\n  \"mcpServers\": { \"other\": { \"command\": \"x\" } }\n}\n",
    )
    .unwrap();
    let setup = |args: &[&str]| {
        run(iret()
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .arg("setup")
            .args(args))
    };
    let list = setup(&["--list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    let agents: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(agents.len() >= 8, "{listed}");
    for agent in &agents {
        let out = setup(&[agent, "--command", "/opt/iret"]);
        assert!(
            out.status.success(),
            "{agent}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let again = setup(&[agent, "--command", "/opt/iret"]);
        let err = String::from_utf8_lossy(&again.stderr);
        assert!(err.contains("nothing changed"), "{agent}: {err}");
    }
    let text = std::fs::read_to_string(&cursor).unwrap();
    assert!(
        text.contains("// mine") && text.contains("\"other\""),
        "{text}"
    );
    assert!(text.contains("\"/opt/iret\""), "{text}");
    let codex = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
    assert!(codex.contains("[mcp_servers.iret]"), "{codex}");
    // --print writes nothing; an unknown agent is refused with the known ones.
    let fresh = tempfile::tempdir().unwrap();
    let out = run(iret().env("HOME", fresh.path()).args([
        "setup",
        "gemini",
        "--print",
        "--command",
        "/opt/iret",
    ]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"mcpServers\""));
    assert!(!fresh.path().join(".gemini").exists());
    let out = setup(&["emacs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("claude-code"));
}
