//! A cold build with a cheap model (a static table), written as it is read: the walked
//! files are read, chunked, counted, tokenized, embedded and written into the new
//! generation a segment at a time ([`SEGMENT_BYTES`] of source), so the chunks' texts and
//! vectors are never all in memory. What a build still holds whole is what it must order
//! before writing: the keyword postings, the term counts, the definitions, and 12 bytes a
//! chunk. The tables equal those the in-memory build writes (tests in `tests/streamed.rs`).
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
use crate::store::{save_bin, F16Writer, IndexDir};
use crate::update::{assemble, carry_vocab, classify, extend_bm25};
use crate::vectors::{VectorsBuilder, EXACT_UP_TO, FLAT_FILE};
use crate::vocab::{TermCounts, MAX_TERMS};
use crate::walk::{why_empty, Found, SkipReason, WalkOptions, Walked};
use iret_embed::Embedder;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Instant;

/// Source bytes read and chunked at once: a segment's chunks, their tokens and vectors
/// take a few times this.
pub const SEGMENT_BYTES: u64 = 32 << 20;

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

/// Builds a new index of `walked` with `embedder` (cheap) segment by segment, commits
/// it, and opens it. `skipped`: what the walk skipped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    root: &Path,
    store: &IndexDir,
    walked: &Walked,
    embedder: &dyn Embedder,
    opts: &BuildOptions,
    walk: WalkOptions,
    mut skipped: BTreeMap<SkipReason, usize>,
    (started, phases): (Instant, &mut Phases),
) -> Result<(BuildReport, Option<Index>), BuildError> {
    let limits = opts.limits.unwrap_or_default();
    let segment_bytes = opts.segment_bytes.unwrap_or(SEGMENT_BYTES);
    let dims = embedder.dims();
    let tmp = store.begin()?;
    let dir = tmp.path();
    let mut files: Vec<FileEntry> = Vec::with_capacity(walked.files.len());
    let mut skipped_files = Vec::new();
    let mut changed_files = 0;
    let mut terms = TermCounts::default();
    let mut bm25 = Bm25Builder::default();
    let mut defs = DefinitionsBuilder::default();
    let mut chunks = ChunksWriter::create(dir)?;
    let mut vectors = F16Writer::create(&dir.join(FLAT_FILE))?;
    let bar = progress_bar(opts.progress, walked.files.len());
    for segment in segments(&walked.files, segment_bytes) {
        let outcomes = classify(segment, &[], limits);
        let mut asm = assemble(segment, outcomes, Vec::new(), Vec::new(), &mut skipped);
        // Side by side: each one's single-threaded table inserts overlap the other's
        // tokenizing.
        rayon::join(
            || count_words(&mut terms, &asm.chunks),
            || extend_bm25(&mut bm25, &asm.files, &asm.chunks),
        );
        let rows = embed_rows(embedder, asm.chunks.len(), |i| {
            let c = &asm.chunks[i];
            embedding_text(&asm.files[c.file as usize].path, &c.symbol, &c.text)
        })?;
        vectors.push(&rows)?;
        drop(rows);
        let (first_file, first_chunk) = (files.len() as u32, chunks.len() as u32);
        for c in &mut asm.chunks {
            c.file += first_file;
            defs.add(c.file, &c.defines);
            chunks.push(c)?;
        }
        files.extend(asm.files.into_iter().map(|mut f| {
            f.first_chunk += first_chunk;
            f
        }));
        skipped_files.extend(asm.skipped_files);
        changed_files += asm.changed_files;
        if let Some(b) = &bar {
            b.inc(segment.len() as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let n_chunks = chunks.len();
    chunks.finish()?;
    vectors.finish()?;
    phases.mark("segments");

    let top = terms.top(MAX_TERMS);
    let fresh = embed_rows(embedder, top.len(), |i| top[i].0.clone())?;
    let new_terms = top.len();
    let vocab = carry_vocab(top, &HashMap::new(), None, &fresh, dims);
    drop(fresh);
    let (history, history_note) = read_history(root, None);
    phases.mark("vocab+history");

    save_bin(&dir.join("files.bin"), &files)?;
    bm25.write(dir)?;
    drop(bm25);
    defs.write(dir)?;
    drop(defs);
    save_bin(&dir.join("vocab.bin"), &vocab)?;
    save_bin(&dir.join(TERMS_FILE), &terms)?;
    drop(terms);
    save_bin(&dir.join(HISTORY_FILE), &history)?;
    let mut manifest = manifest_of(
        embedder,
        (files.len(), n_chunks),
        &skipped,
        skipped_files,
        0,
    );
    manifest.walk = walk;
    manifest.history_head = history.head.clone();
    manifest.history_commits = history.commits.len();
    drop((history, vocab));
    let report = BuildReport {
        files: files.len(),
        chunks: n_chunks,
        changed_files,
        removed_files: 0,
        embedded: n_chunks + new_terms,
        cached: 0,
        fetched: 0,
        reused_chunks: 0,
        seconds: 0.0,
        nothing: why_empty(root, files.len(), &skipped, walk),
        skipped,
        up_to_date: false,
        notes: history_note.into_iter().collect(),
        deferred: 0,
    };
    drop(files);
    crate::memory::give_back();
    phases.mark("write");

    // A large tree's graph is its longest step: the index is live without it first (its
    // vectors searched exactly), then with it, built from the live generation's files.
    let quick = embedder.is_cheap();
    let (tmp, manifest) = if n_chunks > EXACT_UP_TO {
        finish_manifest(dir, &mut manifest)?;
        let live = store.commit(tmp)?;
        phases.mark("live");
        with_graph(store, &live, manifest, quick)?
    } else {
        VectorsBuilder::graph_from_file(dir, dims, n_chunks, quick, dir)?;
        finish_manifest(dir, &mut manifest)?;
        (tmp, manifest)
    };
    phases.mark("hnsw");
    let generation = store.commit(tmp)?;
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
