//! A cold build whose vectors come from a cheap model (a static table), written in
//! segments as it is read: a build with the static model, or the static tier of a
//! transformer's first build (its vectors the shipped static model's, the model's own left
//! to a background build).
//! the walked files are read, chunked, counted, tokenized and embedded a segment
//! ([`SEGMENT_BYTES`] of source) at a time, and each segment is written to the index's
//! `building/` folder (its chunks, vectors, postings and definitions as sorted runs, its
//! files and word counts) before the next is read. Then the segments are merged into the
//! new generation (`runs.rs`: the runs by key, the rest in turn), so neither the chunks'
//! texts, nor their vectors, nor the postings are ever all in memory. A build stopped at
//! any point (a SIGKILL, a full disk) keeps its finished segments: the next cold build of
//! the same files with the same model takes them as they are and reads on from there.
//! The tables equal those the in-memory build writes (tests in `tests/streamed.rs`).
use crate::bm25::Bm25Builder;
use crate::chunks::ChunksWriter;
use crate::definitions::DefinitionsBuilder;
use crate::history::HISTORY_FILE;
use crate::index::{finish_manifest, open_committed, with_graph, FileEntry, Index, TERMS_FILE};
use crate::pipeline::{
    count_words, embed_rows, embedding_text, manifest_of, read_history, BuildError, BuildOptions,
    BuildReport,
};
use crate::profile::Phases;
use crate::store::{io_err, load_bin, save_bin, F16Writer, IndexDir, StoreError};
use crate::update::{assemble, carry_vocab, classify, extend_bm25};
use crate::vectors::{VectorsBuilder, EXACT_UP_TO, FLAT_FILE};
use crate::vocab::{TermCounts, MAX_TERMS};
use crate::walk::{why_empty, Found, SkipReason, WalkOptions, Walked};
use iret_chunk::Limits;
use iret_embed::Embedder;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Source bytes read and chunked at once: a segment's chunks, their tokens and vectors
/// take a few times this.
pub const SEGMENT_BYTES: u64 = 32 << 20;

/// The folder of a cold build's finished segments, in the index folder.
pub const BUILDING: &str = "building";
const PLAN_FILE: &str = "plan.json";
const META_FILE: &str = "meta.bin";
const POSTINGS_RUN: &str = "postings.run";
const DEFINITIONS_RUN: &str = "defs.run";

/// The walked files in segments of about `bytes` of source each (at least one file).
fn segments(files: &[Found], bytes: u64) -> impl Iterator<Item = &[Found]> {
    let mut rest = files;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut total = 0;
        let mut n = 0;
        while n < rest.len() && (n == 0 || total + rest[n].size <= bytes) {
            total += rest[n].size;
            n += 1;
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    })
}

/// What a build's segments depend on besides their files: segments of another plan are
/// not taken.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Plan {
    model_id: String,
    dims: usize,
    chunker_version: u32,
    tokenizer_version: u32,
    segment_bytes: u64,
    limits: (usize, usize),
    walk: WalkOptions,
}

/// A finished segment: what the build needs of it besides its files (chunks, vectors,
/// runs), its files and chunks numbered for the whole index.
#[derive(Serialize, Deserialize)]
struct Meta {
    /// The digest of the walked files it covers (path, size, modification time).
    walked: [u8; 32],
    files: Vec<FileEntry>,
    skipped: Vec<(SkipReason, usize)>,
    skipped_files: Vec<String>,
    changed_files: usize,
    chunks: usize,
    doc_len: Vec<u32>,
    words: Vec<(String, u32)>,
}

fn digest(files: &[Found]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    for f in files {
        h.update(f.rel.as_bytes());
        h.update(&[0]);
        h.update(&f.size.to_le_bytes());
        h.update(&f.mtime_ns.to_le_bytes());
    }
    *h.finalize().as_bytes()
}

fn segment_dir(building: &Path, i: usize) -> PathBuf {
    building.join(format!("seg-{i:06}"))
}

