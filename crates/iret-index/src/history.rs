//! The repository's own history as an index field: for each commit in the ancestry of
//! HEAD (never one after it), its message, time and the files it added or modified,
//! renames recorded so a file's history follows it across moves. Read with libgit2
//! (`git2`), incrementally as HEAD moves: a hop forward reads only the new commits, a
//! checkout back in time drops the commits HEAD no longer reaches.
//!
//! Bounded: merge commits carry no files (their branch's commits do), nor do commits
//! touching more than [`MAX_FILES`] files (mechanical reformatting, vendoring); messages
//! are cut at [`MAX_MESSAGE`] bytes.
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Where a generation keeps its history.
pub const HISTORY_FILE: &str = "history.bin";

/// A commit touching more files than this is mechanical: its files are not attributed.
pub const MAX_FILES: usize = 100;

/// A commit message is kept up to this many bytes.
pub const MAX_MESSAGE: usize = 1000;

/// The history of the indexed checkout.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct History {
    /// The commit it was read at (hex); None: the root is not in a git repository
    /// with commits (a tarball, a folder outside git).
    pub head: Option<String>,
    /// Paths as they were when touched (interned; `Change::path` indexes it).
    pub paths: Vec<String>,
    /// Commits newest first, those that changed files only.
    pub commits: Vec<Commit>,
    /// Merges read (files not attributed).
    pub merges: usize,
    /// Commits over [`MAX_FILES`] (files not attributed).
    pub huge: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Commit {
    /// The commit id (hex).
    pub id: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    pub message: String,
    pub changes: Vec<Change>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Change {
    /// Into [`History::paths`].
    pub path: u32,
    /// Added by this commit (the path did not exist before).
    pub added: bool,
    /// Renamed from this path (into [`History::paths`]).
    pub from: Option<u32>,
}

impl History {
    /// No history: what a folder outside git gets.
    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
    }

    /// The first line of a commit's message.
    pub fn summary(&self, commit: usize) -> &str {
        self.commits[commit].message.lines().next().unwrap_or("")
    }

    /// For each of `files` (current paths), the commits that touched it, newest first,
    /// under its current name or an earlier one (renames followed back in time).
    pub fn file_commits(&self, files: &[&str]) -> Vec<Vec<u32>> {
        let ids: HashMap<&str, u32> = self
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_str(), i as u32))
            .collect();
        // path id → the indexed file that path leads to at this point of the walk back.
        let mut current: HashMap<u32, u32> = files
            .iter()
            .enumerate()
            .filter_map(|(f, p)| ids.get(p).map(|&id| (id, f as u32)))
            .collect();
        let mut out = vec![Vec::new(); files.len()];
        for (c, commit) in self.commits.iter().enumerate() {
            for ch in &commit.changes {
                let Some(&file) = current.get(&ch.path) else {
                    continue;
                };
                if out[file as usize].last() != Some(&(c as u32)) {
                    out[file as usize].push(c as u32);
                }
                if ch.added || ch.from.is_some() {
                    // Before this commit the path held nothing (or another file).
                    current.remove(&ch.path);
                }
                if let Some(from) = ch.from {
                    current.insert(from, file);
                }
            }
        }
        out
    }
}

