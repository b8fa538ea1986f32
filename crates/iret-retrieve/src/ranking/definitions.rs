//! Definitions: a file that defines what the query names (`TRPCError`, `Sinatra::Helpers`)
//! is where the thing lives; its defining chunk represents it.
use super::file_name;
use crate::corpus::chunk_range;
use crate::hits::{ChunkHit, Leg};
use iret_index::Index;

/// The query identifiers (lower-case) that `file` defines.
pub fn defined(index: &Index, file: u32, identifiers: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in chunk_range(index, file).map(|c| index.chunks.get(c)) {
        for d in &c.defines {
            let dl = d.to_lowercase();
            if identifiers.contains(&dl) && !out.contains(&dl) {
                out.push(dl);
            }
        }
    }
    out
}

/// Puts the defining chunk first, ahead of chunks that only use the name. The chunk
/// defining the most specific name the query gives wins: in `Sinatra::Helpers` or
/// `pkg.Class`, the last part (then the earliest chunk).
pub fn lead_with_definition(
    index: &Index,
    file: u32,
    identifiers: &[String],
    embedding: &[f32],
    chunks: &mut Vec<ChunkHit>,
) {
    let specificity = |c: usize| {
        index
            .chunks
            .get(c)
            .defines
            .iter()
            .filter_map(|d| {
                let dl = d.to_lowercase();
                identifiers.iter().position(|i| *i == dl)
            })
            .max()
    };
    let best = chunk_range(index, file)
        .filter_map(|c| specificity(c).map(|s| (s, c)))
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let Some((_, def)) = best else {
        return;
    };
    match chunks.iter().position(|h| h.chunk as usize == def) {
        Some(0) => {}
        Some(i) => {
            let h = chunks.remove(i);
            chunks.insert(0, h);
        }
        None => {
            let cosine = if embedding.is_empty() {
                0.0
            } else {
                index.vectors.dot(def, embedding)
            };
            let score = chunks.first().map_or(0.0, |c| c.score);
            chunks.insert(
                0,
                ChunkHit {
                    chunk: def as u32,
                    score,
                    cosine,
                    bm25: 0.0,
                    leg: Leg::Keyword,
                },
            );
            chunks.truncate(3);
        }
    }
}

/// `weight` for defining a query name; half as much again when the file is named after
/// it: its whole name but the extension (`TRPCError.ts` defining `TRPCError`,
/// `user.service.ts` defining `UserService`; not `Serializer.NonGeneric.cs`, one part of
/// a class spread over files, beside `Serializer.cs`).
pub fn bonus(path: &str, defines: &[String], weight: f32) -> f32 {
    let name = file_name(path).to_lowercase().replace(['_', '-', '.'], "");
    let named = defines.iter().any(|d| name == d.replace('_', ""));
    weight * if named { 1.5 } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::bonus;

    #[test]
    fn a_file_named_after_the_definition_weighs_half_as_much_again() {
        let d = |s: &str| vec![s.to_string()];
        assert_eq!(bonus("src/TRPCError.ts", &d("trpcerror"), 0.2), 0.3);
        assert_eq!(bonus("app/user.service.ts", &d("userservice"), 0.2), 0.3);
        assert_eq!(bonus("lib/parse_args.py", &d("parse_args"), 0.2), 0.3);
        // One part of a class spread over files is not the file named after it.
        let serializer = d("messagepackserializer");
        assert_eq!(bonus("MessagePackSerializer.cs", &serializer, 0.2), 0.3);
        assert_eq!(
            bonus("MessagePackSerializer.NonGeneric.cs", &serializer, 0.2),
            0.2
        );
    }
}
