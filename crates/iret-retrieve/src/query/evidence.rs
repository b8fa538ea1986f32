//! What a task points at, read the way an engineer reads an issue: the files it names
//! (a path, a traceback frame, a dotted module path), the code names it uses (written as
//! code: in backticks, called, qualified, in a code block), and the messages it quotes
//! (an exception's text, a quoted string) that the code may raise as a literal.
//!
//! Nothing here knows a language or a repository: paths are resolved against the index's
//! files by suffix, names against what chunks define, messages against chunk text.

/// The evidence of one task, extracted once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Path-like mentions, `/`-separated, in the order they appear: file paths and
    /// traceback frames (`django/db/models/query.py`), and module paths turned into path
    /// stems (`django.db.models.query` → `django/db/models/query`).
    pub paths: Vec<PathMention>,
    /// Names written as code, lower-cased, the last part of a qualified name included
    /// (`QuerySet.bulk_create()` → `queryset`, `bulk_create`).
    pub names: Vec<String>,
    /// Literal text the task quotes: an exception's message, a quoted phrase.
    pub messages: Vec<String>,
    /// Diagnostic codes (`E108`, `admin.E108` → `E108`, `W0611`): the ID a check or a
    /// linter reports, which the code that raises it holds as a string literal.
    pub codes: Vec<String>,
    /// The file frames of each traceback the task quotes, innermost first: the frame
    /// that raised leads. A traceback that says its order ("most recent call last", as
    /// Python's and IPython's do) lists its frames outermost first; a panic that names its
    /// place (`panicked at src/lib.rs:5:9`) is a one-frame traceback.
    pub tracebacks: Vec<Vec<String>>,
    /// Earlier issues and pull requests the task refers to by number (`#6461`).
    pub refs: Vec<u32>,
    /// The code names a report's title writes (empty for a one-line task).
    pub title: Vec<super::title::TitleName>,
    /// Modules the task imports under another name (`xr` → `xarray`).
    pub aliases: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PathMention {
    /// `/`-separated; with its extension for a file path, without for a module path.
    pub path: String,
    pub kind: MentionKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MentionKind {
    /// A file path in prose or a traceback frame.
    File,
    /// A dotted (or `::`) module path: any file whose path, less its extension, ends
    /// with it; or its parent's, when the last part names a class or function.
    Module,
}

/// Source extensions a path mention may end with.
const SOURCE_EXT: &[&str] = &[
    "py", "pyx", "rs", "go", "java", "kt", "scala", "rb", "js", "jsx", "mjs", "cjs", "ts", "tsx",
    "c", "h", "cc", "cpp", "hpp", "cs", "php", "swift", "ex", "exs", "hs", "lua", "sh", "zig",
    "ml", "dart", "m", "jl", "r", "vue", "svelte",
];

/// Messages shorter than this (in characters) say too little to look for.
const MIN_MESSAGE: usize = 12;

pub fn extract(text: &str) -> Evidence {
    let mut ev = Evidence::default();
    for token in path_tokens(text) {
        if let Some(m) = path_mention(token) {
            if !ev.paths.contains(&m) {
                ev.paths.push(m);
            }
        }
    }
    ev.names = code_names(text);
    ev.messages = messages(text);
    ev.codes = diagnostic_codes(text);
    ev.tracebacks = tracebacks(text);
    ev.refs = issue_refs(text);
    ev.title = super::title::names(text);
    ev.aliases = super::title::module_aliases(text);
    ev
}

/// Issue and pull-request numbers a text refers to: `#` and two to six digits, not inside
/// a word, a path or an entity (`a#12`, `/pull/12#34`, `&#39;` are not). Commit messages
/// say them the same way (`Fix #7428: …`, `… (#6461)`).
pub fn issue_refs(text: &str) -> Vec<u32> {
    let bytes = text.as_bytes();
    let mut out: Vec<u32> = Vec::new();
    for (at, _) in text.match_indices('#') {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'&' | b'_' | b'#'))
        {
            continue;
        }
        let digits = bytes[at + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let after = bytes.get(at + 1 + digits);
        if !(2..=6).contains(&digits)
            || after.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            continue;
        }
        if let Ok(n) = text[at + 1..at + 1 + digits].parse::<u32>() {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The header of a traceback that lists its frames outermost first.
const OUTERMOST_FIRST: &str = "most recent call last";

/// [`Evidence::tracebacks`]: a traceback runs from its header to the exception it ends
/// with (or the end of its code block, or the next header).
fn tracebacks(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut open: Option<Vec<String>> = None;
    let close = |frames: Vec<String>, out: &mut Vec<Vec<String>>| {
        let mut innermost_first: Vec<String> = Vec::new();
        for f in frames.into_iter().rev() {
            if !innermost_first.contains(&f) {
                innermost_first.push(f);
            }
        }
        if !innermost_first.is_empty() {
            out.push(innermost_first);
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if t.contains(OUTERMOST_FIRST) {
            if let Some(frames) = open.replace(Vec::new()) {
                close(frames, &mut out);
            }
            continue;
        }
        if let Some((_, place)) = t.split_once("panicked at ") {
            if let Some(m) = path_tokens(place).find_map(path_mention) {
                out.push(vec![m.path]);
            }
            continue;
        }
        let Some(frames) = open.as_mut() else {
            continue;
        };
        if exception_message(t).is_some() || t.starts_with("```") {
            close(open.take().unwrap_or_default(), &mut out);
            continue;
        }
        let files = path_tokens(line)
            .filter_map(path_mention)
            .filter(|m| m.kind == MentionKind::File);
        frames.extend(files.map(|m| m.path));
    }
    if let Some(frames) = open {
        close(frames, &mut out);
    }
    out
}

/// Codes such as `E108`, `W0611`, `SIM115`: one to four capitals then three to five
/// digits, standing alone or as the last part of a dotted ID (`models.E028`).
fn diagnostic_codes(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_')) {
        let code = token.trim_end_matches('.').rsplit('.').next().unwrap_or("");
        let letters = code.bytes().take_while(u8::is_ascii_uppercase).count();
        let digits = code.len() - letters;
        let is_code = (1..=4).contains(&letters)
            && (3..=5).contains(&digits)
            && code[letters..].bytes().all(|b| b.is_ascii_digit());
        if is_code && !out.iter().any(|o| o == code) {
            out.push(code.to_string());
        }
    }
    out
}

/// Whitespace- and quote-separated tokens that might be paths or dotted names.
fn path_tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | '`' | '(' | ')' | ',' | '<' | '>' | '[' | ']' | '='
            )
    })
    .filter(|t| t.len() > 3)
}

