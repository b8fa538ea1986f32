//! The import statements of a file's head and the module names they import (`import`,
//! `from … import`, `use`, `mod x;`, `#include`, `require`, `export … from`, `using`,
//! `alias`, Go import blocks): read once when a file is chunked, from its first chunk, and
//! kept with the file in the index; retrieval builds its import graph from them.

/// The import statements of a file head (whole lines).
pub fn import_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| is_import(l))
}

/// Whether `line` is an import statement (`import x`, `from a import b`, `use a::b`,
/// `#include`, `using A.B;`, …).
pub fn is_import(line: &str) -> bool {
    statement(line.trim()).is_some()
}

/// Module names a file head imports. For a path (`a/b/c`, `a::b::c`, `a.b.C`) the last
/// part; where the last part may be an item rather than a module (`use a::b::Item`,
/// `from a.b import item`), the part before it too.
pub fn module_names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut go_block = false;
    for line in text.lines().map(str::trim) {
        if go_block {
            if line.starts_with(')') {
                go_block = false;
            } else if let Some(spec) = quoted(line) {
                out.extend(last_parts(spec, &['/'], 1));
            }
            continue;
        }
        if line == "import (" {
            go_block = true;
            continue;
        }
        let Some((kind, rest)) = statement(line) else {
            continue;
        };
        if let Some(spec) = quoted(rest) {
            // JS/TS, Ruby, C, Go single imports, Rust `mod` never quoted.
            out.extend(last_parts(spec, &['/'], 1));
            continue;
        }
        let rest = rest.trim_end_matches(';').trim();
        match kind {
            Kind::Mod => out.extend(ident(rest)),
            Kind::From => {
                // `from a.b import c, d`: the module b, and c, d (maybe submodules).
                let (module, items) = rest.split_once(" import ").unwrap_or((rest, ""));
                out.extend(last_parts(module, &['.'], 1));
                out.extend(items.split(',').filter_map(|s| ident(s.trim())));
            }
            Kind::Path => {
                // `use a::b::{c, d}` / `import a.b.{C, D}` / `alias A.{B, C}`.
                let rest = rest.split(" as ").next().unwrap_or(rest);
                if let Some((head, group)) = rest.split_once('{') {
                    out.extend(last_parts(
                        head.trim_end_matches([':', '.']),
                        &[':', '.'],
                        1,
                    ));
                    out.extend(
                        group
                            .trim_end_matches('}')
                            .split(',')
                            .filter_map(|s| ident(s.trim())),
                    );
                } else {
                    out.extend(last_parts(rest, &[':', '.'], 2));
                }
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Kind {
    /// `mod x;` (Rust declares a child module).
    Mod,
    /// `from a.b import c` (Python).
    From,
    /// A dotted or `::` path: `use`, `import`, `using`, `alias`.
    Path,
}

/// Is `line` an import statement? Returns its kind and what follows the keyword.
fn statement(line: &str) -> Option<(Kind, &str)> {
    let line = ["pub(crate) ", "pub(super) ", "pub "]
        .iter()
        .find_map(|p| line.strip_prefix(p))
        .unwrap_or(line);
    if let Some(rest) = line.strip_prefix("mod ") {
        return rest.trim_end().ends_with(';').then_some((Kind::Mod, rest));
    }
    if let Some(rest) = line.strip_prefix("from ") {
        return Some((Kind::From, rest));
    }
    for kw in [
        "import ",
        "use ",
        "using ",
        "alias ",
        "require_relative ",
        "require ",
    ] {
        if let Some(rest) = line.strip_prefix(kw) {
            return Some((Kind::Path, rest));
        }
    }
    if let Some(rest) = line.strip_prefix("#include") {
        return Some((Kind::Path, rest));
    }
    // `export * from './x'`, `export { a } from "./b"`, `const x = require('./y')`.
    if (line.starts_with("export ") && line.contains(" from ")) || line.contains("require(") {
        return Some((Kind::Path, line));
    }
    None
}

/// The text between the first pair of quotes or angle brackets.
fn quoted(s: &str) -> Option<&str> {
    let start = s.find(['\'', '"', '<'])?;
    let rest = &s[start + 1..];
    let end = rest.find(['\'', '"', '>'])?;
    Some(&rest[..end]).filter(|q| !q.is_empty())
}

/// The last `n` parts of a path split on `seps`, without file extensions.
fn last_parts<'a>(path: &'a str, seps: &[char], n: usize) -> Vec<&'a str> {
    let path = path.trim();
    let path = ["js", "ts", "h", "hpp", "rb", "py", "mjs", "cjs"]
        .iter()
        .find_map(|ext| {
            path.strip_suffix(ext)
                .and_then(|p| p.strip_suffix('.'))
                .filter(|_| seps.contains(&'/'))
        })
        .unwrap_or(path);
    path.rsplit(seps)
        .filter_map(|s| ident(s.trim()))
        .filter(|s| !matches!(*s, "index" | "mod" | "self" | "super" | "crate"))
        .take(n)
        .collect()
}

/// `s` if it is an identifier (letters, digits, `_`, `-`, `$`), else its leading one.
fn ident(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '$'))
        .unwrap_or(s.len());
    Some(&s[..end]).filter(|s| !s.is_empty() && *s != "*")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<&str> {
        module_names(text)
    }

    #[test]
    fn typescript_and_javascript() {
        assert_eq!(names("import { a } from './auth/tokens';"), ["tokens"]);
        assert_eq!(
            names("import x from \"../session-manager.js\""),
            ["session-manager"]
        );
        assert_eq!(names("export * from './throttle';"), ["throttle"]);
        assert_eq!(names("export { Router } from './router'"), ["router"]);
        assert_eq!(names("const jwt = require('./jwt-utils')"), ["jwt-utils"]);
        assert_eq!(names("import './polyfills/index'"), ["polyfills"]);
        assert!(names("export const x = 1;").is_empty());
    }

    #[test]
    fn python() {
        assert_eq!(
            names("from .routing import APIRouter"),
            ["routing", "APIRouter"]
        );
        assert_eq!(
            names("from . import params, encoders"),
            ["params", "encoders"]
        );
        assert_eq!(
            names("import fastapi.dependencies.utils"),
            ["utils", "dependencies"]
        );
    }

    #[test]
    fn rust() {
        assert_eq!(names("mod map_request;"), ["map_request"]);
        assert_eq!(names("pub mod path;"), ["path"]);
        assert!(names("mod tests {").is_empty());
        assert_eq!(names("use crate::routing::Router;"), ["Router", "routing"]);
        assert_eq!(
            names("pub use self::from_fn::{from_fn, Next};"),
            ["from_fn", "from_fn", "Next"]
        );
    }

    #[test]
    fn c_java_go_ruby_csharp_elixir() {
        assert_eq!(names("#include \"heap-inl.h\""), ["heap-inl"]);
        assert_eq!(names("#include <stdio.h>"), ["stdio"]);
        assert_eq!(
            names("import com.google.gson.JsonElement;"),
            ["JsonElement", "gson"]
        );
        assert_eq!(
            names("package gin\n\nimport (\n\t\"net/http\"\n\tb \"github.com/gin-gonic/gin/binding\"\n)\n"),
            ["http", "binding"]
        );
        assert_eq!(names("require 'sinatra/base'"), ["base"]);
        assert_eq!(names("require_relative \"helpers\""), ["helpers"]);
        assert_eq!(
            names("using MessagePack.Formatters;"),
            ["Formatters", "MessagePack"]
        );
        assert_eq!(names("alias Ecto.Changeset"), ["Changeset", "Ecto"]);
        assert_eq!(
            names("alias Ecto.{Changeset, Query}"),
            ["Ecto", "Changeset", "Query"]
        );
    }
}
