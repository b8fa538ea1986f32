//! Per-file coherence: a file whose several chunks match is a better answer than one
//! lucky chunk.
use crate::hits::ChunkHit;

/// A file's best three chunks, best first.
pub fn best_chunks(mut chunks: Vec<ChunkHit>) -> Vec<ChunkHit> {
    chunks.sort_by(|a, b| b.score.total_cmp(&a.score));
    chunks.truncate(3);
    chunks
}

/// The best chunk's score plus `weight` × the next ones' (the i-th divided by i).
pub fn score(best: &[ChunkHit], weight: f32) -> f32 {
    let Some(first) = best.first() else {
        return 0.0;
    };
    first.score
        + best
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, c)| weight * c.score / i as f32)
            .sum::<f32>()
}
