//! Every hand-set number of the query path, in one table: [`knobs!`] makes from it the
//! [`Params`] struct, its defaults, the override keys of `iret bench` (`hybrid@vw=0.7`,
//! [`Params::set`]) and the list [`KNOBS`] that `iret bench --knobs` prints. Defaults are
//! what the benchmarks supported when they were set; why each has its value, with the
//! figures, is in docs/journal/knobs.md.
use iret_index::bm25::Bm25Params;

/// How the two legs are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Reciprocal-rank fusion with constant k.
    Rrf(f32),
    /// Weighted sum of min-max normalised scores.
    MinMax,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    /// The field of [`Params`].
    pub name: &'static str,
    /// Its override key in `iret bench` (`MODE@key=value+key=value`).
    pub key: &'static str,
    /// Its default, as written in the table.
    pub default: &'static str,
    /// The stage it acts in: query, dispatch, evaluate, refine, loop.
    pub acts: &'static str,
    /// What it does.
    pub meaning: &'static str,
}

/// A value an override (a number) can set.
pub trait KnobValue: Sized {
    fn from_override(x: f32) -> Result<Self, String>;
}

impl KnobValue for f32 {
    fn from_override(x: f32) -> Result<Self, String> {
        if x.is_finite() {
            Ok(x)
        } else {
            Err(format!("{x} is not a finite number"))
        }
    }
}

impl KnobValue for usize {
    fn from_override(x: f32) -> Result<Self, String> {
        if x >= 0.0 && x.fract() == 0.0 && x.is_finite() {
            Ok(x as usize)
        } else {
            Err(format!("{x} is not a count (0, 1, 2, …)"))
        }
    }
}

impl KnobValue for bool {
    fn from_override(x: f32) -> Result<Self, String> {
        match x {
            0.0 => Ok(false),
            1.0 => Ok(true),
            _ => Err(format!("{x} is not 0 (off) or 1 (on)")),
        }
    }
}