/// Why history could not be read (the index is built without it).
#[derive(Debug, thiserror::Error)]
#[error("reading git history: {0}")]
pub struct HistoryError(#[from] git2::Error);

/// The repository holding `root`, if `root` is inside one with a HEAD commit.
fn open(root: &Path) -> Option<git2::Repository> {
    let repo = git2::Repository::discover(root).ok()?;
    repo.head().ok()?.peel_to_commit().ok()?;
    Some(repo)
}

/// HEAD's commit id for `root` (None outside git, or a repository without commits).
pub fn head_of(root: &Path) -> Option<String> {
    let repo = open(root)?;
    let id = repo.head().ok()?.peel_to_commit().ok()?.id();
    Some(id.to_string())
}

/// The branch checked out at `root` (`main`, `feature/x`); `detached-<12 hex>` for a
/// detached HEAD; None outside git. A store's pushes are recorded under it.
pub fn branch_of(root: &Path) -> Option<String> {
    let repo = git2::Repository::discover(root).ok()?;
    let head = repo.head().ok();
    match head.as_ref().filter(|h| h.is_branch()) {
        Some(h) => h.shorthand().map(str::to_string),
        None => {
            // An unborn branch (no commit yet) still has a name.
            let unborn = repo.find_reference("HEAD").ok()?;
            match unborn.symbolic_target() {
                Some(t) => Some(t.trim_start_matches("refs/heads/").to_string()),
                None => Some(format!("detached-{}", &head?.target()?.to_string()[..12])),
            }
        }
    }
}

/// The history of `root` at its HEAD, starting from `previous` (read at another HEAD):
/// only the commits between the two are read. Outside git, an empty history. A shallow
/// clone has the history its commits hold.
pub fn update(root: &Path, previous: Option<History>) -> Result<History, HistoryError> {
    let Some(repo) = open(root) else {
        return Ok(History::default());
    };
    let head = repo.head()?.peel_to_commit()?.id();
    let previous = previous.filter(|p| !p.is_empty() || p.head.is_some());
    let Some(mut prev) = previous else {
        return read_fresh(&repo, head);
    };
    let old = match prev.head.as_deref().map(git2::Oid::from_str) {
        Some(Ok(oid)) if repo.find_commit(oid).is_ok() => oid,
        _ => return read_fresh(&repo, head),
    };
    if old == head {
        return Ok(prev);
    }
    let Ok(base) = repo.merge_base(old, head) else {
        return read_fresh(&repo, head);
    };
    // What HEAD no longer reaches goes, what it reaches anew comes.
    let dropped: HashSet<String> = ids(&repo, old, Some(base))?
        .into_iter()
        .map(|o| o.to_string())
        .collect();
    prev.commits.retain(|c| !dropped.contains(&c.id));
    let fresh = read(&repo, head, Some(base))?;
    let mut merged = History {
        head: Some(head.to_string()),
        paths: prev.paths,
        commits: Vec::with_capacity(fresh.commits.len() + prev.commits.len()),
        merges: prev.merges + fresh.merges,
        huge: prev.huge + fresh.huge,
    };
    let mut interned: HashMap<String, u32> = merged
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), i as u32))
        .collect();
    for mut c in fresh.commits {
        for ch in &mut c.changes {
            ch.path = intern(
                &mut merged.paths,
                &mut interned,
                &fresh.paths[ch.path as usize],
            );
            if let Some(f) = ch.from {
                ch.from = Some(intern(
                    &mut merged.paths,
                    &mut interned,
                    &fresh.paths[f as usize],
                ));
            }
        }
        merged.commits.push(c);
    }
    merged.commits.extend(prev.commits);
    Ok(merged)
}

fn read_fresh(repo: &git2::Repository, head: git2::Oid) -> Result<History, HistoryError> {
    let mut h = read(repo, head, None)?;
    h.head = Some(head.to_string());
    Ok(h)
}

fn intern(paths: &mut Vec<String>, ids: &mut HashMap<String, u32>, path: &str) -> u32 {
    if let Some(&id) = ids.get(path) {
        return id;
    }
    let id = paths.len() as u32;
    paths.push(path.to_string());
    ids.insert(path.to_string(), id);
    id
}

/// The commits reachable from `head` and not from `hide`, newest first.
fn ids(
    repo: &git2::Repository,
    head: git2::Oid,
    hide: Option<git2::Oid>,
) -> Result<Vec<git2::Oid>, HistoryError> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
    walk.push(head)?;
    if let Some(h) = hide {
        walk.hide(h)?;
    }
    Ok(walk.collect::<Result<Vec<_>, _>>()?)
}

/// What one commit changed, before interning.
struct Read {
    id: git2::Oid,
    time: i64,
    message: String,
    /// (path, added, renamed from).
    changes: Vec<(String, bool, Option<String>)>,
    merge: bool,
    huge: bool,
}

/// Reads the commits reachable from `head` and not from `hide` (in parallel, one
/// repository handle per thread; the order stays newest first).
fn read(
    repo: &git2::Repository,
    head: git2::Oid,
    hide: Option<git2::Oid>,
) -> Result<History, HistoryError> {
    let oids = ids(repo, head, hide)?;
    let path = repo.path().to_path_buf();
    let read: Vec<Read> = oids
        .par_iter()
        .map_init(
            || git2::Repository::open(&path).ok(),
            |r, oid| r.as_ref().and_then(|r| read_commit(r, *oid).ok()),
        )
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| git2::Error::from_str("a commit could not be read"))?;
    let mut h = History::default();
    let mut interned = HashMap::new();
    for r in read {
        if r.merge {
            h.merges += 1;
            continue;
        }
        if r.huge {
            h.huge += 1;
            continue;
        }
        if r.changes.is_empty() {
            continue;
        }
        let changes = r
            .changes
            .iter()
            .map(|(p, added, from)| Change {
                path: intern(&mut h.paths, &mut interned, p),
                added: *added,
                from: from
                    .as_deref()
                    .map(|f| intern(&mut h.paths, &mut interned, f)),
            })
            .collect();
        h.commits.push(Commit {
            id: r.id.to_string(),
            time: r.time,
            message: r.message,
            changes,
        });
    }
    Ok(h)
}

