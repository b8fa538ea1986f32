//! `--store chroma+https://HOST:PORT[/TENANT/DATABASE][/COLLECTION]` (or `IRET_STORE`): a
//! team's index in Chroma, reached with the token and CA bundle of the environment; and
//! `iret store gc|forget`, the collection's housekeeping.
use crate::Cli;
use iret_chroma::{Access, Store, StoreUrl};
use iret_engine::maintain::{self, Remote};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Where the store is and how to reach it.
#[derive(Clone)]
pub struct Target {
    pub url: StoreUrl,
    pub access: Access,
}

/// The store named by `--store`/`IRET_STORE`, parsed, with the environment's token
/// (`IRET_STORE_TOKEN[_FILE]`, `IRET_STORE_TOKEN_HEADER`) and `--store-ca`.
pub fn target(cli: &Cli) -> anyhow::Result<Option<Target>> {
    let Some(s) = cli
        .store
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    else {
        return Ok(None);
    };
    let url = StoreUrl::parse(s)?;
    let mut access = Access::from_env()?;
    if let Some(ca) = &cli.store_ca {
        access.ca = Some(ca.clone());
    }
    access.check(&url)?;
    Ok(Some(Target { url, access }))
}

/// Connects to the collection of the repository at `root` for `model_id` (`create`: made
/// when missing, for a push).
pub fn connect(
    target: &Target,
    root: &Path,
    model_id: &str,
    dims: usize,
    create: bool,
) -> anyhow::Result<Arc<Store>> {
    let name = default_name(root, model_id);
    Ok(Arc::new(Store::connect(
        &target.url,
        &target.access,
        &name,
        model_id,
        dims,
        create,
    )?))
}

/// Connects for queries on the index in `index_dir`, which remembers what the store
/// holds of it between processes.
pub fn connect_to_query(
    target: &Target,
    root: &Path,
    index_dir: &Path,
    model_id: &str,
    dims: usize,
) -> anyhow::Result<Arc<Store>> {
    let name = default_name(root, model_id);
    let store = Store::connect(&target.url, &target.access, &name, model_id, dims, false)?;
    Ok(Arc::new(store.remembering_in(index_dir)))
}

/// The collection a repository's store uses when the address names none.
pub fn default_name(root: &Path, model_id: &str) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let folder = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    iret_chroma::collection_name(&folder, model_id, maintain::FORMAT_VERSION)
}

/// The ref a checkout pushes as: `--store-ref`, else its branch (`detached-<commit>` on
/// a detached HEAD), else `default` outside git.
pub fn ref_name(cli: &Cli, root: &Path) -> String {
    cli.store_ref
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .or_else(|| maintain::branch_of(root))
        .unwrap_or_else(|| "default".into())
}

/// Both sides of `store`, as the engine takes them.
pub fn remote(store: Arc<Store>) -> Remote {
    Remote {
        vectors: store.clone(),
        nearest: store,
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(clap::Subcommand)]
pub enum Action {
    /// Delete the records no ref's latest push needs (every push does this too; safe
    /// while others push: it waits for their checks, under the collection's lock)
    Gc(On),
    /// Forget a ref's push (a merged or deleted branch), then collect what only it needed
    Forget {
        /// The ref: a branch name, or the name a push gave with --store-ref
        #[arg(value_name = "REF")]
        name: String,
        #[command(flatten)]
        on: On,
    },
}

/// The repository whose collection is meant (its name is the default collection's).
#[derive(clap::Args)]
pub struct On {
    /// Repository root.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let Some(target) = target(cli)? else {
        anyhow::bail!("`iret store` needs --store (or IRET_STORE): the store's address");
    };
    let on = match &args.action {
        Action::Gc(on) | Action::Forget { on, .. } => on,
    };
    let model = iret_embed::load_model(&super::model_dir(cli)?)?;
    let store = connect(&target, &on.repo, model.model_id(), model.dims(), false)?;
    let report = match &args.action {
        Action::Gc(_) => iret_chroma::gc(&store)?,
        Action::Forget { name, .. } => match iret_chroma::forget(&store, name)? {
            Some(r) => r,
            None => anyhow::bail!("{} has no ref {name:?}", store.url()),
        },
    };
    let refs = match report.refs {
        1 => "1 ref".to_string(),
        n => format!("{n} refs"),
    };
    eprintln!(
        "{}: {} records deleted, {} kept (needed by {refs})",
        store.url(),
        report.deleted,
        report.kept,
    );
    Ok(ExitCode::SUCCESS)
}
