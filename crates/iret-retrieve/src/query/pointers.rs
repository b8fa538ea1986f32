//! The task's [`Evidence`] resolved against one index: which files it points at, by kind
//! and how strongly (0–1 each). Computed once per query; dispatch adds the files to its
//! candidates and the [`ranking::evidence`](crate::ranking::evidence) signals weigh them.
use super::evidence::{literal_fragments, Evidence, MentionKind};
use crate::corpus::{chunk_range, Corpus};
use iret_index::tokens::tokenize;
use std::collections::HashMap;

/// Fragments of quoted messages looked for in chunk text, at most.
const MAX_FRAGMENTS: usize = 8;
/// A message cut short to what the code holds keeps at least this many words.
const MIN_HELD_WORDS: usize = 4;
/// Mentions resolved, at most (a long traceback names many frames).
const MAX_MENTIONS: usize = 40;
/// A name defined in more files than this is a common word of the codebase (`get`,
/// `__init__`), no evidence of where the task's API lives.
const MAX_DEFINERS: usize = 16;

#[derive(Debug, Clone, Default)]
pub struct Pointers {
    /// Files the task names: a path, a traceback frame, a module path.
    pub mentioned: HashMap<u32, f32>,
    /// How near a file is to where a traceback the task quotes was raised: 1 for the
    /// innermost frame that is a file of the codebase (frames in libraries it calls are
    /// not), 1/2 for the next, 1/3…: the frame's rank, as in BRTracer (Wong et al. 2014).
    pub raised: HashMap<u32, f32>,
    /// Files holding, as literal text, a message the task quotes or an option it names.
    pub raises: HashMap<u32, f32>,
    /// Files that define names the task writes as code, weighed by how few files
    /// define each name.
    pub defines: HashMap<u32, f32>,
    /// The names behind `defines`, per file (for reasons).
    pub defined_names: HashMap<u32, Vec<String>>,
    /// Files that define what a report's title names, weighed by how few files define
    /// each (a qualified name narrowed to its qualifier's files or its package's
    /// re-export).
    pub titled: HashMap<u32, f32>,
    /// The names behind `titled`, per file (for reasons).
    pub titled_names: HashMap<u32, Vec<String>>,
}

impl Pointers {
    pub fn is_empty(&self) -> bool {
        self.mentioned.is_empty()
            && self.raises.is_empty()
            && self.defines.is_empty()
            && self.titled.is_empty()
    }

    /// Every file pointed at by a path or a message, or by a name few files define.
    pub fn files(&self) -> impl Iterator<Item = u32> + '_ {
        let strong_api = self
            .defines
            .iter()
            .filter(|(_, w)| **w >= 0.5)
            .map(|(f, _)| f);
        let strong_title = self
            .titled
            .iter()
            .filter(|(_, w)| **w >= 0.5)
            .map(|(f, _)| f);
        self.mentioned
            .keys()
            .chain(self.raises.keys())
            .chain(strong_api)
            .chain(strong_title)
            .copied()
    }
}

pub fn resolve(corpus: &Corpus, evidence: &Evidence) -> Pointers {
    let mut p = Pointers {
        mentioned: mentioned(corpus, evidence),
        raised: raised(corpus, evidence),
        raises: raises(corpus, evidence),
        ..Default::default()
    };
    defines(corpus, evidence, &mut p);
    titled(corpus, evidence, &mut p);
    p
}

/// `path` less its extension: `a/b/query.py` → `a/b/query`.
fn without_ext(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((stem, _)) if !stem.ends_with('/') && !stem.is_empty() => stem,
        _ => path,
    }
}

/// Whether `long` ends with `short` at a folder boundary.
fn ends_at_boundary(long: &str, short: &str) -> bool {
    long == short || (long.ends_with(short) && long[..long.len() - short.len()].ends_with('/'))
}

/// Folder files that stand for their folder (`pkg/__init__.py`, `mod.rs`, `index.ts`).
fn stands_for_folder(stem: &str) -> Option<&str> {
    let (dir, name) = stem.rsplit_once('/')?;
    matches!(name, "__init__" | "mod" | "index" | "lib" | "main").then_some(dir)
}

fn mentioned(corpus: &Corpus, evidence: &Evidence) -> HashMap<u32, f32> {
    let files = &corpus.index.files;
    let mut out: HashMap<u32, f32> = HashMap::new();
    for m in evidence.paths.iter().take(MAX_MENTIONS) {
        let mut found: Vec<(u32, f32)> = Vec::new();
        match m.kind {
            MentionKind::File => {
                found.extend(files_named(corpus, &m.path).into_iter().map(|f| (f, 1.0)));
            }
            MentionKind::Module => {
                let parent = m.path.rsplit_once('/').map(|(p, _)| p);
                for (i, f) in files.iter().enumerate() {
                    let stem = without_ext(&f.path);
                    let stem = stands_for_folder(stem).unwrap_or(stem);
                    if ends_at_boundary(stem, &m.path) {
                        found.push((i as u32, 1.0));
                    } else if parent.is_some_and(|p| p.contains('/') && ends_at_boundary(stem, p)) {
                        // `pkg.module.Class`: the module that holds the class.
                        found.push((i as u32, 0.8));
                    }
                }
            }
        }
        add_shared(&mut out, found);
    }
    out
}

