//! Names: code is organised by concept, so a file or folder named with the query's words
//! (`throttle.ts`, `middleware/`) is likely about it.
use super::file_stem;
use crate::abbreviations;
use iret_index::tokens::{split_identifier, stem, tokenize};
use std::collections::HashSet;

/// A file name's words, lower-cased as the name writes them (shown in reasons) and
/// stemmed (compared), read once per ranked file.
pub struct FileName {
    words: Vec<String>,
    stems: Vec<String>,
}

impl FileName {
    pub fn of(path: &str) -> Self {
        // A package's `__init__.py` (or `__main__.py`) is named by convention, not for
        // what it holds: an `__init__` method in the task says nothing about it.
        let base = Some(file_stem(path))
            .filter(|b| !is_dunder(b))
            .unwrap_or("");
        let words: Vec<String> = split_identifier(base)
            .iter()
            .map(|w| w.to_lowercase())
            .filter(|w| w.len() > 1)
            .collect();
        let stems = words.iter().map(|w| stem(w)).collect();
        Self { words, stems }
    }
}

/// `__init__`, `__main__`: a name Python gives by convention.
fn is_dunder(stem: &str) -> bool {
    stem.len() > 4 && stem.starts_with("__") && stem.ends_with("__")
}

/// How strongly the query says the file-name word whose stem is `s`: 1 for the stem,
/// `abbreviation` for a word it abbreviates, else 0.
fn said(query: &HashSet<String>, s: &str, abbreviation: f32) -> f32 {
    if query.contains(s) {
        1.0
    } else if abbreviations::expansions(s).any(|l| query.contains(&l)) {
        abbreviation
    } else {
        0.0
    }
}

/// What the file name says of the query: its words that the query says (directly or,
/// with `abbreviation` > 0, by the word they abbreviate), as the file name writes them,
/// and their share of the name's words, a word said by what it abbreviates counting
/// `abbreviation`.
pub fn file_name_words(
    name: &FileName,
    query: &HashSet<String>,
    abbreviation: f32,
) -> (Vec<String>, f32) {
    let count = name.words.len().max(1) as f32;
    let mut strength = 0.0;
    let mut said_words = Vec::new();
    for (w, s) in name.words.iter().zip(&name.stems) {
        let x = said(query, s, abbreviation);
        if x > 0.0 {
            strength += x;
            said_words.push(w.clone());
        }
    }
    (said_words, strength / count)
}

/// `weight` × the share of the file name that the query says ([`file_name_words`]).
pub fn name_bonus(share: f32, weight: f32) -> f32 {
    weight * share
}

/// The task spells the file's name out, its words in order among the task's words (a
/// name of two or more words: "a JSON object" → `JsonObject.java`, "the query set" →
/// `query_set.py`). One-word names are the file-name signal's alone.
pub fn spelled(name: &FileName, task_words: &[String]) -> bool {
    let n = name.stems.len();
    n >= 2 && task_words.windows(n).any(|w| w == name.stems.as_slice())
}

/// `weight` when the task spells the file's name out ([`spelled`]).
pub fn spelled_bonus(spelled: bool, weight: f32) -> f32 {
    if spelled {
        weight
    } else {
        0.0
    }
}

/// Words of the file's folders that the query says.
pub fn folder_words(path: &str, query: &HashSet<String>) -> Vec<String> {
    let dirs: HashSet<String> = tokenize(path.rsplit_once('/').map_or("", |(d, _)| d))
        .into_iter()
        .collect();
    let mut said: Vec<String> = dirs.into_iter().filter(|w| query.contains(w)).collect();
    said.sort();
    said
}

/// `weight` for two or more folder words said, half for one.
pub fn path_bonus(said: &[String], weight: f32) -> f32 {
    weight * (said.len() as f32).min(2.0) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stems(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| stem(w)).collect()
    }

    #[test]
    fn a_name_is_spelled_by_its_words_in_order() {
        let words = |t: &str| -> Vec<String> { t.split(' ').map(stem).collect() };
        let task = words("a json object with named fields");
        assert!(spelled(&FileName::of("gson/JsonObject.java"), &task));
        assert!(!spelled(&FileName::of("gson/ObjectJson.java"), &task));
        assert!(!spelled(
            &FileName::of("gson/FieldNamingPolicy.java"),
            &task
        ));
        // A one-word name is the file-name signal's.
        assert!(!spelled(&FileName::of("gson/object.py"), &task));
        assert!(spelled(
            &FileName::of("db/query_set.py"),
            &words("iterating the query sets")
        ));
    }

    #[test]
    fn a_package_init_is_not_named_by_an_init_method() {
        let q = stems(&["init", "autodoc", "return"]);
        let init = FileName::of("sphinx/ext/autodoc/__init__.py");
        assert!(file_name_words(&init, &q, 0.5).0.is_empty());
        assert!(!file_name_words(&FileName::of("src/init.py"), &q, 0.5)
            .0
            .is_empty());
    }

    #[test]
    fn a_file_name_abbreviation_is_said_by_the_word_it_stands_for() {
        let q = stems(&["utility", "functions", "mime"]);
        assert_eq!(
            file_name_words(&FileName::of("lib/utils.js"), &q, 0.5),
            (vec!["utils".into()], 0.5)
        );
        assert_eq!(name_bonus(0.5, 0.2), 0.1);
        assert!(file_name_words(&FileName::of("lib/utils.js"), &q, 0.0)
            .0
            .is_empty());
        let q = stems(&["loader", "configuration"]);
        assert_eq!(
            file_name_words(&FileName::of("src/config_loader.py"), &q, 0.5),
            (vec!["config".into(), "loader".into()], 1.5 / 2.0)
        );
        // Only the listed conventions: a word is not its own prefix's abbreviation.
        let q = stems(&["listener"]);
        assert!(file_name_words(&FileName::of("src/list.go"), &q, 0.5)
            .0
            .is_empty());
        let q = stems(&["timeout"]);
        assert!(file_name_words(&FileName::of("src/time.rs"), &q, 0.5)
            .0
            .is_empty());
    }
}
