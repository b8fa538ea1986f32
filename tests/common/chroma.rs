//! A real Chroma server for the store tests (`chroma run` from the `chromadb` package on
//! PyPI, which `.ci/run` installs): each test starts its own on a free loopback port and
//! stops it at the end. The server is `$IRET_TEST_CHROMA` (the `chroma` executable), else
//! `chroma` on the PATH; without one the tests say so and pass, except under `CI=true`,
//! where they fail.
use super::iret;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `chroma run`, killed on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    _data: tempfile::TempDir,
    /// For a server on a small disk: the file that tells its supervisor to give it room,
    /// and whether the disk is a tmpfs in a namespace (else a file-size limit).
    grow: Option<(PathBuf, bool)>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts a server with an empty database, or `None` when none is installed here
    /// (a failure under `CI=true`).
    pub fn start() -> Option<Self> {
        let exe = installed_chroma()?;
        let data = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = spawn_chroma(&exe, port, data.path());
        let server = Self {
            child,
            port,
            _data: data,
            grow: None,
        };
        server.wait_until_up();
        Some(server)
    }

    /// Starts a server that runs out of room for its database after about 4 MB: on a 4 MB
    /// tmpfs mounted in a mount namespace of its own (`unshare`, which needs no privilege),
    /// or, where user namespaces are not allowed, under a 4 MB file-size limit (`ulimit
    /// -f`: the same failed write, EFBIG rather than ENOSPC). [`Server::grow`] then gives it
    /// room and restarts it on the same database, as an operator freeing the disk would.
    pub fn start_on_small_disk() -> Option<Self> {
        let exe = installed_chroma()?;
        let data = tempfile::tempdir().unwrap();
        let disk = data.path().join("disk");
        std::fs::create_dir(&disk).unwrap();
        let grow = data.path().join("grow");
        let port = free_port();
        let namespaces = Command::new("unshare")
            .args(["-r", "-m", "-p", "--fork", "true"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let mut cmd = if namespaces {
            // PID 1 of its own namespaces: killing `unshare` (--kill-child) takes the
            // supervisor, the server and the mount with it.
            let mut c = Command::new("unshare");
            c.args([
                "-r",
                "-m",
                "-p",
                "--fork",
                "--kill-child",
                "sh",
                "-c",
                SMALL_DISK,
            ]);
            c
        } else {
            eprintln!("no user namespaces here: the small disk is a file-size limit");
            let mut c = Command::new("sh");
            c.args(["-c", SIZE_LIMIT]);
            c
        };
        let child = cmd
            .env("DIR", &disk)
            .env("CHROMA", &exe)
            .env("PORT", port.to_string())
            .env("GROW", &grow)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the small disk's server starts");
        let server = Self {
            child,
            port,
            _data: data,
            grow: Some((grow, namespaces)),
        };
        server.wait_until_up();
        Some(server)
    }

    /// Gives a server started by [`Server::start_on_small_disk`] room and starts it again
    /// on its database.
    pub fn grow(&mut self) {
        let (grow, namespaces) = self.grow.clone().expect("a server on a small disk");
        if !namespaces {
            self.kill();
            let exe = chroma_executable().unwrap();
            self.child = spawn_chroma(&exe, self.port, &self._data.path().join("disk/db"));
            self.wait_until_up();
            return;
        }
        std::fs::write(&grow, "").unwrap();
        let done = grow.with_extension("done");
        let started = Instant::now();
        while !done.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the disk did not grow"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        self.wait_until_up();
    }

    pub fn wait_until_up(&self) {
        let started = Instant::now();
        while http(self.port, "GET", "/api/v2/heartbeat", None).map(|(s, _)| s) != Some(200) {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "chroma run did not answer its heartbeat"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Starts the killed server again on its port and database.
    pub fn restart(&mut self) {
        let exe = chroma_executable().unwrap();
        self.child = spawn_chroma(&exe, self.port, self._data.path());
        self.wait_until_up();
    }

    /// `chroma://127.0.0.1:PORT/COLLECTION`.
    pub fn url(&self, collection: &str) -> String {
        format!("chroma://127.0.0.1:{}/{collection}", self.port)
    }

    /// The ids of `collection`'s records.
    pub fn ids(&self, collection: &str) -> std::collections::HashSet<String> {
        let id = self.collection_id(collection);
        let (status, body) = http(
            self.port,
            "POST",
            &format!("{DB}/collections/{id}/get"),
            Some(r#"{"include": []}"#),
        )
        .expect("the server answers");
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect()
    }

    /// Records in `collection`.
    pub fn count(&self, collection: &str) -> usize {
        self.try_count(collection)
            .unwrap_or_else(|| panic!("no collection {collection} on the server"))
    }

    /// Records in `collection`, `None` while there is no such collection (or no server).
    pub fn try_count(&self, collection: &str) -> Option<usize> {
        let id = self.try_collection_id(collection)?;
        let (_, body) = http(
            self.port,
            "GET",
            &format!("{DB}/collections/{id}/count"),
            None,
        )?;
        body.trim().parse().ok()
    }

    /// The collection's version (its metadata `iret_version`), empty when none.
    pub fn version(&self, collection: &str) -> String {
        let (_, body) = http(
            self.port,
            "GET",
            &format!("{DB}/collections/{collection}"),
            None,
        )
        .expect("the server answers");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["metadata"]["iret_version"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn collection_id(&self, collection: &str) -> String {
        self.try_collection_id(collection)
            .unwrap_or_else(|| panic!("no collection {collection} on the server"))
    }

    pub fn try_collection_id(&self, collection: &str) -> Option<String> {
        let (status, body) = http(
            self.port,
            "GET",
            &format!("{DB}/collections/{collection}"),
            None,
        )?;
        let v: Value = serde_json::from_str(&body).ok().filter(|_| status == 200)?;
        v["id"].as_str().map(str::to_string)
    }

    /// Deletes `n` of the collection's records (as a push killed midway leaves it short).
    pub fn delete_some(&self, collection: &str, n: usize) {
        let id = self.collection_id(collection);
        let get = format!(r#"{{"limit": {n}, "include": []}}"#);
        let (_, body) = http(
            self.port,
            "POST",
            &format!("{DB}/collections/{id}/get"),
            Some(&get),
        )
        .unwrap();
        let ids: Value = serde_json::from_str::<Value>(&body).unwrap()["ids"].clone();
        let del = serde_json::json!({ "ids": ids }).to_string();
        let (status, body) = http(
            self.port,
            "POST",
            &format!("{DB}/collections/{id}/delete"),
            Some(&del),
        )
        .unwrap();
        assert_eq!(status, 200, "{body}");
    }

    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

pub const DB: &str = "/api/v2/tenants/default_tenant/databases/default_database";

/// The supervisor of a server on a small disk: mounts a 4 MB tmpfs on `$DIR`, runs
/// the server there until `$GROW` exists, then stops it, grows the tmpfs to 1 GB, says
/// so (`$GROW.done`) and runs the server again on the same database.
const SMALL_DISK: &str = r#"
mount -t tmpfs -o size=4m tmpfs "$DIR" || exit 97
"$CHROMA" run --host 127.0.0.1 --port "$PORT" --path "$DIR/db" & pid=$!
while [ ! -e "$GROW" ]; do kill -0 $pid 2>/dev/null || exit 1; sleep 0.1; done
kill $pid; wait $pid
mount -o remount,size=1g "$DIR" || exit 98
touch "$GROW.done"
exec "$CHROMA" run --host 127.0.0.1 --port "$PORT" --path "$DIR/db"
"#;

/// A server that cannot write a file past 4 MB (`ulimit -f` counts 512-byte blocks in a
/// POSIX sh; bash counts 1024, 8 MB, still far below the push).
const SIZE_LIMIT: &str = r#"
ulimit -f 8000 || exit 97
exec "$CHROMA" run --host 127.0.0.1 --port "$PORT" --path "$DIR/db"
"#;

pub fn spawn_chroma(exe: &Path, port: u16, data: &Path) -> Child {
    Command::new(exe)
        .args(["run", "--host", "127.0.0.1", "--port", &port.to_string()])
        .arg("--path")
        .arg(data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chroma run starts")
}

/// The `chroma` executable, or `None` when none is installed here, which fails the test
/// under `CI=true`.
pub fn installed_chroma() -> Option<PathBuf> {
    let exe = chroma_executable();
    if exe.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no Chroma server: .ci/run installs chromadb and sets IRET_TEST_CHROMA"
        );
        eprintln!("no `chroma` here (pip install chromadb): store tests skipped");
    }
    exe
}

pub fn chroma_executable() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("IRET_TEST_CHROMA").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("chroma"))
        .find(|p| p.is_file())
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One plain HTTP/1.1 request (the test's own client, independent of iret's): the status
/// and the body, or `None` when nothing answers.
pub fn http(port: u16, method: &str, path: &str, body: Option<&str>) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let body = body.unwrap_or("");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Some((status, body))
}

pub fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

/// `iret` with its own empty embedding cache (a fresh machine).
pub fn fresh_machine(cache: &Path) -> Command {
    let mut cmd = iret();
    cmd.env("IRET_EMBED_CACHE", cache);
    cmd
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The number before `word` in `text` ("474 records added" → 474 for "records added").
pub fn number_before(text: &str, word: &str) -> usize {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {text}"));
    text[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.trim_start_matches('(').parse().ok())
        .unwrap_or_else(|| panic!("no number before {word:?} in {text}"))
}

/// The repository copy's generation (`.iret/CURRENT`).
pub fn generation(root: &Path) -> String {
    std::fs::read_to_string(root.join(".iret/CURRENT")).unwrap_or_default()
}

/// Both worked examples, answered by `search` (a task → its `--json` answer): "rate
/// limiting" leads with throttle.ts, "token expiry bug" has tokens.ts in its top 3.
pub fn assert_worked_examples(search: impl Fn(&str) -> Value) {
    let doc = search("rate limiting");
    assert_eq!(super::paths(&doc)[0], "src/middleware/throttle.ts", "{doc}");
    let doc = search("token expiry bug");
    let top3: Vec<String> = super::paths(&doc).into_iter().take(3).collect();
    assert!(
        top3.iter().any(|p| p == "src/auth/tokens.ts"),
        "{top3:?} {doc}"
    );
}

/// Makes collection `name` with `metadata` as another client would (an older iret).
pub fn make_collection(server: &Server, name: &str, metadata: Value) {
    let body = serde_json::json!({ "name": name, "metadata": metadata });
    let (code, text) = http(
        server.port,
        "POST",
        &format!("{DB}/collections"),
        Some(&body.to_string()),
    )
    .unwrap();
    assert_eq!(code, 200, "{text}");
}