/// The finished segments of an earlier build of `plan` that cover the first of
/// `segments` as they are now; every other segment is removed (and the folder made
/// ready for this plan).
fn resume(building: &Path, plan: &Plan, segments: &[&[Found]]) -> Result<Vec<Meta>, StoreError> {
    let earlier: Option<Plan> = std::fs::read(building.join(PLAN_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if earlier.as_ref() != Some(plan) {
        if building.exists() {
            std::fs::remove_dir_all(building).map_err(io_err(building))?;
        }
        std::fs::create_dir_all(building).map_err(io_err(building))?;
        let json = serde_json::to_vec_pretty(plan).expect("a plan serialises");
        crate::store::write_atomic(&building.join(PLAN_FILE), &json)?;
        return Ok(Vec::new());
    }
    let mut kept = Vec::new();
    for (i, files) in segments.iter().enumerate() {
        match load_bin::<Meta>(&segment_dir(building, i).join(META_FILE)) {
            Ok(meta) if meta.walked == digest(files) => kept.push(meta),
            _ => break,
        }
    }
    let keep: std::collections::HashSet<PathBuf> =
        (0..kept.len()).map(|i| segment_dir(building, i)).collect();
    for entry in std::fs::read_dir(building)
        .map_err(io_err(building))?
        .flatten()
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("seg-") && !keep.contains(&path) {
            std::fs::remove_dir_all(&path).map_err(io_err(&path))?;
        }
    }
    Ok(kept)
}

/// Reads, chunks, counts, tokenizes and embeds `files`, writes the segment into
/// `building` (whole, or not at all) and returns its meta. `first`: the index's files and
/// chunks before it.
fn write_segment(
    building: &Path,
    i: usize,
    files: &[Found],
    (first_file, first_chunk): (u32, u32),
    embedder: &dyn Embedder,
    limits: Limits,
) -> Result<Meta, BuildError> {
    let done = segment_dir(building, i);
    let tmp = done.with_extension("tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
    let mut skipped = BTreeMap::new();
    let outcomes = classify(files, &[], limits);
    let mut asm = assemble(files, outcomes, Vec::new(), Vec::new(), &mut skipped);
    let (mut terms, mut bm25) = (TermCounts::default(), Bm25Builder::default());
    // Side by side: each one's single-threaded table inserts overlap the other's tokenizing.
    rayon::join(
        || count_words(&mut terms, &asm.chunks),
        || extend_bm25(&mut bm25, &asm.files, &asm.chunks),
    );
    bm25.write_run(&tmp.join(POSTINGS_RUN))?;
    let doc_len = bm25.doc_lens().to_vec();
    drop(bm25);
    let rows = embed_rows(embedder, asm.chunks.len(), |i| {
        let c = &asm.chunks[i];
        embedding_text(&asm.files[c.file as usize].path, &c.symbol, &c.text)
    })?;
    let mut vectors = F16Writer::create(&tmp.join(FLAT_FILE))?;
    vectors.push(&rows)?;
    vectors.finish()?;
    drop(rows);
    let mut defs = DefinitionsBuilder::default();
    let mut chunks = ChunksWriter::create(&tmp)?;
    for c in &mut asm.chunks {
        c.file += first_file;
        defs.add(c.file, &c.defines);
        chunks.push(c)?;
    }
    chunks.finish()?;
    defs.write_run(&tmp.join(DEFINITIONS_RUN))?;
    let mut words: Vec<(String, u32)> = terms.counts().map(|(w, n)| (w.to_string(), n)).collect();
    words.sort_unstable();
    let meta = Meta {
        walked: digest(files),
        chunks: asm.chunks.len(),
        files: asm
            .files
            .into_iter()
            .map(|mut f| {
                f.first_chunk += first_chunk;
                f
            })
            .collect(),
        skipped: skipped.into_iter().collect(),
        skipped_files: asm.skipped_files,
        changed_files: asm.changed_files,
        doc_len,
        words,
    };
    save_bin(&tmp.join(META_FILE), &meta)?;
    std::fs::rename(&tmp, &done).map_err(io_err(&done))?;
    Ok(meta)
}

/// The segments merged into the generation folder `dir`: chunks, vectors, postings and
/// definitions written there; the files and word counts returned.
fn merge(
    building: &Path,
    metas: &[Meta],
    dir: &Path,
) -> Result<(Vec<FileEntry>, TermCounts), BuildError> {
    let parts: Vec<PathBuf> = (0..metas.len()).map(|i| segment_dir(building, i)).collect();
    crate::chunks::concat(&parts, dir)?;
    let flat = dir.join(FLAT_FILE);
    let mut out = std::fs::File::create(&flat).map_err(io_err(&flat))?;
    for p in &parts {
        let from = p.join(FLAT_FILE);
        std::io::copy(
            &mut std::fs::File::open(&from).map_err(io_err(&from))?,
            &mut out,
        )
        .map_err(io_err(&flat))?;
    }
    drop(out);
    let mut firsts = Vec::with_capacity(metas.len());
    let mut doc_len = Vec::new();
    for m in metas {
        firsts.push(doc_len.len() as u32);
        doc_len.extend_from_slice(&m.doc_len);
    }
    let runs: Vec<PathBuf> = parts.iter().map(|p| p.join(POSTINGS_RUN)).collect();
    crate::bm25::merge_runs(&runs, &firsts, &doc_len, dir)?;
    let runs: Vec<PathBuf> = parts.iter().map(|p| p.join(DEFINITIONS_RUN)).collect();
    crate::definitions::merge_runs(&runs, dir)?;
    let mut terms = TermCounts::default();
    let mut files = Vec::new();
    for m in metas {
        for (w, n) in &m.words {
            terms.add_count(w, *n);
        }
        files.extend(m.files.iter().cloned());
    }
    Ok((files, terms))
}

/// Builds a new index of `walked` segment by segment, commits it, and opens it: with
/// `embedder` (cheap) whole, or, given `tier` (the static model), the static tier of
/// `embedder`'s index, every chunk left to embed (`BuildReport::deferred`) and no graph
/// (a tier's vectors are searched exactly until the model's replace them). `skipped`:
/// what the walk skipped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    root: &Path,
    store: &IndexDir,
    walked: &Walked,
    (embedder, tier): (&dyn Embedder, Option<&dyn Embedder>),
    opts: &BuildOptions,
    walk: WalkOptions,
    mut skipped: BTreeMap<SkipReason, usize>,
    (started, phases): (Instant, &mut Phases),
) -> Result<(BuildReport, Option<Index>), BuildError> {
    let limits = opts.limits.unwrap_or_default();
    let segment_bytes = opts.segment_bytes.unwrap_or(SEGMENT_BYTES);
    // The model whose vectors the segments hold (the plan names it: a static build's
    // segments serve a tier of the same files, and back).
    let vectors_by = tier.unwrap_or(embedder);
    let dims = vectors_by.dims();
    let plan = Plan {
        model_id: vectors_by.model_id().to_string(),
        dims,
        chunker_version: iret_chunk::CHUNKER_VERSION,
        tokenizer_version: crate::tokens::TOKENIZER_VERSION,
        segment_bytes,
        limits: (limits.max, limits.min),
        walk,
    };
    let building = store.dir.join(BUILDING);
    let planned: Vec<&[Found]> = segments(&walked.files, segment_bytes).collect();
    let mut metas = resume(&building, &plan, &planned)?;
    let resumed = metas.len();
    let resumed_chunks: usize = metas.iter().map(|m| m.chunks).sum();
    let (mut n_files, mut n_chunks) = (
        metas.iter().map(|m| m.files.len()).sum::<usize>(),
        resumed_chunks,
    );
    let bar = progress_bar(opts.progress, walked.files.len());
    if let Some(b) = &bar {
        b.inc(planned[..resumed].iter().map(|s| s.len() as u64).sum());
    }
    for (i, files) in planned.iter().enumerate().skip(resumed) {
        let first = (n_files as u32, n_chunks as u32);
        let meta = write_segment(&building, i, files, first, vectors_by, limits)?;
        n_files += meta.files.len();
        n_chunks += meta.chunks;
        metas.push(meta);
        if let Some(b) = &bar {
            b.inc(files.len() as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    phases.mark("segments");

    let tmp = store.begin()?;
    let dir = tmp.path();
    let (files, terms) = merge(&building, &metas, dir)?;
    let mut skipped_files = Vec::new();
    let mut changed_files = 0;
    for (i, m) in metas.into_iter().enumerate() {
        for (reason, n) in m.skipped {
            *skipped.entry(reason).or_default() += n;
        }
        skipped_files.extend(m.skipped_files);
        if i >= resumed {
            changed_files += m.changed_files;
        }
    }
    phases.mark("merge");
    let top = terms.top(MAX_TERMS);
    let fresh = embed_rows(vectors_by, top.len(), |i| top[i].0.clone())?;
    let new_terms = top.len();
    let vocab = carry_vocab(top, &HashMap::new(), None, &fresh, dims);
    drop(fresh);
    let (history, history_note) = read_history(root, None);
    save_bin(&dir.join("files.bin"), &files)?;
    save_bin(&dir.join("vocab.bin"), &vocab)?;
    save_bin(&dir.join(TERMS_FILE), &terms)?;
    drop(terms);
    save_bin(&dir.join(HISTORY_FILE), &history)?;
    // A tier leaves every chunk and term to the model.
    let deferred = if tier.is_some() {
        n_chunks + new_terms
    } else {
        0
    };
    let mut manifest = manifest_of(
        embedder,
        (files.len(), n_chunks),
        &skipped,
        skipped_files,
        if tier.is_some() { n_chunks } else { 0 },
    );
    manifest.walk = walk;
    if let Some(fast) = tier {
        manifest.dims = fast.dims();
        manifest.static_tier = Some(fast.model_id().to_string());
    }
    manifest.history_head = history.head.clone();
    manifest.history_commits = history.commits.len();
    drop((history, vocab));
    let report = BuildReport {
        files: files.len(),
        chunks: n_chunks,
        changed_files,
        removed_files: 0,
        embedded: if tier.is_some() {
            0
        } else {
            n_chunks - resumed_chunks + new_terms
        },
        cached: 0,
        fetched: 0,
        reused_chunks: resumed_chunks,
        seconds: 0.0,
        nothing: why_empty(root, files.len(), &skipped, walk),
        skipped,
        up_to_date: false,
        notes: history_note.into_iter().collect(),
        deferred,
    };
    drop(files);
    crate::memory::give_back();
    phases.mark("write");

    // A large tree's graph is its longest step: the index is live without it first (its
    // vectors searched exactly), then with it, built from the live generation's files.
    // A tier has none: the model's vectors replace its own.
    let quick = embedder.is_cheap();
    let (tmp, manifest) = if tier.is_some() {
        finish_manifest(dir, &mut manifest)?;
        (tmp, manifest)
    } else if n_chunks > EXACT_UP_TO {
        finish_manifest(dir, &mut manifest)?;
        let live = store.commit(tmp)?;
        let _ = std::fs::remove_dir_all(&building);
        phases.mark("live");
        with_graph(store, &live, manifest, quick)?
    } else {
        VectorsBuilder::graph_from_file(dir, dims, n_chunks, quick, dir)?;
        finish_manifest(dir, &mut manifest)?;
        (tmp, manifest)
    };
    phases.mark("hnsw");
    let generation = store.commit(tmp)?;
    // Its segments are in the generation now (a failure to remove them only costs disk:
    // the next cold build of the same files would take them).
    let _ = std::fs::remove_dir_all(&building);
    phases.mark("commit");
    let index = open_committed(generation, manifest)?;
    Ok((
        BuildReport {
            seconds: started.elapsed().as_secs_f64(),
            ..report
        },
        Some(index),
    ))
}

/// Files read so far, on a terminal.
fn progress_bar(on: bool, files: usize) -> Option<indicatif::ProgressBar> {
    if !on || files == 0 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "indexing {bar:40} {pos}/{len} files ({per_sec}, eta {eta})",
        )
        .expect("valid template"),
    );
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(size: u64) -> Found {
        Found {
            rel: String::new(),
            abs: Default::default(),
            size,
            mtime_ns: 0,
        }
    }

    #[test]
    fn segments_hold_files_in_order_up_to_the_budget_and_never_none() {
        let files: Vec<Found> = [5, 5, 5, 20, 1, 1].into_iter().map(found).collect();
        let sizes: Vec<Vec<u64>> = segments(&files, 10)
            .map(|s| s.iter().map(|f| f.size).collect())
            .collect();
        assert_eq!(sizes, vec![vec![5, 5], vec![5], vec![20], vec![1, 1]]);
        assert_eq!(segments(&[], 10).count(), 0);
    }
}
