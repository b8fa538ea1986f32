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

    /// The query as the task's reader sees it: HTML comments (`<!-- … -->`, the hidden
    /// instructions an issue template leaves in every report) and images (`<img …>`,
    /// `![alt](url)`: a reader sees a picture, not its address) are not the task's words,
    /// nor, in a report, the lines that describe the setup the bug shows in rather than
    /// the bug: a list of the modules it enables (`- Sphinx extensions:
    /// sphinx.ext.autodoc, sphinx.ext.napoleon`) or a version it runs (`numpy: 1.21.2`,
    /// `netCDF4: None`, `Numpy 1.22.3`).
    pub fn visible(&self) -> Query {
        let mut task = without_images(&without_comments(&self.task));
        if words::is_long(&task) {
            task = without_setup_lines(&task);
        }
        Query {
            task,
            ..self.clone()
        }
    }
}

/// `text` without its images: HTML `<img …>` tags and Markdown `![alt](url)`.
fn without_images(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((start, end)) = next_image(rest) {
        out.push_str(&rest[..start]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The byte range of the first image in `text`.
fn next_image(text: &str) -> Option<(usize, usize)> {
    let lower = text.to_ascii_lowercase();
    let tag = lower.match_indices("<img").find_map(|(i, _)| {
        let after = lower[i + 4..].chars().next()?;
        if !(after.is_whitespace() || after == '>' || after == '/') {
            return None;
        }
        let close = text[i..].find('>')?;
        Some((i, i + close + 1))
    });
    let markdown = text.match_indices("![").find_map(|(i, _)| {
        let alt = text[i + 2..].find(']')?;
        let alt_end = i + 2 + alt;
        if text[i + 2..alt_end].contains('\n') || !text[alt_end + 1..].starts_with('(') {
            return None;
        }
        let url_start = alt_end + 2;
        let close = text[url_start..].find(')')?;
        if text[url_start..url_start + close].contains(char::is_whitespace) {
            return None;
        }
        Some((i, url_start + close + 1))
    });
    match (tag, markdown) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// `task` without its lines (the first, a title, aside) that describe its setup:
/// [`is_module_listing`] or [`is_version_line`].
fn without_setup_lines(task: &str) -> String {
    let mut seen_title = false;
    let kept: Vec<&str> = task
        .lines()
        .filter(|line| {
            if !seen_title && !line.trim().is_empty() {
                seen_title = true;
                return true;
            }
            !is_module_listing(line) && !is_version_line(line)
        })
        .collect();
    kept.join("\n")
}

/// Two or more dotted module names and nothing else but an optional bullet and label
/// (`- Extensions:`, `extensions =`), quotes, brackets and commas.
fn is_module_listing(line: &str) -> bool {
    let body = line
        .trim_start()
        .trim_start_matches(['-', '*'])
        .trim_start();
    let body = match body.split_once([':', '=']) {
        Some((label, rest))
            if label.len() <= 40
                && label
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == ' ' || c == '_') =>
        {
            rest
        }
        _ => body,
    };
    let mut names = 0;
    for token in body.split(|c: char| c.is_whitespace() || ",'\"`[]".contains(c)) {
        if token.is_empty() {
            continue;
        }
        let dotted = token.split('.').count() >= 2
            && token.split('.').all(|part| {
                part.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                    && part.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
        if !dotted {
            return false;
        }
        names += 1;
    }
    names >= 2
}

/// A label and a version, nothing else: `numpy: 1.21.2`, `- Sphinx version: 3.1.0dev`,
/// `Numpy 1.22.3`, `python: 3.9.12 | packaged by conda-forge | …`, `netCDF4: None`. An
/// assignment in example code (`tol = 1.5`) is not one.
fn is_version_line(line: &str) -> bool {
    let t = line.trim().trim_start_matches(['-', '*']).trim_start();
    if !t.starts_with(|c: char| c.is_alphabetic()) {
        return false;
    }
    t.char_indices()
        .filter(|(_, c)| c.is_whitespace())
        .any(|(i, _)| {
            let label = t[..i].trim_end().trim_end_matches(':').trim_end();
            is_label(label) && is_version(t[i..].trim())
        })
}

/// A short name: letters, digits, spaces, `_`, `.` and `-`, at most 30 characters.
fn is_label(label: &str) -> bool {
    !label.is_empty()
        && label.chars().count() <= 30
        && label
            .chars()
            .all(|c| c.is_alphanumeric() || " _.-".contains(c))
}

/// `None`, or a version number (`1.21.2`, `v2022.04.0`, `3.1.0dev`), optionally followed
/// by `| …` (how it was built).
fn is_version(value: &str) -> bool {
    if value == "None" {
        return true;
    }
    let number = value.split('|').next().unwrap_or("").trim();
    let number = number.strip_prefix('v').unwrap_or(number);
    let mut parts = number.splitn(3, '.');
    let major = parts.next().unwrap_or("");
    let minor = parts.next().unwrap_or("");
    !major.is_empty()
        && major.chars().all(|c| c.is_ascii_digit())
        && minor.starts_with(|c: char| c.is_ascii_digit())
        && number
            .chars()
            .all(|c| c.is_alphanumeric() || "._+-".contains(c))
}

/// `text` without its HTML comments; an unterminated `<!--` and what follows it are kept.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        let Some(len) = rest[start + 4..].find("-->") else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + 4 + len + 3..];
    }
    out.push_str(rest);
    out
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
    fn html_comments_are_not_the_tasks_words() {
        let report = "Plot breaks\n<!-- Please check the\ndevelopment version -->\nlog scale fails <!--x-->here";
        let visible = Query::new(report).visible();
        assert_eq!(visible.task, "Plot breaks\n\nlog scale fails here");
        assert!(!analyse(&visible.task).terms.contains(&stem("development")));
        let open = "Plot breaks <!-- never closed";
        assert_eq!(Query::new(open).visible().task, open);
    }

    #[test]
    fn a_reports_setup_lines_modules_and_versions_are_not_its_words() {
        let body = "word ".repeat(60);
        let report = format!(
            "autodoc drops the return type\n{body}\n- Sphinx extensions:  sphinx.ext.autodoc, sphinx.ext.napoleon\nextensions = ['sphinx.ext.autodoc', 'sphinx.ext.todo']\nsee sphinx.ext.autodoc, sphinx.ext.napoleon here\nfoo(a.b, c.d)"
        );
        let visible = Query::new(report).visible().task;
        assert!(!visible.contains("Sphinx extensions"), "{visible}");
        assert!(!visible.contains("sphinx.ext.todo"), "{visible}");
        assert!(
            visible.contains("see sphinx.ext.autodoc"),
            "prose stays: {visible}"
        );
        assert!(visible.contains("foo(a.b, c.d)"), "code stays: {visible}");
        let versions = format!(
            "xarray drops attrs\n{body}\nnumpy: 1.21.2\nnetCDF4: None\n- Sphinx version: 3.1.0dev\nNumpy 1.22.3\npython: 3.9.12 | packaged by conda-forge | (main)\nVersion 2 broke merge\nmerge: 2 arrays\nuse 1.5 here\ntol = 1.5"
        );
        let visible = Query::new(versions).visible().task;
        for gone in ["numpy", "netCDF4", "Sphinx version", "Numpy", "conda"] {
            assert!(!visible.contains(gone), "{gone}: {visible}");
        }
        for kept in [
            "Version 2 broke merge",
            "merge: 2 arrays",
            "use 1.5 here",
            "tol = 1.5",
        ] {
            assert!(visible.contains(kept), "{kept}: {visible}");
        }
        // A short task (an agent's) is read as written.
        let short = "read sphinx.ext.autodoc\nsphinx.ext.autodoc, sphinx.ext.napoleon";
        assert_eq!(Query::new(short).visible().task, short);
    }

    #[test]
    fn images_are_not_the_tasks_words() {
        let task = "Default value vanished\n<img width=\"148\" alt=\"shot\" src=\"https://user-images.githubusercontent.com/1.png\">\nsee ![image](https://x.org/a.png) here, a [link](https://docs.org/api.html) and <imgur>";
        assert_eq!(
            Query::new(task).visible().task,
            "Default value vanished\n\nsee  here, a [link](https://docs.org/api.html) and <imgur>"
        );
        let broken = "see ![image](never closed and <img no end";
        assert_eq!(Query::new(broken).visible().task, broken);
    }

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
