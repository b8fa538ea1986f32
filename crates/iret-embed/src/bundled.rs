//! The shipped models, compiled into the binary, so an installed `iret` (`cargo install`)
//! works anywhere: when no model folder is found, these bytes are written (atomically) to
//! a per-user cache folder once and loaded from there, like the ONNX Runtime library.
//! Two models: the transformer (`models/all-minilm-l6-v2`) and the static table distilled
//! from it (`models/static-minilm`, `scripts/train-static.py`), for `iret index --static`.
use crate::runtime::cache_dir;
use crate::{EmbedError, DEFAULT_MODEL, STATIC_MODEL};
use std::io::Write;
use std::path::PathBuf;

macro_rules! model_file {
    ($dir:literal, $name:literal) => {
        (
            $name,
            include_bytes!(concat!("../../../models/", $dir, "/", $name)).as_slice(),
        )
    };
}

/// The files of `models/all-minilm-l6-v2` as they were at build time.
static TRANSFORMER: [(&str, &[u8]); 6] = [
    model_file!("all-minilm-l6-v2", "manifest.json"),
    model_file!("all-minilm-l6-v2", "model.onnx"),
    model_file!("all-minilm-l6-v2", "tokenizer.json"),
    model_file!("all-minilm-l6-v2", "config.json"),
    model_file!("all-minilm-l6-v2", "special_tokens_map.json"),
    model_file!("all-minilm-l6-v2", "tokenizer_config.json"),
];

/// The files of `models/static-minilm` (its tokenizer is the transformer's, copied).
static STATIC: [(&str, &[u8]); 3] = [
    model_file!("static-minilm", "manifest.json"),
    model_file!("static-minilm", "static.f16"),
    model_file!("static-minilm", "tokenizer.json"),
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

fn write_out(name: &str, files: &[(&str, &[u8])]) -> Result<PathBuf, EmbedError> {
    let mut hasher = blake3::Hasher::new();
    for (name, bytes) in files {
        hasher.update(name.as_bytes());
        hasher.update(bytes);
    }
    let hash = hasher.finalize().to_hex();
    let dir = cache_dir()
        .join("models")
        .join(format!("{name}-{}", &hash[..12]));
    let err = |e: std::io::Error| EmbedError::ModelInvalid {
        dir: dir.display().to_string(),
        reason: format!("cannot write the bundled model: {e}"),
    };
    std::fs::create_dir_all(&dir).map_err(err)?;
    for (name, bytes) in files {
        let path = dir.join(name);
        if std::fs::metadata(&path).map(|m| m.len() as usize).ok() == Some(bytes.len()) {
            continue;
        }
        let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(err)?;
        tmp.write_all(bytes).map_err(err)?;
        tmp.persist(&path).map_err(|e| err(e.error))?;
    }
    Ok(dir)
}
