//! Fresh without waiting: a `notify` watcher on the engine's root updates the index in
//! the background as files change, so a call after an edit answers at once from an index
//! that already holds it.
//!
//! Events under `.iret`, git's own folder and the folders the walk skips (`node_modules`,
//! `target`, ...) are ignored. A burst of events is one update: it starts once the tree
//! has been quiet for [`QUIET`] (or [`MAX_DELAY`] after the burst's first event). Memory
//! stays bounded however many events come (they set a flag, they are not queued). While
//! events are pending, or when watching failed (no inotify watches left, a removed root),
//! a call refreshes before answering, as without a watcher. A call first writes a marker
//! file into the index folder and waits for its event: the events come in order, so once
//! it is back every change made before the call has been seen.
use crate::engine::Engine;
use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// Quiet time that ends a burst of changes.
pub const QUIET: Duration = Duration::from_millis(200);
/// The longest a burst waits before its update starts.
pub const MAX_DELAY: Duration = Duration::from_secs(2);

/// What the watcher tells the engine, and the engine's calls ask.
#[derive(Default)]
pub(crate) struct Signal {
    /// First and last event of the burst not yet in the index.
    pending: Mutex<Option<(Instant, Instant)>>,
    wake: Condvar,
    /// Watching failed: calls refresh first again.
    failed: AtomicBool,
    /// An update is taking a burst in: calls wait for it.
    busy: AtomicBool,
    stopped: AtomicBool,
    /// Markers: the next to write, and the highest whose event has come back.
    next_marker: AtomicU64,
    seen_marker: Mutex<u64>,
    marker_seen: Condvar,
}

/// A marker file's name in the index folder: `watch-sync-N`.
const MARKER: &str = "watch-sync-";

/// The longest a call waits for its marker's event before refreshing first instead.
const SYNC_WAIT: Duration = Duration::from_millis(250);

impl Signal {
    /// The index may lag the tree: changes pending, or watching failed.
    pub(crate) fn unsure(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
            || self.busy()
            || self.pending.lock().map(|p| p.is_some()).unwrap_or(true)
    }

