//! Checkouts written from a local git mirror (a bare snapshot) at a commit, updated in
//! place from one commit to the next as a user's working tree is: only files whose blob
//! changed are rewritten, removed files are deleted, the rest keep their mtime (so the
//! index update after a hop sees only what the hop changed).
//!
//! Blobs missing from a snapshot (files of 4 MiB or more) are skipped, as the protocol
//! says. What the folder holds is recorded in `<folder>.tree.json` beside it.
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A bare git directory to read trees and blobs from.
#[derive(Debug, Clone)]
pub struct Mirror {
    pub git_dir: PathBuf,
}

/// What one hop changed in the folder.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct HopStats {
    pub written: usize,
    pub removed: usize,
    /// Blobs the snapshot lacks (not written).
    pub missing: usize,
}

/// The folder's contents as last written: path → blob id.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Tree {
    revision: String,
    files: BTreeMap<String, String>,
}

impl Mirror {
    /// The mirror of `owner/name` under `mirrors`: `<owner>+<name>/repo` (a bare git
    /// directory, or a checkout's `.git`), or `<owner>+<name>` itself.
    pub fn find(mirrors: &Path, repo: &str) -> anyhow::Result<Self> {
        let slug = repo.replace('/', "+");
        let base = mirrors.join(&slug);
        let candidates = [base.join("repo"), base.join("repo/.git"), base.clone()];
        for c in candidates {
            if c.join("HEAD").is_file() && c.join("objects").is_dir() {
                return Ok(Self { git_dir: c });
            }
        }
        bail!(
            "no git mirror of {repo} under {} (expected {}/repo)",
            mirrors.display(),
            base.display()
        )
    }

    pub fn git(&self) -> Command {
        let mut c = Command::new("git");
        c.arg("--git-dir").arg(&self.git_dir);
        c
    }

