//! Dispatch: one broad hybrid search. HNSW nearest chunks + BM25 chunks, fused, grouped
//! into files, with structural signals (definitions, file names, path words), scoped by
//! include/exclude globs before ranking.
use crate::query::Analysis;
use globset::{Glob, GlobSet, GlobSetBuilder};
use iret_index::bm25::Bm25Params;
use iret_index::tokens::{split_identifier, stem, tokenize};
use iret_index::Index;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// How the two legs are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal-rank fusion with constant k.
    Rrf(f32),
    /// Weighted sum of min-max normalised scores.
    MinMax,
}

/// Ranking knobs. Defaults are what the dev benchmark supports (see README); every
/// signal can be switched off for the ablation in `iret bench`.
#[derive(Debug, Clone)]
pub struct Params {
    pub vector_k: usize,
    pub keyword_k: usize,
    pub fusion: Fusion,
    /// Weight of the vector leg for natural-language queries (keyword leg: 1 - this).
    pub vector_weight: f32,
    /// Weight of the vector leg for symbol lookups.
    pub symbol_vector_weight: f32,
    pub use_vectors: bool,
    pub use_keywords: bool,
    pub bm25: Bm25Params,
    /// Weight of a file's 2nd and 3rd best chunks (per-file coherence).
    pub coherence: f32,
    /// Bonus when a file defines an identifier the query names.
    pub define_boost: f32,
    /// Bonus for file-name words that match the query's content words.
    pub name_boost: f32,
    /// Bonus for directory words that match.
    pub path_boost: f32,
    /// Score factor for tests, examples, docs, declarations (.d.ts), legacy/compat code.
    pub noise_factor: f32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            vector_k: 200,
            keyword_k: 200,
            fusion: Fusion::MinMax,
            vector_weight: 0.6,
            symbol_vector_weight: 0.3,
            use_vectors: true,
            use_keywords: true,
            bm25: Bm25Params { k1: 1.5, b: 0.75 },
            coherence: 0.25,
            define_boost: 0.3,
            name_boost: 0.25,
            path_boost: 0.1,
            noise_factor: 0.7,
        }
    }
}

/// Include/exclude globs over relative paths, applied before ranking.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl Scope {
    pub fn new(include: &[String], exclude: &[String]) -> anyhow::Result<Self> {
        let build = |pats: &[String]| -> anyhow::Result<Option<GlobSet>> {
            if pats.is_empty() {
                return Ok(None);
            }
            let mut b = GlobSetBuilder::new();
            for p in pats {
                // A bare name (`auth`, `*.ts`) matches at any depth, like ripgrep's -g.
                let pat = if p.contains('/') {
                    p.clone()
                } else {
                    format!("**/{p}")
                };
                b.add(Glob::new(&pat).map_err(|e| anyhow::anyhow!("bad glob {p:?}: {e}"))?);
                if !p.contains('*') {
                    b.add(Glob::new(&format!("{}/**", pat.trim_end_matches('/')))?);
                }
            }
            Ok(Some(b.build()?))
        };
        Ok(Self {
            include: build(include)?,
            exclude: build(exclude)?,
        })
    }

    pub fn allows(&self, path: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(path))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(path))
    }
}

/// The query as dispatch sees it; refine changes it between cycles.
#[derive(Debug, Clone)]
pub struct State {
    pub embedding: Vec<f32>,
    /// BM25 terms with weights.
    pub terms: Vec<(String, f32)>,
    /// Analysis of the original task (drives query-type and structural signals).
    pub analysis: Analysis,
    pub scope: Scope,
    /// Files that must not come back (scored irrelevant in an earlier cycle).
    pub excluded: HashSet<u32>,
    /// Files refine aims at (imports of relevant files), with a bonus.
    pub focus: HashMap<u32, f32>,
}

/// Which leg found a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Leg {
    Vector,
    Keyword,
    Both,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChunkHit {
    pub chunk: u32,
    pub score: f32,
    pub cosine: f32,
    pub bm25: f32,
    pub leg: Leg,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileHit {
    pub file: u32,
    pub score: f32,
    /// Best chunks first (at most 3).
    pub chunks: Vec<ChunkHit>,
    /// Query identifiers this file defines.
    pub defines: Vec<String>,
    /// Query words in the file name / directories.
    pub name_words: Vec<String>,
    pub path_words: Vec<String>,
    pub noise: bool,
    /// Refine aimed at this file (it imports, or is imported by, a relevant file).
    pub focused: bool,
}

const NOISE_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "example",
    "examples",
    "docs",
    "doc",
    "benchmark",
    "benchmarks",
    "bench",
    "fixtures",
    "testdata",
    "mocks",
    "generated",
    "samples",
    "demo",
];

