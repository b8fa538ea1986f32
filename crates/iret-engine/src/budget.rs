//! Token budgets: the whole answer within N tokens, as the shipped tokenizer counts the
//! form it is read in (the JSON, or the text the CLI prints). The code is what gives way
//! first: whole chunks only, best first (every file's best chunk before any file's
//! second, in answer order); a chunk that does not fit is left out, a smaller later one
//! may still fit. When the answer's frame alone is over, [`Packable::trim`] sheds the
//! least useful part of it (the trace, the files last in line, ...) until it fits.
use crate::answer::{Budget, ChunkAnswer, RetrieveAnswer, SearchAnswer, SearchHit};
use serde::Serialize;

/// The smallest budget an answer can be fitted to (the frame of a one-file answer).
pub const MIN_BUDGET_TOKENS: u32 = 100;

/// Tokens kept in hand for the budget's own figures, written after the last measure.
const RESERVE: usize = 4;

/// An answer whose chunks can be taken out and put back, and whose frame can shed parts.
pub trait Packable {
    type Item: Serialize;
    /// Takes every chunk out, in the order they are offered (best first), each with
    /// where it goes back.
    fn take(&mut self) -> Vec<((usize, usize), Self::Item)>;
    /// Puts chunks back (in their slots' order); those whose file is gone are dropped.
    fn put(&mut self, kept: Vec<((usize, usize), Self::Item)>);
    /// Whether a slot's file is still in the answer.
    fn holds(&self, slot: (usize, usize)) -> bool;
    /// Sheds one part of the frame; false when nothing is left to shed.
    fn trim(&mut self) -> bool;
    /// Files left out by `trim`.
    fn files_dropped(&self) -> usize;
    fn budget(&mut self) -> &mut Budget;
    /// Tokens of the code in one chunk.
    fn code_tokens(item: &Self::Item) -> usize;
}

/// Fits `answer` within `limit` tokens as `whole` counts it, each chunk costing about
/// `cost` (checked against `whole` at the end); with no limit, only counts.
pub fn fit<A: Packable>(
    answer: &mut A,
    limit: Option<usize>,
    whole: &dyn Fn(&A) -> usize,
    cost: &dyn Fn(&A::Item) -> usize,
) {
    let Some(limit) = limit else {
        let code = code_of(answer);
        *answer.budget() = Budget {
            limit: None,
            tokens: 0,
            code_tokens: code,
            omitted_chunks: 0,
            omitted_files: 0,
        };
        let tokens = whole(answer);
        answer.budget().tokens = tokens;
        return;
    };
    let pool = answer.take();
    let offered = pool.len();
    // Placeholder figures as wide as the final ones, so the frame is measured at its size.
    *answer.budget() = Budget {
        limit: Some(limit),
        tokens: limit,
        code_tokens: limit,
        omitted_chunks: offered,
        omitted_files: offered,
    };
    let mut frame = whole(answer);
    while frame + RESERVE > limit && answer.trim() {
        frame = whole(answer);
    }
    let room = limit.saturating_sub(frame + RESERVE);
    let mut used = 0;
    let mut kept: Vec<((usize, usize), A::Item)> = Vec::new();
    for (slot, item) in pool {
        if !answer.holds(slot) {
            continue;
        }
        let c = cost(&item) + 1;
        if used + c <= room {
            used += c;
            kept.push((slot, item));
        }
    }
    // The chunks' costs are estimates: drop the last kept (the least good) until it fits.
    let (kept_chunks, code) = loop {
        let n = kept.len();
        let code: usize = kept.iter().map(|(_, i)| A::code_tokens(i)).sum();
        answer.put(kept);
        if n == 0 || whole(answer) + RESERVE <= limit {
            break (n, code);
        }
        kept = answer.take(); // in the order offered
        kept.pop();
    };
    let dropped = answer.files_dropped();
    *answer.budget() = Budget {
        limit: Some(limit),
        tokens: limit,
        code_tokens: code,
        omitted_chunks: offered - kept_chunks,
        omitted_files: dropped,
    };
    let tokens = whole(answer);
    answer.budget().tokens = tokens;
}

fn code_of<A: Packable>(answer: &mut A) -> usize {
    let items = answer.take();
    let code = items.iter().map(|(_, i)| A::code_tokens(i)).sum();
    answer.put(items);
    code
}

