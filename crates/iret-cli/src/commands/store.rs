//! `--store chroma://HOST:PORT[/COLLECTION]` (or `IRET_STORE`): a team's index in Chroma.
use crate::Cli;
use iret_chroma::{Store, StoreUrl};
use iret_index::Remote;
use std::path::Path;
use std::sync::Arc;

/// The store named by `--store`/`IRET_STORE`, parsed.
pub fn url(cli: &Cli) -> anyhow::Result<Option<StoreUrl>> {
    match cli
        .store
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        Some(s) => Ok(Some(StoreUrl::parse(s)?)),
        None => Ok(None),
    }
}

/// Connects to the collection of the repository at `root` for `model_id` (`create`: made
/// when missing, for a push).
pub fn connect(
    url: &StoreUrl,
    root: &Path,
    model_id: &str,
    dims: usize,
    create: bool,
) -> anyhow::Result<Arc<Store>> {
    let name = default_name(root, model_id);
    Ok(Arc::new(Store::connect(
        url, &name, model_id, dims, create,
    )?))
}

/// Connects for queries on the index in `index_dir`, which remembers what the store
/// holds of it between processes.
pub fn connect_to_query(
    url: &StoreUrl,
    root: &Path,
    index_dir: &Path,
    model_id: &str,
    dims: usize,
) -> anyhow::Result<Arc<Store>> {
    let name = default_name(root, model_id);
    let store = Store::connect(url, &name, model_id, dims, false)?;
    Ok(Arc::new(store.remembering_in(index_dir)))
}

/// The collection a repository's store uses when the address names none.
pub fn default_name(root: &Path, model_id: &str) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let folder = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    iret_chroma::collection_name(&folder, model_id, iret_index::store::FORMAT_VERSION)
}

/// Both sides of `store`, as the engine takes them.
pub fn remote(store: Arc<Store>) -> Remote {
    Remote {
        vectors: store.clone(),
        nearest: store,
    }
}