/// Words that mark legacy code in a folder or file name.
const LEGACY_WORDS: &[&str] = &["legacy", "deprecated", "compat"];

/// Tests, examples, declaration files, docs, generated code: rarely what a task is about.
pub fn is_noise_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".d.ts")
        || lower.contains(".test.")
        || lower.contains(".spec.")
        || lower.contains("_test.")
    {
        return true;
    }
    let file = lower.rsplit('/').next().unwrap_or("");
    if file.starts_with("test_") || file.ends_with("test.java") || file.ends_with("tests.cs") {
        return true;
    }
    lower
        .split('/')
        .rev()
        .skip(1)
        .any(|d| NOISE_DIRS.contains(&d))
}

/// Legacy code by its name: a folder (`legacy/`, `compat/`) or a file
/// (`HttpCacheLegacy.kt`, `deprecated.go`), unless the task speaks of it
/// ("compatibility", "deprecated fields").
pub fn is_legacy(path: &str, concepts: &[String]) -> bool {
    let lower = path.to_ascii_lowercase();
    let dirs = lower.split('/').rev().skip(1).map(str::to_string);
    let file_words = split_identifier(file_stem(path))
        .into_iter()
        .map(str::to_lowercase);
    dirs.chain(file_words).any(|w| {
        LEGACY_WORDS.contains(&w.as_str()) && !concepts.iter().any(|c| c.starts_with(&w[..6]))
    })
}

/// Folders of superseded versions: `v3/` when a sibling `v4/` exists (zod keeps v3 beside
/// v4, API trees keep `v1/` beside `v2/`). Like legacy folders they are rarely what a task
/// is about, unless the task names that version (`v3 compatibility`). Returns `dir/`
/// prefixes.
pub fn older_versions(index: &Index, named: &[u32]) -> Vec<String> {
    let version = |name: &str| -> Option<u32> {
        name.strip_prefix('v')
            .or_else(|| name.strip_prefix('V'))
            .filter(|n| !n.is_empty() && n.len() <= 3)
            .and_then(|n| n.parse().ok())
    };
    // parent dir → versions found under it
    let mut seen: HashMap<&str, Vec<u32>> = HashMap::new();
    for f in &index.files {
        let mut start = 0;
        for (i, _) in f.path.match_indices('/') {
            let dir = &f.path[start..i];
            if let Some(v) = version(dir) {
                let list = seen.entry(&f.path[..start]).or_default();
                if !list.contains(&v) {
                    list.push(v);
                }
            }
            start = i + 1;
        }
    }
    let mut out = Vec::new();
    for (parent, versions) in seen {
        let newest = versions.iter().copied().max().unwrap_or(0);
        for v in versions {
            if v < newest && !named.contains(&v) {
                out.push(format!("{parent}v{v}/"));
            }
        }
    }
    out
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}

