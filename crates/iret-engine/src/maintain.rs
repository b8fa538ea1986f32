//! What is done to an index outside a query, for the CLI and the server: build it, say
//! how it stands, where it lives, what built it, and the machine's embedding cache. The
//! front ends reach the index crate through here and [`crate::Engine`] only.
use iret_embed::Embedder;
use std::path::{Path, PathBuf};

pub use iret_index::cache as embedding_cache;
pub use iret_index::pipeline::Progress;
pub use iret_index::status::Status;
pub use iret_index::walk::WalkOptions;
pub use iret_index::{BuildError, BuildOptions, BuildReport, Remote, RemoteNearest, RemoteVectors};

/// The index format this build writes (a team store's collection names it).
pub const FORMAT_VERSION: u32 = iret_index::store::FORMAT_VERSION;

/// Commits over this many files are read without their files (`iret status` says so).
pub const HISTORY_MAX_FILES: usize = iret_index::history::MAX_FILES;

/// Where `root`'s index lives unless told otherwise: `<root>/.iret`.
pub fn index_dir_of(root: &Path) -> PathBuf {
    iret_index::default_index_dir(root)
}

/// Builds or updates the index of `root` in `index_dir` (`iret index`).
pub fn index(
    root: &Path,
    index_dir: &Path,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
) -> Result<BuildReport, BuildError> {
    iret_index::build(root, index_dir, embedder, opts)
}

/// Whether the live index in `index_dir` holds a static model's vectors (`iret index
/// --static`: read, and refreshed, by the model that built it).
pub fn built_static(index_dir: &Path) -> bool {
    iret_index::live_manifest(index_dir).is_ok_and(|m| iret_embed::is_static_model(&m.model_id))
}

/// The model that made the live index in `index_dir`, and its vectors' dimensions.
pub fn live_model(index_dir: &Path) -> anyhow::Result<(String, usize)> {
    let m = iret_index::live_manifest(index_dir)?;
    Ok((m.model_id, m.dims))
}

/// Whether this iret can read the live generation in `index_dir` (there is one, in this
/// format, by this chunker and tokenizer).
pub fn readable(index_dir: &Path) -> bool {
    iret_index::live_manifest(index_dir).is_ok_and(|m| m.check_compatible(None).is_ok())
}

/// An index as `iret status` reports it.
#[derive(Debug, serde::Serialize)]
pub struct IndexStatus {
    #[serde(flatten)]
    pub index: Status,
    /// How far a running build has embedded (None: no build is embedding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// The machine's embedding cache folder.
    #[serde(skip)]
    pub cache_dir: PathBuf,
}

/// How the index of `root` stands against its files (`iret status`), without opening an
/// engine: the index, what changed since, the history it holds, the embedding cache, and
/// how far a running build has embedded.
pub fn status(root: &Path, index_dir: &Path) -> anyhow::Result<IndexStatus> {
    Ok(IndexStatus {
        index: iret_index::status::status(root, index_dir)?,
        progress: Progress::read(index_dir),
        cache_dir: embedding_cache::user_dir(),
    })
}

/// The commit HEAD names in `root` (None outside git).
pub fn head_of(root: &Path) -> Option<String> {
    iret_index::history::head_of(root)
}

/// The branch checked out in `root` (`detached-<commit>` on a detached HEAD; None
/// outside git).
pub fn branch_of(root: &Path) -> Option<String> {
    iret_index::history::branch_of(root)
}
