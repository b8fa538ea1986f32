//! A report's title: the one line its writer spent on what it is about. An issue's body
//! quotes whatever its example needs (`xr.DataArray(...)` in every xarray report), its
//! title names the subject (`xr.where not preserving attributes`). The code names the
//! title writes are read here, each with the name that qualifies it (`Coarsen` in
//! `ds.Coarsen.construct`), and the modules the body imports under another name
//! (`import xarray as xr`), so that `xr.where` can be followed to the package's
//! re-export. A one-line task is all title: it has none of its own.
use super::words::{is_long, title};
use iret_index::tokens::split_identifier;

/// A code name the title writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleName {
    /// Lower-case, as definitions are keyed.
    pub name: String,
    /// As written: `Coarsen` the class, not `coarsen` the method.
    pub exact: String,
    /// The part before it in a dotted name, lower-case (`coarsen` for
    /// `ds.Coarsen.construct`, `xr` for `xr.where`).
    pub qualifier: Option<String>,
}

/// Names shorter than this say too little (`ds`, `np`, `xr` are aliases, not names).
const MIN_NAME: usize = 4;

/// The code names of a report's title: parts of dotted names, names in backticks or
/// called, and words shaped like code (`to_unstacked_dataset`, `DataArrayRolling`).
/// Empty unless the task is a report ([`is_long`]).
pub fn names(text: &str) -> Vec<TitleName> {
    if !is_long(text) {
        return Vec::new();
    }
    let title = title(text);
    let mut out: Vec<TitleName> = Vec::new();
    for token in title.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
        let parts: Vec<&str> = token.split('.').filter(|p| !p.is_empty()).collect();
        let quoted = title.contains(&format!("`{token}")) || title.contains(&format!("{token}("));
        for (i, part) in parts.iter().enumerate() {
            let qualified = parts.len() > 1;
            if !is_name(part) || !(qualified || quoted || looks_like_code(part)) {
                continue;
            }
            let name = TitleName {
                name: part.to_lowercase(),
                exact: part.to_string(),
                qualifier: i.checked_sub(1).map(|q| parts[q].to_lowercase()),
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

fn is_name(part: &str) -> bool {
    let mut chars = part.chars();
    part.trim_matches('_').len() >= MIN_NAME
        && chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `to_unstacked_dataset`, `DataArrayRolling`, `__setitem__`: not a prose word.
fn looks_like_code(word: &str) -> bool {
    word.trim_matches('_').contains('_')
        || word.starts_with("__")
        || split_identifier(word).len() > 1
}

/// The modules the text imports under another name: `import xarray as xr` → (`xr`,
/// `xarray`); `import numpy.ma as ma` → (`ma`, `numpy.ma`). Lower-case.
pub fn module_aliases(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("import ") else {
            continue;
        };
        for clause in rest.split(',') {
            let mut words = clause.split_whitespace();
            let (Some(module), Some("as"), Some(alias)) =
                (words.next(), words.next(), words.next())
            else {
                continue;
            };
            let pair = (alias.to_lowercase(), module.to_lowercase());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str) -> Vec<(String, Option<String>)> {
        names(text)
            .into_iter()
            .map(|n| (n.name, n.qualifier))
            .collect()
    }

    /// A report: the title, then a body of more than `LONG_TASK_WORDS` words.
    fn report(title: &str) -> String {
        format!("{title}\n{}", "some words of the body. ".repeat(12))
    }

    #[test]
    fn a_titles_code_names_with_their_qualifiers() {
        let task = &report("ds.Coarsen.construct demotes coordinates to variables");
        assert_eq!(
            named(task),
            vec![
                ("coarsen".to_string(), Some("ds".to_string())),
                ("construct".to_string(), Some("coarsen".to_string())),
            ]
        );
        let task = &report("`polyval` with timedelta64 coordinates produces wrong results");
        assert_eq!(
            named(task),
            vec![
                ("polyval".to_string(), None),
                ("timedelta64".to_string(), None)
            ]
        );
        let task = &report("xr.where not preserving attributes");
        assert_eq!(
            named(task),
            vec![("where".to_string(), Some("xr".to_string()))]
        );
        let task = &report("\"center\" kwarg ignored when iterating over DataArrayRolling");
        assert_eq!(named(task), vec![("dataarrayrolling".to_string(), None)]);
    }

    #[test]
    fn prose_words_and_one_line_tasks_have_no_title_names() {
        assert!(names("Add rate limiting to API endpoints").is_empty());
        assert!(names(&report("Feature request: show units in dataset overview")).is_empty());
        assert!(names("xr.where not preserving attributes\nshort body").is_empty());
    }

    #[test]
    fn aliased_imports() {
        let text =
            "```python\nimport numpy as np\nimport xarray as xr, os\nimport numpy.ma as ma\n```";
        assert_eq!(
            module_aliases(text),
            vec![
                ("np".to_string(), "numpy".to_string()),
                ("xr".to_string(), "xarray".to_string()),
                ("ma".to_string(), "numpy.ma".to_string()),
            ]
        );
    }
}
