//! Dispatch: one broad hybrid search. HNSW nearest chunks + BM25 chunks, fused, grouped
//! into files and ranked by the [`ranking`](crate::ranking) signals, scoped by
//! include/exclude globs before ranking.
use crate::corpus::Corpus;
use crate::hits::{ChunkHit, FileHit, Leg};
use crate::params::{Fusion, Params};
use crate::query::State;
use crate::ranking::Signals;
use iret_index::vectors::top_k;
use iret_index::Index;
use std::collections::{HashMap, HashSet};

/// The files for the state's query, best first. Fails only when a served vector search
/// (`--store`) fails: an answer without its vector leg would be silently worse.
pub fn dispatch(corpus: &Corpus, state: &State, params: &Params) -> anyhow::Result<Vec<FileHit>> {
    let index = &corpus.index;
    let allowed: Vec<bool> = index
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| state.scope.allows(&f.path) && !state.excluded.contains(&(i as u32)))
        .collect();
    let allow_chunk = |c: usize| allowed[index.chunks.file(c) as usize];
    let vector_hits = vector_leg(corpus, state, params, &allow_chunk)?;
    let keyword_hits = keyword_leg(index, state, params, &allow_chunk);
    let is_static = iret_embed::is_static_model(index.manifest.vectors_model());
    let wv = vector_weight(state, params, is_static, &vector_hits, &keyword_hits);
    let fused = fuse(
        index,
        state,
        &vector_hits,
        &keyword_hits,
        params.fusion(),
        wv,
    );

    let max_bm25 = keyword_hits.first().map_or(1.0, |k| k.1);
    let signals = Signals::new(corpus, state, params, max_bm25);
    let mut grouped = by_file(index, fused);
    add_pointed(index, state, params, &allowed, &mut grouped);
    let mut files: Vec<FileHit> = grouped
        .into_iter()
        .map(|(file, chunks)| signals.rank(file, chunks))
        .collect();
    files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.file.cmp(&b.file)));
    Ok(files)
}

/// The nearest chunks by cosine: proposed by the served search when there is one (and
/// the index holds the model's own vectors), else by the local HNSW graph.
fn vector_leg(
    corpus: &Corpus,
    state: &State,
    params: &Params,
    allow: &(dyn Fn(usize) -> bool + Sync),
) -> anyhow::Result<Vec<(usize, f32)>> {
    let index = &corpus.index;
    // A keyword-tier index (nothing embedded yet) answers by keywords alone.
    if !params.use_vectors || state.embedding.is_empty() || index.manifest.keyword_only() {
        return Ok(Vec::new());
    }
    match &corpus.served {
        Some(served) if !index.manifest.pending() && index.manifest.static_tier.is_none() => {
            served_leg(index, served, state, params, allow)
        }
        _ => Ok(index
            .vectors
            .nearest(&state.embedding, params.vector_k, allow)),
    }
}

/// The served search's proposals, kept when they are this checkout's chunks and in scope,
/// scored exactly on the local vectors (as the graph's are). It is asked for twice `k`,
/// so that chunks out of scope or of other checkouts leave `k` behind. Chunks the store
/// lacks ([`crate::corpus::Served::missing`]) are scored here beside them, or, when the
/// store lacks more than `Params::served_local_share` of the index, the local graph answers alone.
fn served_leg(
    index: &Index,
    served: &crate::corpus::Served,
    state: &State,
    params: &Params,
    allow: &(dyn Fn(usize) -> bool + Sync),
) -> anyhow::Result<Vec<(usize, f32)>> {
    let k = params.vector_k;
    let missing = served
        .missing()
        .map_err(|e| anyhow::anyhow!("store: {e}"))?;
    if missing.len() as f32 > params.served_local_share * index.chunks.len() as f32 {
        return Ok(index.vectors.nearest(&state.embedding, k, allow));
    }
    let proposed = served
        .nearest
        .nearest(&state.embedding, 2 * k)
        .map_err(|e| anyhow::anyhow!("store: {e}"))?;
    let score = |c: usize| (c, index.vectors.dot(c, &state.embedding));
    let mut hits: Vec<(usize, f32)> = proposed
        .iter()
        .filter_map(|(key, _)| served.chunk(key))
        // A chunk pushed since the store's coverage was learnt is scored once, below.
        .filter(|&c| allow(c) && missing.binary_search(&(c as u32)).is_err())
        .map(score)
        .collect();
    hits.extend(
        missing
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| allow(c))
            .map(score),
    );
    top_k(&mut hits, k);
    Ok(hits)
}

/// The best chunks by BM25 over the query's (weighted) terms.
fn keyword_leg(
    index: &Index,
    state: &State,
    params: &Params,
    allow: &(dyn Fn(usize) -> bool + Sync),
) -> Vec<(usize, f32)> {
    if !params.use_keywords {
        return Vec::new();
    }
    let mut hits: Vec<(usize, f32)> = index
        .bm25
        .score(&state.terms, params.bm25(), &|d| allow(d as usize))
        .into_iter()
        .map(|(d, s)| (d as usize, s))
        .collect();
    top_k(&mut hits, params.keyword_k);
    hits
}

/// The vector leg's weight: lower for symbol lookups and for a static model's vectors;
/// all or nothing when a leg is empty.
fn vector_weight(
    state: &State,
    params: &Params,
    is_static: bool,
    vector: &[(usize, f32)],
    keyword: &[(usize, f32)],
) -> f32 {
    let prose = if is_static {
        params.static_vector_weight
    } else {
        params.vector_weight
    };
    match (vector.is_empty(), keyword.is_empty()) {
        (true, _) => 0.0,
        (_, true) => 1.0,
        _ if state.analysis.is_symbol => params.symbol_vector_weight.min(prose),
        _ => prose,
    }
}

/// Files the task's evidence points at (and those refine joined, and those similar past
/// changes point at) are candidates even
/// when neither leg found them, each with its chunk nearest the query (scored 0 by the
/// legs: only the evidence signals lift it).
fn add_pointed(
    index: &Index,
    state: &State,
    params: &Params,
    allowed: &[bool],
    grouped: &mut HashMap<u32, Vec<ChunkHit>>,
) {
    let mut pointed: Vec<u32> = state
        .pointers
        .files()
        .chain(state.joined.iter().copied())
        .chain(crate::ranking::history::joined(
            &state.history,
            params.history_join,
        ))
        .collect();
    pointed.sort_unstable();
    pointed.dedup();
    for file in pointed {
        if !allowed[file as usize] || grouped.contains_key(&file) {
            continue;
        }
        let range = crate::corpus::chunk_range(index, file);
        let cos = |c: usize| {
            if state.embedding.is_empty() {
                0.0
            } else {
                index.vectors.dot(c, &state.embedding)
            }
        };
        let best = range
            .map(|c| (c, cos(c)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        if let Some((chunk, cosine)) = best {
            grouped.insert(
                file,
                vec![ChunkHit {
                    chunk: chunk as u32,
                    score: 0.0,
                    cosine,
                    bm25: 0.0,
                    leg: Leg::Keyword,
                }],
            );
        }
    }
}

/// Chunks grouped by their file.
fn by_file(index: &Index, hits: Vec<ChunkHit>) -> HashMap<u32, Vec<ChunkHit>> {
    let mut out: HashMap<u32, Vec<ChunkHit>> = HashMap::new();
    for hit in hits {
        out.entry(index.chunks.file(hit.chunk as usize))
            .or_default()
            .push(hit);
    }
    out
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
            index.vectors.dot(c, &state.embedding)
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
