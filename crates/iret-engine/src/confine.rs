//! Requests name files and globs relative to the root; none may leave it. A path that
//! does is refused before anything is read.
use std::path::{Component, Path};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Outside {
    #[error("{0:?} is an absolute path; give it relative to the repository root")]
    Absolute(String),
    #[error("{0:?} leaves the repository root (`..`)")]
    Parent(String),
    #[error("{0:?} resolves outside the repository root (a link out of it)")]
    Link(String),
    #[error("{0:?} is empty")]
    Empty(String),
}

/// A relative path or glob that stays inside the root, as written (`\` read as `/`).
pub fn relative(p: &str) -> Result<String, Outside> {
    let norm = p.replace('\\', "/");
    let trimmed = norm.trim_start_matches("./");
    if trimmed.trim().is_empty() {
        return Err(Outside::Empty(p.into()));
    }
    if trimmed.starts_with('/') || Path::new(trimmed).is_absolute() || trimmed.contains(':') {
        return Err(Outside::Absolute(p.into()));
    }
    if Path::new(trimmed)
        .components()
        .any(|c| matches!(c, Component::ParentDir))
    {
        return Err(Outside::Parent(p.into()));
    }
    Ok(trimmed.trim_end_matches('/').to_string())
}

/// [`relative`], and if the path exists, its real location (links resolved) is inside
/// `root` too.
pub fn existing(root: &Path, p: &str) -> Result<String, Outside> {
    let rel = relative(p)?;
    let full = root.join(&rel);
    if let (Ok(real), Ok(real_root)) = (std::fs::canonicalize(&full), std::fs::canonicalize(root)) {
        if !real.starts_with(&real_root) {
            return Err(Outside::Link(p.into()));
        }
    }
    Ok(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_root_are_refused() {
        assert_eq!(relative("src/auth.ts").unwrap(), "src/auth.ts");
        assert_eq!(relative("./src/").unwrap(), "src");
        assert_eq!(relative("src\\auth.ts").unwrap(), "src/auth.ts");
        assert_eq!(relative("**/*.ts").unwrap(), "**/*.ts");
        assert!(matches!(relative("../etc/passwd"), Err(Outside::Parent(_))));
        assert!(matches!(relative("src/../../x"), Err(Outside::Parent(_))));
        assert!(matches!(relative("/etc/passwd"), Err(Outside::Absolute(_))));
        assert!(matches!(relative("C:/x"), Err(Outside::Absolute(_))));
        assert!(matches!(relative(""), Err(Outside::Empty(_))));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_root_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        std::fs::write(root.path().join("in.txt"), "y").unwrap();
        assert!(matches!(
            existing(root.path(), "out/secret.txt"),
            Err(Outside::Link(_))
        ));
        assert_eq!(existing(root.path(), "in.txt").unwrap(), "in.txt");
    }
}
