//! Definitions in languages without a grammar here (Kotlin, Scala, Elixir, PHP, Swift…)
//! and in files whose parse failed: a line-level scan for the usual forms, so line-window
//! chunks still say what they define.
//!
//! * keyword forms: `def`, `defmodule`, `module`, `class`, `fun`, `func`, `function`,
//!   `struct`, `trait`, `object`, `interface`, `enum`, `namespace`, … followed by a name
//!   (after modifiers such as `public static`);
//! * C-like and shell functions: a line at column 0 whose identifier before `(` is not a
//!   control keyword and which does not end with `;`;
//! * `#define NAME`.

const KEYWORDS: &[&str] = &[
    "def",
    "defp",
    "defmacro",
    "defmacrop",
    "defmodule",
    "defprotocol",
    "defimpl",
    "defguard",
    "function",
    "fn",
    "func",
    "fun",
    "class",
    "module",
    "struct",
    "trait",
    "object",
    "interface",
    "enum",
    "record",
    "sub",
    "proc",
    "namespace",
    "union",
    "macro",
    "protocol",
    "extension",
    "typealias",
];

const MODIFIERS: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "final",
    "abstract",
    "export",
    "async",
    "pub",
    "override",
    "open",
    "sealed",
    "data",
    "inline",
    "virtual",
    "extern",
    "unsafe",
    "local",
    "readonly",
    "partial",
    "case",
    "implicit",
    "lazy",
    "suspend",
    "operator",
    "infix",
    "template",
    "constexpr",
    "explicit",
    "friend",
    "default",
];

const CONTROL: &[&str] = &[
    "if", "for", "while", "switch", "return", "else", "do", "case", "sizeof", "catch", "foreach",
    "until", "unless", "elif", "when", "defined",
];

fn ident_prefix(s: &str) -> &str {
    let end = s
        .find(|c: char| {
            !(c.is_alphanumeric()
                || c == '_'
                || c == '.'
                || c == ':'
                || c == '?'
                || c == '!'
                || c == '$')
        })
        .unwrap_or(s.len());
    s[..end].trim_end_matches([':', '.'])
}

/// `(label, name)` when `line` starts a definition.
pub fn definition(line: &str) -> Option<(&'static str, String)> {
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix("#define ") {
        let name = ident_prefix(rest.trim_start());
        return (!name.is_empty()).then(|| ("define", name.to_string()));
    }
    let mut words = trimmed.split_whitespace().peekable();
    while words.next_if(|w| MODIFIERS.contains(w)).is_some() {}
    if let Some(kw) = words
        .next()
        .and_then(|first| KEYWORDS.iter().find(|k| **k == first))
    {
        return keyword_form(kw, words);
    }
    // Methods in C#/Java-like files start with a modifier instead of column 0.
    let at_col0 = !line.starts_with([' ', '\t']);
    let had_modifier = trimmed
        .split_whitespace()
        .next()
        .is_some_and(|w| MODIFIERS.contains(&w));
    if at_col0 || had_modifier {
        return c_like_function(trimmed);
    }
    None
}

/// The name after a definition keyword (`def`, `class`, `fun`…), from the words after it.
fn keyword_form<'a>(
    keyword: &'static str,
    mut words: impl Iterator<Item = &'a str>,
) -> Option<(&'static str, String)> {
    let rest = words.next()?;
    let rest = rest.strip_prefix("self.").unwrap_or(rest);
    // `fun <T> name`, `class (Foo)`: skip generics and punctuation.
    let rest = if rest.starts_with('<') {
        words.next()?
    } else {
        rest
    };
    let name = ident_prefix(rest.trim_start_matches(['(', '*', '&']));
    starts_like_a_name(name).then(|| (keyword, name.to_string()))
}

/// A C-like or shell function definition (`int uv_run(uv_loop_t* loop) {`, `name() {`):
/// the identifier before `(`, not a control keyword, on a line that does not end a
/// statement or start a comment, directive or block.
fn c_like_function(trimmed: &str) -> Option<(&'static str, String)> {
    if trimmed.ends_with(';') || trimmed.starts_with(['#', '/', '*', '}', '{', '@', '-', '"', '\''])
    {
        return None;
    }
    let paren = trimmed.find('(')?;
    let before = trimmed[..paren].trim_end();
    // `-` for shell function names (`_bash-it-enable() {`).
    let name = before
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '~' || c == '-'))
        .next()?;
    let name = name.rsplit("::").next().unwrap_or(name);
    let first = before.split_whitespace().next().unwrap_or("");
    let is_function = starts_like_a_name(name)
        && !CONTROL.contains(&name)
        && !CONTROL.contains(&first)
        && !before.contains('=');
    is_function.then(|| ("function", name.to_string()))
}

/// Not empty, and its first character a letter or `_`.
fn starts_like_a_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::definition;

    fn name(line: &str) -> Option<String> {
        definition(line).map(|d| d.1)
    }

    #[test]
    fn keyword_forms() {
        assert_eq!(name("  def self.settings"), Some("settings".into()));
        assert_eq!(
            name("defmodule Ecto.Migration do"),
            Some("Ecto.Migration".into())
        );
        assert_eq!(name("  module Helpers"), Some("Helpers".into()));
        assert_eq!(
            name("public sealed class MessagePackSerializer"),
            Some("MessagePackSerializer".into())
        );
        assert_eq!(
            name("suspend fun <T> HttpClient.get(url: String)"),
            Some("HttpClient.get".into())
        );
        assert_eq!(
            name("object Decoder extends DecoderInstances {"),
            Some("Decoder".into())
        );
        assert_eq!(
            name("#define UV_VERSION_MAJOR 1"),
            Some("UV_VERSION_MAJOR".into())
        );
    }

    #[test]
    fn c_like_and_shell_functions() {
        assert_eq!(
            name("int uv_run(uv_loop_t* loop, uv_run_mode mode) {"),
            Some("uv_run".into())
        );
        assert_eq!(
            name("static void uv__io_poll(uv_loop_t* loop, int timeout)"),
            Some("uv__io_poll".into())
        );
        assert_eq!(name("_bash-it-enable() {"), Some("_bash-it-enable".into()));
        assert_eq!(name("bash_it_enable() {"), Some("bash_it_enable".into()));
        assert_eq!(
            name("basic_json<>::parse(const char* s)"),
            Some("parse".into())
        );
        assert_eq!(name("  if (x) {"), None);
        assert_eq!(name("int x = f(1);"), None);
        assert_eq!(name("uv_close(handle, NULL);"), None);
        assert_eq!(
            name("    foo(bar)"),
            None,
            "indented calls are not definitions"
        );
    }
}