fn read_commit(repo: &git2::Repository, oid: git2::Oid) -> Result<Read, git2::Error> {
    let commit = repo.find_commit(oid)?;
    let mut r = Read {
        id: oid,
        time: commit.time().seconds(),
        message: cut(&String::from_utf8_lossy(commit.message_bytes())),
        changes: Vec::new(),
        merge: commit.parent_count() > 1,
        huge: false,
    };
    if r.merge {
        return Ok(r);
    }
    let tree = commit.tree()?;
    // A parent the snapshot lacks (a shallow clone's boundary) reads as no parent.
    let parent = commit.parent(0).ok().and_then(|p| p.tree().ok());
    let mut diff = TreeDiff::default();
    if diff_trees(repo, parent.as_ref(), Some(&tree), "", &mut diff).is_err() {
        r.huge = true;
        return Ok(r);
    }
    r.changes = diff.resolve();
    Ok(r)
}

/// A message cut at [`MAX_MESSAGE`] bytes, on a character boundary.
fn cut(message: &str) -> String {
    let m = message.trim();
    if m.len() <= MAX_MESSAGE {
        return m.to_string();
    }
    let mut end = MAX_MESSAGE;
    while !m.is_char_boundary(end) {
        end -= 1;
    }
    m[..end].to_string()
}

/// The blobs a commit added, modified and deleted (path, blob id).
#[derive(Default)]
struct TreeDiff {
    added: Vec<(String, git2::Oid)>,
    modified: Vec<String>,
    deleted: Vec<(String, git2::Oid)>,
}

impl TreeDiff {
    fn len(&self) -> usize {
        self.added.len() + self.modified.len() + self.deleted.len()
    }

