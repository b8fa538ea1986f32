//! What the watcher tells the engine, and what the engine's calls ask of it: changes
//! pending, an update running, watching failed, and markers that prove every change made
//! before a call has been seen. Shared by [`crate::engine`] and [`crate::watch`], which
//! both depend on it and not on each other's internals.
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
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
pub(crate) const MARKER: &str = "watch-sync-";

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
    pub(crate) fn marker(&self, n: u64) {
        let mut seen = self.seen_marker.lock().unwrap_or_else(|e| e.into_inner());
        *seen = (*seen).max(n);
        self.marker_seen.notify_all();
    }

    /// An update is running.
    pub(crate) fn busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }

    pub(crate) fn changed(&self) {
        let now = Instant::now();
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        *p = Some(p.map_or((now, now), |(first, _)| (first, now)));
        self.wake.notify_all();
    }

    pub(crate) fn fail(&self, why: &str) {
        if !self.failed.swap(true, Ordering::SeqCst) {
            eprintln!("iret: watching stopped ({why}); each call refreshes the index first");
        }
        self.wake.notify_all();
    }

    /// Waits for a burst to settle; false when stopped.
    pub(crate) fn settle(&self) -> bool {
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
    pub(crate) fn take(&self) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        self.busy.store(true, Ordering::SeqCst);
        *p = None;
    }

    /// The watcher is gone: calls refresh first again, and the update loop ends.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.failed.store(true, Ordering::SeqCst);
        self.wake.notify_all();
    }

    pub(crate) fn done(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        s.stop();
        assert!(!s.settle(), "a stopped watch settles nothing");
    }
}
