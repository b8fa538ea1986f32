//! A package's public names and where they live: `xr.where` is `xarray.where`, which
//! `xarray/__init__.py` imports `from .core.computation`. Users write the public name, the
//! fix goes where it is defined. Read from the package's `__init__.py` as indexed (its
//! chunks' text), following at most [`MAX_HOPS`] re-exports.
use crate::corpus::{chunk_range, Corpus};

/// A name re-exported by a package that re-exports it again: followed this many times.
const MAX_HOPS: usize = 2;

/// The file that defines `name` as the package `module` (`xarray`, `astropy.io.fits`)
/// exports it, if its `__init__.py` imports it from a module of the codebase.
pub fn defining_file(corpus: &Corpus, module: &str, name: &str) -> Option<u32> {
    let mut package = package_init(corpus, &module.replace('.', "/"))?;
    for _ in 0..MAX_HOPS {
        let dir = folder(&corpus.index.files[package as usize].path).to_string();
        let source = imported_from(corpus, package, name)?;
        let target = resolve(&dir, &source)?;
        let file = module_file(corpus, &target)?;
        if corpus
            .index
            .definitions
            .files(name)
            .is_some_and(|d| d.contains(&file))
        {
            return Some(file);
        }
        package = file;
    }
    None
}

fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The `__init__.py` of the package at `dir` (a path suffix: the package may sit under
/// `src/` or `lib/`).
fn package_init(corpus: &Corpus, dir: &str) -> Option<u32> {
    let want = format!("{dir}/__init__.py");
    let nested = format!("/{want}");
    let files = &corpus.index.files;
    let found: Vec<u32> = (0..files.len() as u32)
        .filter(|&i| {
            let p = &files[i as usize].path;
            *p == want || p.ends_with(&nested)
        })
        .collect();
    // Ambiguous (two packages of that name): no answer rather than a guess.
    (found.len() == 1).then(|| found[0])
}

/// `pkg/a/b` as a file of the index: `pkg/a/b.py` or `pkg/a/b/__init__.py`.
fn module_file(corpus: &Corpus, stem: &str) -> Option<u32> {
    let candidates = [format!("{stem}.py"), format!("{stem}/__init__.py")];
    corpus
        .index
        .files
        .iter()
        .position(|f| candidates.contains(&f.path))
        .map(|i| i as u32)
}

/// The module spec of the `from X import …` in `file` that imports `name` (as itself or
/// under that name with `as`).
fn imported_from(corpus: &Corpus, file: u32, name: &str) -> Option<String> {
    let text: String = chunk_range(&corpus.index, file)
        .map(|c| corpus.index.chunks.get(c).text)
        .collect::<Vec<_>>()
        .join("\n");
    from_imports(&text)
        .into_iter()
        .find(|(_, names)| names.iter().any(|n| n.eq_ignore_ascii_case(name)))
        .map(|(module, _)| module)
}

/// Every `from X import a, b as c, (d, e)` statement of a Python file: (X, the names it
/// binds).
pub fn from_imports(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim_start().strip_prefix("from ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once(" import ") else {
            continue;
        };
        let mut names = names.trim().to_string();
        if names.starts_with('(') {
            while !names.contains(')') {
                let Some(next) = lines.next() else { break };
                names.push(' ');
                names.push_str(next.split('#').next().unwrap_or(""));
            }
        } else {
            while names.ends_with('\\') {
                names.pop();
                let Some(next) = lines.next() else { break };
                names.push_str(next);
            }
        }
        let names = names.split('#').next().unwrap_or("");
        let bound: Vec<String> = names
            .trim_matches(|c| c == '(' || c == ')' || c == ' ')
            .split(',')
            .filter_map(|clause| clause.split_whitespace().last())
            .map(|n| n.trim_matches(|c| c == '(' || c == ')').to_string())
            .filter(|n| !n.is_empty() && n != "*")
            .collect();
        out.push((module.trim().to_string(), bound));
    }
    out
}

/// A module spec as a path stem from the codebase's root: relative (`.core.computation`
/// in `xarray/` → `xarray/core/computation`) or absolute (`xarray.core.computation`).
fn resolve(package_dir: &str, spec: &str) -> Option<String> {
    let dots = spec.chars().take_while(|&c| c == '.').count();
    let rest = spec[dots..].replace('.', "/");
    if dots == 0 {
        // Absolute: from the folder that holds the top package.
        let top = rest.split('/').next()?;
        let root = match package_dir.find(&format!("{top}/")) {
            Some(at) if at == 0 || package_dir[..at].ends_with('/') => &package_dir[..at],
            _ if package_dir == top || package_dir.ends_with(&format!("/{top}")) => {
                &package_dir[..package_dir.len() - top.len()]
            }
            _ => return None,
        };
        return Some(format!("{root}{rest}"));
    }
    let mut dir = package_dir.to_string();
    for _ in 1..dots {
        dir = folder(&dir).to_string();
    }
    Some(match (dir.is_empty(), rest.is_empty()) {
        (_, true) => dir,
        (true, false) => rest,
        (false, false) => format!("{dir}/{rest}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_imports_of_an_init() {
        let text = "from .core.computation import apply_ufunc, polyval, where\n\
                    from .core.merge import (\n    MergeError,  # the error\n    merge as merge,\n)\n\
                    from . import tutorial\nimport os\n";
        let got = from_imports(text);
        assert_eq!(got[0].0, ".core.computation");
        assert_eq!(got[0].1, vec!["apply_ufunc", "polyval", "where"]);
        assert_eq!(got[1].0, ".core.merge");
        assert_eq!(got[1].1, vec!["MergeError", "merge"]);
        assert_eq!(got[2], (".".to_string(), vec!["tutorial".to_string()]));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn module_specs_resolve_from_the_package() {
        assert_eq!(
            resolve("xarray", ".core.computation").as_deref(),
            Some("xarray/core/computation")
        );
        assert_eq!(
            resolve("src/pkg/sub", "..util").as_deref(),
            Some("src/pkg/util")
        );
        assert_eq!(
            resolve("lib/xarray", "xarray.core.merge").as_deref(),
            Some("lib/xarray/core/merge")
        );
        assert_eq!(
            resolve("astropy/io/fits", "astropy.io.fits.hdu").as_deref(),
            Some("astropy/io/fits/hdu")
        );
        assert_eq!(resolve("xarray", "numpy.ma"), None);
    }
}
