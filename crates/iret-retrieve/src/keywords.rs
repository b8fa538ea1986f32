//! Language keywords and built-in names: syntax, not a codebase's vocabulary. Refine's
//! harvest skips them (a C# file's `namespace`, a shell script's `esac` say nothing about
//! what the code does).
use iret_index::tokens::stem;
use std::collections::HashSet;
use std::sync::LazyLock;

/// Keywords, written as in code, of the languages iret chunks by grammar and the common
/// others. Only words that are syntax in every codebase: `event`, `lock`, `range` or
/// `template` name concepts too and are not here.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    // shared by many languages
    "return", "const", "function", "class", "import", "export", "async", "await", "this",
    "self", "true", "false", "null", "undefined", "string", "number", "boolean", "void",
    "public", "private", "protected", "static", "struct", "package", "type", "interface",
    "extends", "implements", "catch", "else", "while", "break", "continue", "switch",
    "case", "default", "from", "require", "module", "new", "let", "var", "final",
    "abstract", "override", "object", "throw", "throws", "finally", "enum", "int", "long",
    "short", "char", "bool", "float", "double", "unsigned", "signed", "inline", "extern",
    "virtual", "goto", "sizeof", "typeof", "instanceof",
    // JavaScript / TypeScript
    "promise", "readonly", "keyof", "declare",
    // Python
    "def", "elif", "lambda", "yield", "pass", "none", "raise", "except", "nonlocal", "str",
    // Rust
    "impl", "mut", "pub", "crate", "trait", "dyn", "usize", "isize", "unsafe",
    // Go
    "func", "chan", "defer", "fallthrough", "nil", "iota",
    // Java / Kotlin / Scala
    "synchronized", "transient", "fun", "val", "companion", "lateinit", "reified",
    "suspend", "vararg", "implicit", "sealed",
    // C# / Swift
    "namespace", "using", "internal", "partial", "nameof", "foreach", "guard",
    "fileprivate", "mutating", "inout",
    // Ruby / Elixir
    "elsif", "unless", "rescue", "ensure", "defmodule", "defp", "defmacro",
    // shell
    "then", "esac", "done", "local", "echo", "unset",
    // C / C++
    "typedef", "ifdef", "ifndef", "endif", "typename", "constexpr", "nullptr",
    // built-in names: true of all code
    "error", "value", "math",
];

static STEMS: LazyLock<HashSet<String>> =
    LazyLock::new(|| KEYWORDS.iter().map(|k| stem(k)).collect());

/// Whether a stemmed word is a language keyword or built-in name.
pub(crate) fn is_keyword(stemmed: &str) -> bool {
    STEMS.contains(stemmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_recognised_in_their_stemmed_form() {
        for word in [
            "namespace",
            "value",
            "module",
            "interface",
            "private",
            "while",
            "esac",
        ] {
            assert!(is_keyword(&stem(word)), "{word}");
        }
    }

    #[test]
    fn vocabulary_words_are_not_keywords() {
        for word in [
            "formatter",
            "resolver",
            "throttle",
            "token",
            "event",
            "lock",
        ] {
            assert!(!is_keyword(&stem(word)), "{word}");
        }
    }
}
