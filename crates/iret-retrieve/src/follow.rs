//! Following the strongest hits' definitions: the names their best chunks call, and the
//! files that define those names. An engineer reading the function a report is about
//! opens what it calls; the fix is often there (the queryset method calls the compiler,
//! the widget calls the axis). Only callees the task speaks of are followed (their name,
//! or one of its words, is in the task), and only names few files define.
use crate::corpus::Corpus;
use crate::evaluate::Evaluation;
use iret_index::tokens::{split_identifier, stem};
use std::collections::HashSet;

/// A callee defined by more files than this is too common to follow.
pub const MAX_CALLEE_DEFINERS: usize = 2;
/// A hit is followed from this relevance up.
pub const STRONG: f32 = 0.7;

/// Names called in `code` (`name(`, `obj.name(`), in order of first call, without
/// repeats. Keywords that take parentheses (`if (`, `for (`) are not calls here: a name
/// must be an identifier that some file defines to be followed at all.
pub fn callees(code: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let prev_is_word = start > 0 && {
                let p = bytes[start - 1];
                p.is_ascii_alphanumeric() || p == b'_'
            };
            if !prev_is_word && bytes.get(i) == Some(&b'(') {
                let name = &code[start..i];
                if name.len() >= 3 && !out.contains(&name) {
                    out.push(name);
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Does the task speak of `name`: the name itself, or one of its words (stemmed)?
fn spoken_of(name: &str, task_terms: &HashSet<&str>) -> bool {
    let lower = name.to_lowercase();
    task_terms.contains(lower.as_str())
        || split_identifier(name)
            .iter()
            .filter(|w| w.len() >= 4)
            .any(|w| task_terms.contains(stem(&w.to_lowercase()).as_str()))
}

/// The files defining what the strongest hits call (and the task speaks of), other than
/// the hits themselves; best hit first. The best chunks of the `hits` strongest files
/// are read.
pub fn definitions_called(
    corpus: &Corpus,
    evals: &[Evaluation],
    task_terms: &HashSet<&str>,
    hits: usize,
) -> Vec<u32> {
    let index = &corpus.index;
    let strong: Vec<&Evaluation> = evals
        .iter()
        .filter(|e| e.relevance >= STRONG)
        .take(hits)
        .collect();
    let own: HashSet<u32> = strong.iter().map(|e| e.file).collect();
    let mut out: Vec<u32> = Vec::new();
    for e in &strong {
        let Some(best) = e.chunks.first() else {
            continue;
        };
        let text = &index.chunks.get(best.chunk as usize).text;
        for name in callees(text) {
            if !spoken_of(name, task_terms) {
                continue;
            }
            let Some(files) = corpus.index.definitions.files(&name.to_lowercase()) else {
                continue;
            };
            if files.len() > MAX_CALLEE_DEFINERS || files.iter().any(|f| own.contains(f)) {
                continue;
            }
            for f in files {
                if !out.contains(&f) {
                    out.push(f);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_names_before_a_parenthesis() {
        let code = "def union(self, *other_qs, all=False):\n    qs = self._combinator_query('union', *other_qs)\n    return self.query.combine(qs) if (x) else len(qs)";
        assert_eq!(
            callees(code),
            ["union", "_combinator_query", "combine", "len"]
        );
        assert!(callees("x = a+b").is_empty());
    }

    #[test]
    fn a_callee_is_followed_when_the_task_speaks_of_it() {
        let terms: HashSet<&str> = ["order", "combin", "set_empty"].into_iter().collect();
        assert!(spoken_of("set_empty", &terms));
        assert!(spoken_of("getOrderBy", &terms));
        assert!(!spoken_of("len", &terms));
    }
}
