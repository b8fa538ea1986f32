//! The shipped model folder: its manifest and where to find it.
use crate::EmbedError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Name of the folder under `models/` that iret uses by default.
pub const DEFAULT_MODEL: &str = "all-minilm-l6-v2";

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

/// Finds the model folder: `explicit`, then `$IRET_MODEL_DIR`, then `models/<DEFAULT_MODEL>`
/// beside or above the running binary, then the source tree this binary was built from,
/// and last the copy compiled into the binary (written to the cache folder). An explicit
/// folder or `$IRET_MODEL_DIR` that is not a model is an error, not a fallback.
pub fn locate_model_dir(explicit: Option<&Path>) -> Result<PathBuf, EmbedError> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = explicit {
        candidates.push(p.to_path_buf());
    } else {
        if let Some(p) = std::env::var_os("IRET_MODEL_DIR") {
            candidates.push(PathBuf::from(p));
        }
        if let Ok(exe) = std::env::current_exe() {
            for dir in exe.ancestors().skip(1).take(4) {
                candidates.push(dir.join("models").join(DEFAULT_MODEL));
            }
        }
        candidates.push(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../models")
                .join(DEFAULT_MODEL),
        );
    }
    let named = explicit.is_some() || std::env::var_os("IRET_MODEL_DIR").is_some();
    if let Some(found) = candidates
        .iter()
        .find(|p| p.join("manifest.json").is_file())
    {
        return Ok(found.clone());
    }
    if !named {
        return crate::bundled::bundled_model_dir();
    }
    Err(EmbedError::ModelMissing {
        tried: candidates
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}
