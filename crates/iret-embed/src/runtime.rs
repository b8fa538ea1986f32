//! The ONNX Runtime shared library, bundled into the binary by build.rs (xz-compressed).
//!
//! On first use the bytes are decompressed and written (atomically) to a per-user cache
//! folder and loaded from there; `ORT_DYLIB_PATH` overrides. Loading failures are errors, not panics.
use crate::EmbedError;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static ORT_LIB: iret_bundle::Bundled = iret_bundle::bundled!(
    concat!("libonnxruntime.so.", env!("IRET_ORT_VERSION")),
    "IRET_ORT_LIB"
);
const ORT_VERSION: &str = env!("IRET_ORT_VERSION");

static ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

/// Path of the ONNX Runtime library this process uses (writing it out if needed).
pub fn ort_library_path() -> Result<PathBuf, EmbedError> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH") {
        return Ok(PathBuf::from(p));
    }
    let folder = format!("onnxruntime-{ORT_VERSION}");
    let dir = iret_bundle::write_out("ONNX Runtime library", Path::new(&folder), &[ORT_LIB])
        .map_err(|e| runtime_error(Path::new(&e.path), e.reason))?;
    Ok(dir.join(ORT_LIB.name))
}

pub use iret_bundle::cache_dir;

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