pub fn dispatch(index: &Index, state: &State, params: &Params) -> Vec<FileHit> {
    let allowed: Vec<bool> = index
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| state.scope.allows(&f.path) && !state.excluded.contains(&(i as u32)))
        .collect();
    let allow_chunk = |c: usize| allowed[index.chunks[c].file as usize];

    let vector_hits: Vec<(usize, f32)> = if params.use_vectors && !state.embedding.is_empty() {
        index
            .vectors
            .nearest(&state.embedding, params.vector_k, &allow_chunk)
    } else {
        Vec::new()
    };
    let mut keyword_hits: Vec<(usize, f32)> = if params.use_keywords {
        index
            .bm25
            .score(&state.terms, params.bm25, &|d| allow_chunk(d as usize))
            .into_iter()
            .map(|(d, s)| (d as usize, s))
            .collect()
    } else {
        Vec::new()
    };
    keyword_hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    keyword_hits.truncate(params.keyword_k);

    let wv = if state.analysis.is_symbol {
        params.symbol_vector_weight
    } else {
        params.vector_weight
    };
    let wv = match (vector_hits.is_empty(), keyword_hits.is_empty()) {
        (true, _) => 0.0,
        (_, true) => 1.0,
        _ => wv,
    };
    let fused = fuse(index, state, &vector_hits, &keyword_hits, params.fusion, wv);

    // Group chunks into files.
    let mut by_file: HashMap<u32, Vec<ChunkHit>> = HashMap::new();
    for hit in fused {
        by_file
            .entry(index.chunks[hit.chunk as usize].file)
            .or_default()
            .push(hit);
    }
    // Task words and the codebase words refine learned for them.
    let query_stems: HashSet<String> = state.terms.iter().map(|(t, _)| t.clone()).collect();
    let wants_noise = state.analysis.concepts.iter().any(|c| {
        matches!(
            c.as_str(),
            "test" | "tests" | "example" | "examples" | "spec" | "benchmark"
        )
    });

    let older = older_versions(index, &state.analysis.versions);

    let mut files: Vec<FileHit> = by_file
        .into_iter()
        .map(|(file, mut chunks)| {
            chunks.sort_by(|a, b| b.score.total_cmp(&a.score));
            chunks.truncate(3);
            let mut score = chunks[0].score;
            for (i, c) in chunks.iter().enumerate().skip(1) {
                score += params.coherence * c.score / i as f32;
            }
            let entry = &index.files[file as usize];
            let path = entry.path.as_str();

            let range =
                entry.first_chunk as usize..(entry.first_chunk + entry.chunk_count) as usize;
            let mut defines: Vec<String> = Vec::new();
            for c in &index.chunks[range] {
                for d in &c.defines {
                    let dl = d.to_lowercase();
                    if state.analysis.identifiers.contains(&dl) && !defines.contains(&dl) {
                        defines.push(dl);
                    }
                }
            }
            let stem_words: Vec<String> = split_identifier(file_stem(path))
                .iter()
                .map(|w| stem(&w.to_lowercase()))
                .filter(|w| w.len() > 1)
                .collect();
            let name_words: Vec<String> = stem_words
                .iter()
                .filter(|w| query_stems.contains(*w))
                .cloned()
                .collect();
            let dir_words: HashSet<String> = tokenize(path.rsplit_once('/').map_or("", |(d, _)| d))
                .into_iter()
                .collect();
            let path_words: Vec<String> = dir_words
                .iter()
                .filter(|w| query_stems.contains(*w))
                .cloned()
                .collect();

            if !defines.is_empty() {
                // The defining chunk represents the file (ahead of chunks that only use it).
                let range =
                    entry.first_chunk as usize..(entry.first_chunk + entry.chunk_count) as usize;
                // The chunk defining the most specific name the query gives wins: in
                // `Sinatra::Helpers` or `pkg.Class`, the last part (then the earliest chunk).
                let specificity = |c: usize| {
                    index.chunks[c]
                        .defines
                        .iter()
                        .filter_map(|d| {
                            let dl = d.to_lowercase();
                            state.analysis.identifiers.iter().position(|i| *i == dl)
                        })
                        .max()
                };
                let best = range
                    .clone()
                    .filter_map(|c| specificity(c).map(|s| (s, c)))
                    .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
                if let Some((_, def)) = best {
                    match chunks.iter().position(|h| h.chunk as usize == def) {
                        Some(0) => {}
                        Some(i) => {
                            let h = chunks.remove(i);
                            chunks.insert(0, h);
                        }
                        None => {
                            let cosine = if state.embedding.is_empty() {
                                0.0
                            } else {
                                iret_embed::dot(&state.embedding, index.vectors.get(def))
                            };
                            chunks.insert(
                                0,
                                ChunkHit {
                                    chunk: def as u32,
                                    score: chunks[0].score,
                                    cosine,
                                    bm25: 0.0,
                                    leg: Leg::Keyword,
                                },
                            );
                            chunks.truncate(3);
                        }
                    }
                }
                // More so when the file is named after the symbol.
                let named = defines.iter().any(|d| {
                    file_stem(path).to_lowercase().replace(['_', '-'], "") == d.replace('_', "")
                });
                score += params.define_boost * if named { 1.5 } else { 1.0 };
            }
            if !name_words.is_empty() {
                score +=
                    params.name_boost * name_words.len() as f32 / stem_words.len().max(1) as f32;
            }
            if !path_words.is_empty() {
                score += params.path_boost * (path_words.len() as f32).min(2.0) / 2.0;
            }
            let noise = is_noise_path(path)
                || is_legacy(path, &state.analysis.concepts)
                || (!older.is_empty() && older.iter().any(|d| path.starts_with(d.as_str())));
            if noise && !wants_noise {
                score *= params.noise_factor;
            }
            let focused = state
                .focus
                .get(&file)
                .inspect(|bonus| score += *bonus)
                .is_some();
            FileHit {
                file,
                score,
                chunks,
                defines,
                name_words,
                path_words,
                noise,
                focused,
            }
        })
        .collect();
    files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.file.cmp(&b.file)));
    files
}

