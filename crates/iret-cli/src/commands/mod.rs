pub mod bench;
pub mod index;
pub mod search;
pub mod status;

use crate::Cli;
use iret_embed::{locate_model_dir, OnnxEmbedder};

/// Loads the embedding model named by `--model-dir`/`IRET_MODEL_DIR` or the shipped one.
pub fn load_embedder(cli: &Cli) -> anyhow::Result<OnnxEmbedder> {
    let dir = locate_model_dir(cli.model_dir.as_deref())?;
    Ok(OnnxEmbedder::load(&dir)?)
}
