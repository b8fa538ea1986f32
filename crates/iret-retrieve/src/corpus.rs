//! An opened index with the facts about it that every query needs, computed once per
//! index rather than once per query: the version folders, the import graph, the history.
use crate::history::HistoryFacts;
use crate::imports::ImportGraph;
use iret_index::{Index, RemoteNearest};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// The chunks of `file`, as indices into `index.chunks`.
pub(crate) fn chunk_range(index: &Index, file: u32) -> Range<usize> {
    let f = &index.files[file as usize];
    f.first_chunk as usize..(f.first_chunk + f.chunk_count) as usize
}

/// What retrieval searches: the index and its precomputed facts.
pub struct Corpus {
    pub index: Index,
    pub facts: Facts,
    /// A served vector search (a team's store) that proposes the vector leg's chunks
    /// instead of the local graph; scores stay exact dots on the local vectors.
    pub served: Option<Served>,
}

impl Corpus {
    pub fn new(index: Index) -> Self {
        let facts = Facts::of(&index);
        Self {
            index,
            facts,
            served: None,
        }
    }

    /// This corpus with its vector leg proposed by `nearest` (`--store`).
    pub fn with_served(mut self, nearest: Arc<dyn RemoteNearest>) -> Self {
        self.served = Some(Served::new(&self.index, nearest));
        self
    }
}

/// A served vector search and the map from its keys back to this index's chunks.
pub struct Served {
    pub nearest: Arc<dyn RemoteNearest>,
    /// Each chunk's key, by chunk.
    keys: Vec<[u8; 16]>,
    chunks: HashMap<[u8; 16], u32>,
    /// The chunks the store lacked at the version last checked.
    coverage: Mutex<Option<Coverage>>,
}

/// This index's chunks the store lacks, as of one version of the store.
struct Coverage {
    version: String,
    missing: Arc<Vec<u32>>,
}

impl Served {
    fn new(index: &Index, nearest: Arc<dyn RemoteNearest>) -> Self {
        let keys: Vec<[u8; 16]> = (0..index.chunks.len())
            .map(|c| iret_index::remote::chunk_key(index, c))
            .collect();
        let chunks = keys
            .iter()
            .enumerate()
            .map(|(c, k)| (*k, c as u32))
            .collect();
        Self {
            nearest,
            keys,
            chunks,
            coverage: Mutex::new(None),
        }
    }

    /// The chunk of this index stored under `key` (another checkout's chunks are not).
    pub fn chunk(&self, key: &[u8; 16]) -> Option<usize> {
        self.chunks.get(key).map(|&c| c as usize)
    }

    /// This index's chunks the store does not hold (sorted): a push cut short, files
    /// changed here since the last push, or another checkout's push that deleted them.
    /// The store never proposes them, so the vector leg searches them here. Asked of the
    /// store again only when its version changed.
    pub fn missing(&self) -> Result<Arc<Vec<u32>>, String> {
        let version = self.nearest.version()?;
        if let Some(c) = self.coverage.lock().unwrap().as_ref() {
            if c.version == version {
                return Ok(c.missing.clone());
            }
        }
        let held = self.nearest.holding(&self.keys)?;
        let missing: Arc<Vec<u32>> = Arc::new(
            held.iter()
                .enumerate()
                .filter(|(_, &h)| !h)
                .map(|(c, _)| c as u32)
                .collect(),
        );
        *self.coverage.lock().unwrap() = Some(Coverage {
            version,
            missing: missing.clone(),
        });
        Ok(missing)
    }
}

/// Facts about the whole index.
#[derive(Debug, Default)]
pub struct Facts {
    /// `parent/` → the versions found as `parent/vN/` folders.
    versions: Vec<(String, Vec<u32>)>,
    pub imports: ImportGraph,
    /// The repository's history (empty outside git).
    pub history: HistoryFacts,
}

impl Facts {
    pub fn of(index: &Index) -> Self {
        let mut phases = iret_index::profile::Phases::new();
        let versions = version_folders(index);
        phases.mark("facts: versions");
        let imports = ImportGraph::of(index);
        phases.mark("facts: imports");
        let history = HistoryFacts::of(index);
        phases.mark("facts: history");
        Self {
            versions,
            imports,
            history,
        }
    }

    /// Folders of superseded versions: `v3/` when a sibling `v4/` exists (zod keeps v3
    /// beside v4, API trees keep `v1/` beside `v2/`). Like legacy folders they are rarely
    /// what a task is about, unless the task names that version (`named`). Returns `dir/`
    /// prefixes.
    pub fn older_versions(&self, named: &[u32]) -> Vec<String> {
        let mut out = Vec::new();
        for (parent, versions) in &self.versions {
            let newest = versions.iter().copied().max().unwrap_or(0);
            for &v in versions {
                if v < newest && !named.contains(&v) {
                    out.push(format!("{parent}v{v}/"));
                }
            }
        }
        out
    }
}

/// `vN` as a folder name (at most three digits).
fn version(name: &str) -> Option<u32> {
    name.strip_prefix('v')
        .or_else(|| name.strip_prefix('V'))
        .filter(|n| !n.is_empty() && n.len() <= 3)
        .and_then(|n| n.parse().ok())
}

fn version_folders(index: &Index) -> Vec<(String, Vec<u32>)> {
    let mut seen: HashMap<&str, Vec<u32>> = HashMap::new();
    for f in &index.files {
        let mut start = 0;
        for (i, _) in f.path.match_indices('/') {
            if let Some(v) = version(&f.path[start..i]) {
                let list = seen.entry(&f.path[..start]).or_default();
                if !list.contains(&v) {
                    list.push(v);
                }
            }
            start = i + 1;
        }
    }
    let mut out: Vec<(String, Vec<u32>)> = seen
        .into_iter()
        .map(|(parent, vs)| (parent.to_string(), vs))
        .collect();
    out.sort();
    out
}
