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
    let mut score: HashMap<u32, f32> = HashMap::new();
    let mut reasons: HashMap<u32, Vec<String>> = HashMap::new();
    let mut tie = |f: u32, s: f32, why: String| {
        *score.entry(f).or_default() += s;
        reasons.entry(f).or_default().push(why);
    };
    for f in corpus.facts.imports.importers_of(file) {
        tie(f, IMPORT, "imports it".into());
    }
    for f in corpus.facts.imports.imported_by(file) {
        tie(f, IMPORT, "imported by it".into());
    }
    let entry = &index.files[file as usize];
    let range = entry.first_chunk as usize..(entry.first_chunk + entry.chunk_count) as usize;
    let chunks: Vec<usize> = match line {
        Some(l) => range
            .clone()
            .filter(|&c| index.chunks[c].start_line <= l && l <= index.chunks[c].end_line)
            .collect(),
        None => range.clone().collect(),
    };
    let chunks = if chunks.is_empty() {
        range.collect()
    } else {
        chunks
    };

    // Users of what these chunks define.
    let n = index.bm25.num_docs().max(1) as f32;
    let mut uses: HashMap<u32, Vec<String>> = HashMap::new();
    let mut names: Vec<&String> = chunks
        .iter()
        .flat_map(|&c| &index.chunks[c].defines)
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
            .map(|(d, _)| index.chunks[*d as usize].file)
            .filter(|&f| f != file)
            .collect();
        files.sort_unstable();
        files.dedup();
        for f in files {
            uses.entry(f).or_default().push(name.clone());
        }
    }
    for (f, used) in uses {
        let shown: Vec<&str> = used.iter().take(3).map(String::as_str).collect();
        let more = if used.len() > 3 { " …" } else { "" };
        tie(
            f,
            USE * used.len().min(3) as f32,
            format!("uses {}{more}", shown.join(", ")),
        );
    }

    // Nearest code by vector: the mean of the chunks' vectors.
    let dims = index.vectors.dims;
    if dims > 0 {
        let mut mean = vec![0f32; dims];
        for &c in &chunks {
            for (m, x) in mean.iter_mut().zip(index.vectors.get(c)) {
                *m += x;
            }
        }
        iret_embed::normalize(&mut mean);
        let own = |c: usize| index.chunks[c].file != file;
        let mut best: HashMap<u32, f32> = HashMap::new();
        for (c, cos) in index.vectors.nearest(&mean, 50, &own) {
            let f = index.chunks[c].file;
            let e = best.entry(f).or_insert(cos);
            *e = e.max(cos);
        }
        let mut best: Vec<(u32, f32)> = best.into_iter().collect();
        best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (f, cos) in best.into_iter().take(k) {
            tie(f, cos, format!("similar code (cos {cos:.2})"));
        }
    }

    let mut out: Vec<(u32, f32)> = score.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.into_iter()
        .take(k)
        .map(|(f, s)| Related {
            path: index.files[f as usize].path.clone(),
            score: round4(s),
            reasons: reasons.remove(&f).unwrap_or_default(),
        })
        .collect()
}
