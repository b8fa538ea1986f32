//! The import graph between files, read from each file's head: which modules a file
//! imports (`import`, `from … import`, `use`, `mod x;`, `#include`, `require`,
//! `export … from`, `using`, `alias`, Go import blocks). Refine aims the next dispatch at
//! the files that relevant files import, and at those that import them.
pub use iret_chunk::imports::{import_lines, is_import, module_names};
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
                // Read from the file's first chunk when it was indexed.
                let mut names: Vec<String> = if f.chunk_count == 0 {
                    Vec::new()
                } else {
                    f.imports.iter().map(|m| normalise(m)).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn folder_modules_are_named_by_their_folder() {
        assert_eq!(module_of("src/middleware/mod.rs"), "middleware");
        assert_eq!(module_of("src/auth/index.ts"), "auth");
        assert_eq!(module_of("pkg/__init__.py"), "pkg");
        assert_eq!(module_of("extract/raw_form.rs"), "rawform");
        assert_eq!(normalise("RawForm"), "rawform");
    }
}
