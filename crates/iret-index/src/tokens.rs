//! Code-aware tokens for BM25 and for query analysis.
//!
//! An identifier is kept whole (lower-cased) and also split on camelCase, snake_case
//! and letter/digit boundaries; every token is lightly stemmed. `refreshTokens` gives
//! `refreshtoken` (whole), `refresh`, `token`.

/// English words that carry no meaning in a query or a comment.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "then", "there", "these", "this", "to",
    "was", "we", "what", "when", "where", "which", "while", "who", "why", "will", "with", "you", "your", "get",
    "gets", "use", "used", "using", "work", "works", "way", "ways", "handle", "handled", "handles", "happen",
    "happens", "implemented", "implement", "implementation", "code", "find", "where", "via", "s",
];

pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// Splits `ident` into its parts: `parseHTTPResponse_v2` → parse, HTTP, Response, v, 2.
pub fn split_identifier(ident: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let chars: Vec<(usize, char)> = ident.char_indices().collect();
    let mut start = None;
    for i in 0..chars.len() {
        let (pos, c) = chars[i];
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                parts.push(&ident[s..pos]);
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(pos);
            continue;
        };
        let prev = chars[i - 1].1;
        let next = chars.get(i + 1).map(|x| x.1);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_alphabetic() && c.is_ascii_digit())
            || (prev.is_ascii_digit() && c.is_alphabetic())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase()));
        if boundary {
            parts.push(&ident[s..pos]);
            start = Some(pos);
        }
    }
    if let Some(s) = start {
        parts.push(&ident[s..]);
    }
    parts
}

/// Light suffix stripping, the same for documents and queries.
pub fn stem(word: &str) -> String {
    let w = word;
    let n = w.len();
    if n <= 3 || !w.is_ascii() {
        return w.to_string();
    }
    for (suffix, repl, min) in [
        ("ies", "y", 4),
        ("sses", "ss", 4),
        ("ing", "", 5),
        ("ed", "", 4),
        ("es", "", 5),
        ("s", "", 3),
    ] {
        if let Some(stemmed) = w.strip_suffix(suffix) {
            if stemmed.len() >= min - repl.len().min(min) && !(suffix == "s" && (w.ends_with("ss") || w.ends_with("us") || w.ends_with("is"))) {
                let mut s = stemmed.to_string();
                s.push_str(repl);
                if s.len() >= 3 {
                    return s;
                }
            }
        }
    }
    w.to_string()
}

/// Identifier-like runs of `text` (letters, digits, `_`, `$`).
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|s| !s.is_empty() && s.chars().any(|c| c.is_alphabetic()))
}

/// BM25 tokens of `text`: whole identifiers plus their parts, lower-cased and stemmed,
/// without stopwords and one-letter tokens.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for ident in identifiers(text) {
        if ident.len() > 64 {
            continue;
        }
        let lower = ident.to_lowercase();
        let parts = split_identifier(ident);
        let whole = lower.trim_matches(|c| c == '_' || c == '$');
        if parts.len() > 1 && whole.len() > 1 {
            out.push(stem(whole));
        }
        for part in parts {
            let p = part.to_lowercase();
            if p.len() > 1 && !is_stopword(&p) {
                out.push(stem(&p));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_camel_snake_and_digits() {
        assert_eq!(split_identifier("parseHTTPResponse_v2"), vec!["parse", "HTTP", "Response", "v", "2"]);
        assert_eq!(split_identifier("TRPCError"), vec!["TRPC", "Error"]);
        assert_eq!(split_identifier("snake_case_name"), vec!["snake", "case", "name"]);
        assert_eq!(split_identifier("x"), vec!["x"]);
    }

    #[test]
    fn tokens_keep_whole_identifiers_and_parts() {
        let t = tokenize("refreshTokens()");
        assert_eq!(t, vec!["refreshtoken", "refresh", "token"]);
        assert!(tokenize("TRPCError").contains(&"trpcerror".to_string()));
    }

    #[test]
    fn stemming_is_light_and_shared() {
        assert_eq!(stem("tokens"), "token");
        assert_eq!(stem("queries"), "query");
        assert_eq!(stem("routing"), "rout");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("is"), "is");
    }

    #[test]
    fn stopwords_dropped() {
        assert_eq!(tokenize("how does the router work"), vec!["router"]);
    }
}
