//! The import graph between files, read from each file's head: which modules a file
//! imports (`import`, `from … import`, `use`, `mod x;`, `#include`, `require`,
//! `export … from`, `using`, `alias`, Go import blocks). Refine aims the next dispatch at
//! the files that relevant files import, and at those that import them.
use iret_index::Index;
use std::collections::{HashMap, HashSet};

/// Which file imports which module, read once per index from every file head.
#[derive(Debug, Default)]
pub struct ImportGraph {
    /// Per file: the normalised module names its head imports (sorted, distinct).
    imports: Vec<Vec<String>>,
    /// Per file: the name other files import it by.
    names: Vec<String>,
    /// Module name → how many files import it.
    importers: HashMap<String, usize>,
    /// A module imported by more files than this is a hub (`uv.h`, `utils`).
    hub_limit: usize,
    /// Every file's name ([`Self::names`]) and folder, normalised: what a local import
    /// can name (a namespace import, C#'s `using App.Formatters`, names a folder).
    local: HashSet<String>,
}

impl ImportGraph {
    pub fn of(index: &Index) -> Self {
        let imports: Vec<Vec<String>> = index
            .files
            .iter()
            .map(|f| {
                let mut names: Vec<String> = if f.chunk_count == 0 {
                    Vec::new()
                } else {
                    module_names(index.chunks.get(f.first_chunk as usize).text)
                        .into_iter()
                        .map(normalise)
                        .collect()
                };
                names.sort_unstable();
                names.dedup();
                names
            })
            .collect();
        let mut importers: HashMap<String, usize> = HashMap::new();
        for list in &imports {
            for m in list {
                *importers.entry(m.clone()).or_default() += 1;
            }
        }
        let names: Vec<String> = index.files.iter().map(|f| module_of(&f.path)).collect();
        Self {
            imports,
            local: names
                .iter()
                .cloned()
                .chain(index.files.iter().flat_map(|f| folders(&f.path)))
                .collect(),
            names,
            importers,
            hub_limit: (index.files.len() / 20).max(3),
        }
    }

    /// Whether the import statement `line` names a module of this codebase (not the
    /// standard library's `logging` or `from __future__ import annotations`).
    pub fn is_local(&self, line: &str) -> bool {
        module_names(line)
            .into_iter()
            .any(|m| self.local.contains(&normalise(m)))
    }

    fn specific(&self, module: &str) -> bool {
        self.importers.get(module).copied().unwrap_or(0) <= self.hub_limit
    }

    /// Files that `file` imports (by specific module names).
    pub fn imported_by(&self, file: u32) -> Vec<u32> {
        let own = &self.imports[file as usize];
        (0..self.names.len() as u32)
            .filter(|&i| {
                i != file
                    && self.specific(&self.names[i as usize])
                    && own.contains(&self.names[i as usize])
            })
            .collect()
    }

    /// How many specific modules `file` imports, and how many files import it (0 when
    /// its module is a hub): features for a ranker, without listing the files.
    pub fn degree(&self, file: u32) -> (usize, usize) {
        let Some(own) = self.imports.get(file as usize) else {
            return (0, 0);
        };
        let out = own.iter().filter(|m| self.specific(m)).count();
        let name = &self.names[file as usize];
        let inbound = if self.specific(name) {
            self.importers.get(name).copied().unwrap_or(0)
        } else {
            0
        };
        (out, inbound)
    }

    /// Files that import `file`.
    pub fn importers_of(&self, file: u32) -> Vec<u32> {
        let name = &self.names[file as usize];
        if !self.specific(name) {
            return Vec::new();
        }
        (0..self.imports.len() as u32)
            .filter(|&i| i != file && self.imports[i as usize].contains(name))
            .collect()
    }

    /// Files that `files` import, and files that import them (matched by module name); a
    /// file of `files` counts when it is connected to another one. Hub modules, imported
    /// by many files, say nothing specific and are ignored.
    pub fn neighbours(&self, files: &[u32]) -> Vec<u32> {
        let names = &self.names;
        let mut out = Vec::new();
        for i in 0..self.imports.len() as u32 {
            let own = &self.imports[i as usize];
            // They import one of `files` (other than themselves)?
            let imports_ours = files.iter().any(|&o| {
                o != i && self.specific(&names[o as usize]) && own.contains(&names[o as usize])
            });
            // One of `files` imports them?
            let name = &names[i as usize];
            let imported = self.specific(name)
                && files
                    .iter()
                    .any(|&o| o != i && self.imports[o as usize].contains(name));
            if imports_ours || imported {
                out.push(i);
            }
        }
        out
    }
}

/// The folders of `path`, normalised (`src/Formatters/Int.cs` → `src`, `formatters`).
fn folders(path: &str) -> impl Iterator<Item = String> + '_ {
    let dirs = path.rsplit_once('/').map_or("", |(d, _)| d);
    dirs.split('/').filter(|d| !d.is_empty()).map(normalise)
}

/// The name other files import `path` by: its file stem, or for a folder module
/// (`index.ts`, `mod.rs`, `__init__.py`) its folder; normalised.
fn module_of(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    if matches!(stem, "index" | "mod" | "__init__") {
        if let Some(dir) = path.rsplit('/').nth(1) {
            return normalise(dir);
        }
    }
    normalise(stem)
}

/// Case and `_`/`-` do not matter: `raw_form` = `RawForm`, `Changeset` = `changeset`.
fn normalise(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

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
    fn a_local_import_names_a_file_of_the_codebase() {
        let graph = ImportGraph {
            local: ["routing", "sessionmanager", "formatters"]
                .map(String::from)
                .into(),
            ..Default::default()
        };
        assert!(graph.is_local("from .routing import APIRouter"));
        assert!(graph.is_local("import x from \"../session-manager.js\""));
        assert!(!graph.is_local("from __future__ import annotations"));
        assert!(!graph.is_local("import logging"));
        assert!(graph.is_local("using MessagePack.Formatters;"));
        assert_eq!(
            folders("src/Formatters/Int.cs").collect::<Vec<_>>(),
            ["src", "formatters"]
        );
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

    #[test]
    fn folder_modules_are_named_by_their_folder() {
        assert_eq!(module_of("src/middleware/mod.rs"), "middleware");
        assert_eq!(module_of("src/auth/index.ts"), "auth");
        assert_eq!(module_of("pkg/__init__.py"), "pkg");
        assert_eq!(module_of("extract/raw_form.rs"), "rawform");
        assert_eq!(normalise("RawForm"), "rawform");
    }
}
