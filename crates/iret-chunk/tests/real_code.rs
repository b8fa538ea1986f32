//! The grammars on real repositories (issue #17): set `IRET_REAL_CODE` to folders of
//! checkouts (`:`-separated) (public repositories in languages the dev benchmark lacks; docs/journal/benchmarks.md
//! names the ones used) and every file of a language with a grammar is chunked and
//! checked: chunks are in order and whole lines, every name a chunk says it defines is
//! in its text, every name the label lists is shown, and most chunks of a language's non-test
//! files are labelled.
//! Without the variable the test says so and checks nothing (CI has no such checkouts;
//! `tests/grammars.rs` covers every language there).
use iret_chunk::{chunk, Language, Limits};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if Language::from_path(&p).is_some() {
            out.push(p);
        }
    }
}

#[derive(Default)]
struct Tally {
    files: usize,
    chunks: usize,
    labelled: usize,
}

#[test]
fn real_files_chunk_into_named_whole_definitions() {
    let Some(root) = std::env::var_os("IRET_REAL_CODE") else {
        eprintln!("IRET_REAL_CODE is not set: no real checkouts to check");
        return;
    };
    let mut files = Vec::new();
    for dir in std::env::split_paths(&root) {
        files_under(&dir, &mut files);
    }
    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    for path in &files {
        let Ok(src) = std::fs::read_to_string(path) else {
            continue;
        };
        let lang = Language::from_path(path).unwrap();
        let chunks = chunk(&src, Some(lang), Limits::default());
        let lines = src.lines().count();
        let mut last_end = 0;
        for c in &chunks {
            assert!(
                c.start_line >= last_end && c.start_line <= c.end_line && c.end_line <= lines + 1,
                "{}: chunk {}-{} after {last_end}",
                path.display(),
                c.start_line,
                c.end_line
            );
            last_end = c.end_line;
            for name in &c.defines {
                assert!(
                    c.text.contains(name.as_str()),
                    "{}:{}-{} defines {name} but does not show it",
                    path.display(),
                    c.start_line,
                    c.end_line
                );
            }
            // A chunk that defines something is labelled by names it shows (the
            // continuation of a split declaration keeps the label without the name):
            // `path > label first, second (+2)`.
            let names = c.symbol.split(" (+").next().unwrap_or("");
            let mut names = names.split(", ");
            let first = names.next().unwrap_or("").rsplit(' ').next().unwrap_or("");
            if !c.defines.is_empty() {
                assert!(
                    std::iter::once(first)
                        .chain(names)
                        .all(|n| c.text.contains(n)),
                    "{}:{}-{} is labelled {:?}, which it does not show",
                    path.display(),
                    c.start_line,
                    c.end_line,
                    c.symbol
                );
            }
        }
        // Test files are mostly calls (`test('…', () {…})`), not definitions.
        let is_test = path.components().any(|c| {
            let c = c.as_os_str().to_string_lossy();
            c == "test" || c == "tests" || c == "Tests" || c == "spec"
        });
        if is_test {
            continue;
        }
        let t = tally.entry(lang.name()).or_default();
        t.files += 1;
        t.chunks += chunks.len();
        t.labelled += chunks.iter().filter(|c| !c.symbol.is_empty()).count();
    }
    eprintln!("language          files  chunks  chunks/file  labelled");
    for (lang, t) in &tally {
        eprintln!(
            "{lang:<16} {:>6} {:>7} {:>12.1} {:>8.1}%",
            t.files,
            t.chunks,
            t.chunks as f64 / t.files.max(1) as f64,
            100.0 * t.labelled as f64 / t.chunks.max(1) as f64
        );
        assert!(
            t.labelled * 2 >= t.chunks,
            "{lang}: fewer than half of the chunks name a definition"
        );
    }
}
