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

/// English function words that are longer than the tokenizer's stopwords: a task's
/// grammar, never what it looks for ("guarded against theft", "goes through the
/// middleware"), so they are not concepts to cover or gaps to name. Words that can also
/// name code (`after`, `before`, `once`, `all`, `any`, `not`, `only`) are not here.
const FUNCTION_WORDS: &[&str] = &[
    "about", "against", "also", "although", "because", "been", "being", "both", "but", "could",
    "did", "during", "either", "has", "had", "have", "having", "however", "just", "may", "might",
    "must", "neither", "our", "ours", "since", "such", "than", "them", "they", "those", "though",
    "through", "upon", "very", "were", "whether", "would", "yet",
];

/// Is `word` (lower case) grammar rather than a concept?
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// Concepts with which a task asks for tests, examples or benchmarks (which are
/// otherwise damped).
const NOISE_WANTED: &[&str] = &["test", "tests", "example", "examples", "spec", "benchmark"];

/// A task longer than this (in words) is a report: its first line says what it asks.
pub const LONG_TASK_WORDS: usize = 40;

/// The task's title: its first non-blank line.
pub fn title(task: &str) -> &str {
    task.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// Is `task` a report (longer than [`LONG_TASK_WORDS`])?
pub fn is_long(task: &str) -> bool {
    task.split_whitespace().count() > LONG_TASK_WORDS
}

/// Does the task ask for tests, examples or benchmarks? A short task asks with any of
/// its words; a long one (an issue report) with its first line, its title: its body
/// mentions tests and examples while describing the problem ("here is an example").
pub fn wants_noise(task: &str) -> bool {
    let head = if is_long(task) { title(task) } else { task };
    iret_index::tokens::identifiers(head)
        .flat_map(iret_index::tokens::split_identifier)
        .any(|w| NOISE_WANTED.contains(&w.to_lowercase().as_str()))
}

/// A long task keeps at most this many concepts: what its coverage and gaps are judged by.
pub const KEY_CONCEPTS: usize = 12;

/// A task's concepts without the words that say what to do. A long task (a report) has
/// dozens of content words; it keeps its [`KEY_CONCEPTS`] most telling: its title's
/// words first, then the rarest in the codebase (`idf`, stemmed word → weight; words the
/// codebase lacks weigh nothing there).
pub fn target_concepts(concepts: &[String], task: &str, idf: &dyn Fn(&str) -> f32) -> Vec<String> {
    let mut out: Vec<String> = concepts
        .iter()
        .filter(|c| !TASK_WORDS.contains(&c.as_str()))
        .cloned()
        .collect();
    if !is_long(task) || out.len() <= KEY_CONCEPTS {
        return out;
    }
    let title_words: Vec<String> = iret_index::tokens::identifiers(title(task))
        .flat_map(iret_index::tokens::split_identifier)
        .map(str::to_lowercase)
        .collect();
    let weight = |c: &String| {
        let in_title = if title_words.contains(c) { 100.0 } else { 0.0 };
        in_title + idf(&iret_index::tokens::stem(c))
    };
    let mut ranked: Vec<(usize, f32)> = out
        .iter()
        .enumerate()
        .map(|(i, c)| (i, weight(c)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut keep: Vec<usize> = ranked.iter().take(KEY_CONCEPTS).map(|(i, _)| *i).collect();
    keep.sort_unstable();
    out = keep.into_iter().map(|i| out[i].clone()).collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iret_index::tokens::stem;

    #[test]
    fn a_long_task_keeps_its_title_and_rarest_words() {
        // Letters only: a concept is a part of an identifier, never `word29`.
        let name = |i: usize| {
            format!(
                "term{}{}",
                (b'a' + (i % 26) as u8) as char,
                (b'a' + (i / 26) as u8) as char
            )
        };
        let concepts: Vec<String> = (0..30).map(name).collect();
        let task = format!("{} breaks\n{}", name(29), concepts.join(" ").repeat(2));
        let idf = |w: &str| {
            let i = (0..30).position(|i| stem(&name(i)) == w).unwrap_or(0);
            (i % 7) as f32
        };
        let kept = target_concepts(&concepts, &task, &idf);
        assert_eq!(kept.len(), KEY_CONCEPTS);
        assert!(
            kept.contains(&name(29)),
            "the title's word is kept: {kept:?}"
        );
        assert!(kept.contains(&name(6)) && !kept.contains(&name(7)));
        // A short task keeps every content word.
        let short = target_concepts(&concepts[..3], "fix it", &idf);
        assert_eq!(short.len(), 3);
    }

    #[test]
    fn a_report_asks_for_tests_in_its_title() {
        assert!(wants_noise("add tests for the router"));
        assert!(is_function_word("against") && is_function_word("through"));
        assert!(!is_function_word("after") && !is_function_word("throttle"));
        assert!(!wants_noise("fix the router"));
        let body = " word".repeat(50);
        assert!(!wants_noise(&format!(
            "Router drops headers\n\nHere is an example test:{body}"
        )));
        assert!(wants_noise(&format!(
            "Add a test for header handling\n{body}"
        )));
    }
}
