//! A repository's own history as localisation tasks, for a benchmark on any codebase
//! without writing annotations: each commit with a descriptive message is a task whose
//! query is the message and whose gold files are the non-test source files it modified,
//! searched on the parent commit's tree.
use crate::checkout::Mirror;
use crate::dataset::{Target, Task};
use crate::localise::Instance;

/// Which commits make tasks.
#[derive(Debug, Clone)]
pub struct HistoryOptions {
    /// `owner/name` (names the checkout and index folders).
    pub repo: String,
    /// The newest commit considered (a revision git understands).
    pub until: String,
    /// How many tasks: the newest qualifying commits, visited oldest first.
    pub commits: usize,
    /// A task's message has at least this many words.
    pub min_words: usize,
    /// A task changes at most this many source files.
    pub max_files: usize,
    /// A task of the subject and body.
    pub full: bool,
    /// A task of the subject alone (named `…~subject`), on the same commit.
    pub subject: bool,
}

/// Source files by extension: what iret chunks as code (not docs, data or config).
const SOURCE: &[&str] = &[
    "py", "rs", "go", "java", "kt", "kts", "scala", "rb", "js", "jsx", "mjs", "cjs", "ts", "tsx",
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "php", "swift", "ex", "exs", "hs", "lua",
    "sh", "bash", "zig", "ml", "dart", "m", "jl", "r",
];

pub fn is_source(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_lowercase());
    ext.is_some_and(|e| SOURCE.contains(&e.as_str()))
}

/// Tests, benchmarks, examples and docs: not what a change's message describes the fix of.
pub fn is_test_or_aux(path: &str) -> bool {
    let lower = path.to_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let folders: Vec<&str> = lower.split('/').collect();
    let aux = [
        "test",
        "tests",
        "testing",
        "spec",
        "specs",
        "__tests__",
        "benches",
        "benchmarks",
        "bench",
        "examples",
        "example",
        "docs",
        "doc",
        "testdata",
        "fixtures",
    ];
    folders[..folders.len() - 1].iter().any(|f| aux.contains(f))
        || name.starts_with("test_")
        || name.starts_with("conftest")
        || ["_test.", ".test.", ".spec.", "_spec.", "tests."]
            .iter()
            .any(|m| name.contains(m))
        || name
            .split('.')
            .next()
            .is_some_and(|s| s.ends_with("test") || s.ends_with("tests"))
}

/// A message that describes a change rather than naming a routine one.
pub fn is_descriptive(subject: &str, min_words: usize) -> bool {
    let lower = subject.to_lowercase();
    let routine = [
        "merge",
        "revert",
        "bump",
        "release",
        "bumped",
        "prepare",
        "version",
        "changelog",
        "update changelog",
        "fix typo",
        "typo",
        "format",
        "formatting",
        "lint",
        "style",
        "wip",
        "cargo fmt",
        "rustfmt",
        "black",
    ];
    let first = lower.split_whitespace().next().unwrap_or("");
    let words = subject
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count();
    words >= min_words
        && !routine
            .iter()
            .any(|r| first == *r || lower.starts_with(&format!("{r} ")))
}

/// The message with trailers (`Signed-off-by:`, `Co-authored-by:` …) left out.
fn message(subject: &str, body: &str) -> String {
    let body: Vec<&str> = body
        .lines()
        .filter(|l| {
            let t = l.trim();
            let trailer = t.split_once(':').is_some_and(|(k, _)| {
                !k.is_empty() && !k.contains(' ') && k.contains('-') && k.len() < 30
            });
            !trailer
        })
        .collect();
    let body = body.join("\n");
    let body = body.trim();
    if body.is_empty() {
        subject.to_string()
    } else {
        format!("{subject}\n\n{body}")
    }
}

/// The newest `opts.commits` tasks of the history up to `opts.until`, oldest first.
pub fn tasks_from_history(mirror: &Mirror, opts: &HistoryOptions) -> anyhow::Result<Vec<Instance>> {
    // Records: \x1e hash \x1f parents \x1f subject \x1f body \x1f, then --name-status lines.
    let log = mirror.output(&[
        "log",
        "--no-merges",
        "--first-parent",
        "--no-renames",
        "--name-status",
        "--format=%x1e%H%x1f%P%x1f%s%x1f%b%x1f",
        &opts.until,
    ])?;
    let mut out = Vec::new();
    for record in log.split('\x1e').filter(|r| !r.trim().is_empty()) {
        if out.len() >= opts.commits {
            break;
        }
        if let Some(inst) = task_of(record, opts) {
            out.extend(texts(inst, opts).into_iter().rev());
        }
    }
    out.reverse();
    Ok(out)
}

/// The task as `opts` asks for it: its full message, its subject alone, or both. A message
/// without a body is its subject: asked for both, it makes one task, not the same one twice.
fn texts(inst: Instance, opts: &HistoryOptions) -> Vec<Instance> {
    let mut out = Vec::new();
    let has_body = inst.task.query.contains('\n');
    if opts.subject && (has_body || !opts.full) {
        let subject = inst.task.query.lines().next().unwrap_or("").to_string();
        let mut one = inst.clone();
        one.name = format!("{}~subject", inst.name);
        one.task.query = subject;
        out.push(one);
    }
    if opts.full {
        out.insert(0, inst);
    }
    out
}

