//! Code-aware tokens for BM25 and for query analysis.
//!
//! An identifier is kept whole (lower-cased) and also split on camelCase, snake_case
//! and letter/digit boundaries; every token is lightly stemmed. `refreshTokens` gives
//! `refreshtoken` (whole), `refresh`, `token`.

/// Bumped whenever tokens change, so indexes with stale keyword tables are rebuilt.
pub const TOKENIZER_VERSION: u32 = 4;

/// English words that carry no meaning in a query or a comment.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "do",
    "does",
    "for",
    "from",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "of",
    "on",
    "or",
    "that",
    "the",
    "their",
    "then",
    "there",
    "these",
    "this",
    "to",
    "was",
    "we",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "you",
    "your",
    "get",
    "gets",
    "use",
    "used",
    "using",
    "work",
    "works",
    "way",
    "ways",
    "handle",
    "handled",
    "handles",
    "happen",
    "happens",
    "implemented",
    "implement",
    "implementation",
    "code",
    "find",
    "where",
    "via",
    "s",
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

/// Light suffix stripping, the same for documents and queries: plurals (not the s of
/// -ss, -us, -is, -ias: `class`, `status`, `alias`), then -ing/-ed,
/// an -ize verb's -izer and -ization nouns (`serializer` → `serializ`), then a final -e
/// or consonant+y (`expiry`/`expired`/`expires` → `expir`,
/// `throttle`/`throttles`/`throttling` → `throttl`, `queries`/`query` → `quer`).
pub fn stem(word: &str) -> String {
    if word.len() <= 3 || !word.is_ascii() {
        return word.to_string();
    }
    let mut s = word.to_string();
    let n = s.len();
    if s.ends_with("ies") && n > 4 {
        s.truncate(n - 3);
        s.push('y');
    } else if s.ends_with("sses") {
        s.truncate(n - 2);
    } else if s.ends_with("ss") || s.ends_with("us") || s.ends_with("is") || s.ends_with("ias") {
    } else if s.ends_with("es") && n > 4 && matches!(s.as_bytes()[n - 3], b's' | b'x' | b'z' | b'h')
    {
        s.truncate(n - 2);
    } else if s.ends_with('s') {
        s.truncate(n - 1);
    }
    let n = s.len();
    if s.ends_with("ing") && n >= 6 {
        s.truncate(n - 3);
    } else if s.ends_with("ed") && n >= 5 {
        s.truncate(n - 2);
    }
    // An agent noun or action noun of an -ize verb is the verb: `serializer`,
    // `serialization` → `serializ`, as `serialize`, `serialized`, `serializing` are.
    let n = s.len();
    if s.ends_with("ization") && n > 8 {
        s.truncate(n - 5);
        return s;
    }
    if s.ends_with("izer") && n > 6 {
        s.truncate(n - 2);
        return s;
    }
    let b = s.as_bytes();
    let final_e = b[n - 1] == b'e';
    let consonant_y = b[n - 1] == b'y' && !matches!(b[n - 2], b'a' | b'e' | b'i' | b'o' | b'u');
    if n > 4 && (final_e || consonant_y) {
        s.truncate(n - 1);
    }
    s
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

/// What BM25 sees for a chunk: path words, symbol path and code.
pub fn keyword_tokens(path: &str, symbol: &str, text: &str) -> Vec<String> {
    let mut t = tokenize(path);
    t.extend(tokenize(symbol));
    t.extend(tokenize(text));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_camel_snake_and_digits() {
        assert_eq!(
            split_identifier("parseHTTPResponse_v2"),
            vec!["parse", "HTTP", "Response", "v", "2"]
        );
        assert_eq!(split_identifier("TRPCError"), vec!["TRPC", "Error"]);
        assert_eq!(
            split_identifier("snake_case_name"),
            vec!["snake", "case", "name"]
        );
        assert_eq!(split_identifier("x"), vec!["x"]);
    }

    #[test]
    fn tokens_keep_whole_identifiers_and_parts() {
        let t = tokenize("refreshTokens()");
        assert_eq!(t, vec!["refreshtoken", "refresh", "token"]);
        assert_eq!(
            tokenize("isTokenExpired"),
            vec!["istokenexpir", "token", "expir"]
        );
        assert!(tokenize("TRPCError").contains(&"trpcerror".to_string()));
    }

    #[test]
    fn stemming_is_light_and_shared() {
        assert_eq!(stem("tokens"), "token");
        for w in ["expiry", "expired", "expires"] {
            assert_eq!(stem(w), "expir", "{w}");
        }
        for w in ["throttle", "throttles", "throttling", "throttled"] {
            assert_eq!(stem(w), "throttl", "{w}");
        }
        assert_eq!(stem("queries"), stem("query"));
        assert_eq!(stem("routes"), stem("routing"));
        assert_eq!(stem("classes"), "class");
        assert_eq!(stem("status"), "status");
        for w in ["alias", "aliases", "aliased", "aliasing"] {
            assert_eq!(stem(w), "alias", "{w}");
        }
        assert_eq!(stem("bias"), stem("biases"));
        assert_eq!(stem("schemas"), "schema");
        for w in [
            "serialize",
            "serialized",
            "serializes",
            "serializing",
            "serializer",
            "serializers",
            "serialization",
        ] {
            assert_eq!(stem(w), "serializ", "{w}");
        }
        assert_eq!(stem("size"), "size");
        assert_eq!(stem("rate"), "rate");
        assert_eq!(stem("is"), "is");
    }

    #[test]
    fn stopwords_dropped() {
        assert_eq!(tokenize("how does the router work"), vec!["router"]);
    }
}
