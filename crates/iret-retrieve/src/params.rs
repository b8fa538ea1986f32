//! Ranking knobs. Defaults are what the dev benchmark supports (see docs/journal/benchmarks.md); every
//! signal can be switched off for the ablation in `iret bench`.
use iret_index::bm25::Bm25Params;

/// How the two legs are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal-rank fusion with constant k.
    Rrf(f32),
    /// Weighted sum of min-max normalised scores.
    MinMax,
}

#[derive(Debug, Clone)]
pub struct Params {
    pub vector_k: usize,
    pub keyword_k: usize,
    pub fusion: Fusion,
    /// Weight of the vector leg for natural-language queries (keyword leg: 1 - this).
    pub vector_weight: f32,
    /// Weight of the vector leg for symbol lookups.
    pub symbol_vector_weight: f32,
    /// Weight of the vector leg when the index's vectors come from a static model (a
    /// token table: weaker than the transformer's). Static-only semble dev, hybrid: 0.7943
    /// at 0.6, 0.8123 at 0.35, 0.8091 at 0.2 (docs/journal/benchmarks.md, session 8).
    pub static_vector_weight: f32,
    pub use_vectors: bool,
    pub use_keywords: bool,
    pub bm25: Bm25Params,
    /// Weight of a file's 2nd and 3rd best chunks (per-file coherence).
    pub coherence: f32,
    /// Bonus when a file defines an identifier the query names.
    pub define_boost: f32,
    /// Bonus for file-name words that match the query's content words.
    pub name_boost: f32,
    /// How much a file-name word said by the word it abbreviates counts toward
    /// `name_boost` (`utils.js` for "utility", `config.py` for "configuration";
    /// `ranking::names`), against 1 for the word itself; 0 switches it off. semble dev
    /// iterative 0.8514 at 0, 0.8526 at 0.5, 0.8534 at 1 (bash-it's `dirs` plugin then
    /// outranks `jump` for "bookmarking directories": an abbreviation may stand for
    /// other words, so it counts half); vocab-dev gap 0.5239 → 0.5253 (docs/journal/benchmarks.md,
    /// session 14).
    pub abbreviation_weight: f32,
    /// Weight of the keyword terms added for the abbreviations code writes of the
    /// task's prose words (`config`, `cfg` for "configuration"; `crate::abbreviations`;
    /// not for symbol lookups); 0 adds none. semble dev 0.8507 / 0.8526 at 0, 0.8521 /
    /// 0.8536 at 0.3, 0.8522 / 0.8546 at 0.5; vocab-dev gap equal (docs/journal/benchmarks.md,
    /// session 14).
    pub abbreviation_terms: f32,
    /// Bonus for a file whose name of two or more words the task's prose spells out in
    /// order ("JSON object" → `JsonObject.java`; `ranking::names::spelled`; names written
    /// as code are the definitions signal's). semble dev 0.8528 / 0.8555 at 0, 0.8543 /
    /// 0.8569 at 0.1 (kotlin +0.018, cpp +0.007, java +0.002, no language lower), 0.8528
    /// / 0.8555 at 0.2 (bash-it −0.026); vocab-dev equal (docs/journal/benchmarks.md, session 15).
    pub spelled_boost: f32,
    /// Evaluate: how much of the structure a file name gives (0.8 when it says one of the
    /// task's words) scales with the share of the name the task says: `Resolver.cs` all of
    /// it, `DynamicObjectResolver.cs` a third for "typed objects" (`evaluate::structure`);
    /// 0 gives any said name the full 0.8. semble dev iterative 0.8586 at 0, 0.8594 at
    /// 0.75 (csharp +0.010, kotlin +0.010, rust +0.008; c −0.012, cpp −0.004), 0.8588 at
    /// 1; vocab-dev gap 0.5286 → 0.5328; SWE-bench dev (73 outside django) equal
    /// (docs/journal/benchmarks.md, session 16).
    pub name_share_structure: f32,
    /// Bonus for directory words that match.
    pub path_boost: f32,
    /// Score factor for tests, examples, docs, declarations (.d.ts, .pyi), legacy/compat code.
    /// 0.5 (was 0.7): semble dev hybrid 0.8363 → 0.8397, iterative 0.8402 → 0.8424, no
    /// language lower by more than 0.001; SWE-bench dev (67 outside django and astropy)
    /// iterative Acc@5 89.6 → 91.0; vocab-dev gap 0.4926 → 0.4984. 0.4 and 0.6 measure
    /// within an instance of it (docs/journal/benchmarks.md, session 8).
    pub noise_factor: f32,
    /// Bonus for a file the task names: a path, a traceback frame, a module path
    /// (`ranking::evidence::mentioned`).
    pub mention_boost: f32,
    /// Bonus for the files of a traceback the task quotes by their nearness to where it
    /// was raised: this for its innermost frame in the codebase, half for the next, a
    /// third… (`ranking::evidence::raised`), beside `mention_boost`, which every frame
    /// gets. Stack-trace analysis in bug localisation (Schröter et al. 2010; Wong et al.
    /// 2014, BRTracer): the frames nearest the raise hold the fix most often.
    pub raise_boost: f32,
    /// Bonus for a file holding, as literal text, a message the task quotes (an error's
    /// text): where it is raised (`ranking::evidence::raises`).
    pub message_boost: f32,
    /// Bonus for a file defining names the task writes as code (backticks, calls,
    /// qualified names, code blocks), weighed by how few files define each
    /// (`ranking::evidence::implements`).
    pub api_boost: f32,
    /// Bonus for a file defining what a report's title names as code (`xr.where` →
    /// the file `xarray/__init__.py` re-exports `where` from; `ds.Coarsen.construct` →
    /// the file of class `Coarsen`), weighed by how few files define each
    /// (`ranking::evidence::titled`, `query::title`): the title says what the report is
    /// about, its example code uses whatever it needs. SWE-bench dev quick subset (50),
    /// iterative Acc@1 50.0 at 0, 54.0 at 0.2, 54.0 at 0.35 (docs/journal/benchmarks.md, session 20).
    pub title_boost: f32,
    /// In a report, the share of `define_boost` and `api_boost` a file gets when it
    /// defines nothing the title names: the names of a report's body are mostly its
    /// example's (`xr.DataArray(...)` in every xarray report), not its subject. 1 treats
    /// them as the title's. SWE-bench dev (107), iterative with `report_body_name_share`
    /// 0.5: Acc@1 57.0 at 0.5, 58.9 at 0; with it at 1: 57.0 at 0, 53.3 at 1 (title
    /// boost alone; without it 51.4) (docs/journal/benchmarks.md, session 20).
    pub report_body_share: f32,
    /// In a report, how much a file-name word only its body says counts toward
    /// `name_boost`, against 1 for a word of its title (`dataset.py` is said by every
    /// xarray report). SWE-bench dev (107), iterative, `report_body_share` 0: Acc@1 /
    /// NDCG@10 57.0 / 0.7902 at 1, 58.9 / 0.7976 at 0.5, 57.9 / 0.7972 at 0.25, 56.1 /
    /// 0.7899 at 0 (docs/journal/benchmarks.md, session 20).
    pub report_body_name_share: f32,
    /// A long task (a report) is embedded by passages of about one model window each,
    /// at most this many (1: its prefix only, what the model's window holds).
    pub passages: usize,
    /// Weight of each passage after the first when their vectors are joined.
    pub passage_weight: f32,
    /// Refine: bonus for a file defining what the strongest hits call and the task
    /// speaks of (`follow`); 0 switches following off.
    pub follow_boost: f32,
    /// Refine: how many of the strongest files (≥ 0.7) have their best chunk's calls
    /// followed (with `follow_boost` > 0).
    pub follow_hits: usize,
    /// Refine: map a report's uncovered concepts to codebase terms as for a one-line
    /// task. A report names its code (names, messages, paths); its uncovered concepts
    /// are mostly prose ("suddenly" → `unexpectedly`), and each probe is an embedding.
    /// Off: on 107 SWE-bench dev issues, Acc@1–10 equal, NDCG@10 0.7574 → 0.7596
    /// (docs/journal/benchmarks.md, session 7).
    pub report_aliases: bool,
    /// Evaluate: the cosine (task ↔ a file's best chunk) at which similarity says all it
    /// can (0.15 says nothing). 0.55; SWE-bench dev (73 outside django) iterative Acc@5
    /// 91.8 at 0.55, 90.4 at 0.7 and at 0.85 (docs/journal/benchmarks.md, session 9).
    pub similarity_ceiling: f32,
    /// Refine, a long task: later cycles search by keyword for what the report is about
    /// (its key concepts, the names it writes as code, the terms learned) instead of
    /// every word of it (`refine::focus_keywords`). Query reduction for verbose queries.
    pub report_focus: bool,
    /// Refine: pseudo-relevance feedback in vector space (Rocchio). The requery's vector
    /// joins, at this weight, the best chunks of the files judged related (≥ 0.5, at most
    /// three); 0 switches it off (`refine::feedback_vector`).
    pub feedback_weight: f32,
    /// Bonus for a file whose commit messages (its newest 50) match the task by BM25,
    /// over the best file's (`ranking::history`, `crate::history`); 0 switches it off.
    pub history_messages: f32,
    /// Bonus for the files changed by the commits whose messages are most similar to the
    /// task (BM25), each commit weighing its similarity times its recency, shared among
    /// its files, over the best file's; 0 switches it off.
    pub history_similar: f32,
    /// How many of the most similar commits `history_similar` reads.
    pub history_commits: usize,
    /// Recency of a similar commit: its weight halves every this many days before the
    /// newest commit (0: no decay).
    pub history_half_life_days: f32,
    /// Tie-breaker: how often a file was fixed (commits saying "fix" or "bug"), on a log
    /// scale over the most fixed file's; 0 switches it off.
    pub history_fixes: f32,
    /// Bonus for the files changed by the commits whose messages name an issue or pull
    /// request the task refers to by number (`#6461 had unintended consequences` → the
    /// commit `… (#6461)`), shared among each commit's files, over the best file's; 0
    /// switches it off. Off by default: on SWE-bench dev (107; 14 refer to a number, 5
    /// of those name one a commit names) iterative Acc@1 / Acc@5 / NDCG@10 58.9 / 85.0 /
    /// 0.7976 at 0, 57.9 / 85.0 / 0.7971 at 0.2, 57.9 / 86.0 / 0.7977 at 0.3
    /// (sphinx-7454 16 → 5, sphinx-9658 1 → 2) (docs/journal/benchmarks.md, session 20).
    pub history_refs: f32,
    /// A file the similar commits point at this strongly (of the best one's) joins the
    /// candidates even when neither leg finds it.
    pub history_join: f32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            vector_k: 200,
            keyword_k: 200,
            fusion: Fusion::MinMax,
            vector_weight: 0.6,
            symbol_vector_weight: 0.3,
            static_vector_weight: 0.35,
            use_vectors: true,
            use_keywords: true,
            bm25: Bm25Params { k1: 1.5, b: 0.75 },
            coherence: 0.25,
            define_boost: 0.3,
            name_boost: 0.25,
            abbreviation_weight: 0.5,
            abbreviation_terms: 0.5,
            spelled_boost: 0.1,
            path_boost: 0.1,
            name_share_structure: 0.75,
            noise_factor: 0.5,
            mention_boost: 0.2,
            raise_boost: 0.0,
            message_boost: 0.2,
            api_boost: 0.2,
            title_boost: 0.2,
            report_body_share: 0.0,
            report_body_name_share: 0.5,
            passages: 1,
            passage_weight: 0.5,
            follow_boost: 0.0,
            follow_hits: 2,
            report_aliases: false,
            similarity_ceiling: 0.55,
            report_focus: false,
            feedback_weight: 0.0,
            history_messages: 0.1,
            history_similar: 0.15,
            history_commits: 30,
            history_half_life_days: 1000.0,
            history_fixes: 0.01,
            history_refs: 0.0,
            history_join: 0.5,
        }
    }
}
