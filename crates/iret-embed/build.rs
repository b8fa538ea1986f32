//! Obtains the ONNX Runtime shared library that iret bundles into its binary.
//!
//! `ORT_DYLIB_PATH` (a path to `libonnxruntime.so*`) wins when set. Otherwise the
//! standard package client fetches the PyPI wheel `onnxruntime==1.31.1` into OUT_DIR
//! (registries are reachable at build time; nothing is downloaded at run time) and the
//! library is extracted from it. The binary embeds the bytes, xz-compressed (Python's
//! `lzma`: 29 MB become about 9), and writes them out to a cache folder on first use, so
//! it needs no extra environment, also after `cargo install`.
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
    let (xz, len) = compress(&lib);
    println!("cargo:rustc-env=IRET_ORT_LIB_XZ={}", xz.display());
    println!("cargo:rustc-env=IRET_ORT_LIB_LEN={len}");
    println!("cargo:rustc-env=IRET_ORT_VERSION={ORT_VERSION}");
}

/// `lib` xz-compressed into OUT_DIR (with Python's standard `lzma`), and its length.
fn compress(lib: &Path) -> (PathBuf, u64) {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let xz = out.join(format!("libonnxruntime.so.{ORT_VERSION}.xz"));
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = "import lzma, sys\nopen(sys.argv[2], 'wb').write(lzma.compress(open(sys.argv[1], 'rb').read(), preset=6))";
    let status = Command::new(&python)
        .args(["-c", script])
        .arg(lib)
        .arg(&xz)
        .status()
        .expect("python3 could not compress the ONNX Runtime library");
    assert!(status.success(), "could not compress {}", lib.display());
    (xz, std::fs::metadata(lib).unwrap().len())
}

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