fn is_ident(part: &str) -> bool {
    let mut chars = part.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// A token as a path mention: `a/b/c.py`, `a\b\c.py:12`, `a.b.c`, `a::b::c`.
fn path_mention(token: &str) -> Option<PathMention> {
    let t = token.trim_matches(|c: char| matches!(c, '.' | ':' | ';' | '!' | '?' | '{' | '}'));
    // `file.py:12:5` → `file.py`.
    let t = t
        .split(':')
        .next()
        .filter(|head| head.contains(['/', '\\']) || t.contains("::"))
        .map_or(t, |head| if t.contains("::") { t } else { head });
    if t.contains(['/', '\\']) {
        let path = t.replace('\\', "/");
        let path = path.trim_start_matches("./").trim_start_matches('/');
        let ext = path.rsplit_once('.').map(|(_, e)| e)?;
        let name = path.rsplit('/').next()?;
        if SOURCE_EXT.contains(&ext) && name.len() > ext.len() + 1 && !path.contains("://") {
            return Some(PathMention {
                path: path.to_string(),
                kind: MentionKind::File,
            });
        }
        return None;
    }
    let sep = if t.contains("::") { "::" } else { "." };
    let parts: Vec<&str> = t.split(sep).collect();
    // Three parts at least: `a.b` is as often `obj.attr` as a module.
    if parts.len() < 3 || !parts.iter().all(|p| is_ident(p)) {
        return None;
    }
    // A file name with an extension (`setup.cfg.py`) is not a module path.
    if sep == "." && SOURCE_EXT.contains(parts.last()?) {
        return None;
    }
    Some(PathMention {
        path: parts.join("/"),
        kind: MentionKind::Module,
    })
}

/// A word the task writes as code: in backticks, called (`name(`), qualified
/// (`a.b`, `a::b`), or inside a fenced code block, and shaped like an identifier a
/// codebase would define (longer than 3 characters, not all digits).
fn code_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        let n = name.trim_matches('_');
        if n.len() > 3 && is_ident(n) {
            let lower = name.to_lowercase();
            if !out.contains(&lower) {
                out.push(lower);
            }
        }
    };
    for (line, in_block) in fenced(text) {
        let spans: Vec<&str> = if in_block {
            vec![line]
        } else {
            backticked(line)
        };
        for span in &spans {
            for w in words_with_separators(span) {
                push(w);
            }
        }
        if !in_block {
            for w in called_or_qualified(line) {
                push(w);
            }
        }
    }
    out
}

/// The lines of `text` other than code fences, each with whether it is inside a fenced
/// code block.
fn fenced(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut in_block = false;
    text.lines().filter_map(move |line| {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            return None;
        }
        Some((line, in_block))
    })
}

