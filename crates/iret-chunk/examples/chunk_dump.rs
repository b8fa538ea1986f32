//! Every chunk of every file under the given folders, one `path<TAB>chunk JSON` line each
//! (files sorted): two builds' dumps diffed show what a chunker change moves
//! (`diff` of the two outputs). `cargo run --release -p iret-chunk --example chunk_dump -- DIR…`
use std::io::Write;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let mut files = Vec::new();
    for dir in std::env::args().skip(1) {
        files_under(dir.as_ref(), &mut files);
    }
    files.sort();
    let mut out = std::io::stdout().lock();
    for f in files {
        let Ok(src) = std::fs::read_to_string(&f) else {
            continue;
        };
        let lang = iret_chunk::Language::from_path(&f);
        for c in iret_chunk::chunk(&src, lang, Default::default()) {
            let json = serde_json::to_string(&c).expect("a chunk serialises");
            if writeln!(out, "{}\t{json}", f.display()).is_err() {
                return;
            }
        }
    }
}
