//! What of a task's text is its words: [`Query::visible`], the task as its reader sees
//! it. Retrieval's entries (`run`, `search_once`) read every query through it.
use super::{words, Query};

impl Query {
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
    let tag = text.match_indices('<').find_map(|(i, _)| {
        let name = text.get(i + 1..i + 4)?;
        if !name.eq_ignore_ascii_case("img") {
            return None;
        }
        let after = text[i + 4..].chars().next()?;
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
        Some((label, rest)) if is_label(label.trim()) => rest,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::analyse;
    use iret_index::tokens::stem;

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
}