/// The `…` spans of a line.
fn backticked(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

fn words_with_separators(span: &str) -> impl Iterator<Item = &str> {
    span.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()))
}

/// Prose words followed by `(`, or joined by `.` / `::` to another identifier.
fn called_or_qualified(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut start = None;
    for (i, c) in line
        .char_indices()
        .chain(std::iter::once((line.len(), ' ')))
    {
        if c.is_alphanumeric() || c == '_' {
            start.get_or_insert(i);
            continue;
        }
        let Some(s) = start.take() else {
            continue;
        };
        let word = &line[s..i];
        let next = bytes.get(i).copied();
        let next2 = bytes.get(i + 1).copied();
        let prev = s.checked_sub(1).and_then(|p| bytes.get(p)).copied();
        let called = next == Some(b'(');
        let qualified = (next == Some(b'.')
            && next2.is_some_and(|b| b.is_ascii_alphabetic() || b == b'_'))
            || (next == Some(b':') && next2 == Some(b':'))
            || (prev == Some(b'.') && s >= 2 && bytes[s - 2].is_ascii_alphanumeric());
        if called || qualified {
            out.push(word);
        }
    }
    out
}

/// Exception messages (`SomethingError: text`, `panicked at 'text'`) and quoted phrases of
/// several words: text the code may hold as a string literal.
fn messages(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |m: &str| {
        let m = m
            .trim()
            .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '.'));
        if m.len() >= MIN_MESSAGE && m.contains(' ') && !out.iter().any(|o| o == m) {
            out.push(m.to_string());
        }
    };
    for (line, in_block) in fenced(text) {
        let t = line.trim();
        if let Some(msg) = exception_message(t) {
            push(msg);
        }
        if !in_block {
            for q in quoted(t) {
                push(q);
            }
        }
    }
    out
}

/// `ValueError: text` / `django.core.exceptions.FieldError: text` / `error: text`.
fn exception_message(line: &str) -> Option<&str> {
    let (head, msg) = line.split_once(": ")?;
    let name = head.rsplit(['.', ' ']).next()?;
    let is_exception = is_ident(name)
        && !head.contains(' ')
        && (name.ends_with("Error")
            || name.ends_with("Exception")
            || name.ends_with("Warning")
            || name == "error"
            || name == "panic");
    is_exception.then_some(msg)
}

/// Phrases of at least three words in straight double quotes, single quotes or
/// backticks (a warning quoted as inline code is a message too).
fn quoted(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for q in ['"', '\'', '`'] {
        let parts: Vec<&str> = line.split(q).collect();
        if parts.len() < 3 {
            continue;
        }
        for inner in parts.iter().skip(1).step_by(2).take(parts.len() / 2) {
            if inner.split_whitespace().count() >= 3 {
                out.push(*inner);
            }
        }
    }
    out
}

