//! The shipped models, compiled into the binary, so an installed `iret` (`cargo install`)
//! works anywhere: when no model folder is found, these bytes are written (atomically) to
//! a per-user cache folder once and loaded from there, like the ONNX Runtime library.
//! Two models: the transformer (`models/all-minilm-l6-v2`) and the static table distilled
//! from it (`models/static-minilm`, `scripts/train-static.py`), for `iret index --static`.
use crate::{EmbedError, DEFAULT_MODEL, STATIC_MODEL};
use iret_bundle::{bundled, Bundled};
use std::path::{Path, PathBuf};

/// The files of `models/all-minilm-l6-v2` as they were at build time (build.rs compresses them).
static TRANSFORMER: [Bundled; 6] = [
    bundled!("manifest.json", "IRET_TRANSFORMER_MANIFEST"),
    bundled!("model.onnx", "IRET_TRANSFORMER_ONNX"),
    bundled!("tokenizer.json", "IRET_TRANSFORMER_TOKENIZER"),
    bundled!("config.json", "IRET_TRANSFORMER_CONFIG"),
    bundled!("special_tokens_map.json", "IRET_TRANSFORMER_SPECIAL"),
    bundled!("tokenizer_config.json", "IRET_TRANSFORMER_TOKENIZER_CONFIG"),
];

/// The files of `models/static-minilm` (its tokenizer is the transformer's, copied).
static STATIC: [Bundled; 3] = [
    bundled!("manifest.json", "IRET_STATIC_MANIFEST"),
    bundled!("static.f16", "IRET_STATIC_TABLE"),
    bundled!("tokenizer.json", "IRET_STATIC_TOKENIZER"),
];
/// The bundled transformer's folder in the cache, written out first if needed.
pub fn bundled_model_dir() -> Result<PathBuf, EmbedError> {
    write_out(DEFAULT_MODEL, &TRANSFORMER)
}

/// The bundled static model's folder in the cache, written out first if needed.
pub fn bundled_static_model_dir() -> Result<PathBuf, EmbedError> {
    write_out(STATIC_MODEL, &STATIC)
}

/// The shipped static model, loaded on first use, once per process (None when it
/// cannot be written out or loaded: then builds write a keyword tier, as before).
pub fn shipped_static() -> Option<std::sync::Arc<dyn crate::Embedder>> {
    static MODEL: std::sync::OnceLock<Option<std::sync::Arc<dyn crate::Embedder>>> =
        std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = bundled_static_model_dir().ok()?;
            crate::load_model(&dir).ok()
        })
        .clone()
}

fn write_out(name: &str, files: &[Bundled]) -> Result<PathBuf, EmbedError> {
    let folder = Path::new("models").join(name);
    iret_bundle::write_out(&format!("model {name}"), &folder, files).map_err(|e| {
        EmbedError::ModelInvalid {
            dir: e.path,
            reason: format!(
                "cannot write the bundled model: {} (set IRET_CACHE_DIR to a writable folder)",
                e.reason
            ),
        }
    })
}
