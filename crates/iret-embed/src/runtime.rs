//! The ONNX Runtime shared library, bundled into the binary by build.rs (xz-compressed).
//!
//! On first use the bytes are decompressed and written (atomically) to a per-user cache
//! folder and loaded from there; `ORT_DYLIB_PATH` overrides. Loading failures are errors, not panics.
use crate::EmbedError;
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

static ORT_LIB_XZ: &[u8] = include_bytes!(env!("IRET_ORT_LIB_XZ"));
const ORT_LIB_LEN: &str = env!("IRET_ORT_LIB_LEN");
const ORT_VERSION: &str = env!("IRET_ORT_VERSION");

static ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

/// Path of the ONNX Runtime library this process uses (writing it out if needed).
pub fn ort_library_path() -> Result<PathBuf, EmbedError> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
        return Ok(PathBuf::from(p));
    }
    let hash = blake3::hash(ORT_LIB_XZ).to_hex();
    let dir = cache_dir().join(format!("onnxruntime-{ORT_VERSION}-{}", &hash[..12]));
    let path = dir.join(format!("libonnxruntime.so.{ORT_VERSION}"));
    let len: u64 = ORT_LIB_LEN.parse().unwrap_or(0);
    if std::fs::metadata(&path).map(|m| m.len()).ok() == Some(len) {
        return Ok(path);
    }
    let err = |e: std::io::Error| runtime_error(&path, e.to_string());
    let mut lib = Vec::with_capacity(len as usize);
    lzma_rs::xz_decompress(&mut std::io::Cursor::new(ORT_LIB_XZ), &mut lib).map_err(|e| {
        runtime_error(
            &path,
            format!("the bundled library does not decompress: {e}"),
        )
    })?;
    if lib.len() as u64 != len {
        return Err(runtime_error(
            &path,
            format!(
                "the bundled library decompressed to {} bytes, not {len}",
                lib.len()
            ),
        ));
    }
    std::fs::create_dir_all(&dir).map_err(err)?;
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(err)?;
    tmp.write_all(&lib).map_err(err)?;
    tmp.persist(&path).map_err(|e| err(e.error))?;
    Ok(path)
}

/// The per-user cache folder (`$IRET_CACHE_DIR`, else `$XDG_CACHE_HOME/iret`, else
/// `~/.cache/iret`).
pub fn cache_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("IRET_CACHE_DIR") {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(p).join("iret");
    }
    if let Some(home) = std::env::var_os("HOME") {
        return PathBuf::from(home).join(".cache").join("iret");
    }
    std::env::temp_dir().join("iret-cache")
}

fn runtime_error(path: &std::path::Path, reason: String) -> EmbedError {
    EmbedError::Runtime {
        path: path.display().to_string(),
        reason,
        version: ORT_VERSION,
    }
}

/// The process-wide ONNX Runtime environment, loaded once.
pub fn environment() -> Result<ort::environment::Environment, EmbedError> {
    let result = ENV.get_or_init(|| {
        let path = ort_library_path().map_err(|e| e.to_string())?;
        let builder =
            ort::init_from(&path).map_err(|e| runtime_error(&path, e.to_string()).to_string())?;
        builder
            .with_name("iret")
            .build()
            .map_err(|e| runtime_error(&path, e.to_string()).to_string())
    });
    result.clone().map_err(EmbedError::Inference)
}