    /// `git <args>` in the mirror, its standard output as text.
    pub fn output(&self, args: &[&str]) -> anyhow::Result<String> {
        let out = self
            .git()
            .args(args)
            .output()
            .context("running git (is it installed?)")?;
        if !out.status.success() {
            bail!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn has_commit(&self, rev: &str) -> bool {
        self.git()
            .args(["cat-file", "-e", &format!("{rev}^{{commit}}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Committer time of `rev` (seconds since the epoch), for visiting in commit order.
    pub fn commit_time(&self, rev: &str) -> anyhow::Result<i64> {
        let t = self.output(&["show", "-s", "--format=%ct", rev])?;
        t.trim()
            .parse()
            .with_context(|| format!("commit time of {rev}: {t:?}"))
    }

    /// Regular files of `rev`'s tree: path → blob id (symlinks and submodules left out).
    fn list(&self, rev: &str) -> anyhow::Result<BTreeMap<String, String>> {
        let out = self
            .git()
            .args(["ls-tree", "-r", "-z", "--full-tree", rev])
            .output()
            .context("running git ls-tree")?;
        if !out.status.success() {
            bail!(
                "git ls-tree {rev}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let mut files = BTreeMap::new();
        for rec in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let Some(tab) = rec.iter().position(|&b| b == b'\t') else {
                continue;
            };
            let meta = String::from_utf8_lossy(&rec[..tab]);
            let mut parts = meta.split(' ');
            let (mode, kind, sha) = (parts.next(), parts.next(), parts.next());
            if kind != Some("blob") || mode == Some("120000") {
                continue;
            }
            let Ok(path) = std::str::from_utf8(&rec[tab + 1..]) else {
                continue; // a non-UTF-8 path cannot be a benchmark target
            };
            files.insert(path.to_string(), sha.unwrap_or_default().to_string());
        }
        Ok(files)
    }
}

fn tree_file(folder: &Path) -> PathBuf {
    let mut name = folder.file_name().unwrap_or_default().to_os_string();
    name.push(".tree.json");
    folder.with_file_name(name)
}

fn read_tree(folder: &Path) -> Tree {
    std::fs::read(tree_file(folder))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|_| folder.is_dir())
        .unwrap_or_default()
}

/// Paths of the mirror must stay inside the folder.
fn safe_join(folder: &Path, path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    let ok = p
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    ok.then(|| folder.join(p))
}

/// Makes `folder` hold `rev`'s tree, touching only what differs from what it held.
pub fn checkout(mirror: &Mirror, rev: &str, folder: &Path) -> anyhow::Result<HopStats> {
    let old = read_tree(folder);
    if old.revision == rev {
        link_history(mirror, rev, folder)?;
        return Ok(HopStats::default());
    }
    let new = mirror.list(rev)?;
    let mut stats = HopStats::default();
    for path in old.files.keys().filter(|p| !new.contains_key(*p)) {
        if let Some(p) = safe_join(folder, path) {
            if std::fs::remove_file(&p).is_ok() {
                stats.removed += 1;
                prune_empty_parents(folder, &p);
            }
        }
    }
    let wanted: Vec<(&String, &String)> = new
        .iter()
        .filter(|(p, sha)| old.files.get(*p) != Some(*sha))
        .collect();
    let mut written = BTreeMap::new();
    write_blobs(mirror, folder, &wanted, &mut stats, &mut written)?;
    let mut files = old.files;
    files.retain(|p, _| new.contains_key(p));
    files.extend(written);
    // A blob the snapshot lacks is not in the folder: forget its old version too.
    files.retain(|p, sha| new.get(p) == Some(sha));
    let tree = Tree {
        revision: rev.to_string(),
        files,
    };
    let tmp = tree_file(folder).with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&tree)?)?;
    std::fs::rename(&tmp, tree_file(folder))?;
    link_history(mirror, rev, folder)?;
    Ok(stats)
}

/// Removes the directories a removed file leaves empty, up to `folder`: a path that was a
/// directory in one commit may be a file in the next.
fn prune_empty_parents(folder: &Path, removed: &Path) {
    let mut dir = removed.parent();
    while let Some(d) = dir.filter(|d| *d != folder && d.starts_with(folder)) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Makes `folder` a git repository whose HEAD is `rev` (detached), its objects borrowed
/// from the mirror (`objects/info/alternates`), no branches: what a user's clone checked
/// out at `rev` holds of the history, the ancestry of `rev` and nothing after it (the
/// mirror's later commits are unreachable from HEAD, and the index reads HEAD's
/// ancestry only).
pub fn link_history(mirror: &Mirror, rev: &str, folder: &Path) -> anyhow::Result<()> {
    let sha = mirror.output(&["rev-parse", &format!("{rev}^{{commit}}")])?;
    let git = folder.join(".git");
    std::fs::create_dir_all(git.join("objects/info"))?;
    std::fs::create_dir_all(git.join("refs/heads"))?;
    std::fs::create_dir_all(git.join("refs/tags"))?;
    let objects = std::fs::canonicalize(mirror.git_dir.join("objects"))?;
    std::fs::write(
        git.join("objects/info/alternates"),
        format!("{}\n", objects.display()),
    )?;
    std::fs::write(
        git.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
    )?;
    let tmp = git.join("HEAD.tmp");
    std::fs::write(&tmp, format!("{}\n", sha.trim()))?;
    std::fs::rename(&tmp, git.join("HEAD"))?;
    Ok(())
}

/// Reads the blobs through one `git cat-file --batch` and writes them into `folder`.
fn write_blobs(
    mirror: &Mirror,
    folder: &Path,
    wanted: &[(&String, &String)],
    stats: &mut HopStats,
    written: &mut BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let mut child = mirror
        .git()
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("running git cat-file")?;
    let mut stdin = child.stdin.take().context("git stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("git stdout")?);
    let mut header = String::new();
    for (path, sha) in wanted {
        writeln!(stdin, "{sha}")?;
        stdin.flush()?;
        header.clear();
        stdout.read_line(&mut header)?;
        let fields: Vec<&str> = header.split_whitespace().collect();
        if fields.len() < 3 || fields[1] == "missing" {
            stats.missing += 1;
            if let Some(p) = safe_join(folder, path) {
                let _ = std::fs::remove_file(p);
            }
            continue;
        }
        let size: usize = fields[2].parse().context("git cat-file size")?;
        let mut data = vec![0; size + 1]; // the blob and its trailing newline
        stdout.read_exact(&mut data)?;
        data.pop();
        let Some(dest) = safe_join(folder, path) else {
            continue;
        };
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&dest, &data).with_context(|| format!("writing {}", dest.display()))?;
        written.insert((*path).clone(), (*sha).clone());
        stats.written += 1;
    }
    drop(stdin);
    child.wait()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn a_hop_rewrites_only_what_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("src");
        std::fs::create_dir_all(repo.join("pkg")).unwrap();
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("pkg/a.py"), "a = 1\n").unwrap();
        std::fs::write(repo.join("pkg/b.py"), "b = 1\n").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "one"]);
        let one = git(&repo, &["rev-parse", "HEAD"]);
        std::fs::write(repo.join("pkg/a.py"), "a = 2\n").unwrap();
        std::fs::remove_file(repo.join("pkg/b.py")).unwrap();
        std::fs::write(repo.join("c.py"), "c = 3\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "two"]);
        let two = git(&repo, &["rev-parse", "HEAD"]);

        let mirror = Mirror {
            git_dir: repo.join(".git"),
        };
        let out = tmp.path().join("co");
        let first = checkout(&mirror, &one, &out).unwrap();
        assert_eq!(first.written, 2);
        assert_eq!(
            std::fs::read_to_string(out.join("pkg/a.py")).unwrap(),
            "a = 1\n"
        );
        let second = checkout(&mirror, &two, &out).unwrap();
        assert_eq!((second.written, second.removed), (2, 1));
        assert_eq!(
            std::fs::read_to_string(out.join("pkg/a.py")).unwrap(),
            "a = 2\n"
        );
        assert!(!out.join("pkg/b.py").exists());
        assert!(out.join("c.py").exists());
        // Back again: only the two differing files move.
        let back = checkout(&mirror, &one, &out).unwrap();
        assert_eq!((back.written, back.removed), (2, 1));
        // The folder is a repository at `one`: its history ends there.
        assert_eq!(git(&out, &["rev-parse", "HEAD"]), one);
        assert_eq!(git(&out, &["log", "--format=%s"]), "one");
        assert!(mirror.commit_time(&two).unwrap() >= mirror.commit_time(&one).unwrap());
    }

    #[test]
    fn a_directory_that_becomes_a_file_and_back_is_checked_out() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("src");
        std::fs::create_dir_all(repo.join("web/design.sketch")).unwrap();
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("web/design.sketch/data.json"), "{}\n").unwrap();
        std::fs::write(repo.join("main.py"), "x = 1\n").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "a folder"]);
        let folder = git(&repo, &["rev-parse", "HEAD"]);
        std::fs::remove_dir_all(repo.join("web/design.sketch")).unwrap();
        std::fs::write(repo.join("web/design.sketch"), "binary\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "a file"]);
        let file = git(&repo, &["rev-parse", "HEAD"]);

        let mirror = Mirror {
            git_dir: repo.join(".git"),
        };
        let out = tmp.path().join("co");
        checkout(&mirror, &folder, &out).unwrap();
        checkout(&mirror, &file, &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("web/design.sketch")).unwrap(),
            "binary\n"
        );
        checkout(&mirror, &folder, &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("web/design.sketch/data.json")).unwrap(),
            "{}\n"
        );
        assert!(out.join("main.py").exists());
    }
}
