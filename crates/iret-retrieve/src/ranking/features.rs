//! Every signal a file is ranked by, as a named feature at unit weight: what the rules
//! ([`super::rules`]) weigh by hand and what a learned ranker reads, computed by the same
//! code for both, and exported by `iret bench --features` one row per candidate.
//!
//! Dispatch fills the signal features of each file it ranks ([`super::Signals::rank`]);
//! the loop adds the file's standing across cycles and evaluate's parts
//! ([`crate::r#loop`]), and the task's own facts. A feature a candidate does not have
//! (a file never evaluated has no relevance) is [`MISSING`].
use serde::Serialize;

/// A feature the candidate has no value for (LightGBM reads NaN as missing).
pub const MISSING: f32 = f32::NAN;

macro_rules! features {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// One candidate file's features, named (see the module's documentation).
        #[derive(Debug, Clone, Copy, Serialize)]
        pub struct Features {
            $($(#[doc = $doc])* pub $name: f32,)*
        }

        impl Default for Features {
            fn default() -> Self {
                Self { $($name: 0.0,)* }
            }
        }

        impl Features {
            /// The features' names, in [`Features::row`]'s order: the columns of the
            /// exported table and the learned ranker's inputs.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name),)*];

            /// The values in [`Features::NAMES`]' order.
            pub fn row(&self) -> Vec<f32> {
                vec![$(self.$name,)*]
            }
        }
    };
}

features! {
    // Dispatch, cycle 1: the legs.
    /// Cosine of the file's best chunk to the query (of the chunks the legs found).
    cos_best,
    /// `cos_best` over the best candidate's (the loop fills it in).
    cos_rel,
    /// Mean cosine of the file's best three chunks.
    cos_top3,
    /// BM25 of the file's best keyword chunk, over the query's best chunk's.
    bm25_best,
    /// The best chunk's fused score (0: the file joined by evidence alone).
    fused_best,
    /// How many of the file's chunks the legs found (its best three at most).
    chunk_hits,
    // Dispatch: the ranking signals at unit weight (`Params` weighs them in the rules).
    /// The best chunk plus the coherence share of the next two.
    coherence,
    /// The file defines an identifier the task names (1; 1.5 when named after it).
    defines,
    /// How much defining counts (1; `report_body_share` in a report for a file its
    /// title does not name).
    body_share,
    /// Share of the file name's words the task says.
    name_share,
    /// The task spells the file's name out (0/1).
    spelled,
    /// The file's folders say the task's words (0, 0.5, 1).
    path_words,
    /// The task names the file.
    mentioned,
    /// A traceback the task quotes was raised in or near the file.
    raised,
    /// The file holds a message the task quotes.
    raises,
    /// The file defines names the task writes as code, rare ones counting more.
    implements,
    /// The file defines what a report's title names.
    titled,
    /// The task against the file's commit messages.
    history_messages,
    /// The file was changed by the past commits most similar to the task.
    history_similar,
    /// The file was changed by commits naming an issue the task cites.
    history_refs,
    /// How often the file was fixed.
    history_fixes,
    /// Commits that touched the file (ln(1 + n); 0 without history).
    history_commits,
    /// Days since the file last changed, before the newest commit (ln(1 + days);
    /// MISSING without history or a commit touching it).
    history_age,
    /// The file is a test, example, legacy or superseded one the task does not ask for (0/1).
    noise,
    /// The file's path is a test's, an example's, a doc's or a declaration's (0/1),
    /// whatever the task asks.
    noise_path,
    /// Refine's aim at the file (its bonus; 0 in cycle 1).
    focus,
    /// The hand-set rules' dispatch score.
    rules_score,
    // The loop: standing across cycles.
    /// 1-based rank in cycle 1's dispatch (MISSING: not in it).
    dispatch_rank,
    /// Cycle-1 score over the best's.
    standing,
    /// What later cycles' refined queries add above the cycle-1 standing.
    later_gain,
    /// Evaluated in some cycle (0/1).
    evaluated,
    /// Evaluate's relevance by the rules (MISSING: not evaluated).
    relevance,
    /// Evaluate's absolute similarity to the original task.
    eval_similarity,
    /// Evaluate's coverage of the task's concepts.
    eval_coverage,
    /// Evaluate's structure (defines, names, aim, folders).
    eval_structure,
    /// 1-based rank in the rules' final order.
    rules_rank,
    // The file.
    /// Chunks in the file (ln(1 + n)).
    file_chunks,
    /// Folders above the file.
    path_depth,
    /// The file's language, as a code (`ranking::features::language`).
    language,
    /// Specific modules the file imports.
    imports_out,
    /// Files importing the file's module (0 for a hub's).
    imports_in,
    // The task.
    /// The task is a report (a title, then a body).
    task_report,
    /// The task's words (ln(1 + n)).
    task_words,
    /// Identifiers the task writes as code.
    task_identifiers,
    /// The task is a symbol lookup.
    task_symbol,
}

/// A small code per language family, by the file's extension (0: other). Trees split on
/// it; the codes are stable across versions of the ranker.
pub fn language(path: &str) -> f32 {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let code = match ext.as_deref() {
        Some("py" | "pyi") => 1,
        Some("js" | "jsx" | "mjs" | "cjs") => 2,
        Some("ts" | "tsx" | "mts" | "cts") => 3,
        Some("go") => 4,
        Some("rs") => 5,
        Some("java") => 6,
        Some("kt" | "kts") => 7,
        Some("scala" | "sc") => 8,
        Some("rb") => 9,
        Some("php") => 10,
        Some("c" | "h") => 11,
        Some("cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx") => 12,
        Some("cs") => 13,
        Some("swift") => 14,
        Some("ex" | "exs") => 15,
        Some("hs") => 16,
        Some("lua") => 17,
        Some("dart") => 18,
        Some("zig") => 19,
        Some("ml" | "mli") => 20,
        Some("jl") => 21,
        Some("r") => 22,
        Some("sh" | "bash" | "zsh") => 23,
        Some("m" | "mm") => 24,
        _ => 0,
    };
    code as f32
}

/// Folders above `path`.
pub fn path_depth(path: &str) -> f32 {
    path.matches('/').count() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_row_agree_in_order_and_length() {
        let f = Features {
            cos_best: 0.5,
            task_symbol: 1.0,
            ..Features::default()
        };
        let row = f.row();
        assert_eq!(row.len(), Features::NAMES.len());
        assert_eq!(Features::NAMES[0], "cos_best");
        assert_eq!(row[0], 0.5);
        assert_eq!(*Features::NAMES.last().unwrap(), "task_symbol");
        assert_eq!(*row.last().unwrap(), 1.0);
    }

    #[test]
    fn languages_have_codes_and_depth_counts_folders() {
        assert_eq!(language("a/b.py"), 1.0);
        assert_eq!(language("x.TSX"), 3.0);
        assert_eq!(language("Makefile"), 0.0);
        assert_eq!(path_depth("a/b/c.rs"), 2.0);
        assert_eq!(path_depth("c.rs"), 0.0);
    }
}
