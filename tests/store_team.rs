//! A team's store served safely, tested against the real parts: Chroma (`chroma run`)
//! behind nginx checking TLS and a token (`common::proxy`), and many branches pushing to
//! one collection, in turn and at once, with garbage collected under a concurrent push.
//! Every failure is a clear error that leaves the local index as it was.
mod common;
use common::chroma::*;
use common::proxy::{Leaf, Pki, Proxy, EXPIRED, GOOD};
use common::*;
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

/// A Chroma server behind a TLS proxy with a certificate for this host.
fn served() -> Option<(Server, Proxy, Pki)> {
    let server = Server::start()?;
    let pki = Pki::new();
    let (cert, key) = pki.leaf(Leaf::Good, "good");
    let proxy = Proxy::start(server.port, &cert, &key)?;
    Some((server, proxy, pki))
}

/// `iret` with the store's token and CA in its environment (`token`: `None` for none).
fn with_access(cmd: &mut Command, token: Option<&str>, ca: &Path) -> Command {
    let mut c = std::mem::replace(cmd, iret());
    for k in [
        "IRET_STORE_TOKEN",
        "IRET_STORE_TOKEN_FILE",
        "IRET_STORE_TOKEN_HEADER",
    ] {
        c.env_remove(k);
    }
    if let Some(t) = token {
        c.env("IRET_STORE_TOKEN", t);
    }
    c.env("IRET_STORE_CA", ca);
    c
}

/// `status --store --json` of a checkout: its `store` part.
fn store_status(cmd: &mut Command, url: &str, root: &Path) -> Value {
    let out = run(cmd.args(["--store", url, "status", "--json"]).arg(root));
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["store"].clone()
}

#[test]
fn through_tls_and_a_token_a_second_checkout_answers_the_worked_examples_from_the_store() {
    let Some((server, proxy, pki)) = served() else {
        return;
    };
    let url = proxy.url("team-tls");
    let first = private_copy();
    let out = run(with_access(&mut iret(), Some(GOOD), &pki.ca())
        .args(["--store", &url, "index"])
        .arg(first.path()));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains(GOOD), "the token is never printed: {err}");
    let added = number_before(&err, "records added");
    assert!(added > 0);
    assert_eq!(server.count("team-tls"), added);

    // Another machine, Chroma's own header this time: nothing embedded, both examples.
    let cache = tempfile::tempdir().unwrap();
    let second = private_copy();
    std::fs::remove_dir_all(second.path().join(".iret")).unwrap();
    let machine = || {
        let mut c = with_access(&mut iret(), Some(GOOD), &pki.ca());
        c.env("IRET_EMBED_CACHE", cache.path())
            .env("IRET_STORE_TOKEN_HEADER", "X-Chroma-Token");
        c
    };
    let out = run(machine()
        .args(["--store", &url, "index"])
        .arg(second.path()));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("(0 embedded"), "{err}");
    let search = |task: &str| -> Value {
        let out = run(machine()
            .args(["--store", &url, "search", task, "--json", "-C"])
            .arg(second.path()));
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_worked_examples(search);
}

