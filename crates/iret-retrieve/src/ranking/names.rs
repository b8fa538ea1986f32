//! Names: code is organised by concept, so a file or folder named with the query's words
//! (`throttle.ts`, `middleware/`) is likely about it.
use super::file_stem;
use iret_index::tokens::{split_identifier, stem, tokenize};
use std::collections::HashSet;

/// The file name's words (stemmed).
fn stem_words(path: &str) -> Vec<String> {
    split_identifier(file_stem(path))
        .iter()
        .map(|w| stem(&w.to_lowercase()))
        .filter(|w| w.len() > 1)
        .collect()
}

/// Words of the file name that the query says, as the file name writes them
/// (lower-cased, not stemmed: they are shown in reasons).
pub fn file_name_words(path: &str, query: &HashSet<String>) -> Vec<String> {
    split_identifier(file_stem(path))
        .iter()
        .map(|w| w.to_lowercase())
        .filter(|w| w.len() > 1 && query.contains(&stem(w)))
        .collect()
}

/// `weight` × the share of the file name's words that the query says.
pub fn name_bonus(path: &str, said: &[String], weight: f32) -> f32 {
    if said.is_empty() {
        return 0.0;
    }
    weight * said.len() as f32 / stem_words(path).len().max(1) as f32
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
