//! Splits source files into chunks: whole declarations where a grammar is known,
//! blank-line-aware line windows otherwise.
//!
//! A chunk records its line span, kind and enclosing symbol path
//! (`class Router > method use`). Large declarations split on child boundaries,
//! tiny neighbours merge. Adding a language = a grammar crate in build.rs + its tables in [`languages`]
//! (declaring kinds; name kinds, wrappers, declaring calls or assignments where needed).
mod definitions;
pub mod grammars;
pub mod imports;
mod languages;
mod syntax;
mod windows;

pub use grammars::{ready as grammars_ready, GrammarError};
pub use languages::Language;
use serde::{Deserialize, Serialize};

/// Bumped whenever chunk boundaries or text change, so old indexes are rebuilt.
pub const CHUNKER_VERSION: u32 = 10;

/// Size limits in bytes of chunk text.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A declaration larger than this is split on its children.
    pub max: usize,
    /// Neighbours smaller than this merge (up to `max`).
    pub min: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max: 1800,
            min: 300,
        }
    }
}

/// One chunk of a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// First line, 1-based.
    pub start_line: usize,
    /// Last line, 1-based, inclusive.
    pub end_line: usize,
    /// Names of the declarations this chunk defines (e.g. `Router`, `use`).
    pub defines: Vec<String>,
    /// Enclosing symbol path, e.g. `class Router > method use`; empty at top level glue.
    pub symbol: String,
    /// The chunk's source text (whole lines).
    pub text: String,
}

/// Chunks `source` of a file in `lang` (None = unknown language: line windows).
/// Never panics; a parse failure falls back to line windows.
pub fn chunk(source: &str, lang: Option<Language>, limits: Limits) -> Vec<Chunk> {
    if source.trim().is_empty() {
        return Vec::new();
    }
    if let Some(lang) = lang {
        if let Some(chunks) = syntax::chunk(source, lang, limits) {
            return chunks;
        }
    }
    let mut chunks = windows::chunk(source, limits);
    for c in &mut chunks {
        describe_window(c);
    }
    chunks
}

/// A line window's definitions, found line by line, and its label: like a grammar
/// chunk's, the first definition, then the names of the others (`namespace MessagePack,
/// IFormatterResolver`; past [`syntax::LABEL_NAMES`], a count).
fn describe_window(c: &mut Chunk) {
    let mut shown: Vec<String> = Vec::new();
    for line in c.text.lines() {
        if let Some((label, name)) = definitions::definition(line) {
            if c.symbol.is_empty() {
                c.symbol = format!("{label} {name}");
            } else if !shown.contains(&name) {
                shown.push(name.clone());
            }
            // `Ecto.Migration` also defines `Migration`.
            let last = name.rsplit(['.', ':']).next().unwrap_or(&name).to_string();
            for n in [name, last] {
                if !n.is_empty() && !c.defines.contains(&n) {
                    c.defines.push(n);
                }
            }
        }
    }
    syntax::append_names(&mut c.symbol, &shown);
}

/// Byte offset of the start of each line (for span → line conversions).
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(src: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        Self { starts }
    }
    /// 0-based line of byte `b`.
    pub fn line(&self, b: usize) -> usize {
        self.starts.partition_point(|&s| s <= b) - 1
    }
    pub fn line_start(&self, line: usize) -> usize {
        self.starts[line]
    }
    /// Byte just past the end of 0-based `line` (including its newline).
    pub fn line_end(&self, line: usize, len: usize) -> usize {
        self.starts.get(line + 1).copied().unwrap_or(len)
    }
}
