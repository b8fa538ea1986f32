//! Phase timings on stderr when `IRET_PROFILE` is set (for finding where time goes):
//! the index build's stages and a query's cycles, each with the resident memory after it
//! (Linux).
use std::time::Instant;

pub struct Phases {
    on: bool,
    last: Instant,
}

impl Default for Phases {
    fn default() -> Self {
        Self::new()
    }
}

impl Phases {
    pub fn new() -> Self {
        Self {
            on: std::env::var_os("IRET_PROFILE").is_some(),
            last: Instant::now(),
        }
    }

    /// Prints the time since the last mark (when profiling), and starts the next phase.
    pub fn mark(&mut self, name: impl std::fmt::Display) {
        if self.on {
            eprintln!(
                "iret: {:<12} {:>8.1} ms {}{}",
                name.to_string(),
                self.last.elapsed().as_secs_f64() * 1e3,
                resident_mb().map_or(String::new(), |mb| format!("{mb:>7} MB resident")),
                peak_mb().map_or(String::new(), |mb| format!(", {mb} MB at most so far"))
            );
        }
        self.last = Instant::now();
    }
}

/// This process's highest resident memory so far (Linux: `VmHWM` in `/proc/self/status`).
fn peak_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// This process's resident memory (Linux: `/proc/self/statm`, pages of 4 KiB).
fn resident_mb() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096 / (1 << 20))
}
