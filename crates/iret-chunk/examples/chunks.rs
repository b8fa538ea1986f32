//! Prints the chunks of a file: `cargo run -p iret-chunk --example chunks -- <file>`.
use std::io::Write;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: chunks <file>");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let lang = iret_chunk::Language::from_path(std::path::Path::new(&path));
    let mut out = std::io::stdout().lock();
    for c in iret_chunk::chunk(&text, lang, Default::default()) {
        let line = format!(
            "{:>5}-{:<5} {:<50} {:?}",
            c.start_line, c.end_line, c.symbol, c.defines
        );
        // A closed pipe (`| head`) ends the listing quietly.
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
}
