//! Line windows for languages without a grammar and for oversized blocks: cut at blank
//! lines (or top-level lines) near the size limit, never inside a line.
use crate::{Chunk, Limits, LineIndex};

/// Longest text kept for one chunk; a longer single line (minified code) is truncated.
const MAX_TEXT: usize = 8 * 1024;

pub(crate) fn chunk(src: &str, limits: Limits) -> Vec<Chunk> {
    let lines = LineIndex::new(src);
    let last = lines.line(src.len().saturating_sub(1));
    over_lines(src, &lines, 0, last, limits)
}

/// Windows over 0-based lines `first..=last`.
pub(crate) fn over_lines(
    src: &str,
    lines: &LineIndex,
    first: usize,
    last: usize,
    limits: Limits,
) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut start = first;
    while start <= last {
        let mut end = start;
        let mut best_cut = None;
        while end < last {
            let next_end = lines.line_end(end + 1, src.len());
            if next_end - lines.line_start(start) > limits.max {
                break;
            }
            end += 1;
            let line = &src[lines.line_start(end)..lines.line_end(end, src.len())];
            let below = lines.line_end(end, src.len()) - lines.line_start(start);
            if below >= limits.max / 2 && (line.trim().is_empty() || is_top_level_end(line)) {
                best_cut = Some(end);
            }
        }
        if end < last {
            if let Some(cut) = best_cut {
                end = cut;
            }
        }
        let from = lines.line_start(start);
        let to = lines.line_end(end, src.len());
        let text = truncate(&src[from..to]);
        if !text.trim().is_empty() {
            out.push(Chunk {
                start_line: start + 1,
                end_line: end + 1,
                defines: Vec::new(),
                symbol: String::new(),
                text: text.to_string(),
            });
        }
        start = end + 1;
    }
    out
}

/// A closing line at column 0 (`}`, `end`, `fi`, …) ends a top-level block.
fn is_top_level_end(line: &str) -> bool {
    let t = line.trim_end();
    !t.starts_with([' ', '\t']) && matches!(t, "}" | "};" | "end" | "fi" | "esac" | ")" | "]")
}

/// `text` cut to at most MAX_TEXT bytes, on a char boundary.
pub(crate) fn truncate(text: &str) -> &str {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let mut cut = MAX_TEXT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// `src[start..end]` widened to char boundaries.
pub(crate) fn clamp(src: &str, mut start: usize, mut end: usize) -> &str {
    end = end.min(src.len());
    while !src.is_char_boundary(start) {
        start -= 1;
    }
    while !src.is_char_boundary(end) {
        end += 1;
    }
    &src[start..end]
}
