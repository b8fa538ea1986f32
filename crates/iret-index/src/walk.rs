//! Finds the source files to index: .gitignore/.ignore/.iretignore honoured, vendored and
//! build folders skipped, symlinks not followed, and every skipped file counted by reason.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files larger than this are skipped.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

const SKIP_DIRS: &[&str] = &[
    "node_modules",
    "target",
    "dist",
    "build",
    "out",
    // Vendored code: other projects' sources copied in.
    "vendor",
    "vendored",
    "_vendor",
    "third_party",
    "third-party",
    "thirdparty",
    "3rdparty",
    "extern",
    "externals",
    "cextern",
    "__pycache__",
    ".git",
    ".hg",
    ".svn",
    ".iret",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".next",
    ".nuxt",
    "coverage",
    "bower_components",
    ".gradle",
    ".idea",
    ".vscode",
];

const SOURCE_EXTS: &[&str] = &[
    "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "py", "pyi", "rs", "go", "java", "kt",
    "kts", "scala", "sc", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "ipp", "inl", "cs",
    "fs", "rb", "rake", "ex", "exs", "erl", "hrl", "sh", "bash", "zsh", "fish", "swift", "php",
    "lua", "m", "mm", "r", "jl", "dart", "vue", "svelte", "clj", "cljs", "hs", "ml", "mli", "pl",
    "pm", "groovy", "zig", "nim", "sql", "proto", "gradle",
];

/// Why a file was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SkipReason {
    NotSource,
    TooLarge,
    Binary,
    InvalidUtf8,
    Minified,
    Unreadable,
    /// The file's name is not valid UTF-8 (it could not be shown or matched by globs).
    BadName,
}

impl SkipReason {
    pub fn label(self) -> &'static str {
        match self {
            SkipReason::NotSource => "not source",
            SkipReason::TooLarge => "over 1 MB",
            SkipReason::Binary => "binary",
            SkipReason::InvalidUtf8 => "invalid UTF-8",
            SkipReason::Minified => "minified",
            SkipReason::Unreadable => "unreadable",
            SkipReason::BadName => "non-UTF-8 name",
        }
    }
}

/// A file found by the walk.
#[derive(Debug, Clone)]
pub struct Found {
    /// Path relative to the root, with `/` separators.
    pub rel: String,
    pub abs: PathBuf,
    pub size: u64,
    pub mtime_ns: u128,
}

#[derive(Debug, Default)]
pub struct Walked {
    pub files: Vec<Found>,
    pub skipped: BTreeMap<SkipReason, usize>,
}

pub fn is_source(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| SOURCE_EXTS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Walks `root`. Paths are sorted, so the index is deterministic.
pub fn walk(root: &Path) -> Walked {
    let mut out = Walked::default();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .follow_links(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .add_custom_ignore_filename(".iretignore")
        .filter_entry(|e| {
            !(e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIP_DIRS.contains(&n)))
        })
        .build();
    for entry in walker {
        let Ok(entry) = entry else {
            *out.skipped.entry(SkipReason::Unreadable).or_default() += 1;
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if !is_source(path) {
            *out.skipped.entry(SkipReason::NotSource).or_default() += 1;
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            *out.skipped.entry(SkipReason::Unreadable).or_default() += 1;
            continue;
        };
        if meta.len() > MAX_FILE_BYTES {
            *out.skipped.entry(SkipReason::TooLarge).or_default() += 1;
            continue;
        }
        let Some(rel) = path.strip_prefix(root).ok().and_then(|r| r.to_str()) else {
            *out.skipped.entry(SkipReason::BadName).or_default() += 1;
            continue;
        };
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.files.push(Found {
            rel: rel.replace('\\', "/"),
            abs: path.to_path_buf(),
            size: meta.len(),
            mtime_ns,
        });
    }
    out.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// Reads a found file as text, or says why it is skipped.
pub fn read_text(path: &Path) -> Result<String, SkipReason> {
    let bytes = std::fs::read(path).map_err(|_| SkipReason::Unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(SkipReason::TooLarge);
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(SkipReason::Binary);
    }
    let text = String::from_utf8(bytes).map_err(|_| SkipReason::InvalidUtf8)?;
    if is_minified(&text) {
        return Err(SkipReason::Minified);
    }
    Ok(text)
}

/// Generated one-line bundles: long lines on average and at least one very long line.
fn is_minified(text: &str) -> bool {
    let lines = text.lines().count().max(1);
    let longest = text.lines().map(str::len).max().unwrap_or(0);
    longest > 2000 && text.len() / lines > 300
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_and_build_folders_are_not_walked() {
        let dir = tempfile::tempdir().unwrap();
        for rel in [
            "pkg/core.py",
            "pkg/externals/six.py",
            "cextern/wcslib/wcs.c",
            "extern/agg/agg.cpp",
            "node_modules/x/index.js",
            "src/thirdparty/hedley.hpp",
            "notes.txt",
        ] {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x = 1\n").unwrap();
        }
        let w = walk(dir.path());
        let rels: Vec<&str> = w.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["pkg/core.py"]);
        assert_eq!(w.skipped.get(&SkipReason::NotSource), Some(&1));
    }
}
