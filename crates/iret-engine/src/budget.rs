//! Token budgets: the best chunks packed into about N tokens. Whole chunks only, best
//! first: every file's best chunk before any file's second, in answer order; a chunk
//! that does not fit is left out (and said), a smaller later one may still fit.
use crate::answer::{Budget, Omitted};

/// One chunk on offer: which file (index into the answer), its rank within the file, its
/// tokens.
pub struct Offer {
    pub file: usize,
    pub rank: usize,
    pub tokens: usize,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// Which offers to keep (same order as `offers`) under `limit` tokens.
pub fn pack(offers: &[Offer], limit: Option<usize>) -> (Vec<bool>, Budget) {
    let mut order: Vec<usize> = (0..offers.len()).collect();
    order.sort_by_key(|&i| (offers[i].rank, offers[i].file));
    let mut keep = vec![false; offers.len()];
    let mut used = 0;
    let mut omitted = Vec::new();
    for i in order {
        let o = &offers[i];
        if limit.is_none_or(|l| used + o.tokens <= l) {
            keep[i] = true;
            used += o.tokens;
        } else {
            omitted.push(Omitted {
                path: o.path.clone(),
                start_line: o.start_line,
                end_line: o.end_line,
                tokens: o.tokens,
            });
        }
    }
    (
        keep,
        Budget {
            limit,
            tokens: used,
            omitted,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(file: usize, rank: usize, tokens: usize) -> Offer {
        Offer {
            file,
            rank,
            tokens,
            path: format!("f{file}"),
            start_line: rank as u32,
            end_line: rank as u32,
        }
    }

    #[test]
    fn best_chunks_of_every_file_first_whole_and_within_the_limit() {
        let offers = [
            offer(0, 0, 50),
            offer(0, 1, 50),
            offer(1, 0, 60),
            offer(2, 0, 500),
            offer(2, 1, 10),
        ];
        let (keep, b) = pack(&offers, Some(130));
        // f0#0 (50) and f1#0 (60) first; f2#0 (500) does not fit; f0#1 (50) would pass
        // 130; f2#1 (10) still fits.
        assert_eq!(keep, [true, false, true, false, true]);
        assert_eq!(b.tokens, 120);
        assert_eq!(b.omitted.len(), 2);
        assert!(b.tokens <= 130);
        let (keep, b) = pack(&offers, None);
        assert!(keep.iter().all(|k| *k));
        assert!(b.omitted.is_empty());
        assert_eq!(b.tokens, 670);
    }
}
