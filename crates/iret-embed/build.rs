//! Obtains the ONNX Runtime shared library that iret bundles into its binary.
//!
//! `ORT_DYLIB_PATH` (a path to `libonnxruntime.so*`) wins when set. Otherwise the
//! standard package client fetches the PyPI wheel `onnxruntime==1.31.1` into OUT_DIR
//! (registries are reachable at build time; nothing is downloaded at run time) and the
//! library is extracted from it. The binary embeds the bytes, xz-compressed (`iret-bundle`:
//! 29 MB become about 9), and writes them out to a cache folder on first use, so it needs
//! no extra environment, also after `cargo install`. The shipped models (`models/`) are
//! bundled the same way.
use std::path::{Path, PathBuf};
use std::process::Command;

const ORT_VERSION: &str = "1.31.1";

fn main() {
    println!("cargo:rerun-if-env-changed=ORT_DYLIB_PATH");
    println!("cargo:rerun-if-changed=build.rs");
    let lib = match std::env::var_os("ORT_DYLIB_PATH") {
        Some(p) if Path::new(&p).is_file() => PathBuf::from(p),
        _ => fetch_from_pypi(),
    };
    iret_bundle::build::compress(&lib, "IRET_ORT_LIB");
    println!("cargo:rustc-env=IRET_ORT_VERSION={ORT_VERSION}");
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    for (dir, file, key) in MODEL_FILES {
        iret_bundle::build::compress(&models.join(dir).join(file), key);
    }
}

/// The shipped models' files and the keys `src/bundled.rs` reads them by.
const MODEL_FILES: [(&str, &str, &str); 9] = [
    (
        "all-minilm-l6-v2",
        "manifest.json",
        "IRET_TRANSFORMER_MANIFEST",
    ),
    ("all-minilm-l6-v2", "model.onnx", "IRET_TRANSFORMER_ONNX"),
    (
        "all-minilm-l6-v2",
        "tokenizer.json",
        "IRET_TRANSFORMER_TOKENIZER",
    ),
    ("all-minilm-l6-v2", "config.json", "IRET_TRANSFORMER_CONFIG"),
    (
        "all-minilm-l6-v2",
        "special_tokens_map.json",
        "IRET_TRANSFORMER_SPECIAL",
    ),
    (
        "all-minilm-l6-v2",
        "tokenizer_config.json",
        "IRET_TRANSFORMER_TOKENIZER_CONFIG",
    ),
    ("static-minilm", "manifest.json", "IRET_STATIC_MANIFEST"),
    ("static-minilm", "static.f16", "IRET_STATIC_TABLE"),
    ("static-minilm", "tokenizer.json", "IRET_STATIC_TOKENIZER"),
];

fn fetch_from_pypi() -> PathBuf {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("onnxruntime");
    let lib = out.join(format!("libonnxruntime.so.{ORT_VERSION}"));
    if lib.is_file() {
        return lib;
    }
    std::fs::create_dir_all(&out).unwrap();
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(&python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d"])
        .arg(&out)
        .arg(format!("onnxruntime=={ORT_VERSION}"))
        .status()
        .unwrap_or_else(|e| panic!("iret needs `{python} -m pip` to fetch ONNX Runtime {ORT_VERSION} (or set ORT_DYLIB_PATH): {e}"));
    assert!(status.success(), "pip download of onnxruntime=={ORT_VERSION} failed (or set ORT_DYLIB_PATH to libonnxruntime.so)");
    let wheel = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("pip produced no onnxruntime wheel");
    let member = format!("onnxruntime/capi/libonnxruntime.so.{ORT_VERSION}");
    let script = "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nopen(sys.argv[3], 'wb').write(z.read(sys.argv[2]))";
    let status = Command::new(&python)
        .args(["-c", script])
        .arg(&wheel)
        .arg(&member)
        .arg(&lib)
        .status()
        .expect("python3 could not extract the ONNX Runtime library");
    assert!(
        status.success(),
        "could not extract {member} from {}",
        wheel.display()
    );
    lib
}
