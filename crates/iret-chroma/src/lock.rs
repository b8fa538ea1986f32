//! A lock on a collection, held while a push checks its records and while garbage is
//! collected, so that the two never interleave: a collection `<collection>.lock`, which
//! only one client can create (Chroma answers 409 to the others). Its metadata says who
//! holds it and until when; a lock past that time (its holder died) is broken.
use crate::client::Client;
use crate::StoreError;
use serde_json::{json, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a lock stands without its holder: far beyond a check and a collection
/// (seconds at 100k records), short enough that a crash does not block a team for long.
const LEASE: Duration = Duration::from_secs(600);
/// How often a waiter tries again.
const RETRY: Duration = Duration::from_millis(200);

/// A held lock, released (its collection deleted) on drop.
pub(crate) struct Lock<'a> {
    client: &'a Client,
    name: String,
}

impl<'a> Lock<'a> {
    /// Takes the lock of `collection`, waiting up to `wait` for its holder.
    pub(crate) fn take(
        client: &'a Client,
        collection: &str,
        wait: Duration,
    ) -> Result<Self, StoreError> {
        let name = format!("{collection}.lock");
        let started = Instant::now();
        loop {
            let now = unix_now();
            let holder = format!("{} pid {}", host_name(), std::process::id());
            let metadata = json!({"holder": holder, "expires": now + LEASE.as_secs()});
            if client.create_new(&name, metadata)?.is_some() {
                return Ok(Self { client, name });
            }
            let held = client.collection(&name)?.and_then(|c| c.metadata);
            let held = Value::Object(held.unwrap_or_default());
            if held["expires"].as_u64().is_some_and(|t| t < now) {
                // Its holder died: break it (the next round races for it like anyone).
                client.delete_collection(&name).or_else(gone)?;
                continue;
            }
            if started.elapsed() >= wait {
                return Err(StoreError::Locked {
                    collection: collection.to_string(),
                    holder: held["holder"]
                        .as_str()
                        .unwrap_or("another push")
                        .to_string(),
                });
            }
            std::thread::sleep(RETRY);
        }
    }
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        // Not released (the server is gone): it lapses after its lease.
        let _ = self.client.delete_collection(&self.name);
    }
}

/// A collection another client deleted first is deleted all the same.
fn gone(e: StoreError) -> Result<(), StoreError> {
    match e {
        StoreError::Server { status: 404, .. } => Ok(()),
        e => Err(e),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "a machine".into())
}
