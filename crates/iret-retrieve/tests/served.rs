//! The vector leg proposed by a served store (`--store`), against a test double of the
//! store: chunks the store lacks (a push cut short, files changed since) are still found,
//! and what the store holds is asked again only when its version changes.
mod common;
use common::{embedder, write};
use iret_index::{Index, RemoteNearest};
use iret_retrieve::{run, Corpus, Options, Params, Query};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A store holding some of an index's chunks, searched exactly.
#[derive(Debug)]
struct Shelf {
    records: Vec<([u8; 16], Vec<f32>)>,
    version: Mutex<String>,
    holding_asked: AtomicUsize,
}

impl Shelf {
    /// The chunks of `index` whose file `keep` accepts.
    fn of(index: &Index, keep: impl Fn(&str) -> bool) -> Arc<Self> {
        let records = (0..index.chunks.len())
            .filter(|&c| keep(&index.files[index.chunks.file(c) as usize].path))
            .map(|c| {
                (
                    iret_index::remote::chunk_key(index, c),
                    index.vectors.row(c),
                )
            })
            .collect();
        Arc::new(Self {
            records,
            version: Mutex::new("1".into()),
            holding_asked: AtomicUsize::new(0),
        })
    }
}

impl RemoteNearest for Shelf {
    fn nearest(&self, query: &[f32], k: usize) -> Result<Vec<([u8; 16], f32)>, String> {
        let mut scored: Vec<([u8; 16], f32)> = self
            .records
            .iter()
            .map(|(key, v)| (*key, iret_embed::dot(query, v)))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(k);
        Ok(scored)
    }

    fn version(&self) -> Result<String, String> {
        Ok(self.version.lock().unwrap().clone())
    }

    fn holding(&self, keys: &[[u8; 16]]) -> Result<Vec<bool>, String> {
        self.holding_asked.fetch_add(1, Ordering::SeqCst);
        Ok(keys
            .iter()
            .map(|k| self.records.iter().any(|(r, _)| r == k))
            .collect())
    }
}

fn repo(r: &std::path::Path) {
    write(r, "src/net/throttle.ts", "export function throttle(maxRequests: number) {\n  return (req, res, next) => next();\n}\n");
    write(r, "src/billing/invoice.ts", "export function invoiceTotal(lines: Line[]) {\n  return lines.reduce((a, l) => a + l.amount, 0);\n}\n");
    write(
        r,
        "src/billing/tax.ts",
        "export function taxFor(amount: number) {\n  return amount * 0.2;\n}\n",
    );
    write(r, "src/util/format.ts", "export function formatMoney(cents: number): string {\n  return (cents / 100).toFixed(2);\n}\n");
}

/// Every file the loop evaluated, in order, by the vector leg alone.
fn by_vectors(corpus: &Corpus, task: &str) -> Vec<String> {
    let opts = Options {
        params: Params {
            use_keywords: false,
            ..Params::default()
        },
        ..Options::default()
    };
    run(corpus, &embedder(), &Query::new(task), &opts)
        .unwrap()
        .evaluated
        .into_iter()
        .map(|e| e.path)
        .collect()
}

/// The source tree indexed, twice opened: the plain corpus, and one served by `shelf`.
fn corpora(keep: impl Fn(&str) -> bool) -> (tempfile::TempDir, Corpus, Corpus, Arc<Shelf>) {
    let src = tempfile::tempdir().unwrap();
    repo(src.path());
    let (idx, local) = common::indexed(src.path());
    let index = Index::open(idx.path(), Some("fake")).unwrap();
    let shelf = Shelf::of(&index, keep);
    let served = Corpus::new(index).with_served(shelf.clone());
    (idx, local, served, shelf)
}

#[test]
fn a_store_holding_every_chunk_answers_as_the_local_index() {
    let (_idx, local, served, _) = corpora(|_| true);
    for task in ["invoice total of the lines", "format money as text"] {
        assert_eq!(
            by_vectors(&served, task),
            by_vectors(&local, task),
            "{task}"
        );
    }
}

#[test]
fn chunks_the_store_lacks_are_still_found_by_the_vector_leg() {
    // The push was cut before the billing folder reached the store.
    let (_idx, local, served, _) = corpora(|p| !p.starts_with("src/billing/"));
    let task = "invoice total of the lines";
    let answer = by_vectors(&served, task);
    assert_eq!(
        answer.first().map(String::as_str),
        Some("src/billing/invoice.ts")
    );
    assert_eq!(answer, by_vectors(&local, task));
}

#[test]
fn what_the_store_holds_is_asked_again_only_when_its_version_changes() {
    let (_idx, _local, served, shelf) = corpora(|p| p != "src/util/format.ts");
    by_vectors(&served, "format money as text");
    by_vectors(&served, "invoice total of the lines");
    assert_eq!(shelf.holding_asked.load(Ordering::SeqCst), 1);
    *shelf.version.lock().unwrap() = "2".into();
    let answer = by_vectors(&served, "format money as text");
    assert_eq!(shelf.holding_asked.load(Ordering::SeqCst), 2);
    assert_eq!(
        answer.first().map(String::as_str),
        Some("src/util/format.ts")
    );
}