/// The table: `field: type = default, "key", "stage", "meaning";` per knob.
macro_rules! knobs {
    ($( $name:ident : $ty:ty = $default:expr, $key:literal, $acts:literal, $meaning:literal; )*) => {
        /// The query path's knobs (one row each of [`KNOBS`]).
        #[derive(Debug, Clone)]
        pub struct Params {
            $( #[doc = $meaning] pub $name: $ty, )*
        }

        impl Default for Params {
            fn default() -> Self {
                Self { $( $name: $default, )* }
            }
        }

        /// Every knob, in the table's order.
        pub const KNOBS: &[Knob] = &[
            $( Knob {
                name: stringify!($name),
                key: $key,
                default: stringify!($default),
                acts: $acts,
                meaning: $meaning,
            }, )*
        ];

        impl Params {
            /// Sets the knob whose override key is `key` to `value`.
            pub fn set(&mut self, key: &str, value: f32) -> Result<(), String> {
                match key {
                    $( $key => {
                        self.$name = <$ty as KnobValue>::from_override(value)
                            .map_err(|e| format!("{key} ({}): {e}", stringify!($name)))?;
                    } )*
                    _ => {
                        let keys: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
                        return Err(format!(
                            "unknown override key {key:?} (keys: {}; `iret bench --knobs` explains each)",
                            keys.join(" ")
                        ));
                    }
                }
                Ok(())
            }
        }
    };
}

knobs! {
    // dispatch: the two legs and their fusion
    use_vectors: bool = true, "vec", "dispatch",
        "Search by vectors (0: keywords only, the `bm25` mode).";
    use_keywords: bool = true, "kw", "dispatch",
        "Search by keywords (0: vectors only, the `dense` mode).";
    vector_k: usize = 200, "vk", "dispatch",
        "Chunks the vector leg proposes.";
    keyword_k: usize = 200, "kk", "dispatch",
        "Chunks the keyword leg proposes.";
    rrf_k: f32 = 0.0, "rrf", "dispatch",
        "Fuse the legs by reciprocal rank with this constant k; 0 fuses by a weighted sum of min-max normalised scores.";
    vector_weight: f32 = 0.6, "vw", "dispatch",
        "Weight of the vector leg for natural-language tasks (the keyword leg weighs 1 - this).";
    symbol_vector_weight: f32 = 0.3, "svw", "dispatch",
        "Weight of the vector leg for symbol lookups.";
    static_vector_weight: f32 = 0.35, "stvw", "dispatch",
        "Weight of the vector leg when the index's vectors come from a static model (a token table, weaker than the transformer).";
    bm25_k1: f32 = 1.5, "k1", "dispatch",
        "BM25's term-frequency saturation.";
    bm25_b: f32 = 0.75, "b", "dispatch",
        "BM25's length normalisation.";
    served_local_share: f32 = 0.25, "lsh", "dispatch",
        "With a team store: past this share of the index missing from the store, the local graph answers alone.";
    // dispatch: ranking the files (`ranking/`)
    coherence: f32 = 0.25, "coh", "dispatch",
        "Weight of a file's 2nd and 3rd best chunks (per-file coherence).";
    define_boost: f32 = 0.3, "def", "dispatch",
        "Bonus when a file defines an identifier the query names.";
    name_boost: f32 = 0.25, "name", "dispatch",
        "Bonus for file-name words that match the query's content words.";
    abbreviation_weight: f32 = 0.5, "abw", "dispatch",
        "How much a file-name word said by the word it abbreviates (`utils.js` for \"utility\") counts toward `name_boost`, against 1 for the word itself; 0 switches it off.";
    abbreviation_terms: f32 = 0.5, "abt", "query",
        "Weight of the keyword terms added for the abbreviations code writes of the task's prose words (`config`, `cfg` for \"configuration\"); 0 adds none.";
    spelled_boost: f32 = 0.1, "spell", "dispatch",
        "Bonus for a file whose name of two or more words the task's prose spells out in order (\"JSON object\" → `JsonObject.java`).";
    path_boost: f32 = 0.1, "path", "dispatch",
        "Bonus for directory words that match.";
    noise_factor: f32 = 0.5, "noise", "dispatch",
        "Score factor for tests, examples, docs, declarations (.d.ts, .pyi), legacy and superseded code, unless the task asks for them.";
    mention_boost: f32 = 0.2, "men", "dispatch",
        "Bonus for a file the task names: a path, a traceback frame, a module path.";
    raise_boost: f32 = 0.0, "rai", "dispatch",
        "Bonus for the files of a quoted traceback by their nearness to where it was raised (this for the innermost frame, half for the next…); 0 switches it off.";
    message_boost: f32 = 0.2, "msg", "dispatch",
        "Bonus for a file holding, as literal text, a message the task quotes (where it is raised).";
    api_boost: f32 = 0.2, "api", "dispatch",
        "Bonus for a file defining names the task writes as code, weighed by how few files define each.";
    title_boost: f32 = 0.2, "tb", "dispatch",
        "Bonus for a file defining what a report's title names as code, weighed by how few files define each.";
    report_body_share: f32 = 0.0, "rbs", "dispatch",
        "In a report, the share of `define_boost` and `api_boost` a file gets when it defines nothing the title names (1 treats the body's names as the title's).";
    report_body_name_share: f32 = 0.5, "rbn", "dispatch",
        "In a report, how much a file-name word only its body says counts toward `name_boost`, against 1 for a word of its title.";
    history_messages: f32 = 0.1, "hm", "dispatch",
        "Bonus for a file whose commit messages (its newest 50) match the task by BM25, over the best file's; 0 switches it off.";
    history_similar: f32 = 0.15, "hs", "dispatch",
        "Bonus for the files changed by the commits whose messages are most similar to the task, each commit weighing its similarity times its recency; 0 switches it off.";
    history_commits: usize = 30, "hk", "dispatch",
        "How many of the most similar commits `history_similar` reads.";
    history_half_life_days: f32 = 1000.0, "hl", "dispatch",
        "A similar commit's weight halves every this many days before the newest commit (0: no decay).";
    history_fixes: f32 = 0.01, "hf", "dispatch",
        "Tie-breaker: how often a file was fixed, on a log scale over the most fixed file's; 0 switches it off.";
    history_refs: f32 = 0.0, "hr", "dispatch",
        "Bonus for the files changed by the commits naming an issue or pull request the task refers to by number; 0 switches it off.";
    history_join: f32 = 0.5, "hj", "dispatch",
        "A file the similar commits point at this strongly (of the best one's) joins the candidates even when neither leg finds it.";
    // query: how the task is embedded
    passages: usize = 1, "pas", "query",
        "A long task is embedded by passages of about one model window each, at most this many (1: its prefix only).";
    passage_weight: f32 = 0.5, "pw", "query",
        "Weight of each passage after the first when their vectors are joined.";
    // evaluate
    evaluate_top: usize = 20, "et", "evaluate",
        "Files evaluated per cycle.";
    similarity_ceiling: f32 = 0.55, "sc", "evaluate",
        "The cosine (task ↔ a file's best chunk) at which similarity says all it can (0.15 says nothing).";
    name_share_structure: f32 = 0.75, "nss", "evaluate",
        "How much of the structure a file name gives scales with the share of the name the task says; 0 gives any said name the full 0.8.";
    // refine
    alias_min_similarity: f32 = 0.45, "ams", "refine",
        "A codebase term must be at least this similar to a concept to stand for it.";
    aliases_per_gap: usize = 2, "apg", "refine",
        "Codebase terms learned per uncovered concept.";
    harvest: usize = 3, "hv", "refine",
        "Words harvested per cycle from the related files (their identifiers, folders and local imports).";
    harvest_max_df: f32 = 0.15, "hdf", "refine",
        "A harvested word occurs in at most this share of chunks.";
    focus_bonus: f32 = 0.15, "fcb", "refine",
        "Bonus for the import neighbours of related files, aimed at in the next cycle.";
    irrelevant: f32 = 0.2, "irr", "refine",
        "Files judged below this relevance are excluded for good.";
    report_aliases: bool = false, "rla", "refine",
        "Map a report's uncovered concepts to codebase terms as for a one-line task.";
    report_focus: bool = false, "rfo", "refine",
        "A report's later cycles search by keyword for what it is about (its key concepts, code names, learned terms) instead of every word of it.";
    feedback_weight: f32 = 0.0, "fb", "refine",
        "Pseudo-relevance feedback (Rocchio): the best chunks of the related files join the requery's vector at this weight; 0 switches it off.";
    feedback_files: usize = 3, "ffi", "refine",
        "Related files whose best chunks make the feedback vector.";
    follow_boost: f32 = 0.0, "fol", "refine",
        "Bonus for a file defining what the strongest hits call and the task speaks of; 0 switches following off.";
    follow_hits: usize = 2, "fh", "refine",
        "How many of the strongest files (≥ 0.7) have their best chunk's calls followed.";
    // loop
    strong: f32 = 0.7, "str", "loop",
        "The relevance that counts a file as strong: for the stop rule, and refine aims no bonus at a strong file.";
    enough: usize = 3, "eno", "loop",
        "The loop stops once this many files are strong and no critical gap remains.";
    related: f32 = 0.5, "rel", "loop",
        "The lower bound of the related band: refine reads its gaps, harvest, neighbours and feedback from the files at or above it, and an excluded file never ranks above one.";
    later_cycles_weight: f32 = 0.15, "lcw", "loop",
        "Weight of what cycles after the first add to a file's dispatch standing in the final order (the first weighs 1).";
    relevance_weight: f32 = 0.15, "rw", "loop",
        "Weight of the evaluated relevance in the final order, beside dispatch standing.";
    report_relevance_weight: f32 = 0.6, "rwl", "loop",
        "The same for a long task (a report), whose evaluation weighs the evidence it carries.";
}

impl Params {
    /// How the two legs are combined (`rrf_k`).
    pub fn fusion(&self) -> Fusion {
        if self.rrf_k > 0.0 {
            Fusion::Rrf(self.rrf_k)
        } else {
            Fusion::MinMax
        }
    }

    /// BM25's parameters (`bm25_k1`, `bm25_b`).
    pub fn bm25(&self) -> Bm25Params {
        Bm25Params {
            k1: self.bm25_k1,
            b: self.bm25_b,
        }
    }

    /// The table as Markdown: name, override key, default, stage, meaning.
    pub fn table() -> String {
        let mut out = String::from(
            "| knob | key | default | acts in | meaning |\n| --- | --- | --- | --- | --- |\n",
        );
        for k in KNOBS {
            out.push_str(&format!(
                "| `{}` | `{}` | {} | {} | {} |\n",
                k.name, k.key, k.default, k.acts, k.meaning
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_key_and_name_is_unique() {
        let keys: HashSet<&str> = KNOBS.iter().map(|k| k.key).collect();
        let names: HashSet<&str> = KNOBS.iter().map(|k| k.name).collect();
        assert_eq!(keys.len(), KNOBS.len());
        assert_eq!(names.len(), KNOBS.len());
    }

    #[test]
    fn an_override_sets_its_field_and_a_wrong_one_is_refused() {
        let mut p = Params::default();
        p.set("vw", 0.7).unwrap();
        p.set("hk", 12.0).unwrap();
        p.set("rla", 1.0).unwrap();
        p.set("rrf", 60.0).unwrap();
        assert_eq!(p.vector_weight, 0.7);
        assert_eq!(p.history_commits, 12);
        assert!(p.report_aliases);
        assert_eq!(p.fusion(), Fusion::Rrf(60.0));
        assert_eq!(Params::default().fusion(), Fusion::MinMax);
        let unknown = p.set("nope", 1.0).unwrap_err();
        assert!(unknown.contains("unknown override key") && unknown.contains("vw"));
        assert!(p.set("hk", 2.5).unwrap_err().contains("not a count"));
        assert!(p.set("rla", 0.5).unwrap_err().contains("0 (off) or 1 (on)"));
        assert!(p.set("vw", f32::NAN).is_err());
    }

    #[test]
    fn the_table_lists_every_knob_with_its_default() {
        let table = Params::table();
        assert_eq!(table.lines().count(), KNOBS.len() + 2);
        assert!(table.contains("| `vector_weight` | `vw` | 0.6 | dispatch |"));
    }
}
