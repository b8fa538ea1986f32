//! The shipped model folder: its manifest and where to find it.
use crate::EmbedError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Name of the folder under `models/` that iret uses by default.
pub const DEFAULT_MODEL: &str = "all-minilm-l6-v2";
/// The static model shipped beside it (`models/static-minilm`).
pub const STATIC_MODEL: &str = "static-minilm";

/// `models/<name>/manifest.json`, written by `scripts/export-model.py`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelManifest {
    pub id: String,
    pub dims: usize,
    pub pooling: String,
    pub max_length: usize,
    pub onnx: String,
    pub onnx_sha256: String,
}

impl ModelManifest {
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).map_err(|e| EmbedError::ModelInvalid {
            dir: dir.display().to_string(),
            reason: format!("cannot read manifest.json: {e}"),
        })?;
        serde_json::from_str(&text).map_err(|e| EmbedError::ModelInvalid {
            dir: dir.display().to_string(),
            reason: format!("manifest.json is malformed: {e}"),
        })
    }
}

/// Finds the model folder: `explicit` (`--model-dir`), else `$IRET_MODEL_DIR`, else the
/// copy compiled into the binary (written once to the per-user cache folder), so an
/// installed `iret` needs no checkout. A named folder that is not a model is an error.
pub fn locate_model_dir(explicit: Option<&Path>) -> Result<PathBuf, EmbedError> {
    let named = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("IRET_MODEL_DIR").map(PathBuf::from));
    match named {
        Some(dir) if dir.join("manifest.json").is_file() => Ok(dir),
        Some(dir) => Err(EmbedError::ModelMissing {
            tried: dir.display().to_string(),
        }),
        None => crate::bundled::bundled_model_dir(),
    }
}