/// A mention that fits many files says little about each: each of `found` gets its
/// weight over the square root of their number (the strongest mention of a file counts).
fn add_shared(out: &mut HashMap<u32, f32>, found: Vec<(u32, f32)>) {
    let share = 1.0 / (found.len().max(1) as f32).sqrt();
    for (file, w) in found {
        let v = out.entry(file).or_default();
        *v = v.max(w * share);
    }
}

/// An installed path and the source it was installed from share at least this many
/// trailing parts: the package folder and the file (`site-packages/matplotlib/colors.py`
/// is `lib/matplotlib/colors.py`).
const MIN_SHARED_PARTS: usize = 2;

/// The files a file mention names. It may be absolute (a frame) or shorter than the
/// indexed path. Failing that, a frame of the installed package names the source file it
/// was installed from, the files sharing the longest tail of at least
/// [`MIN_SHARED_PARTS`] parts with it: a package under `src/` or `lib/` is installed
/// without that folder.
fn files_named(corpus: &Corpus, path: &str) -> Vec<u32> {
    let files = &corpus.index.files;
    let named: Vec<u32> = (0..files.len() as u32)
        .filter(|&i| {
            let f = &files[i as usize].path;
            ends_at_boundary(path, f) || (path.contains('/') && ends_at_boundary(f, path))
        })
        .collect();
    if !named.is_empty() {
        return named;
    }
    let shared = |f: &str| {
        path.rsplit('/')
            .zip(f.rsplit('/'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    let longest = files.iter().map(|f| shared(&f.path)).max().unwrap_or(0);
    if longest < MIN_SHARED_PARTS {
        return Vec::new();
    }
    (0..files.len() as u32)
        .filter(|&i| shared(&files[i as usize].path) == longest)
        .collect()
}

/// [`Pointers::raised`]: each traceback's frames that name files of the codebase, by
/// their rank from the innermost.
fn raised(corpus: &Corpus, evidence: &Evidence) -> HashMap<u32, f32> {
    let mut out = HashMap::new();
    for frames in &evidence.tracebacks {
        let in_codebase = frames.iter().map(|frame| files_named(corpus, frame));
        for (rank, files) in in_codebase.filter(|f| !f.is_empty()).enumerate() {
            let weight = 1.0 / (rank + 1) as f32;
            add_shared(&mut out, files.into_iter().map(|f| (f, weight)).collect());
        }
    }
    out
}

/// Chunks that may hold `text` verbatim: those holding its rarest word (the keyword
/// index says which), so a literal is looked for in a few chunks, not the whole codebase.
fn candidates_for(corpus: &Corpus, text: &str) -> Vec<u32> {
    let bm25 = &corpus.index.bm25;
    let rarest = tokenize(text)
        .into_iter()
        .map(|t| (bm25.df(&t), t))
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    match rarest {
        Some((df, term)) if df > 0 => bm25.docs_with(&term).collect(),
        _ => Vec::new(),
    }
}

/// The files holding a quoted message. A message is the literal with values formatted in
/// ("no number is assigned for table" from `"no number is assigned for %s: %s"`): the
/// longest of the fragment, its prefixes and its suffixes (of at least
/// [`MIN_HELD_WORDS`] words) that some chunk holds verbatim is looked for.
fn holding_message(corpus: &Corpus, fragment: &str) -> Vec<u32> {
    let words: Vec<&str> = fragment.split(' ').collect();
    let holding = |part: &str| {
        files_holding(corpus, &candidates_for(corpus, part), &|text| {
            text.contains(part)
        })
    };
    let whole = holding(fragment);
    if !whole.is_empty() {
        return whole;
    }
    for len in (MIN_HELD_WORDS..words.len()).rev() {
        for part in [&words[..len], &words[words.len() - len..]] {
            let found = holding(&part.join(" "));
            if !found.is_empty() {
                return found;
            }
        }
    }
    Vec::new()
}

/// The files (sorted, once each) of the `chunks` whose text satisfies `holds`.
fn files_holding(corpus: &Corpus, chunks: &[u32], holds: &dyn Fn(&str) -> bool) -> Vec<u32> {
    let mut found: Vec<u32> = chunks
        .iter()
        .map(|&c| corpus.index.chunks.get(c as usize))
        .filter(|c| holds(c.text))
        .map(|c| c.file)
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// Adds a share of 1 (split over the files found, as for mentions) to each of `found`.
fn add_found(out: &mut HashMap<u32, f32>, found: Vec<u32>) {
    add_shared(out, found.into_iter().map(|f| (f, 1.0)).collect());
}

/// Files holding, as literal text, a message the task quotes, an option name it writes
/// as code (`'autodoc_type_aliases'`, `"FILE_UPLOAD_PERMISSIONS"`: settings are often
/// registered and read by their name as a string), or a diagnostic code it reports
/// (`E108`, held as `id="admin.E108"` where the check raises it).
fn raises(corpus: &Corpus, evidence: &Evidence) -> HashMap<u32, f32> {
    let mut out: HashMap<u32, f32> = HashMap::new();
    let fragments = evidence
        .messages
        .iter()
        .flat_map(|m| literal_fragments(m))
        .take(MAX_FRAGMENTS);
    for fragment in fragments {
        add_found(&mut out, holding_message(corpus, &fragment));
    }
    let options = evidence
        .names
        .iter()
        .filter(|n| n.len() >= 6 && n.contains('_') && !n.starts_with('_'))
        .take(MAX_FRAGMENTS);
    for name in options {
        let chunks = candidates_for(corpus, name);
        let quoted = [format!("'{name}'"), format!("\"{name}\"")];
        let found = files_holding(corpus, &chunks, &|text| {
            let lower = text.to_lowercase();
            quoted.iter().any(|q| lower.contains(q.as_str()))
        });
        add_found(&mut out, found);
    }
    for code in evidence.codes.iter().take(MAX_FRAGMENTS) {
        // The ID as a literal's end: `id='admin.E108'`, `"E108": …`.
        let ends = [format!("{code}'"), format!("{code}\"")];
        let found = files_holding(corpus, &candidates_for(corpus, code), &|text| {
            ends.iter().any(|e| text.contains(e.as_str()))
        });
        add_found(&mut out, found);
    }
    out
}

fn defines(corpus: &Corpus, evidence: &Evidence, p: &mut Pointers) {
    for name in &evidence.names {
        let Some(files) = corpus.index.definitions.files(name) else {
            continue;
        };
        if files.len() > MAX_DEFINERS {
            continue;
        }
        add_definers(&mut p.defines, &mut p.defined_names, &files, name);
    }
}

/// [`Pointers::titled`]: per name the title writes, the files defining it; a qualified
/// name narrowed to the files that define its qualifier too (`Coarsen.construct`: the
/// file of class `Coarsen`), or, when the qualifier is a package or an alias the task
/// imports (`xr.where`, `import xarray as xr`), to the file the package re-exports it from.
fn titled(corpus: &Corpus, evidence: &Evidence, p: &mut Pointers) {
    for t in &evidence.title {
        let Some(all) = corpus.index.definitions.files(&t.name) else {
            continue;
        };
        let mut files = as_written(corpus, &all, &t.exact);
        if let Some(q) = &t.qualifier {
            let module = evidence
                .aliases
                .iter()
                .find(|(alias, _)| alias == q)
                .map_or(q.as_str(), |(_, m)| m.as_str());
            if let Some(file) = super::reexports::defining_file(corpus, module, &t.name) {
                files = vec![file];
            } else if let Some(owners) = corpus.index.definitions.files(q) {
                let both: Vec<u32> = files
                    .iter()
                    .copied()
                    .filter(|f| owners.contains(f))
                    .collect();
                if !both.is_empty() {
                    files = both;
                }
            }
        }
        if files.len() > MAX_DEFINERS {
            continue;
        }
        add_definers(&mut p.titled, &mut p.titled_names, &files, &t.name);
    }
}

/// Adds to each of `files` defining `name` its share: defined in one file 1, in four 0.5,
/// in a hundred 0.1 (a file's sum kept at most 1), and records the name for reasons.
fn add_definers(
    weights: &mut HashMap<u32, f32>,
    names: &mut HashMap<u32, Vec<String>>,
    files: &[u32],
    name: &str,
) {
    let weight = 1.0 / (files.len() as f32).sqrt();
    for &f in files {
        let v = weights.entry(f).or_default();
        *v = (*v + weight).min(1.0);
        names.entry(f).or_default().push(name.to_string());
    }
}

/// Of the files defining a name (case aside), those that define it as written (`Variable`
/// the class, not a `variable` property), when any does.
fn as_written(corpus: &Corpus, files: &[u32], exact: &str) -> Vec<u32> {
    let index = &corpus.index;
    let defines_exact = |&f: &u32| {
        chunk_range(index, f)
            .map(|c| index.chunks.get(c))
            .any(|c| c.defines.contains(&exact))
    };
    let exact: Vec<u32> = files.iter().copied().filter(defines_exact).collect();
    if exact.is_empty() {
        files.to_vec()
    } else {
        exact
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_and_folder_files() {
        assert!(ends_at_boundary(
            "usr/lib/django/db/query.py",
            "django/db/query.py"
        ));
        assert!(!ends_at_boundary(
            "usr/lib/mydjango/db/query.py",
            "django/db/query.py"
        ));
        assert_eq!(without_ext("a/b/query.py"), "a/b/query");
        assert_eq!(stands_for_folder("a/b/__init__"), Some("a/b"));
        assert_eq!(stands_for_folder("a/b/query"), None);
    }
}