    /// Changes with renames paired: a deleted and an added blob of the same content, or
    /// else the same file name when each side has one such file (a move that edits).
    fn resolve(self) -> Vec<(String, bool, Option<String>)> {
        let mut out: Vec<(String, bool, Option<String>)> = self
            .modified
            .into_iter()
            .map(|p| (p, false, None))
            .collect();
        let mut by_blob: HashMap<git2::Oid, Vec<&str>> = HashMap::new();
        for (p, oid) in &self.deleted {
            by_blob.entry(*oid).or_default().push(p);
        }
        let mut used: HashSet<&str> = HashSet::new();
        let mut unpaired = Vec::new();
        for (p, oid) in &self.added {
            let from = by_blob.get_mut(oid).and_then(|v| v.pop()).inspect(|f| {
                used.insert(f);
            });
            match from {
                Some(f) => out.push((p.clone(), true, Some(f.to_string()))),
                None => unpaired.push(p.as_str()),
            }
        }
        let mut deleted_names: HashMap<&str, Vec<&str>> = HashMap::new();
        for (p, _) in &self.deleted {
            if !used.contains(p.as_str()) {
                deleted_names.entry(base_name(p)).or_default().push(p);
            }
        }
        let mut added_names: HashMap<&str, usize> = HashMap::new();
        for p in &unpaired {
            *added_names.entry(base_name(p)).or_default() += 1;
        }
        for p in unpaired {
            let name = base_name(p);
            let from = match deleted_names.get(name) {
                Some(v) if v.len() == 1 && added_names[name] == 1 => Some(v[0].to_string()),
                _ => None,
            };
            out.push((p.to_string(), true, from));
        }
        out
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Too many files changed: the commit is mechanical.
struct TooMany;

/// Compares two trees, descending only into subtrees whose ids differ.
fn diff_trees(
    repo: &git2::Repository,
    old: Option<&git2::Tree>,
    new: Option<&git2::Tree>,
    prefix: &str,
    out: &mut TreeDiff,
) -> Result<(), TooMany> {
    let entries =
        |t: Option<&git2::Tree>| -> HashMap<Vec<u8>, (git2::Oid, Option<git2::ObjectType>)> {
            t.map(|t| {
                t.iter()
                    .map(|e| (e.name_bytes().to_vec(), (e.id(), e.kind())))
                    .collect()
            })
            .unwrap_or_default()
        };
    let old_entries = entries(old);
    let new_entries = entries(new);
    let is_tree = |k: &Option<git2::ObjectType>| *k == Some(git2::ObjectType::Tree);
    let is_blob = |k: &Option<git2::ObjectType>| *k == Some(git2::ObjectType::Blob);
    let subtree = |oid: git2::Oid| repo.find_tree(oid).ok();
    let mut names: Vec<&Vec<u8>> = old_entries.keys().chain(new_entries.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let Ok(name_str) = std::str::from_utf8(name) else {
            continue; // a non-UTF-8 path is never an indexed file
        };
        let path = format!("{prefix}{name_str}");
        let (o, n) = (old_entries.get(name), new_entries.get(name));
        if let (Some(o), Some(n)) = (o, n) {
            if o.0 == n.0 {
                continue;
            }
        }
        let o_tree = o.filter(|e| is_tree(&e.1)).and_then(|e| subtree(e.0));
        let n_tree = n.filter(|e| is_tree(&e.1)).and_then(|e| subtree(e.0));
        if o_tree.is_some() || n_tree.is_some() {
            diff_trees(
                repo,
                o_tree.as_ref(),
                n_tree.as_ref(),
                &format!("{path}/"),
                out,
            )?;
        }
        let o_blob = o.filter(|e| is_blob(&e.1));
        let n_blob = n.filter(|e| is_blob(&e.1));
        match (o_blob, n_blob) {
            (Some(_), Some(_)) => out.modified.push(path),
            (None, Some(n)) => out.added.push((path, n.0)),
            (Some(o), None) => out.deleted.push((path, o.0)),
            (None, None) => {}
        }
        if out.len() > MAX_FILES {
            return Err(TooMany);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

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

    fn commit(dir: &Path, message: &str) -> String {
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", message]);
        git(dir, &["rev-parse", "HEAD"])
    }

    fn messages(h: &History, files: &[&str]) -> Vec<Vec<String>> {
        h.file_commits(files)
            .into_iter()
            .map(|cs| {
                cs.iter()
                    .map(|&c| h.summary(c as usize).to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn no_repository_no_history() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.py"), "a = 1\n").unwrap();
        let h = update(tmp.path(), None).unwrap();
        assert_eq!(h, History::default());
        assert!(head_of(tmp.path()).is_none());
    }

    #[test]
    fn follows_renames_and_moves_with_head() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        std::fs::write(dir.join("old.py"), "def f():\n    return 1\n").unwrap();
        std::fs::write(dir.join("b.py"), "b = 1\n").unwrap();
        let one = commit(dir, "Add f and b");
        std::fs::create_dir(dir.join("pkg")).unwrap();
        git(dir, &["mv", "old.py", "pkg/new.py"]);
        let two = commit(dir, "Move f into pkg");
        std::fs::write(dir.join("pkg/new.py"), "def f():\n    return 2\n").unwrap();
        let three = commit(dir, "Fix f returning the wrong value");

        let h = update(dir, None).unwrap();
        assert_eq!(h.head.as_deref(), Some(three.as_str()));
        assert_eq!(
            messages(&h, &["pkg/new.py", "b.py"]),
            vec![
                vec![
                    "Fix f returning the wrong value".to_string(),
                    "Move f into pkg".to_string(),
                    "Add f and b".to_string()
                ],
                vec!["Add f and b".to_string()],
            ]
        );

        // Back in time: HEAD at `one` never sees the later commits.
        git(dir, &["checkout", "-q", &one]);
        let back = update(dir, Some(h.clone())).unwrap();
        assert_eq!(back.commits.len(), 1);
        assert_eq!(back.head.as_deref(), Some(one.as_str()));
        // Forward again, incrementally: the same as reading afresh.
        git(dir, &["checkout", "-q", &two]);
        let fwd = update(dir, Some(back)).unwrap();
        let fresh = update(dir, None).unwrap();
        assert_eq!(
            messages(&fwd, &["pkg/new.py"]),
            messages(&fresh, &["pkg/new.py"])
        );
        assert_eq!(fwd.commits.len(), 2);
    }
}
