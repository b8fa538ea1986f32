//! A small MCP client written here, independent of the server's SDK: it starts the real
//! `iret mcp` and speaks newline-delimited JSON-RPC over stdio (the MCP stdio transport).
//! Shared by the tests that talk to the server (`tests/mcp.rs`, `tests/store.rs`).
use super::iret;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    responses: mpsc::Receiver<Value>,
    pending: HashMap<u64, Value>,
    next_id: u64,
    /// The roots this client offers (answered to the server's `roots/list`).
    roots: Option<Vec<PathBuf>>,
}

impl Client {
    /// Starts `iret mcp ROOT` and completes the handshake.
    pub fn start(root: &Path) -> Self {
        Self::start_with(&[root], None)
    }

    /// Starts `iret mcp PATHS…`, offering `roots` as a client with MCP roots does.
    pub fn start_with(paths: &[&Path], roots: Option<Vec<PathBuf>>) -> Self {
        Self::start_flags(paths, &[], roots)
    }

    /// Starts `iret mcp PATHS… FLAGS…`.
    pub fn start_flags(paths: &[&Path], flags: &[&str], roots: Option<Vec<PathBuf>>) -> Self {
        Self::start_command(iret().arg("mcp").args(paths).args(flags), roots)
    }

    /// Starts `cmd` (an `iret … mcp …` command line) and completes the handshake.
    pub fn start_command(cmd: &mut Command, roots: Option<Vec<PathBuf>>) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let msg: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the server wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        let mut c = Self {
            child,
            stdin,
            responses: rx,
            pending: HashMap::new(),
            next_id: 1,
            roots,
        };
        let capabilities = if c.roots.is_some() {
            json!({"roots": {"listChanged": true}})
        } else {
            json!({})
        };
        let init = c.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "clientInfo": {"name": "iret-test", "version": "0"}
            }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "iret", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        c.notify("notifications/initialized", json!({}));
        c
    }

    pub fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request without waiting; returns its id.
    pub fn submit(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The response to request `id` (others that arrive meanwhile are kept).
    pub fn wait(&mut self, id: u64) -> Value {
        loop {
            if let Some(v) = self.pending.remove(&id) {
                return v;
            }
            let msg = self
                .responses
                .recv_timeout(Duration::from_secs(120))
                .expect("no answer from iret mcp within 120 s");
            if msg.get("method").is_some() {
                self.answer_server(&msg);
                continue;
            }
            if let Some(got) = msg.get("id").and_then(Value::as_u64) {
                self.pending.insert(got, msg);
            }
        }
    }

    /// A request from the server: `roots/list` gets this client's roots.
    fn answer_server(&mut self, msg: &Value) {
        let Some(id) = msg.get("id").cloned() else {
            return; // a notification
        };
        let reply = match (msg["method"].as_str(), &self.roots) {
            (Some("roots/list"), Some(roots)) => {
                let roots: Vec<Value> = roots
                    .iter()
                    .map(|r| json!({"uri": format!("file://{}", r.display())}))
                    .collect();
                json!({"jsonrpc": "2.0", "id": id, "result": {"roots": roots}})
            }
            _ => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "not offered"}})
            }
        };
        self.send(reply);
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.submit(method, params);
        self.wait(id)
    }

    /// `tools/call`; returns the result (structured content, isError, text).
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(r.get("error").is_none(), "protocol error for {tool}: {r}");
        r["result"].clone()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