/// A `retrieve` answer: chunks by (file, rank); the frame sheds the trace, then the
/// missing concepts of the files last in line, then all but the first clause of their
/// reasons, then those files (one is always kept), then `next`'s lists.
pub struct Retrieve<'a> {
    pub answer: &'a mut RetrieveAnswer,
    /// Files in the answer before any was shed.
    pub files_at_start: usize,
}

impl<'a> Retrieve<'a> {
    pub fn new(answer: &'a mut RetrieveAnswer) -> Self {
        let files_at_start = answer.files.len();
        Self {
            answer,
            files_at_start,
        }
    }
}

impl Packable for Retrieve<'_> {
    type Item = ChunkAnswer;

    fn take(&mut self) -> Vec<((usize, usize), ChunkAnswer)> {
        let mut all: Vec<((usize, usize), ChunkAnswer)> = Vec::new();
        for (f, file) in self.answer.files.iter_mut().enumerate() {
            for (rank, c) in std::mem::take(&mut file.chunks).into_iter().enumerate() {
                all.push(((f, rank), c));
            }
        }
        all.sort_by_key(|((f, rank), _)| (*rank, *f));
        all
    }

    fn put(&mut self, mut kept: Vec<((usize, usize), ChunkAnswer)>) {
        kept.sort_by_key(|(slot, _)| *slot);
        for ((f, _), c) in kept {
            if let Some(file) = self.answer.files.get_mut(f) {
                file.chunks.push(c);
            }
        }
    }

    fn holds(&self, (f, _): (usize, usize)) -> bool {
        f < self.answer.files.len()
    }

    fn trim(&mut self) -> bool {
        let a = &mut *self.answer;
        if a.cycles.pop().is_some() {
            return true;
        }
        if let Some(f) = a.files.iter_mut().rev().find(|f| !f.missing.is_empty()) {
            f.missing.clear();
            return true;
        }
        // A reason's first clause says most ("covers rate, limiting"): the rest goes.
        if let Some(f) = a.files.iter_mut().rev().find(|f| f.reason.contains("; ")) {
            let cut = f.reason.find("; ").unwrap_or(f.reason.len());
            f.reason.truncate(cut);
            return true;
        }
        if a.files.len() > 1 {
            a.files.pop();
            return true;
        }
        for list in [&mut a.next.exclude, &mut a.next.gaps, &mut a.next.keywords] {
            if !list.is_empty() {
                list.clear();
                return true;
            }
        }
        false
    }

    fn files_dropped(&self) -> usize {
        self.files_at_start - self.answer.files.len()
    }

    fn budget(&mut self) -> &mut Budget {
        &mut self.answer.budget
    }

    fn code_tokens(item: &ChunkAnswer) -> usize {
        item.tokens
    }
}

/// A `search` answer: each hit is one file's chunk; nothing else to shed.
pub struct Search<'a>(pub &'a mut SearchAnswer);

impl Packable for Search<'_> {
    type Item = SearchHit;

    fn take(&mut self) -> Vec<((usize, usize), SearchHit)> {
        std::mem::take(&mut self.0.chunks)
            .into_iter()
            .enumerate()
            .map(|(i, h)| ((i, 0), h))
            .collect()
    }

    fn put(&mut self, mut kept: Vec<((usize, usize), SearchHit)>) {
        kept.sort_by_key(|(slot, _)| *slot);
        self.0.chunks.extend(kept.into_iter().map(|(_, h)| h));
    }

    fn holds(&self, _: (usize, usize)) -> bool {
        true
    }

    fn trim(&mut self) -> bool {
        false
    }

    fn files_dropped(&self) -> usize {
        0
    }

    fn budget(&mut self) -> &mut Budget {
        &mut self.0.budget
    }

    fn code_tokens(item: &SearchHit) -> usize {
        item.tokens
    }
}

