//! What a reader sees: BM25 works on stems (`throttl`), a trace or a reason shows the word
//! as the task or the code writes it (`throttle`).
use crate::terms::Term;
use iret_index::tokens::{identifiers, split_identifier, stem};
use std::collections::HashMap;

/// Stems and the first word seen for each.
#[derive(Debug, Default, Clone)]
pub struct Spelling {
    words: HashMap<String, String>,
}

impl Spelling {
    /// The words of `task` (and the parts of its identifiers), lower-cased, by stem.
    pub fn of_task(task: &str) -> Self {
        let mut s = Self::default();
        for ident in identifiers(task) {
            let parts = split_identifier(ident);
            let whole = (parts.len() > 1).then_some(ident);
            for word in parts.into_iter().chain(whole) {
                let lower = word.to_lowercase();
                s.words.entry(stem(&lower)).or_insert(lower);
            }
        }
        s
    }

    /// Learned terms keep the spelling the code gave them: the part of the identifier
    /// they were found in that is the term (`middlewar` in `applyMiddleware` reads
    /// `middleware`), else the identifier itself.
    pub fn learn(&mut self, terms: &[&Term]) {
        for t in terms {
            if t.word.is_empty() {
                continue;
            }
            let part = split_identifier(&t.word)
                .into_iter()
                .map(str::to_lowercase)
                .find(|p| stem(p) == t.stem);
            self.words
                .entry(t.stem.clone())
                .or_insert_with(|| part.unwrap_or_else(|| t.word.clone()));
        }
    }

    /// The word for `stem`, or the stem itself when no word was seen.
    pub fn word<'a>(&'a self, stem: &'a str) -> &'a str {
        self.words.get(stem).map_or(stem, String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_read_as_the_task_wrote_them() {
        let s = Spelling::of_task("Add rate limiting to the router; see parseConfig");
        assert_eq!(s.word(&stem("limiting")), "limiting");
        assert_eq!(s.word(&stem("router")), "router");
        assert_eq!(s.word(&stem("config")), "config");
        assert_eq!(s.word("unseen"), "unseen");
    }

    #[test]
    fn learned_terms_read_as_the_code_wrote_them() {
        let mut s = Spelling::default();
        let t = Term {
            word: "throttle".into(),
            file: "src/throttle.ts".into(),
            stem: stem("throttle"),
        };
        s.learn(&[&t]);
        assert_ne!(
            stem("throttle"),
            "throttle",
            "the test needs a stem that differs"
        );
        assert_eq!(s.word(&stem("throttle")), "throttle");
    }
}
