//! Compiles the tree-sitter grammars into one shared library and bundles it xz-compressed.
//!
//! Linked statically, the grammars' parse tables were a third of the binary (48.5 of
//! 145 MB); as one library they compress about 20×. The grammar crates are
//! build-dependencies only, so their sources are in the build: `cargo metadata` names their
//! folders, each grammar's `parser.c` (and `scanner.c`) is compiled with the target's C
//! compiler (`cc`), linked into `libiret-grammars.so`, and handed to `iret-bundle`, which
//! compresses it. At run time `src/grammars.rs` writes it to the cache once and loads it.
use std::path::{Path, PathBuf};
use std::process::Command;

/// Each grammar: its crate and the folder of its `parser.c` inside the crate (the
/// `tree_sitter_<name>` symbol each exports is `src/languages.rs`'s to name; a test there
/// asks the library for every one).
const GRAMMARS: &[(&str, &str)] = &[
    ("tree-sitter-typescript", "typescript/src"),
    ("tree-sitter-typescript", "tsx/src"),
    ("tree-sitter-javascript", "src"),
    ("tree-sitter-python", "src"),
    ("tree-sitter-rust", "src"),
    ("tree-sitter-go", "src"),
    ("tree-sitter-java", "src"),
    ("tree-sitter-ruby", "src"),
    ("tree-sitter-php", "php/src"),
    ("tree-sitter-swift", "src"),
    ("tree-sitter-haskell", "src"),
    ("tree-sitter-lua", "src"),
    ("tree-sitter-zig", "src"),
    ("tree-sitter-ocaml", "grammars/ocaml/src"),
    ("tree-sitter-ocaml", "grammars/interface/src"),
    ("tree-sitter-dart", "src"),
    ("tree-sitter-objc", "src"),
    ("tree-sitter-julia", "src"),
    ("tree-sitter-r", "src"),
    ("tree-sitter-kotlin-ng", "src"),
    ("tree-sitter-scala", "src"),
    ("tree-sitter-elixir", "src"),
    ("tree-sitter-c", "src"),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let crates = crate_folders();
    let mut sources = Vec::new();
    for (name, sub) in GRAMMARS {
        let dir = crates
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.join(sub))
            .unwrap_or_else(|| {
                panic!("{name} is not in the build (a build-dependency of iret-chunk)")
            });
        for file in ["parser.c", "scanner.c"] {
            let path = dir.join(file);
            if path.is_file() {
                println!("cargo:rerun-if-changed={}", path.display());
                sources.push((dir.clone(), path));
            }
        }
    }
    let compiler = cc::Build::new().opt_level(2).pic(true).get_compiler();
    let objects = compile(&compiler, &sources, &out);
    let lib = out.join("libiret-grammars.so");
    let mut link = compiler.to_command();
    link.args(["-shared", "-s", "-o"]).arg(&lib).args(&objects);
    run(&mut link, "link the grammars");
    for object in &objects {
        let _ = std::fs::remove_file(object);
    }
    iret_bundle::build::compress(&lib, "IRET_GRAMMARS");
}

/// Every package of the build for its target and its folder (`cargo metadata`, held to
/// Cargo.lock). Not `--offline`: a fresh machine's build has fetched only what it compiles,
/// and metadata also reads the manifests of the workspace's dev-dependencies (fetched from
/// the registry, as the build's own were).
fn crate_folders() -> Vec<(String, PathBuf)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--filter-platform", &target, "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("cargo metadata could not run");
    assert!(
        output.status.success(),
        "cargo metadata failed (a build of iret resolves its dependencies from Cargo.lock: \
         `cargo install --locked`): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let name = p["name"].as_str()?.to_string();
            let manifest = PathBuf::from(p["manifest_path"].as_str()?);
            Some((name, manifest.parent()?.to_path_buf()))
        })
        .collect()
}

/// The sources compiled to position-independent objects, as many at once as the build allows.
fn compile(compiler: &cc::Tool, sources: &[(PathBuf, PathBuf)], out: &Path) -> Vec<PathBuf> {
    let jobs = std::env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2usize)
        .max(1);
    let objects: Vec<PathBuf> = (0..sources.len())
        .map(|i| out.join(format!("grammar-{i}.o")))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((dir, file)) = sources.get(i) else {
                    break;
                };
                let mut cmd = compiler.to_command();
                cmd.args(["-std=c11", "-c", "-w", "-I"])
                    .arg(dir)
                    .arg("-o")
                    .arg(&objects[i])
                    .arg(file);
                run(&mut cmd, &format!("compile {}", file.display()));
            });
        }
    });
    objects
}

fn run(cmd: &mut Command, what: &str) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("could not {what}: {e}"));
    assert!(status.success(), "could not {what}");
}
