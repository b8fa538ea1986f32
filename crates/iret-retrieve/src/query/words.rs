//! Word lists about tasks: what a task's words say about what it asks for.

/// Words of a task that say what to do, not what to look for.
pub const TASK_WORDS: &[&str] = &[
    "fix",
    "bug",
    "add",
    "support",
    "issue",
    "change",
    "update",
    "improve",
    "make",
    "need",
    "should",
    "want",
    "new",
    "problem",
    "broken",
    "wrong",
    "error",
    "properly",
    "correctly",
];

/// Concepts with which a task asks for tests, examples or benchmarks (which are
/// otherwise damped).
const NOISE_WANTED: &[&str] = &["test", "tests", "example", "examples", "spec", "benchmark"];

/// Does the task ask for tests, examples or benchmarks?
pub fn wants_noise(concepts: &[String]) -> bool {
    concepts.iter().any(|c| NOISE_WANTED.contains(&c.as_str()))
}

/// A task's concepts without the words that say what to do.
pub fn target_concepts(concepts: &[String]) -> Vec<String> {
    concepts
        .iter()
        .filter(|c| !TASK_WORDS.contains(&c.as_str()))
        .cloned()
        .collect()
}