fn task_of(record: &str, opts: &HistoryOptions) -> Option<Instance> {
    let mut fields = record.split('\x1f');
    let hash = fields.next()?.trim();
    let parents: Vec<&str> = fields.next()?.split_whitespace().collect();
    let subject = fields.next()?.trim();
    let body = fields.next()?;
    let changes = fields.next().unwrap_or("");
    if parents.len() != 1 || !is_descriptive(subject, opts.min_words) {
        return None;
    }
    let mut gold = Vec::new();
    for line in changes.lines() {
        let Some((status, path)) = line.split_once('\t') else {
            continue;
        };
        if !is_source(path) || is_test_or_aux(path) {
            continue;
        }
        if status != "M" {
            return None; // an added or deleted source file: not a localisation task
        }
        gold.push(path.to_string());
    }
    if gold.is_empty() || gold.len() > opts.max_files {
        return None;
    }
    Some(Instance {
        name: format!("{}@{}", opts.repo, &hash[..hash.len().min(10)]),
        repo: opts.repo.clone(),
        revision: parents[0].to_string(),
        task: Task {
            query: message(subject, body),
            relevant: gold.into_iter().map(Target::Path).collect(),
            secondary: Vec::new(),
            category: None,
            vocab_gap: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routine_messages_are_not_tasks() {
        assert!(is_descriptive("Fix panic when the config file is empty", 4));
        assert!(!is_descriptive("Bump serde from 1.0.1 to 1.0.2", 4));
        assert!(!is_descriptive("Merge pull request #12 from x/y", 4));
        assert!(!is_descriptive("Fix typo", 4));
        assert!(!is_descriptive("Release 1.2.3", 4));
    }

    #[test]
    fn tests_and_docs_are_not_gold() {
        assert!(is_test_or_aux("tests/test_api.py"));
        assert!(is_test_or_aux("src/foo_test.go"));
        assert!(is_test_or_aux("pkg/tests/helpers.rs"));
        assert!(is_test_or_aux("lib/sklearn/conftest.py"));
        assert!(!is_test_or_aux("django/db/models/query.py"));
        assert!(is_source("a/b.py") && !is_source("README.md") && !is_source("Cargo.toml"));
    }

    /// Full-message tasks of at least 4 words changing at most 3 files.
    fn options() -> HistoryOptions {
        HistoryOptions {
            repo: "o/r".into(),
            until: "HEAD".into(),
            commits: 10,
            min_words: 4,
            max_files: 3,
            full: true,
            subject: false,
        }
    }

    #[test]
    fn a_record_becomes_a_task_on_the_parent() {
        let opts = options();
        let rec = "abc123\x1fdef456\x1fHandle empty input in the parser\x1fLonger text.\n\nSigned-off-by: A <a@b>\n\x1f\n\nM\tsrc/parser.rs\nM\ttests/parser.rs\nM\tREADME.md\n";
        let t = task_of(rec, &opts).unwrap();
        assert_eq!(t.revision, "def456");
        assert_eq!(t.task.relevant, vec![Target::Path("src/parser.rs".into())]);
        assert_eq!(
            t.task.query,
            "Handle empty input in the parser\n\nLonger text."
        );
        let added = rec.replace("M\tsrc/parser.rs", "A\tsrc/parser.rs");
        assert!(task_of(&added, &opts).is_none());
        let merge = rec.replace("def456", "def456 999");
        assert!(task_of(&merge, &opts).is_none());
    }

    #[test]
    fn both_texts_make_two_tasks_on_one_commit_the_subject_one_line() {
        let opts = HistoryOptions {
            subject: true,
            ..options()
        };
        let rec = "abc123\x1fdef456\x1fHandle empty input in the parser\x1fLonger text.\n\x1f\n\nM\tsrc/parser.rs\n";
        let both = texts(task_of(rec, &opts).unwrap(), &opts);
        assert_eq!(both.len(), 2);
        assert_eq!(
            both[0].task.query,
            "Handle empty input in the parser\n\nLonger text."
        );
        assert_eq!(both[1].task.query, "Handle empty input in the parser");
        assert_eq!(both[1].name, format!("{}~subject", both[0].name));
        assert_eq!(both[0].revision, both[1].revision);
        let subject_only = HistoryOptions {
            full: false,
            ..opts
        };
        let one = texts(task_of(rec, &subject_only).unwrap(), &subject_only);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].task.query, "Handle empty input in the parser");
    }

    #[test]
    fn a_message_without_a_body_makes_one_task_when_both_texts_are_asked_for() {
        let both = HistoryOptions {
            subject: true,
            ..options()
        };
        let rec = "abc123\x1fdef456\x1fHandle empty input in the parser\x1f\nSigned-off-by: A <a@b>\n\x1f\n\nM\tsrc/parser.rs\n";
        let tasks = texts(task_of(rec, &both).unwrap(), &both);
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].task.query, "Handle empty input in the parser");
        assert!(!tasks[0].name.ends_with("~subject"));
        let subject_only = HistoryOptions {
            full: false,
            ..both
        };
        let one = texts(task_of(rec, &subject_only).unwrap(), &subject_only);
        assert_eq!(one[0].name, format!("{}~subject", tasks[0].name));
    }
}