#[test]
fn a_missing_wrong_or_expired_token_is_refused_clearly_and_the_index_is_untouched() {
    let Some((server, proxy, pki)) = served() else {
        return;
    };
    let url = proxy.url("team-tokens");
    let repo = private_copy();
    let root = repo.path();
    let live = generation(root);
    let token_file = pki.dir.path().join("token");
    std::fs::write(&token_file, "not-the-team-token\n").unwrap();
    let cases: [(&str, Option<&str>, &str); 4] = [
        ("missing", None, "asks for a token"),
        ("wrong", Some("not-the-team-token"), "refused the token"),
        ("expired", Some(EXPIRED), "the token expired"),
        ("wrong, from a file", None, "refused the token"),
    ];
    for (case, token, says) in cases {
        for args in [
            &["index"][..],
            &["search", "rate limiting", "-C"],
            &["status"],
        ] {
            let mut cmd = with_access(&mut iret(), token, &pki.ca());
            if case == "wrong, from a file" {
                cmd.env("IRET_STORE_TOKEN_FILE", &token_file);
            }
            let out = run(cmd.args(["--store", &url]).args(args).arg(root));
            let err = stderr(&out);
            assert!(!out.status.success(), "{case} {args:?}: {err}");
            assert!(err.contains(says), "{case} {args:?}: {err}");
            assert!(err.contains(&format!("localhost:{}", proxy.port)), "{err}");
            assert!(!err.contains('<'), "a line, never the proxy's page: {err}");
            assert!(
                !err.contains("not-the-team-token") && !err.contains(EXPIRED),
                "{err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    assert_eq!(generation(root), live, "the local index is untouched");
    assert_eq!(
        server.try_count("team-tokens"),
        None,
        "nothing reached the server"
    );
}

#[test]
fn a_certificate_that_fails_or_plain_http_to_the_tls_port_is_a_clear_error() {
    let Some(server) = Server::start() else {
        return;
    };
    let pki = Pki::new();
    let repo = private_copy();
    let root = repo.path();
    let live = generation(root);
    let attempt = |url: &str, ca: &Path| -> String {
        let out = run(with_access(&mut iret(), Some(GOOD), ca)
            .args(["--store", url, "index"])
            .arg(root));
        let err = stderr(&out);
        assert!(!out.status.success(), "{url}: {err}");
        assert!(!err.contains("panicked") && !err.contains(GOOD), "{err}");
        err
    };
    // A certificate of another authority than the one trusted.
    let stranger = Pki::new();
    let (cert, key) = stranger.leaf(Leaf::Good, "stranger");
    let proxy = Proxy::start(server.port, &cert, &key).unwrap();
    let err = attempt(&proxy.url("team-certs"), &pki.ca());
    assert!(
        err.contains("not signed by an authority iret trusts"),
        "{err}"
    );
    assert!(err.contains(&format!("localhost:{}", proxy.port)), "{err}");
    // Plain HTTP to the TLS port: refused by the proxy, never a fallback.
    let plain = format!("chroma://127.0.0.1:{}/team-certs", proxy.port);
    let out = run(iret()
        .env_remove("IRET_STORE_TOKEN")
        .args(["--store", &plain, "index"])
        .arg(root));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("use chroma+https://"), "{err}");
    drop(proxy);

    // A certificate for another host.
    let (cert, key) = pki.leaf(Leaf::OtherHost, "other");
    let proxy = Proxy::start(server.port, &cert, &key).unwrap();
    let err = attempt(&proxy.url("team-certs"), &pki.ca());
    assert!(err.contains("not for this host name"), "{err}");
    drop(proxy);

    // An expired certificate.
    let (cert, key) = pki.leaf(Leaf::Expired, "expired");
    let proxy = Proxy::start(server.port, &cert, &key).unwrap();
    let err = attempt(&proxy.url("team-certs"), &pki.ca());
    assert!(err.contains("expired"), "{err}");

    // TLS asked of a server that speaks plain HTTP.
    let err = attempt(
        &format!("chroma+https://localhost:{}/team-certs", server.port),
        &pki.ca(),
    );
    assert!(err.contains("no secure connection"), "{err}");
    assert_eq!(generation(root), live, "the local index is untouched");
    assert_eq!(server.try_count("team-certs"), None);
}

#[test]
fn a_token_is_not_sent_in_clear_to_another_host_nor_taken_from_the_address() {
    let repo = private_copy();
    let root = repo.path();
    let live = generation(root);
    let out = run(iret()
        .env("IRET_STORE_TOKEN", GOOD)
        .args(["--store", "chroma://db.team.invalid:8000/team", "index"])
        .arg(root));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("in clear to db.team.invalid"), "{err}");
    assert!(!err.contains(GOOD), "{err}");
    let out = run(iret()
        .args([
            "--store",
            &format!("chroma+https://user:{GOOD}@db.team.invalid:443/team"),
            "status",
        ])
        .arg(root));
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("IRET_STORE_TOKEN") && !err.contains(GOOD),
        "{err}"
    );
    // A CA bundle that is not one, a token file that is not there: said before any request.
    let elsewhere = tempfile::tempdir().unwrap();
    let not_pem = elsewhere.path().join("ca.pem");
    std::fs::write(&not_pem, "not a certificate\n").unwrap();
    let missing = elsewhere.path().join("no-such-token");
    for (key, value, says) in [
        ("IRET_STORE_CA", &not_pem, "holds no certificate"),
        (
            "IRET_STORE_TOKEN_FILE",
            &missing,
            "cannot read the token file",
        ),
    ] {
        let out = run(iret()
            .env_remove("IRET_STORE_TOKEN")
            .env(key, value)
            .args([
                "--store",
                "chroma+https://db.team.invalid:443/team",
                "index",
            ])
            .arg(root));
        let err = stderr(&out);
        assert!(!out.status.success(), "{err}");
        assert!(err.contains(says), "{key}: {err}");
    }
    assert_eq!(generation(root), live);
}

