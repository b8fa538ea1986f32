//! Files compiled into the binary, xz-compressed, and written out once to a per-user cache
//! folder where they are loaded from: the models, the tree-sitter grammars and the ONNX
//! Runtime library. So an installed `iret` is one file that needs no extra environment, and
//! its bytes on disk are the compressed ones (the grammars' parse tables shrink about 20×).
//!
//! Build scripts compress with [`build::compress`]; the crate then embeds the result with
//! [`bundled!`] and calls [`write_out`] when the files are first needed. A folder's name
//! holds a hash of its compressed bytes (computed by the build), so two builds never share a stale copy, and each
//! file is written atomically (a temporary file renamed), so a killed process leaves either
//! the whole file or none.
use std::io::Write;
use std::path::{Path, PathBuf};

pub mod build;

/// One bundled file: its name in the folder, its xz bytes, its decompressed length and
/// the blake3 hash of its xz bytes (computed by the build).
#[derive(Debug, Clone, Copy)]
pub struct Bundled {
    pub name: &'static str,
    pub xz: &'static [u8],
    pub len: u64,
    pub hash: &'static str,
}

/// A bundled file that a build script compressed with [`build::compress`] under `$key`:
/// `bundled!("model.onnx", "IRET_MODEL_ONNX")` reads the `IRET_MODEL_ONNX_XZ`,
/// `IRET_MODEL_ONNX_LEN` and `IRET_MODEL_ONNX_HASH` variables the script set.
#[macro_export]
macro_rules! bundled {
    ($name:expr, $key:literal) => {
        $crate::Bundled {
            name: $name,
            xz: include_bytes!(env!(concat!($key, "_XZ"))),
            len: $crate::parse_len(env!(concat!($key, "_LEN"))),
            hash: env!(concat!($key, "_HASH")),
        }
    };
}

/// The decompressed length a build script recorded (`const`, for [`bundled!`]).
pub const fn parse_len(s: &str) -> u64 {
    let bytes = s.as_bytes();
    let mut n = 0u64;
    let mut i = 0;
    while i < bytes.len() {
        n = n * 10 + (bytes[i] - b'0') as u64;
        i += 1;
    }
    n
}

/// A bundled file that could not be written out.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot write the bundled {what} to {path}: {reason} (set IRET_CACHE_DIR to a writable folder)"
)]
pub struct BundleError {
    pub what: String,
    pub path: String,
    pub reason: String,
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

/// `files` decompressed into `<cache>/<folder>-<hash>/` (only those not already there whole),
/// and that folder. `what` names them in errors ("grammars", "model all-minilm-l6-v2").
pub fn write_out(what: &str, folder: &Path, files: &[Bundled]) -> Result<PathBuf, BundleError> {
    let mut hasher = blake3::Hasher::new();
    for f in files {
        hasher.update(f.name.as_bytes());
        hasher.update(f.hash.as_bytes());
    }
    let hash = hasher.finalize().to_hex();
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = cache_dir()
        .join(folder.parent().unwrap_or(Path::new("")))
        .join(format!("{name}-{}", &hash[..12]));
    let error = |path: &Path, reason: String| BundleError {
        what: what.to_string(),
        path: path.display().to_string(),
        reason,
    };
    for f in files {
        let path = dir.join(f.name);
        if std::fs::metadata(&path).map(|m| m.len()).ok() == Some(f.len) {
            continue;
        }
        let bytes = decompress(f).map_err(|reason| error(&path, reason))?;
        std::fs::create_dir_all(&dir).map_err(|e| error(&dir, e.to_string()))?;
        let io = |e: std::io::Error| error(&path, e.to_string());
        let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
        tmp.write_all(&bytes).map_err(io)?;
        tmp.persist(&path).map_err(|e| io(e.error))?;
    }
    Ok(dir)
}

/// A bundled file's bytes, checked against its recorded length.
pub fn decompress(f: &Bundled) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(f.len as usize);
    lzma_rs::xz_decompress(&mut std::io::Cursor::new(f.xz), &mut out)
        .map_err(|e| format!("the bundled {} does not decompress: {e}", f.name))?;
    if out.len() as u64 != f.len {
        return Err(format!(
            "the bundled {} decompressed to {} bytes, not {}",
            f.name,
            out.len(),
            f.len
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_len_reads_decimal() {
        assert_eq!(parse_len("0"), 0);
        assert_eq!(parse_len("45741667"), 45_741_667);
    }

    #[test]
    fn a_corrupt_bundle_is_an_error_not_a_panic() {
        let f = Bundled {
            name: "x.bin",
            xz: b"not xz at all",
            len: 3,
            hash: "",
        };
        let err = decompress(&f).unwrap_err();
        assert!(err.contains("does not decompress"), "{err}");
    }
}
