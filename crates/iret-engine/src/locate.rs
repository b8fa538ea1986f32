//! Which repository a path belongs to: the nearest ancestor holding an `.iret` index,
//! else the nearest git root, else the path itself.
use std::path::{Path, PathBuf};

/// The repository root for `start` (a folder inside it).
pub fn repo_root(start: &Path) -> PathBuf {
    let start = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    if let Some(dir) = start
        .ancestors()
        .find(|d| iret_index::default_index_dir(d).join("CURRENT").is_file())
    {
        return dir.to_path_buf();
    }
    if let Some(dir) = start.ancestors().find(|d| d.join(".git").exists()) {
        return dir.to_path_buf();
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_index_wins_then_the_git_root_then_the_path() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let deep = root.join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(repo_root(&deep), deep);
        std::fs::create_dir_all(root.join(".git")).unwrap();
        assert_eq!(repo_root(&deep), root);
        std::fs::create_dir_all(root.join("a/.iret")).unwrap();
        // A folder named .iret without a live generation is not an index.
        assert_eq!(repo_root(&deep), root);
        std::fs::write(root.join("a/.iret/CURRENT"), "gen-000001").unwrap();
        assert_eq!(repo_root(&deep), root.join("a"));
    }
}