/// Tokens of `value`'s JSON, by `count`.
pub fn json_tokens<T: Serialize>(value: &T, count: &dyn Fn(&str) -> usize) -> usize {
    count(&serde_json::to_string(value).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::{FileAnswer, IndexNote, NextRound, QueryEcho};

    fn chunk(tokens: usize) -> ChunkAnswer {
        ChunkAnswer {
            start_line: 1,
            end_line: 2,
            symbol: String::new(),
            score: 0.5,
            tokens,
            code: "x ".repeat(tokens),
        }
    }

    fn file(name: &str, chunks: &[usize]) -> FileAnswer {
        FileAnswer {
            path: name.into(),
            relevance: 0.9,
            reason: "defines it; named by the task; best chunk x".into(),
            missing: vec!["gap".into()],
            chunks: chunks.iter().map(|&t| chunk(t)).collect(),
        }
    }

    fn answer(files: Vec<FileAnswer>) -> RetrieveAnswer {
        RetrieveAnswer {
            query: QueryEcho {
                task: "t".into(),
                keywords: vec![],
                include: vec![],
                exclude: vec![],
            },
            files,
            below_threshold: false,
            min_relevance: 0.7,
            cycles: vec![],
            next: NextRound::default(),
            budget: Budget::default(),
            index: IndexNote {
                files: 1,
                chunks: 1,
                freshness: "fresh".into(),
                tier: "full".into(),
            },
        }
    }

    /// One token a word: the `x`s of the code, and the frame's words.
    fn words(s: &str) -> usize {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .count()
    }

    fn fitted(files: Vec<FileAnswer>, limit: Option<usize>) -> RetrieveAnswer {
        let mut a = answer(files);
        let whole = |r: &Retrieve| json_tokens(&*r.answer, &words);
        let cost = |c: &ChunkAnswer| json_tokens(c, &words);
        fit(&mut Retrieve::new(&mut a), limit, &whole, &cost);
        a
    }

    fn kept(a: &RetrieveAnswer) -> Vec<Vec<usize>> {
        a.files
            .iter()
            .map(|f| f.chunks.iter().map(|c| c.tokens).collect())
            .collect()
    }

    #[test]
    fn the_whole_answer_stays_within_the_limit_best_chunk_of_every_file_first() {
        let files = || {
            vec![
                file("a", &[50, 50]),
                file("b", &[60]),
                file("c", &[500, 10]),
            ]
        };
        let open = fitted(files(), None);
        let bare = |fs: Vec<FileAnswer>| {
            fs.into_iter()
                .map(|f| FileAnswer {
                    chunks: vec![],
                    ..f
                })
                .collect::<Vec<_>>()
        };
        let frame = fitted(bare(files()), None).budget.tokens;
        let limit = frame + 200;
        let a = fitted(files(), Some(limit));
        // a#0 (50) and b#0 (60) first; c#0 (500) does not fit; a#1 (50) would pass the
        // room left; c#1 (10) still fits.
        assert_eq!(kept(&a), [vec![50], vec![60], vec![10]]);
        assert!(a.budget.tokens <= limit, "{:?}", a.budget);
        assert_eq!(
            a.budget.tokens,
            json_tokens(&a, &words),
            "the figure is the whole answer's"
        );
        assert_eq!(a.budget.code_tokens, 120);
        assert_eq!(a.budget.omitted_chunks, 2);
        assert_eq!(a.budget.omitted_files, 0);
        assert_eq!(open.budget.omitted_chunks, 0);
        assert_eq!(open.budget.code_tokens, 670);
    }

    #[test]
    fn a_frame_over_the_limit_sheds_its_last_files_but_keeps_the_first() {
        let many: Vec<FileAnswer> = (0..10).map(|i| file(&format!("f{i}"), &[40])).collect();
        let frame = fitted((0..10).map(|i| file(&format!("f{i}"), &[])).collect(), None);
        let limit = frame.budget.tokens / 2;
        let a = fitted(many, Some(limit));
        assert!(a.budget.tokens <= limit, "{:?}", a.budget);
        assert!(!a.files.is_empty() && a.files.len() < 10);
        assert_eq!(a.files[0].path, "f0");
        assert!(
            a.files.iter().all(|f| f.reason == "defines it"),
            "reasons shortened first"
        );
        assert_eq!(a.budget.omitted_files, 10 - a.files.len());
        let tiny = fitted(
            (0..3).map(|i| file(&format!("f{i}"), &[40])).collect(),
            Some(10),
        );
        assert_eq!(tiny.files.len(), 1, "one file is always kept");
        assert!(tiny.files[0].chunks.is_empty());
    }
}
