//! The shared store: one SQLite database, `embeddings.db`, in the user's cache folder.
//!
//! SQLite gives what a cache shared by several processes needs: WAL mode lets `iret`
//! processes read and write at once (a writer waits for another's transaction, up to
//! [`BUSY_WAIT`]); a write is one transaction, so a kill loses at most the batch being
//! written. Each row carries a checksum of its key and vector: a row that does not match
//! is never returned (it is dropped and its text embedded again), and a file SQLite
//! cannot read is moved aside and a new one started. Rows carry the time they were last
//! used; past the size cap the least recently used go.
use half::f16;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database's file in the cache folder.
pub const DB_FILE: &str = "embeddings.db";
/// How long a write waits for another process's transaction.
const BUSY_WAIT: Duration = Duration::from_secs(60);
/// A hit refreshes its row's last use only when older than this (fewer writes).
const TOUCH_AFTER_SECS: i64 = 3600;
/// Pruning goes down to this share of the cap, so that it does not run on every build.
const PRUNE_TO: f64 = 0.9;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS vectors (
    key BLOB PRIMARY KEY NOT NULL,
    vec BLOB NOT NULL,
    sum INTEGER NOT NULL,
    used INTEGER NOT NULL
)";

pub(crate) struct Db {
    conn: Connection,
    path: PathBuf,
}

/// What the store holds, for `iret status` and `iret cache`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DbStats {
    pub path: PathBuf,
    pub entries: u64,
    /// Bytes of the database in use (its file may hold free pages beyond).
    pub bytes: u64,
    pub cap_bytes: u64,
}

/// The checksum of a row: the first 8 bytes of blake3(key, vector).
fn checksum(key: &[u8; 16], vec: &[u8]) -> i64 {
    let mut h = blake3::Hasher::new();
    h.update(key);
    h.update(vec);
    let b = h.finalize();
    i64::from_le_bytes(b.as_bytes()[..8].try_into().expect("8 bytes"))
}

pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn to_bytes(v: &[f16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Box<[f16]> {
    b.chunks_exact(2)
        .map(|p| f16::from_le_bytes([p[0], p[1]]))
        .collect()
}

/// Is this error SQLite saying the file is damaged or not a database?
pub(crate) fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

impl Db {
    /// Opens (creating) the database in `dir`. A damaged file is moved aside to
    /// `embeddings.db.damaged` and a new one started; `note` says so.
    pub(crate) fn open(dir: &Path, note: &mut Vec<String>) -> rusqlite::Result<Self> {
        let path = dir.join(DB_FILE);
        match Self::open_at(&path) {
            Err(e) if is_damage(&e) => {
                Self::set_aside(&path);
                note.push(format!(
                    "the embedding cache {} was damaged ({e}); started a new one",
                    path.display()
                ));
                Self::open_at(&path)
            }
            other => other,
        }
    }

    /// Opens the database at `path` as it is (a damaged one is an error).
    pub(crate) fn open_at(path: &Path) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_WAIT)?;
        // auto_vacuum only takes effect before the first table: pruned space is returned.
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute(SCHEMA, [])?;
        // Reading the first row checks more than the header.
        conn.query_row(
            "SELECT count(*) FROM (SELECT 1 FROM vectors LIMIT 1)",
            [],
            |_| Ok(()),
        )?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Moves a damaged database (and its journal files) aside.
    fn set_aside(path: &Path) {
        let aside = path.with_extension("db.damaged");
        let _ = std::fs::rename(path, &aside);
        for ext in ["db-wal", "db-shm"] {
            let _ = std::fs::remove_file(path.with_extension(ext));
        }
    }

    /// Looks `keys` up; calls `found` with each stored vector whose checksum holds. Rows
    /// that fail their checksum are deleted (returned as the count of damaged rows).
    pub(crate) fn get_many(
        &self,
        keys: &[[u8; 16]],
        mut found: impl FnMut([u8; 16], Box<[f16]>),
    ) -> rusqlite::Result<usize> {
        let now = now_secs();
        let mut hits = Vec::new();
        let mut bad = Vec::new();
        {
            let mut get = self
                .conn
                .prepare_cached("SELECT vec, sum, used FROM vectors WHERE key = ?1")?;
            for k in keys {
                let row = get
                    .query_row([&k[..]], |r| {
                        Ok((
                            r.get::<_, Vec<u8>>(0)?,
                            r.get::<_, i64>(1)?,
                            r.get::<_, i64>(2)?,
                        ))
                    })
                    .optional()?;
                let Some((vec, sum, used)) = row else {
                    continue;
                };
                if vec.len() % 2 != 0 || checksum(k, &vec) != sum {
                    bad.push(*k);
                    continue;
                }
                if now - used > TOUCH_AFTER_SECS {
                    hits.push(*k);
                }
                found(*k, from_bytes(&vec));
            }
        }
        if !hits.is_empty() || !bad.is_empty() {
            let tx = self.conn.unchecked_transaction()?;
            {
                let mut touch = tx.prepare_cached("UPDATE vectors SET used = ?1 WHERE key = ?2")?;
                for k in &hits {
                    touch.execute(params![now, &k[..]])?;
                }
                let mut drop = tx.prepare_cached("DELETE FROM vectors WHERE key = ?1")?;
                for k in &bad {
                    drop.execute([&k[..]])?;
                }
            }
            tx.commit()?;
        }
        Ok(bad.len())
    }

    /// Stores these entries in one transaction (an existing key is replaced), last used
    /// at `used`.
    pub(crate) fn put_many<'a>(
        &self,
        entries: impl IntoIterator<Item = (&'a [u8; 16], &'a [f16])>,
        used: i64,
    ) -> rusqlite::Result<()> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut put = tx.prepare_cached(
                "INSERT OR REPLACE INTO vectors (key, vec, sum, used) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (k, v) in entries {
                let bytes = to_bytes(v);
                put.execute(params![&k[..], &bytes, checksum(k, &bytes), used])?;
            }
        }
        tx.commit()
    }

    /// Bytes in use: pages minus free pages.
    fn live_bytes(&self) -> rusqlite::Result<u64> {
        let page = |name: &str| -> rusqlite::Result<u64> {
            self.conn
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
                .map(|n| n.max(0) as u64)
        };
        Ok((page("page_count")? - page("freelist_count")?) * page("page_size")?)
    }

    pub(crate) fn stats(&self, cap_bytes: u64) -> rusqlite::Result<DbStats> {
        let entries: i64 = self
            .conn
            .query_row("SELECT count(*) FROM vectors", [], |r| r.get(0))?;
        Ok(DbStats {
            path: self.path.clone(),
            entries: entries.max(0) as u64,
            bytes: self.live_bytes()?,
            cap_bytes,
        })
    }

    /// Checks the whole database: SQLite's own check of its pages, then every row's
    /// checksum. Returns the rows checked, or what is wrong.
    pub(crate) fn verify(&self) -> Result<u64, String> {
        let check: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if check != "ok" {
            return Err(format!("SQLite's check failed: {check}"));
        }
        let mut rows = self
            .conn
            .prepare("SELECT key, vec, sum FROM vectors")
            .map_err(|e| e.to_string())?;
        let mut n = 0;
        let mut bad = 0;
        let mut it = rows.query([]).map_err(|e| e.to_string())?;
        while let Some(r) = it.next().map_err(|e| e.to_string())? {
            let key: Vec<u8> = r.get(0).map_err(|e| e.to_string())?;
            let vec: Vec<u8> = r.get(1).map_err(|e| e.to_string())?;
            let sum: i64 = r.get(2).map_err(|e| e.to_string())?;
            let ok = <[u8; 16]>::try_from(key.as_slice()).is_ok_and(|k| checksum(&k, &vec) == sum);
            bad += usize::from(!ok);
            n += 1;
        }
        if bad > 0 {
            return Err(format!("{bad} of {n} entries fail their checksum"));
        }
        Ok(n)
    }

    /// Past `cap_bytes`, deletes the least recently used rows down to [`PRUNE_TO`] of the
    /// cap and returns the space to the file system. Returns how many rows went.
    pub(crate) fn prune(&self, cap_bytes: u64) -> rusqlite::Result<u64> {
        let live = self.live_bytes()?;
        if live <= cap_bytes {
            return Ok(0);
        }
        let rows = self.stats(cap_bytes)?.entries;
        let keep = (rows as f64 * (cap_bytes as f64 * PRUNE_TO / live as f64)) as u64;
        let drop = rows.saturating_sub(keep);
        let gone = self.conn.execute(
            "DELETE FROM vectors WHERE key IN (SELECT key FROM vectors ORDER BY used LIMIT ?1)",
            [drop as i64],
        )?;
        self.conn.execute_batch("PRAGMA incremental_vacuum")?;
        Ok(gone as u64)
    }
}
