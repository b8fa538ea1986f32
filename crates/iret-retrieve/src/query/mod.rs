//! What a query asks for: the task, optional keywords and path globs, and an analysis
//! of its words (content terms, code identifiers, symbol lookups); the state a query is
//! in between cycles ([`State`]) and its path scope ([`Scope`]).
pub mod evidence;
pub mod passages;
pub mod pointers;
pub mod reexports;
mod scope;
mod state;
pub mod title;
mod visible;
pub mod words;

pub use scope::Scope;
pub use state::{initial_state, State};

use iret_index::tokens::{identifiers, is_stopword, split_identifier, stem, tokenize};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The three fields of an initial query, as agents send them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Query {
    pub task: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
}

impl Query {
    pub fn new(task: impl Into<String>) -> Self {
        Self {
            task: task.into(),
            ..Default::default()
        }
    }
}

/// The words of a task, analysed once.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Stemmed BM25 terms of the task (and keywords).
    pub terms: Vec<String>,
    /// Lower-case content words (unstemmed), the task's concepts.
    pub concepts: Vec<String>,
    /// Words written like code (`TRPCError`, `parse_obj`, `app.use`), lower-cased.
    pub identifiers: Vec<String>,
    /// The whole query is one identifier or a couple of them: a symbol lookup.
    pub is_symbol: bool,
    /// Versions the task names (`v3` → 3).
    pub versions: Vec<u32>,
    /// Paths, code names and messages the task points at.
    pub evidence: evidence::Evidence,
    /// The task asks for tests or examples (which are otherwise damped).
    pub wants_noise: bool,
    /// The task's prose words in order, lower-cased and stemmed, stopwords kept (a code
    /// name an empty word): the names it spells out ("JSON object" → `JsonObject`).
    pub words: Vec<String>,
    /// Stemmed terms of the task's first line (a report's title; the whole task when it
    /// is one line): what a commit message would say of it (see `history`).
    pub summary: Vec<String>,
    /// The task is a report (`words::is_long`): a title, then a body whose example code
    /// uses whatever it needs.
    pub is_report: bool,
}

fn looks_like_code(word: &str) -> bool {
    let parts = split_identifier(word).len();
    parts > 1 || word.contains('_') || word.chars().skip(1).any(|c| c.is_uppercase())
}

/// Two to four capitals (`JSON`, `HTTP`, `URL`).
fn is_acronym(word: &str) -> bool {
    (2..=4).contains(&word.len()) && word.chars().all(|c| c.is_ascii_uppercase())
}

/// Acronyms the text only uses as words of its prose ("renders JSON."), never as code
/// (`RST.__init__()`, `` `URL` ``, `JSON(…)`): words, not names the code defines.
fn prose_acronyms(words: &[&str]) -> HashSet<String> {
    let punctuation = |c: char| "\"'([{,;:!?.)]}".contains(c);
    let mut prose = HashSet::new();
    let mut code = HashSet::new();
    for w in words {
        let bare = w.trim_matches(punctuation);
        if is_acronym(bare) {
            prose.insert(bare.to_string());
        } else {
            code.extend(identifiers(w).filter(|i| is_acronym(i)).map(str::to_string));
        }
    }
    prose.retain(|a| !code.contains(a));
    prose
}