/// A git checkout of the fixture on `branch`, one commit.
fn checkout_on(branch: &str) -> tempfile::TempDir {
    let repo = private_copy();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(repo.path())
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    };
    git(&["init", "-q", "-b", branch]);
    std::fs::write(repo.path().join(".gitignore"), ".iret/\n").unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fixture"]);
    repo
}

/// The feature branch's change: a file added, one removed.
fn change_feature(root: &Path) {
    std::fs::write(
        root.join("src/ledger.ts"),
        "export function reconcileLedger(entries: number[]): number {\n  return entries.reduce((a, b) => a + b, 0);\n}\n",
    )
    .unwrap();
    std::fs::remove_file(root.join("src/auth/session.ts")).ok();
}

/// Both checkouts' chunks are in the store (their `status --store` says so, each under
/// its branch), and the collection holds exactly the union of what each pushed alone.
fn assert_both_complete(
    server: &Server,
    url: &str,
    roots: [&Path; 2],
    alone: [&HashSet<String>; 2],
) {
    for (root, branch) in roots.iter().zip(["main", "feature"]) {
        let s = store_status(&mut iret(), url, root);
        assert_eq!(s["chunks_present"], s["chunks"], "{s}");
        assert_eq!(s["ref"], branch, "{s}");
        let names: Vec<&str> = s["refs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["feature", "main"], "{s}");
    }
    let union: HashSet<String> = alone[0].union(alone[1]).cloned().collect();
    let collection = url.rsplit('/').next().unwrap();
    assert_eq!(server.ids(collection), union);
}

/// What `root` pushes, pushed alone to a collection of its own.
fn pushed_alone(server: &Server, root: &Path, collection: &str) -> HashSet<String> {
    let out = push(&server.url(collection), root);
    assert!(out.status.success(), "{}", stderr(&out));
    server.ids(collection)
}

/// Pushes `root` as its branch; the push's stderr.
fn push(url: &str, root: &Path) -> std::process::Output {
    run(iret().args(["--store", url, "index", "-q"]).arg(root))
}

/// `iret --store URL store ACTION… --repo ROOT`.
fn store_cmd(url: &str, action: &[&str], root: &Path) -> std::process::Output {
    run(iret()
        .args(["--store", url, "store"])
        .args(action)
        .arg("--repo")
        .arg(root))
}

/// A checkout on main and one on feature (a file added, one removed), each pushed alone
/// to a collection of its own: what each pushes.
fn two_branches(server: &Server) -> ([tempfile::TempDir; 2], [HashSet<String>; 2]) {
    let main = checkout_on("main");
    let feature = checkout_on("feature");
    change_feature(feature.path());
    let alone = [
        pushed_alone(server, main.path(), "alone-main"),
        pushed_alone(server, feature.path(), "alone-feature"),
    ];
    assert_ne!(alone[0], alone[1]);
    ([main, feature], alone)
}

#[test]
fn two_branches_pushed_in_turn_keep_each_others_records_and_forgetting_one_collects_it() {
    let Some(server) = Server::start() else {
        return;
    };
    let ([main, feature], alone) = two_branches(&server);
    let url = server.url("team-branches");
    for root in [main.path(), feature.path(), main.path()] {
        let out = push(&url, root);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // Before refs, the feature branch's push deleted main's records of the file it
    // removed, and main's push then deleted the feature's: now each keeps the other's.
    assert_both_complete(
        &server,
        &url,
        [main.path(), feature.path()],
        [&alone[0], &alone[1]],
    );

    // The feature branch is merged and forgotten: what only it needed goes, main's stays.
    let out = store_cmd(&url, &["forget", "feature"], main.path());
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        number_before(&err, "records deleted"),
        alone[1].difference(&alone[0]).count(),
        "{err}"
    );
    assert_eq!(server.ids("team-branches"), alone[0]);
    // A gc with nothing to collect deletes nothing; forgetting an unknown ref is an error.
    let out = store_cmd(&url, &["gc"], main.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(number_before(&stderr(&out), "records deleted"), 0);
    let out = store_cmd(&url, &["forget", "feature"], main.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no ref \"feature\""),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.ids("team-branches"), alone[0]);
}

#[test]
fn two_branches_pushed_at_once_and_one_branch_twice_at_once_all_end_complete() {
    let Some(server) = Server::start() else {
        return;
    };
    let ([main, feature], alone) = two_branches(&server);
    let url = server.url("team-race");
    let spawn = |root: &Path| {
        iret()
            .args(["--store", &url, "index", "-q"])
            .arg(root)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Two branches, and a second checkout of main (its own index folder), at once.
    let main_again = checkout_on("main");
    let out = run(iret().args(["index", "-q"]).arg(main_again.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    let pushes = [
        spawn(main.path()),
        spawn(feature.path()),
        spawn(main_again.path()),
    ];
    for p in pushes {
        let out = p.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_both_complete(
        &server,
        &url,
        [main.path(), feature.path()],
        [&alone[0], &alone[1]],
    );
    let out = store_cmd(&url, &["gc"], main.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(number_before(&stderr(&out), "records deleted"), 0);
}

#[test]
fn a_gc_under_a_concurrent_push_never_leaves_the_push_incomplete() {
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.url("team-gc");
    let old = checkout_on("old");
    let main = checkout_on("main");
    let out = push(&url, old.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(iret().args(["index", "-q"]).arg(main.path()));
    assert!(out.status.success(), "{}", stderr(&out));
    // `old` is forgotten by a collection that pauses between reading the manifests and
    // deleting (a test hook widening the window a slow network opens): every record is
    // garbage to it. Meanwhile `main`, the same code, pushes: it finds every record there
    // and sends nothing, then waits for the collection's lock.
    let mut gc = iret()
        .env("IRET_TEST_GC_PAUSE_MS", "3000")
        .args(["--store", &url, "store", "forget", "old", "--repo"])
        .arg(old.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut gc_err = std::io::BufReader::new(gc.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("collection paused") {
        line.clear();
        let n = std::io::BufRead::read_line(&mut gc_err, &mut line).unwrap();
        assert!(n > 0, "the collection ended without pausing");
    }
    let out = run(iret().args(["--store", &url, "index"]).arg(main.path()));
    let err = stderr(&out);
    assert!(gc.wait().unwrap().success());
    assert!(out.status.success(), "{err}");
    // The push checked its records under the lock, after the collection had deleted
    // them, and sent them again.
    let s = store_status(&mut iret(), &url, main.path());
    assert_eq!(s["chunks_present"], s["chunks"], "{s}");
    let records = s["refs"][0]["records"].as_u64().unwrap() as usize;
    assert_eq!(number_before(&err, "sent again"), records, "{err}");
    assert_eq!(server.count("team-gc"), records, "{s}");
}
