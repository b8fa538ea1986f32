//! Files tied to a file: by imports (both ways), by use of what it defines, and by
//! nearest vectors. Each tie is a reason; a file's score adds them up.
use crate::answer::Related;
use crate::round4;
use iret_index::bm25::Bm25Params;
use iret_index::tokens::stem;
use iret_retrieve::Corpus;
use std::collections::HashMap;

const IMPORT: f32 = 1.0;
/// Per name of the file's that the other file uses (at most three count).
const USE: f32 = 0.3;
/// Names used in more than this share of chunks say nothing about a tie.
const MAX_USE_DF: f32 = 0.05;

pub(crate) fn related(corpus: &Corpus, file: u32, line: Option<u32>, k: usize) -> Vec<Related> {
    let index = &corpus.index;
    let mut ties = Ties::default();
    for f in corpus.facts.imports.importers_of(file) {
        ties.add(f, IMPORT, "imports it".into());
    }
    for f in corpus.facts.imports.imported_by(file) {
        ties.add(f, IMPORT, "imported by it".into());
    }
    let chunks = chunks_at(corpus, file, line);
    for (f, used) in users_of_definitions(corpus, file, &chunks) {
        let shown: Vec<&str> = used.iter().take(3).map(String::as_str).collect();
        let more = if used.len() > 3 { " …" } else { "" };
        ties.add(
            f,
            USE * used.len().min(3) as f32,
            format!("uses {}{more}", shown.join(", ")),
        );
    }
    for (f, cos) in nearest_files(corpus, file, &chunks, k) {
        ties.add(f, cos, format!("similar code (cos {cos:.2})"));
    }

    let mut out: Vec<(u32, f32)> = ties.score.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.into_iter()
        .take(k)
        .map(|(f, s)| Related {
            path: index.files[f as usize].path.clone(),
            score: round4(s),
            reasons: ties.reasons.remove(&f).unwrap_or_default(),
        })
        .collect()
}

/// Each tied file's summed score and its reasons.
#[derive(Default)]
struct Ties {
    score: HashMap<u32, f32>,
    reasons: HashMap<u32, Vec<String>>,
}

impl Ties {
    fn add(&mut self, file: u32, score: f32, why: String) {
        *self.score.entry(file).or_default() += score;
        self.reasons.entry(file).or_default().push(why);
    }
}

/// The chunks of `file` that hold `line` (all of its chunks without a line, or when none
/// holds it).
fn chunks_at(corpus: &Corpus, file: u32, line: Option<u32>) -> Vec<usize> {
    let index = &corpus.index;
    let entry = &index.files[file as usize];
    let range = entry.first_chunk as usize..(entry.first_chunk + entry.chunk_count) as usize;
    let at: Vec<usize> = match line {
        Some(l) => range
            .clone()
            .filter(|&c| index.chunks.get(c).start_line <= l && l <= index.chunks.get(c).end_line)
            .collect(),
        None => Vec::new(),
    };
    if at.is_empty() {
        range.collect()
    } else {
        at
    }
}

/// The other files that use what `chunks` define, each with the names it uses (names
/// under four letters, or used in more than `MAX_USE_DF` of the chunks, say nothing).
fn users_of_definitions(corpus: &Corpus, file: u32, chunks: &[usize]) -> HashMap<u32, Vec<String>> {
    let index = &corpus.index;
    let n = index.bm25.num_docs().max(1) as f32;
    let mut uses: HashMap<u32, Vec<String>> = HashMap::new();
    let mut names: Vec<&str> = chunks
        .iter()
        .flat_map(|&c| index.chunks.get(c).defines)
        .collect();
    names.sort();
    names.dedup();
    for name in names.into_iter().filter(|d| d.len() >= 4) {
        let term = stem(&name.to_lowercase());
        let df = index.bm25.df(&term) as f32;
        if df == 0.0 || df / n > MAX_USE_DF {
            continue;
        }
        let docs = index
            .bm25
            .score(&[(term, 1.0)], Bm25Params { k1: 1.2, b: 0.75 }, &|_| true);
        let mut files: Vec<u32> = docs
            .iter()
            .map(|(d, _)| index.chunks.file(*d as usize))
            .filter(|&f| f != file)
            .collect();
        files.sort_unstable();
        files.dedup();
        for f in files {
            uses.entry(f).or_default().push(name.to_string());
        }
    }
    uses
}

/// The `k` other files nearest to the mean of `chunks`' vectors, each by its best chunk
/// (none without vectors).
fn nearest_files(corpus: &Corpus, file: u32, chunks: &[usize], k: usize) -> Vec<(u32, f32)> {
    let index = &corpus.index;
    let dims = index.vectors.dims;
    if dims == 0 {
        return Vec::new();
    }
    let mut mean = vec![0f32; dims];
    for &c in chunks {
        for (m, x) in mean.iter_mut().zip(index.vectors.row(c)) {
            *m += x;
        }
    }
    iret_embed::normalize(&mut mean);
    let own = |c: usize| index.chunks.file(c) != file;
    let mut best: HashMap<u32, f32> = HashMap::new();
    for (c, cos) in index.vectors.nearest(&mean, 50, &own) {
        let f = index.chunks.file(c);
        let e = best.entry(f).or_insert(cos);
        *e = e.max(cos);
    }
    let mut best: Vec<(u32, f32)> = best.into_iter().collect();
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    best.truncate(k);
    best
}
