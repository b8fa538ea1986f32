pub mod bench;
pub mod cache;
pub mod index;
pub mod mcp;
pub mod search;
pub mod setup;
pub mod status;
pub mod store;
pub mod watch;

use crate::Cli;
use iret_embed::{locate_model_dir, Embedder, TokenCounter};
use iret_engine::{Engine, OpenOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A repository and where its index lives.
#[derive(clap::Args)]
pub struct Location {
    /// Repository root.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Where the index lives (default: <PATH>/.iret).
    #[arg(long)]
    pub index_dir: Option<PathBuf>,
}

impl Location {
    pub fn index_dir(&self) -> PathBuf {
        self.index_dir
            .clone()
            .unwrap_or_else(|| iret_engine::maintain::index_dir_of(&self.path))
    }
}

/// The model folder named by `--model-dir`/`IRET_MODEL_DIR`, or the shipped one.
pub fn model_dir(cli: &Cli) -> anyhow::Result<PathBuf> {
    Ok(locate_model_dir(cli.model_dir.as_deref())?)
}

/// The model that reads the index in `index_dir`: `--model-dir`/`IRET_MODEL_DIR` when
/// given; else the shipped static model when the index was built with a static model
/// (`iret index --static`: read, and refreshed, by the model that built it); else the
/// shipped transformer.
pub fn model_dir_for(cli: &Cli, index_dir: &Path) -> anyhow::Result<PathBuf> {
    if cli.model_dir.is_none() && iret_engine::maintain::built_static(index_dir) {
        return Ok(iret_embed::bundled_static_model_dir()?);
    }
    model_dir(cli)
}

/// Loads the embedding model named by `--model-dir`/`IRET_MODEL_DIR` or the shipped one.
pub fn load_embedder(cli: &Cli) -> anyhow::Result<Arc<dyn Embedder>> {
    Ok(iret_embed::load_model(&model_dir(cli)?)?)
}

/// The repository `path` belongs to and its index folder: `index_dir` when given (then
/// `path` is the root), else the nearest ancestor holding `.iret`, else the git root.
pub fn locate(path: &Path, index_dir: Option<&Path>) -> (PathBuf, PathBuf) {
    match index_dir {
        Some(dir) => (path.to_path_buf(), dir.to_path_buf()),
        None => {
            let root = iret_engine::locate::repo_root(path);
            let dir = iret_engine::maintain::index_dir_of(&root);
            (root, dir)
        }
    }
}

/// An engine on the repository of `path`: built first when it has no index (`index`),
/// refreshing before each answer (`refresh`).
pub fn open_engine(
    cli: &Cli,
    path: &Path,
    index_dir: Option<&Path>,
    index: bool,
    refresh: bool,
    long_lived: bool,
) -> anyhow::Result<Engine> {
    if !path.is_dir() {
        let what = if path.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        anyhow::bail!("{} {what}", path.display());
    }
    let (root, dir) = locate(path, index_dir);
    let model = model_dir_for(cli, &dir)?;
    let embedder = iret_embed::load_model(&model)?;
    let tokens = Arc::new(TokenCounter::load(&model)?);
    let never_indexed = !dir.join("CURRENT").is_file();
    if never_indexed && index {
        eprintln!(
            "iret: {} has no index yet; indexing it first (--no-index turns this off)",
            root.display()
        );
    }
    let remote = match store::target(cli)? {
        Some(target) => Some(store::remote(store::connect_to_query(
            &target,
            &root,
            &dir,
            embedder.model_id(),
            embedder.dims(),
        )?)),
        None => None,
    };
    let opts = OpenOptions {
        remote,
        ranker: ranker(cli)?,
        query_map: query_map(cli, embedder.as_ref())?,
        index_if_missing: index,
        progress: std::io::stderr().is_terminal(),
        refresh,
        complete_in_background: long_lived,
        // A short-lived process answers from the static tier of a large first build;
        // a background `iret index` embeds the rest (a long-lived one completes it itself).
        tier_only_above: (!long_lived).then(background_above),
        ..OpenOptions::default()
    };
    let engine = Engine::open(&root, &dir, embedder, Some(tokens), &opts)?;
    if engine.opened != "opened" {
        eprintln!("iret: {}", engine.opened);
    }
    if engine.deferred > 0 {
        let pid = embed_in_background(cli, &root, &dir)?;
        eprintln!(
            "iret: answering from the first tier; a background `iret index` (pid {pid}) embeds the rest (log: {})",
            dir.join(BACKGROUND_LOG).display()
        );
    }
    Ok(engine)
}

/// The background build's output, beside the index.
pub const BACKGROUND_LOG: &str = "background-index.log";

/// Texts to embed above which a first build stops at its static tier and a background
/// `iret index --wait` embeds the rest (`IRET_BACKGROUND_ABOVE` changes it; `iret index
/// --background-above` too).
pub const BACKGROUND_ABOVE: usize = 50_000;

/// [`BACKGROUND_ABOVE`], or `IRET_BACKGROUND_ABOVE` when set to a number.
pub fn background_above() -> usize {
    std::env::var("IRET_BACKGROUND_ABOVE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(BACKGROUND_ABOVE)
}

/// This iret as a child process that reads with the same model and store as this run
/// (`--model-dir`, `--store`): a background build then makes the index this process
/// reads, not one it would have to rebuild.
pub struct Child {
    model_dir: Option<PathBuf>,
    store: Option<String>,
    store_ca: Option<PathBuf>,
}

impl Child {
    pub fn of(cli: &Cli) -> Self {
        Self {
            model_dir: cli.model_dir.clone(),
            store: cli.store.clone(),
            store_ca: cli.store_ca.clone(),
        }
    }

    /// `iret [--model-dir DIR] [--store URL] index -q --wait --no-push ROOT --index-dir DIR`.
    pub fn index(&self, root: &Path, index_dir: &Path) -> anyhow::Result<std::process::Command> {
        let mut cmd = std::process::Command::new(std::env::current_exe()?);
        if let Some(dir) = &self.model_dir {
            cmd.arg("--model-dir").arg(dir);
        }
        if let Some(url) = &self.store {
            cmd.arg("--store").arg(url);
        }
        // The token travels in the environment the child inherits, never in its arguments.
        if let Some(ca) = &self.store_ca {
            cmd.arg("--store-ca").arg(ca);
        }
        cmd.args(["index", "-q", "--wait", "--no-push"])
            .arg(root)
            .arg("--index-dir")
            .arg(index_dir);
        Ok(cmd)
    }
}

/// Starts `iret index --wait` on `root`, detached from this terminal (its own process
/// group: Ctrl-C here does not stop it), and returns its pid.
pub fn embed_in_background(cli: &Cli, root: &Path, index_dir: &Path) -> anyhow::Result<u32> {
    use std::os::unix::process::CommandExt;
    let log = std::fs::File::create(index_dir.join(BACKGROUND_LOG))?;
    let mut cmd = Child::of(cli).index(root, index_dir)?;
    cmd.stdin(std::process::Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0);
    Ok(cmd.spawn()?.id())
}

/// `--query-model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum QueryModel {
    Shipped,
    Tuned,
}

/// The query map `--query-model tuned` asks for (None: the model's own vector). Refused
/// when it was trained for another model than `embedder` (`--model-dir`).
pub fn query_map(
    cli: &Cli,
    embedder: &dyn Embedder,
) -> anyhow::Result<Option<Arc<iret_embed::QueryMap>>> {
    if cli.query_model == QueryModel::Shipped {
        return Ok(None);
    }
    let map = iret_embed::QueryMap::shipped()?;
    anyhow::ensure!(
        map.fits(embedder) || iret_embed::is_static_model(embedder.model_id()),
        "--query-model tuned maps the vectors of model {}, and this run's model is {} \
         (--model-dir): use --query-model shipped",
        map.base_model(),
        embedder.model_id()
    );
    Ok(Some(map))
}

/// `--ranker`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RankerChoice {
    Rules,
    Learned,
}

/// The learned ranker `--ranker learned` asks for (None: the rules).
pub fn ranker(cli: &Cli) -> anyhow::Result<Option<Arc<dyn iret_retrieve::ranking::Ranker>>> {
    match cli.ranker {
        RankerChoice::Rules => Ok(None),
        RankerChoice::Learned => Ok(Some(iret_rank::OnnxRanker::shipped()?)),
    }
}
