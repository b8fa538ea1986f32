//! The shipped model, compiled into the binary, so an installed `iret` (`cargo install`)
//! works anywhere: when no model folder is found, these bytes are written (atomically) to
//! a per-user cache folder once and loaded from there, like the ONNX Runtime library.
use crate::runtime::cache_dir;
use crate::{EmbedError, DEFAULT_MODEL};
use std::io::Write;
use std::path::PathBuf;

macro_rules! model_file {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!("../../../models/all-minilm-l6-v2/", $name)).as_slice(),
        )
    };
}

/// The files of `models/all-minilm-l6-v2` as they were at build time.
static FILES: [(&str, &[u8]); 6] = [
    model_file!("manifest.json"),
    model_file!("model.onnx"),
    model_file!("tokenizer.json"),
    model_file!("config.json"),
    model_file!("special_tokens_map.json"),
    model_file!("tokenizer_config.json"),
];

/// The bundled model's folder in the cache, written out first if needed.
pub fn bundled_model_dir() -> Result<PathBuf, EmbedError> {
    let mut hasher = blake3::Hasher::new();
    for (name, bytes) in &FILES {
        hasher.update(name.as_bytes());
        hasher.update(bytes);
    }
    let hash = hasher.finalize().to_hex();
    let dir = cache_dir()
        .join("models")
        .join(format!("{DEFAULT_MODEL}-{}", &hash[..12]));
    let err = |e: std::io::Error| EmbedError::ModelInvalid {
        dir: dir.display().to_string(),
        reason: format!("cannot write the bundled model: {e}"),
    };
    std::fs::create_dir_all(&dir).map_err(err)?;
    for (name, bytes) in &FILES {
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