    /// Writes a marker into `index_dir` and waits until its event comes back: then
    /// every change made before it has been seen. False when it does not come in time.
    pub(crate) fn sync(&self, index_dir: &Path) -> bool {
        let n = self.next_marker.fetch_add(1, Ordering::SeqCst) + 1;
        let path = index_dir.join(format!("{MARKER}{n}"));
        if std::fs::write(&path, b"").is_err() {
            return false;
        }
        let _ = std::fs::remove_file(&path);
        let deadline = Instant::now() + SYNC_WAIT;
        let mut seen = self.seen_marker.lock().unwrap_or_else(|e| e.into_inner());
        while *seen < n {
            let now = Instant::now();
            if now >= deadline || self.failed.load(Ordering::SeqCst) {
                return false;
            }
            seen = self
                .marker_seen
                .wait_timeout(seen, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// An event named marker `n`.
    fn marker(&self, n: u64) {
        let mut seen = self.seen_marker.lock().unwrap_or_else(|e| e.into_inner());
        *seen = (*seen).max(n);
        self.marker_seen.notify_all();
    }

    /// An update is running.
    pub(crate) fn busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }

    fn changed(&self) {
        let now = Instant::now();
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        *p = Some(p.map_or((now, now), |(first, _)| (first, now)));
        self.wake.notify_all();
    }

    fn fail(&self, why: &str) {
        if !self.failed.swap(true, Ordering::SeqCst) {
            eprintln!("iret: watching stopped ({why}); each call refreshes the index first");
        }
        self.wake.notify_all();
    }

    /// Waits for a burst to settle; false when stopped.
    fn settle(&self) -> bool {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.stopped.load(Ordering::SeqCst) {
                return false;
            }
            match *p {
                None => {
                    p = self.wake.wait(p).unwrap_or_else(|e| e.into_inner());
                }
                Some((first, last)) => {
                    let now = Instant::now();
                    let due = (last + QUIET).min(first + MAX_DELAY);
                    if now >= due {
                        return true;
                    }
                    p = self
                        .wake
                        .wait_timeout(p, due - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
    }

    /// The burst is being taken in: events from now on start a new one.
    fn take(&self) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        self.busy.store(true, Ordering::SeqCst);
        *p = None;
    }

    fn done(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }
}

/// One background update, as `iret watch` reports it.
#[derive(Debug, Clone)]
pub struct Update {
    /// Files the update took in (0: the events touched nothing indexed).
    pub files: usize,
    pub took: Duration,
    pub error: Option<String>,
}

/// A running watcher; dropping it stops watching (the engine then refreshes before calls).
pub struct Watch {
    _watcher: notify::RecommendedWatcher,
    signal: Arc<Signal>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.signal.stopped.store(true, Ordering::SeqCst);
        self.signal.failed.store(true, Ordering::SeqCst);
        self.signal.wake.notify_all();
    }
}

/// Watches `engine`'s root and keeps its index fresh in the background; `report` hears of
/// each update. An error when the root cannot be watched (calls then refresh first).
pub fn watch(
    engine: &Arc<Engine>,
    report: impl Fn(&Update) + Send + 'static,
) -> anyhow::Result<Watch> {
    let signal = Arc::new(Signal::default());
    let root = engine.root().to_path_buf();
    let index_dir = engine.index_dir().to_path_buf();
    let events = signal.clone();
    let (r, d) = (root.clone(), index_dir.clone());
    let mut watcher =
        notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
            Ok(event) => {
                if let Some(n) = marker_of(&event, &d) {
                    events.marker(n);
                } else if matters(&event, &r, &d) {
                    events.changed();
                }
            }
            Err(e) => events.fail(&e.to_string()),
        })?;
    watcher
        .watch(&root, RecursiveMode::Recursive)
        .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", root.display()))?;
    if !index_dir.starts_with(&root) {
        // The markers calls write must come back through the same queue.
        std::fs::create_dir_all(&index_dir)?;
        watcher
            .watch(&index_dir, RecursiveMode::NonRecursive)
            .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", index_dir.display()))?;
    }
    engine.set_watch(signal.clone());
    let weak: Weak<Engine> = Arc::downgrade(engine);
    let worker = signal.clone();
    std::thread::Builder::new()
        .name("iret-watch".into())
        .spawn(move || updates(weak, worker, report))?;
    Ok(Watch {
        _watcher: watcher,
        signal,
    })
}

/// The background loop: each settled burst becomes one update, until the engine or the
/// watch goes away.
fn updates(engine: Weak<Engine>, signal: Arc<Signal>, report: impl Fn(&Update)) {
    while signal.settle() {
        let Some(engine) = engine.upgrade() else {
            return;
        };
        signal.take();
        let started = Instant::now();
        let result = engine.update();
        signal.done();
        let update = match result {
            Ok(files) => Update {
                files,
                took: started.elapsed(),
                error: None,
            },
            Err(e) => Update {
                files: 0,
                took: started.elapsed(),
                error: Some(format!("{e:#}")),
            },
        };
        report(&update);
    }
}

/// The marker an event names, if it is one (`index_dir/watch-sync-N`).
fn marker_of(event: &notify::Event, index_dir: &Path) -> Option<u64> {
    event.paths.iter().find_map(|p| {
        let name = p.strip_prefix(index_dir).ok()?.to_str()?;
        name.strip_prefix(MARKER)?.parse().ok()
    })
}

/// Whether an event can change the index: not a read, not under the index folder, git's
/// own folder or a folder the walk skips.
fn matters(event: &notify::Event, root: &Path, index_dir: &Path) -> bool {
    if matches!(event.kind, EventKind::Access(_)) {
        return false;
    }
    event
        .paths
        .iter()
        .any(|p| relevant_path(p, root, index_dir))
}

fn relevant_path(path: &Path, root: &Path, index_dir: &Path) -> bool {
    if path.starts_with(index_dir) {
        return false;
    }
    let rel: PathBuf = path.strip_prefix(root).unwrap_or(path).to_path_buf();
    !rel.components().any(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(iret_index::walk::is_skipped_dir)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_to_sources_matter_and_the_index_git_and_skipped_folders_do_not() {
        let root = Path::new("/r");
        let dir = Path::new("/r/.iret");
        assert!(relevant_path(Path::new("/r/src/a.ts"), root, dir));
        assert!(!relevant_path(Path::new("/r/.iret/gen-1/x"), root, dir));
        assert!(!relevant_path(Path::new("/r/.git/index"), root, dir));
        assert!(!relevant_path(
            Path::new("/r/node_modules/x/i.js"),
            root,
            dir
        ));
        assert!(!relevant_path(Path::new("/r/target/debug/x"), root, dir));
        let elsewhere = Path::new("/idx");
        assert!(!relevant_path(Path::new("/idx/CURRENT"), root, elsewhere));
    }

    #[test]
    fn a_burst_settles_after_its_quiet_time() {
        let s = Signal::default();
        assert!(!s.unsure());
        s.changed();
        assert!(s.unsure());
        let t = Instant::now();
        assert!(s.settle());
        assert!(t.elapsed() >= QUIET);
        s.take();
        assert!(s.unsure(), "an update is running");
        s.done();
        assert!(!s.unsure());
        s.stopped.store(true, Ordering::SeqCst);
        assert!(!s.settle(), "a stopped watch settles nothing");
    }
}
