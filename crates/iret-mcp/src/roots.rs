//! The repositories one server serves: those named on the command line, then those the
//! client offers as MCP roots. Each is opened (indexed first if need be) on its first
//! call; all share the one model the opener holds. A call names its repository by
//! `root`, a path to it or to anything inside it; without one it goes to the first.
//! With watching on, each opened repository is watched and its index kept fresh in the
//! background ([`iret_engine::watch`]).
use iret_engine::watch::{watch, Watch};
use iret_engine::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// Opens the engine of a root (building its index when it has none).
pub type Opener = dyn Fn(&Path) -> anyhow::Result<Engine> + Send + Sync;

struct Served {
    root: PathBuf,
    /// Offered by the client (replaced when its list changes), not named on the command line.
    from_client: bool,
    /// Opened on first use; the lock makes concurrent first calls wait for one opening.
    engine: Mutex<Option<Arc<Engine>>>,
    /// Its watcher, while one runs.
    watch: Mutex<Option<Watch>>,
}

pub struct Roots {
    served: RwLock<Vec<Arc<Served>>>,
    opener: Box<Opener>,
    watching: bool,
}

/// A served repository, as `status` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ServedRoot {
    pub root: String,
    /// Opened by an earlier call (its index is loaded).
    pub opened: bool,
}

impl Roots {
    pub fn new(opener: Box<Opener>) -> Self {
        Self {
            served: RwLock::new(Vec::new()),
            opener,
            watching: false,
        }
    }

    /// Watch each repository once opened, updating its index as files change.
    pub fn watching(mut self, on: bool) -> Self {
        self.watching = on;
        self
    }

    /// Starts watching `served`'s engine (a failure is said, and calls refresh first).
    fn watch(&self, served: &Served, engine: &Arc<Engine>) {
        if !self.watching {
            return;
        }
        let root = engine.root().display().to_string();
        let report = move |u: &iret_engine::watch::Update| {
            if let Some(e) = &u.error {
                eprintln!("iret mcp: updating {root} after a change failed: {e}");
            }
        };
        match watch(engine, report) {
            Ok(w) => *served.watch.lock().unwrap_or_else(|p| p.into_inner()) = Some(w),
            Err(e) => eprintln!(
                "iret mcp: not watching {} ({e:#}); each call refreshes its index first",
                engine.root().display()
            ),
        }
    }

    /// Serves `engine`'s repository, already opened.
    pub fn add_open(&self, engine: Engine) {
        let root = canonical(engine.root());
        let engine = Arc::new(engine);
        let entry = Arc::new(Served {
            root,
            from_client: false,
            engine: Mutex::new(Some(engine.clone())),
            watch: Mutex::new(None),
        });
        self.watch(&entry, &engine);
        let mut served = self.served.write().unwrap_or_else(|p| p.into_inner());
        served.retain(|s| s.root != entry.root);
        served.insert(0, entry);
    }

    /// Serves the folder `root` (opened on first use). False when it is not a folder or
    /// is served already.
    pub fn add(&self, root: &Path) -> bool {
        self.add_from(root, false)
    }