fn fuse(
    index: &Index,
    state: &State,
    vector: &[(usize, f32)],
    keyword: &[(usize, f32)],
    fusion: Fusion,
    wv: f32,
) -> Vec<ChunkHit> {
    let mut hits: HashMap<usize, ChunkHit> = HashMap::new();
    let vrank: HashMap<usize, usize> = vector
        .iter()
        .enumerate()
        .map(|(r, (c, _))| (*c, r))
        .collect();
    let krank: HashMap<usize, usize> = keyword
        .iter()
        .enumerate()
        .map(|(r, (c, _))| (*c, r))
        .collect();
    let kscore: HashMap<usize, f32> = keyword.iter().cloned().collect();
    let candidates: HashSet<usize> = vrank.keys().chain(krank.keys()).copied().collect();
    let max_bm25 = keyword.first().map_or(1.0, |k| k.1).max(1e-6);
    let cos_of = |c: usize| {
        if state.embedding.is_empty() {
            0.0
        } else {
            iret_embed::dot(&state.embedding, index.vectors.get(c))
        }
    };
    let (cos_hi, cos_lo) = match (vector.first(), vector.last()) {
        (Some(f), Some(l)) if f.1 > l.1 => (f.1, l.1),
        _ => (1.0, 0.0),
    };
    for c in candidates {
        let cosine = cos_of(c);
        let bm25 = kscore.get(&c).copied().unwrap_or(0.0);
        let leg = match (vrank.contains_key(&c), krank.contains_key(&c)) {
            (true, true) => Leg::Both,
            (true, false) => Leg::Vector,
            _ => Leg::Keyword,
        };
        let score = match fusion {
            Fusion::Rrf(k) => {
                let v = vrank
                    .get(&c)
                    .map_or(0.0, |r| (k + 1.0) / (k + 1.0 + *r as f32));
                let kw = krank
                    .get(&c)
                    .map_or(0.0, |r| (k + 1.0) / (k + 1.0 + *r as f32));
                wv * v + (1.0 - wv) * kw
            }
            Fusion::MinMax => {
                let v = ((cosine - cos_lo) / (cos_hi - cos_lo)).clamp(0.0, 1.0);
                wv * v + (1.0 - wv) * bm25 / max_bm25
            }
        };
        hits.insert(
            c,
            ChunkHit {
                chunk: c as u32,
                score,
                cosine,
                bm25,
                leg,
            },
        );
    }
    hits.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_paths() {
        for p in [
            "src/auth.test.ts",
            "types/index.d.ts",
            "tests/test_app.py",
            "lib/examples/demo.js",
        ] {
            assert!(is_noise_path(p), "{p}");
        }
        for p in [
            "src/auth.ts",
            "src/contest/rules.py",
            "lib/testing_utils.rs",
        ] {
            assert!(!is_noise_path(p), "{p}");
        }
    }

    #[test]
    fn legacy_folders_and_files_unless_the_task_speaks_of_them() {
        let none: Vec<String> = Vec::new();
        for p in [
            "cache/HttpCacheLegacy.kt",
            "gin/deprecated.go",
            "v4/classic/compat.ts",
            "auth/legacy_auth.py",
            "src/legacy/auth.ts",
            "src/compat/shim.ts",
        ] {
            assert!(is_legacy(p, &none), "{p}");
        }
        for p in [
            "cache/HttpCache.kt",
            "src/compatible.rs",
            "src/legacyish.rs",
        ] {
            assert!(!is_legacy(p, &none), "{p}");
        }
        let asks = |w: &str| vec![w.to_string()];
        assert!(!is_legacy("v4/classic/compat.ts", &asks("compatibility")));
        assert!(!is_legacy("src/deprecated.rs", &asks("deprecated")));
        assert!(!is_legacy("cache/HttpCacheLegacy.kt", &asks("legacy")));
    }
}