/// The parts of a message that could appear verbatim in a literal: runs of at least
/// three words between the places where a value was formatted in (quotes, digits, paths).
pub fn literal_fragments(message: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        if run.len() >= 3 {
            out.push(run.join(" "));
        }
        run.clear();
    };
    for w in message.split_whitespace() {
        let plain = w
            .trim_end_matches([',', '.', ':', ';'])
            .chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '_');
        if plain && !w.is_empty() {
            run.push(w.trim_end_matches([',', '.', ':', ';']));
            if w.ends_with([',', '.', ':', ';']) {
                flush(&mut run, &mut out);
            }
        } else {
            flush(&mut run, &mut out);
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<(String, MentionKind)> {
        extract(text)
            .paths
            .into_iter()
            .map(|m| (m.path, m.kind))
            .collect()
    }

    #[test]
    fn traceback_frames_and_paths_are_file_mentions() {
        let tb = r#"Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/django/db/models/query.py", line 123, in get
    raise self.model.DoesNotExist(
  File "src/app/views.py", line 9, in index"#;
        let p = paths(tb);
        assert!(p.contains(&(
            "usr/lib/python3/site-packages/django/db/models/query.py".into(),
            MentionKind::File
        )));
        assert!(p.contains(&("src/app/views.py".into(), MentionKind::File)));
        assert_eq!(
            paths("see lib/router.ts:12:5 and https://x.io/a/b.js")[0],
            ("lib/router.ts".into(), MentionKind::File)
        );
        assert_eq!(paths("https://example.com/a/b.js"), vec![]);
    }

    #[test]
    fn a_traceback_lists_its_frames_from_where_it_was_raised() {
        let text = r#"Setting the norm fails.
```
Traceback (most recent call last):
  File "/home/u/site-packages/matplotlib/artist.py", line 51, in draw_wrapper
    return draw(artist, renderer)
  File "/home/u/site-packages/matplotlib/cm.py", line 511, in to_rgba
    x = self.norm(x)
  File "/home/u/site-packages/matplotlib/artist.py", line 74, in draw_wrapper
  File "/home/u/site-packages/matplotlib/colors.py", line 1694, in __call__
    raise ValueError("Invalid vmin or vmax")
ValueError: Invalid vmin or vmax
```
See also lib/matplotlib/colorbar.py.
Traceback (most recent call last)
~/venv/site-packages/django/db/models/query_utils.py in __and__(self, other)
---> 92 return self._combine(other, self.AND)
TypeError: unsupported operand
thread 'main' panicked at src/parser.rs:12:5:
index out of bounds"#;
        let ev = extract(text);
        assert_eq!(
            ev.tracebacks,
            vec![
                vec![
                    "home/u/site-packages/matplotlib/colors.py".to_string(),
                    "home/u/site-packages/matplotlib/artist.py".to_string(),
                    "home/u/site-packages/matplotlib/cm.py".to_string(),
                ],
                vec!["~/venv/site-packages/django/db/models/query_utils.py".to_string()],
                vec!["src/parser.rs".to_string()],
            ]
        );
        // A path in prose is a mention, not a frame; a task without a traceback has none.
        assert!(ev
            .paths
            .iter()
            .any(|m| m.path == "lib/matplotlib/colorbar.py"));
        assert!(extract("see lib/matplotlib/colorbar.py")
            .tracebacks
            .is_empty());
    }

    #[test]
    fn issue_numbers_referred_to() {
        assert_eq!(
            issue_refs("#6461 had consequences; see #12 and (#7964). Fix #7428: x"),
            vec![6461, 12, 7964, 7428]
        );
        assert!(issue_refs("a#12 /pull/12#34 &#39; #1 #1234567 #12ab ##55").is_empty());
    }

    #[test]
    fn dotted_and_rust_paths_are_module_mentions() {
        let p = paths("Importing django.db.models.query.QuerySet fails; also serde::de::Visitor.");
        assert!(p.contains(&(
            "django/db/models/query/QuerySet".into(),
            MentionKind::Module
        )));
        assert!(p.contains(&("serde/de/Visitor".into(), MentionKind::Module)));
        // Two parts are an attribute as often as a module.
        assert!(paths("call self.save() now").is_empty());
    }

    #[test]
    fn names_written_as_code() {
        let ev = extract(
            "Calling `QuerySet.bulk_create()` breaks when ignore_conflicts(True) is used on Model.objects.\n```python\nMyModel.objects.bulk_create(items)\n```",
        );
        for n in [
            "queryset",
            "bulk_create",
            "ignore_conflicts",
            "model",
            "objects",
            "mymodel",
            "items",
        ] {
            assert!(ev.names.contains(&n.to_string()), "{n} in {:?}", ev.names);
        }
        // Prose words are not names.
        assert!(!ev.names.contains(&"calling".to_string()));
        assert!(!ev.names.contains(&"breaks".to_string()));
    }

    #[test]
    fn diagnostic_codes_alone_or_as_the_end_of_a_dotted_id() {
        let ev = extract(
            "Error E108 does not cover some cases; (models.E028) db_table is used. Pylint W0611. Not codes: UTF8, ISO, E12, v2.0, 1234, sha256.",
        );
        assert_eq!(ev.codes, ["E108", "E028", "W0611"]);
    }

    #[test]
    fn exception_messages_and_quoted_phrases() {
        let ev = extract(
            "It fails:\n```\ndjango.core.exceptions.FieldError: Cannot resolve keyword 'foo' into field.\n```\nThe docs say \"must be a positive integer\" here.",
        );
        assert!(ev
            .messages
            .contains(&"Cannot resolve keyword 'foo' into field".to_string()));
        assert!(ev
            .messages
            .contains(&"must be a positive integer".to_string()));
        let warned =
            extract("It started warning:\n\n`WARNING: no number is assigned for table:`\n");
        assert_eq!(
            warned.messages,
            ["WARNING: no number is assigned for table:"]
        );
        assert_eq!(
            literal_fragments("Cannot resolve keyword 'foo' into field. Choices are: a, b"),
            vec!["Cannot resolve keyword".to_string()]
        );
    }

    #[test]
    fn a_one_line_task_has_little_evidence() {
        let ev = extract("Add rate limiting to API endpoints");
        assert!(ev.paths.is_empty() && ev.names.is_empty() && ev.messages.is_empty());
    }
}
