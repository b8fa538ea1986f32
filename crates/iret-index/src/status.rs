//! What `iret status` reports: the live index and how far the working tree has moved on.
use crate::index::Index;
use crate::store::StoreError;
use crate::walk::walk_with;
use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, serde::Serialize)]
pub struct Status {
    pub generation: String,
    pub model_id: String,
    pub format_version: u32,
    pub chunker_version: u32,
    pub files: usize,
    pub chunks: usize,
    /// Indexed files whose size or mtime changed since.
    pub modified: Vec<String>,
    /// Source files not in the index.
    pub added: Vec<String>,
    /// Indexed files that are gone.
    pub deleted: Vec<String>,
    pub bytes_on_disk: u64,
    pub built_unix: u64,
    /// Chunks not embedded yet (a keyword or static tier).
    pub pending_vectors: usize,
    /// `full`, `static` or `keyword` ([`crate::Manifest::tier`]).
    pub tier: String,
    /// Files (and folders) left out, by reason, when the index was built.
    pub skipped: std::collections::BTreeMap<String, usize>,
    /// Built with `--no-ignore`: ignore files are not read (refreshes included).
    pub no_ignore: bool,
    /// The shared embedding cache (None: none yet, unreadable, or not asked for: only
    /// [`status`] reads it; [`status_of`] runs before every refreshing query).
    pub embedding_cache: Option<crate::cache::DbStats>,
    /// How much git history the index holds.
    pub history: HistoryStatus,
}

/// The history field of the index against the repository's HEAD.
#[derive(Debug, serde::Serialize)]
pub struct HistoryStatus {
    /// Commits with files attributed (0: no history: not in git, or no commits).
    pub commits: usize,
    /// Distinct paths those commits touched.
    pub paths: usize,
    /// Merges and mechanical commits read without attributing files.
    pub merges: usize,
    pub huge: usize,
    /// The commit the history was read at, and the repository's HEAD now.
    pub head: Option<String>,
    pub repository_head: Option<String>,
}

impl HistoryStatus {
    /// HEAD moved since the index read the history (a commit, a checkout).
    pub fn moved(&self) -> bool {
        self.head != self.repository_head
    }
}

impl Status {
    /// Files changed since the build, plus one when HEAD moved (the history is behind).
    pub fn stale(&self) -> usize {
        self.modified.len() + self.added.len() + self.deleted.len() + self.history.moved() as usize
    }
}

pub fn status(root: &Path, index_dir: &Path) -> Result<Status, StoreError> {
    let index = Index::open(index_dir, None)?;
    let mut status = status_of(root, &index);
    status.embedding_cache = crate::cache::stats(&crate::cache::user_dir())
        .ok()
        .flatten();
    Ok(status)
}

/// Status of an opened index against the working tree (one walk).
pub fn status_of(root: &Path, index: &Index) -> Status {
    let walked = walk_with(root, index.manifest.walk);
    let known: HashMap<&str, (u64, u128)> = index
        .files
        .iter()
        .map(|f| (f.path.as_str(), (f.size, f.mtime_ns)))
        .collect();
    let mut modified = Vec::new();
    let mut added = Vec::new();
    for f in &walked.files {
        match known.get(f.rel.as_str()) {
            Some(&(size, mtime)) if size == f.size && mtime == f.mtime_ns => {}
            Some(_) => modified.push(f.rel.clone()),
            None if index.manifest.skipped_files.contains(&f.rel) => {}
            None => added.push(f.rel.clone()),
        }
    }
    let present: std::collections::HashSet<&str> =
        walked.files.iter().map(|f| f.rel.as_str()).collect();
    let deleted = index
        .files
        .iter()
        .filter(|f| !present.contains(f.path.as_str()))
        .map(|f| f.path.clone())
        .collect();
    let bytes_on_disk = dir_size(&index.generation);
    Status {
        generation: index
            .generation
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string(),
        model_id: index.manifest.model_id.clone(),
        format_version: index.manifest.format_version,
        chunker_version: index.manifest.chunker_version,
        files: index.files.len(),
        chunks: index.chunks.len(),
        modified,
        added,
        deleted,
        bytes_on_disk,
        built_unix: index.manifest.built_unix,
        pending_vectors: index.manifest.pending_vectors,
        tier: index.manifest.tier().into(),
        skipped: index.manifest.skipped.clone(),
        no_ignore: index.manifest.walk.no_ignore,
        embedding_cache: None,
        history: HistoryStatus {
            commits: index.history.commits.len(),
            paths: index.history.paths.len(),
            merges: index.history.merges,
            huge: index.history.huge,
            head: index.history.head.clone(),
            repository_head: crate::history::head_of(root),
        },
    }
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |rd| {
        rd.flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    })
}
