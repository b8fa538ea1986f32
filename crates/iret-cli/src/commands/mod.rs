pub mod bench;
pub mod index;
pub mod search;
pub mod status;

use crate::Cli;
use iret_embed::{locate_model_dir, OnnxEmbedder};
use std::path::PathBuf;

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
            .unwrap_or_else(|| iret_index::default_index_dir(&self.path))
    }
}

/// Loads the embedding model named by `--model-dir`/`IRET_MODEL_DIR` or the shipped one.
pub fn load_embedder(cli: &Cli) -> anyhow::Result<OnnxEmbedder> {
    let dir = locate_model_dir(cli.model_dir.as_deref())?;
    Ok(OnnxEmbedder::load(&dir)?)
}