    /// The client's roots are now `paths`: those it no longer offers are no longer served
    /// (unless the command line named them); returns the ones added.
    pub fn set_client_roots(&self, paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
        let paths: Vec<PathBuf> = paths.into_iter().map(|p| canonical(&p)).collect();
        self.served
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|s| !s.from_client || paths.contains(&s.root));
        paths
            .into_iter()
            .filter(|p| self.add_from(p, true))
            .collect()
    }

    fn add_from(&self, root: &Path, from_client: bool) -> bool {
        if !root.is_dir() {
            return false;
        }
        let root = canonical(root);
        let mut served = self.served.write().unwrap_or_else(|p| p.into_inner());
        if served.iter().any(|s| s.root == root) {
            return false;
        }
        served.push(Arc::new(Served {
            root,
            from_client,
            engine: Mutex::new(None),
            watch: Mutex::new(None),
        }));
        true
    }

    pub fn list(&self) -> Vec<ServedRoot> {
        let served = self.served.read().unwrap_or_else(|p| p.into_inner());
        served
            .iter()
            .map(|s| ServedRoot {
                root: s.root.display().to_string(),
                opened: s.engine.lock().map(|e| e.is_some()).unwrap_or(false),
            })
            .collect()
    }

    /// The repository `root` names (a path to it or inside it; the deepest served root
    /// holding it), or the first one when `root` is None.
    fn pick(&self, root: Option<&str>) -> anyhow::Result<Arc<Served>> {
        let served = self.served.read().unwrap_or_else(|p| p.into_inner());
        let names = || {
            served
                .iter()
                .map(|s| s.root.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(root) = root.filter(|r| !r.trim().is_empty()) else {
            return served.first().cloned().ok_or_else(|| {
                anyhow::anyhow!(
                    "no repository is served: start `iret mcp` with a path, or use a client that offers roots"
                )
            });
        };
        let path = std::fs::canonicalize(root.trim())
            .map_err(|e| anyhow::anyhow!("root {root:?}: {e} (served: {})", names()))?;
        served
            .iter()
            .filter(|s| path.starts_with(&s.root))
            .max_by_key(|s| s.root.as_os_str().len())
            .cloned()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "root {root:?} is outside every served repository (served: {})",
                    names()
                )
            })
    }

    /// The engine of the repository `root` names, opened first if need be (blocking).
    pub fn engine(&self, root: Option<&str>) -> anyhow::Result<Arc<Engine>> {
        let served = self.pick(root)?;
        let mut slot = served.engine.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(engine) = slot.as_ref() {
            return Ok(engine.clone());
        }
        let engine = Arc::new((self.opener)(&served.root)?);
        *slot = Some(engine.clone());
        self.watch(&served, &engine);
        Ok(engine)
    }
}

/// A root as the file system names it (symlinks and `..` resolved), or as given.
fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A `file://` URI of an MCP root as a path (`file:///home/me/repo` → `/home/me/repo`,
/// percent-escapes decoded); None for other schemes.
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x` both name `/x`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let path = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .ok()?;
    Some(PathBuf::from(path.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            uri_path("file:///home/me/my%20repo"),
            Some(PathBuf::from("/home/me/my repo"))
        );
        assert_eq!(
            uri_path("file://localhost/srv/x"),
            Some(PathBuf::from("/srv/x"))
        );
        assert_eq!(uri_path("https://example.com/x"), None);
    }

    #[test]
    fn a_call_goes_to_the_deepest_root_holding_its_path_and_never_outside() {
        let a = tempfile::tempdir().unwrap();
        let inner = a.path().join("pkg/inner");
        std::fs::create_dir_all(inner.join("src")).unwrap();
        let b = tempfile::tempdir().unwrap();
        let roots = Roots::new(Box::new(|_| anyhow::bail!("not opened in this test")));
        assert!(roots.add(a.path()));
        assert!(roots.add(&inner));
        assert!(!roots.add(a.path()), "served once");
        assert!(!roots.add(&a.path().join("missing")));
        let root_of = |p: &Path| {
            roots
                .pick(Some(p.to_str().unwrap()))
                .map(|s| s.root.clone())
        };
        assert_eq!(root_of(&inner.join("src")).unwrap(), canonical(&inner));
        assert_eq!(root_of(&a.path().join("pkg")).unwrap(), canonical(a.path()));
        let err = root_of(b.path()).unwrap_err().to_string();
        assert!(err.contains("outside every served repository"), "{err}");
        assert_eq!(roots.pick(None).unwrap().root, canonical(a.path()));
        assert_eq!(roots.list().len(), 2);
        // The client's roots come and go; the command line's stay.
        assert_eq!(roots.set_client_roots([b.path().to_path_buf()]).len(), 1);
        assert!(root_of(b.path()).is_ok());
        assert!(roots.set_client_roots([]).is_empty());
        assert!(root_of(b.path()).is_err());
        assert_eq!(roots.list().len(), 2);
    }
}
