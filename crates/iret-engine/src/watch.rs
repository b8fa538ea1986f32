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
use crate::signal::{Signal, MARKER};
pub use crate::signal::{MAX_DELAY, QUIET};
use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

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
        self.signal.stop();
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
}