pub fn analyse(text: &str) -> Analysis {
    let words: Vec<&str> = text.split_whitespace().collect();
    let prose = prose_acronyms(&words);
    let is_code = |w: &str| looks_like_code(w) && !prose.contains(w);
    let mut identifiers_found: Vec<String> = Vec::new();
    for id in identifiers(text) {
        let trimmed = id.trim_matches(|c| c == '_' || c == '$');
        if (is_code(trimmed) || words.len() == 1) && trimmed.len() > 2 {
            let lower = trimmed.to_lowercase();
            if !identifiers_found.contains(&lower) {
                identifiers_found.push(lower);
            }
        }
    }
    let mut concepts = Vec::new();
    for id in identifiers(text) {
        for part in split_identifier(id) {
            let p = part.to_lowercase();
            if p.len() > 2
                && !is_stopword(&p)
                && !words::is_function_word(&p)
                && !concepts.contains(&p)
            {
                concepts.push(p);
            }
        }
    }
    let code_words = words
        .iter()
        .filter(|w| is_code(w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')))
        .count();
    let is_symbol = !words.is_empty()
        && (words.len() == 1 || (words.len() <= 3 && code_words * 2 >= words.len()));
    let versions = words
        .iter()
        .filter_map(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            w.strip_prefix(['v', 'V'])?.parse().ok()
        })
        .collect();
    Analysis {
        terms: tokenize(text),
        concepts,
        identifiers: identifiers_found,
        is_symbol,
        versions,
        evidence: evidence::extract(text),
        wants_noise: words::wants_noise(text),
        words: prose_sequence(text, is_code),
        summary: tokenize(first_line(text)),
        is_report: words::is_long(text),
    }
}

/// The task's prose words in order (`Analysis::words`); a code name (`to_json`,
/// `QuerySet`) stands as an empty word, so no phrase runs through it: the names it
/// writes as code are the definitions signal's.
fn prose_sequence(text: &str, is_code: impl Fn(&str) -> bool) -> Vec<String> {
    identifiers(text)
        .map(|id| {
            let bare = id.trim_matches(|c| c == '_' || c == '$');
            if is_code(bare) {
                String::new()
            } else {
                stem(&bare.to_lowercase())
            }
        })
        .collect()
}

/// The task's first non-blank line: a report's title.
fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// The stemmed form used to compare a concept with BM25 terms.
pub fn concept_stem(concept: &str) -> String {
    stem(concept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reports_summary_is_its_title_and_a_one_line_task_is_all_summary() {
        let report = "\n  Caplog handler reset loses records\nSteps:\n```\nimport logging\n```";
        assert_eq!(
            analyse(report).summary,
            tokenize("Caplog handler reset loses records")
        );
        let task = "Fix the authentication token expiry bug";
        assert_eq!(analyse(task).summary, analyse(task).terms);
    }

    #[test]
    fn symbol_queries_are_detected() {
        assert!(analyse("TRPCError").is_symbol);
        assert!(analyse("inferProcedureInput").is_symbol);
        assert!(analyse("Router").is_symbol);
        assert!(!analyse("how are routes grouped and registered").is_symbol);
        assert_eq!(
            analyse("where is TRPCError thrown").identifiers,
            vec!["trpcerror"]
        );
    }

    #[test]
    fn a_short_acronym_in_prose_is_a_word_not_a_code_name() {
        assert!(analyse("JSON response rendering").identifiers.is_empty());
        assert!(analyse("how HTTP redirects are followed")
            .identifiers
            .is_empty());
        assert_eq!(analyse("JSON").identifiers, vec!["json"]);
        // Written as code, it is a name: a call, a member, backticks.
        assert_eq!(
            analyse("TypeError: RST.__init__() got an unexpected keyword").identifiers,
            vec!["typeerror", "rst"]
        );
        assert_eq!(analyse("the `URL` class").identifiers, vec!["url"]);
        assert_eq!(
            analyse("when DEBUG is off, USE_TZ breaks").identifiers,
            vec!["debug", "use_tz"]
        );
        // The acronym is still one of the task's concepts.
        assert!(analyse("JSON response rendering")
            .concepts
            .contains(&"json".to_string()));
    }

    #[test]
    fn the_word_sequence_keeps_order_and_stopwords() {
        assert_eq!(
            analyse("JSON object with named fields").words,
            vec!["json", "object", "with", "nam", "field"]
        );
        assert_eq!(
            analyse("ADL-based to_json hooks").words,
            vec!["", "bas", "", "hook"]
        );
    }

    #[test]
    fn concepts_are_content_words() {
        assert_eq!(
            analyse("Fix the authentication token expiry bug").concepts,
            vec!["fix", "authentication", "token", "expiry", "bug"]
        );
        assert_eq!(
            analyse("list replies guarded against theft, passed through the middleware").concepts,
            vec![
                "list",
                "replies",
                "guarded",
                "theft",
                "passed",
                "middleware"
            ]
        );
    }
}
