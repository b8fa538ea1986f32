//! For build scripts (`[build-dependencies] iret-bundle`): compress a file into OUT_DIR
//! and tell the crate where it is.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `file` xz-compressed into `OUT_DIR` (with Python's standard `lzma`, preset 6: pure-Rust
/// encoders compress far less), and the `<key>_XZ` / `<key>_LEN` / `<key>_HASH` variables
/// that [`crate::bundled!`] reads set for the crate (the hash here, once, not by every
/// process that runs the binary). Panics with the reason: a build script
/// cannot go on without it.
pub fn compress(file: &Path, key: &str) -> PathBuf {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR (run from a build script)"));
    let xz = out.join(format!("{key}.xz"));
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = "import lzma, sys\nopen(sys.argv[2], 'wb').write(lzma.compress(open(sys.argv[1], 'rb').read(), preset=6))";
    let status = Command::new(&python)
        .args(["-c", script])
        .arg(file)
        .arg(&xz)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "iret's build needs {python} to compress {}: {e}",
                file.display()
            )
        });
    assert!(status.success(), "could not compress {}", file.display());
    let len = std::fs::metadata(file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .len();
    println!("cargo:rustc-env={key}_XZ={}", xz.display());
    println!("cargo:rustc-env={key}_LEN={len}");
    let compressed = std::fs::read(&xz).unwrap_or_else(|e| panic!("{}: {e}", xz.display()));
    println!(
        "cargo:rustc-env={key}_HASH={}",
        blake3::hash(&compressed).to_hex()
    );
    println!("cargo:rerun-if-changed={}", file.display());
    println!("cargo:rerun-if-env-changed=PYTHON");
    xz
}
