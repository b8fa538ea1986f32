//! Evaluate, refine and the stop rule, deterministically: a FakeEmbedder in which
//! "throttle" means "rate" and "limiting", over a small generated repository.
use iret_embed::FakeEmbedder;
use iret_index::Index;
use iret_retrieve::{run, Corpus, Options, Outcome, Params, Query, Scope};

/// Build options with an embedding cache of this index's own (tests do not share one).
fn opts(index_dir: &std::path::Path) -> iret_index::BuildOptions {
    iret_index::BuildOptions {
        embedding_cache: Some(index_dir.join("embedding-cache")),
        ..Default::default()
    }
}

fn write(root: &std::path::Path, path: &str, text: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn embedder() -> FakeEmbedder {
    FakeEmbedder::new(256).with_concepts(&[&["rate", "throttle", "limiting"]])
}

/// Indexes the folder `src` with the fake embedder: the index folder and the corpus.
fn indexed(src: &std::path::Path) -> (tempfile::TempDir, Corpus) {
    let idx = tempfile::tempdir().unwrap();
    iret_index::build(src, idx.path(), &embedder(), &opts(idx.path())).unwrap();
    let corpus = Corpus::new(Index::open(idx.path(), Some("fake")).unwrap());
    (idx, corpus)
}

/// One cycle of the loop on `task` (dispatch and evaluate, no refinement).
fn single_shot(corpus: &Corpus, task: &str) -> Outcome {
    run(
        corpus,
        &embedder(),
        &Query::new(task),
        &Options {
            cycles: 1,
            ..Options::default()
        },
    )
    .unwrap()
}

fn repo() -> (tempfile::TempDir, tempfile::TempDir, Corpus) {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    write(r, "src/net/throttle.ts", "export function throttle(maxRequests: number) {\n  return (req, res, next) => next();\n}\n");
    write(r, "src/net/server.ts", "import { throttle } from './throttle';\nexport function startServer(port: number) {\n  use(throttle(10));\n  listen(port);\n}\n");
    write(r, "src/billing/invoice.ts", "export function invoiceTotal(lines: Line[]) {\n  return lines.reduce((a, l) => a + l.amount, 0);\n}\n");
    write(
        r,
        "src/billing/tax.ts",
        "export function taxFor(amount: number) {\n  return amount * 0.2;\n}\n",
    );
    write(
        r,
        "src/util/format.ts",
        "export function formatDate(d: Date) {\n  return d.toISOString();\n}\n",
    );
    write(
        r,
        "src/parse/TokenParser.ts",
        "export class TokenParser {\n  parse(input: string) { return input.split(' '); }\n}\n",
    );
    let (idx, index) = indexed(r);
    (src, idx, index)
}

#[test]
fn evaluate_scores_the_defining_file_high_and_unrelated_files_low() {
    let (_s, _i, index) = repo();
    let out = single_shot(&index, "TokenParser");
    let best = &out.evaluated[0];
    assert!(best.path.ends_with("TokenParser.ts"), "{:?}", out.evaluated);
    assert!(
        best.relevance >= 0.8,
        "defines the named class: {}",
        best.relevance
    );
    assert!(
        best.reason.contains("defines tokenparser"),
        "{}",
        best.reason
    );
    for e in &out.evaluated[1..] {
        assert!(e.relevance < 0.5, "{} scored {}", e.path, e.relevance);
    }
}

#[test]
fn refine_learns_the_codebase_word_for_a_gap_and_excludes_irrelevant_files() {
    let (_s, _i, index) = repo();
    let opts = Options {
        cycles: 3,
        ..Options::default()
    };
    let out = run(
        &index,
        &embedder(),
        &Query::new("rate limiting for the api"),
        &opts,
    )
    .unwrap();
    let first = out.cycles[0].refinement.as_ref().expect("cycle 1 refines");
    let learned: Vec<&iret_retrieve::Term> = first.learned.iter().flat_map(|(_, t)| t).collect();
    assert!(
        learned.iter().any(|t| t.stem.starts_with("throttl")),
        "learned {learned:?}"
    );
    // Said in the codebase's words, with the file they come from.
    let throttle = learned
        .iter()
        .find(|t| t.stem.starts_with("throttl"))
        .unwrap();
    assert_eq!(throttle.word, "throttle", "{throttle:?}");
    assert!(throttle.file.starts_with("src/net/"), "{throttle:?}");
    for t in first.added_words() {
        assert!(!t.file.is_empty(), "{t:?} has no source file");
        assert!(
            index.index.chunks.iter().any(|c| c.text.contains(&t.word)),
            "{t:?} is not a word of the code"
        );
    }
    assert!(out
        .concepts
        .aliases
        .values()
        .flatten()
        .any(|t| t.starts_with("throttl")));
    // What a reader sees is the code's word, not the stem searched for.
    let second = &out.cycles[1].terms;
    assert!(second.iter().any(|t| t == "throttle"), "{second:?}");
    assert!(!second.iter().any(|t| t == "throttl"), "{second:?}");
    let reasons: Vec<&str> = out
        .evaluated
        .iter()
        .filter(|e| e.path.ends_with("throttle.ts"))
        .map(|e| e.reason.as_str())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("file name says throttle")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .flat_map(|r| r.split(|c: char| !c.is_alphanumeric()))
            .all(|w| w != "throttl"),
        "{reasons:?}"
    );
    assert!(
        out.relevant(0.7)
            .iter()
            .any(|e| e.path.ends_with("throttle.ts")),
        "{:?}",
        out.evaluated
    );
    // Whatever cycle 1 excluded never comes back: not returned, not re-evaluated, and
    // ranked after every file that was not excluded.
    let first_excluded = out
        .evaluated
        .iter()
        .position(|e| first.excluded.contains(&e.path))
        .unwrap_or(out.evaluated.len());
    assert!(out.evaluated[first_excluded..]
        .iter()
        .all(|e| first.excluded.contains(&e.path) || e.relevance < 0.2));
    for excluded in &first.excluded {
        assert!(
            out.relevant(0.2).iter().all(|e| &e.path != excluded),
            "{excluded} came back"
        );
        for c in &out.cycles[1..] {
            assert!(
                c.scores.iter().all(|(p, _)| p != excluded),
                "{excluded} re-evaluated"
            );
        }
    }
}

#[test]
fn the_loop_stops_early_with_enough_context_and_never_exceeds_the_cycle_limit() {
    let (_s, _i, index) = repo();
    let easy = Options {
        params: Params {
            enough: 1,
            ..Params::default()
        },
        ..Options::default()
    };
    let out = run(&index, &embedder(), &Query::new("TokenParser"), &easy).unwrap();
    assert_eq!(out.cycles.len(), 1);
    assert_eq!(out.cycles[0].stop.as_deref(), Some("enough context"));

    let hard = Options {
        params: Params {
            enough: 100,
            ..Params::default()
        },
        cycles: 2,
        ..Options::default()
    };
    let out = run(
        &index,
        &embedder(),
        &Query::new("rate limiting for the api"),
        &hard,
    )
    .unwrap();
    assert!(out.cycles.len() <= 2);
    assert!(out.cycles.last().unwrap().stop.is_some());
}

#[test]
fn a_symbol_lookup_answered_in_cycle_one_stops_there() {
    let (_s, _i, index) = repo();
    // `enough` out of reach: only the symbol rule can stop the loop before its limit.
    let opts = Options {
        params: Params {
            enough: 100,
            ..Params::default()
        },
        ..Options::default()
    };
    let out = run(&index, &embedder(), &Query::new("TokenParser"), &opts).unwrap();
    assert_eq!(out.cycles.len(), 1, "{:?}", out.cycles);
    assert_eq!(out.cycles[0].stop.as_deref(), Some("symbol found"));
    assert!(out.evaluated[0].path.ends_with("TokenParser.ts"));
    // A task in words is not a symbol lookup: it goes on.
    let out = run(
        &index,
        &embedder(),
        &Query::new("rate limiting for the api"),
        &opts,
    )
    .unwrap();
    assert!(out.cycles.len() > 1, "{:?}", out.cycles);
}

#[test]
fn scope_globs() {
    let s = Scope::new(&["src/net/**".into()], &[]).unwrap();
    assert!(s.allows("src/net/throttle.ts") && !s.allows("src/billing/tax.ts"));
    let s = Scope::new(&[], &["billing".into(), "*.md".into()]).unwrap();
    assert!(
        !s.allows("src/billing/tax.ts") && !s.allows("README.md") && s.allows("src/net/server.ts")
    );
    assert!(Scope::new(&["[".into()], &[]).is_err());
}

#[test]
fn include_scopes_the_loop_before_ranking() {
    let (_s, _i, index) = repo();
    let q = Query {
        task: "TokenParser".into(),
        include: vec!["src/billing/**".into()],
        ..Default::default()
    };
    let out = run(&index, &embedder(), &q, &Options::default()).unwrap();
    assert!(
        out.evaluated
            .iter()
            .all(|e| e.path.starts_with("src/billing/")),
        "{:?}",
        out.evaluated
    );
}

#[test]
fn a_qualified_name_is_answered_by_the_chunk_defining_its_last_part() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    let body = "    x = 1\n".repeat(300);
    write(
        r,
        "lib/sinatra/base.rb",
        &format!("module Sinatra\n  class Request\n    def accept\n{body}    end\n  end\n\n  module Helpers\n    def status(value)\n{body}    end\n  end\nend\n"),
    );
    write(r, "lib/other.rb", "module Other\n  def run\n  end\nend\n");
    let (_idx, index) = indexed(r);
    let out = single_shot(&index, "Sinatra::Helpers");
    let best = &out.evaluated[0];
    assert_eq!(best.path, "lib/sinatra/base.rb");
    let first = index.index.chunks.get(best.chunks[0].chunk as usize);
    assert!(
        first.defines.contains(&"Helpers"),
        "the Helpers chunk leads, not the Sinatra one: {first:?}"
    );
}

#[test]
fn an_older_version_folder_yields_to_the_newest_unless_the_task_names_it() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    // The same schema class in v3/ and v4/ (zod's layout); api/v1 alone has no sibling.
    let schema =
        "export class StringSchema {\n  parse(input: unknown) { return String(input); }\n}\n";
    write(r, "src/v3/string.ts", schema);
    write(r, "src/v4/string.ts", schema);
    write(
        r,
        "src/api/v1/routes.ts",
        "export function routes() { return []; }\n",
    );
    let (_idx, index) = indexed(r);
    let order = |task: &str| -> Vec<String> {
        let state =
            iret_retrieve::initial_state(&Query::new(task), &embedder(), &Default::default())
                .unwrap();
        iret_retrieve::dispatch(&index, &state, &Default::default())
            .unwrap()
            .iter()
            .map(|h| index.index.files[h.file as usize].path.clone())
            .collect()
    };
    let plain = order("StringSchema parse");
    assert_eq!(plain[0], "src/v4/string.ts", "{plain:?}");
    assert!(
        plain.iter().position(|p| p == "src/v3/string.ts") > Some(0),
        "{plain:?}"
    );
    let named = order("StringSchema parse in v3");
    let (v3, v4) = (
        named.iter().position(|p| p == "src/v3/string.ts").unwrap(),
        named.iter().position(|p| p == "src/v4/string.ts").unwrap(),
    );
    assert!(v3 < v4, "the task names v3: {named:?}");
    assert_eq!(index.facts.older_versions(&[]), ["src/v3/"]);
}

/// Refine follows what the strongest hit calls, when the task speaks of it and few files
/// define it: the method the report names calls the compiler, where the fix is.
#[test]
fn refine_follows_the_definitions_a_strong_hit_calls() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    write(
        r,
        "db/query.py",
        "class QuerySet:\n    def union(self, other):\n        return self.query.combine_ordering(other)\n",
    );
    write(
        r,
        "db/sql/compiler.py",
        "def combine_ordering(a, b):\n    return a + b\n",
    );
    write(r, "db/util.py", "def len_of(x):\n    return 0\n");
    let (_idx, corpus) = indexed(r);
    let file = |p: &str| corpus.index.files.iter().position(|f| f.path == p).unwrap() as u32;
    let query_py = file("db/query.py");
    let first = corpus.index.files[query_py as usize].first_chunk;
    let strong = |relevance: f32| iret_retrieve::Evaluation {
        file: query_py,
        path: "db/query.py".into(),
        relevance,
        reason: String::new(),
        missing: Vec::new(),
        chunks: vec![iret_retrieve::ChunkHit {
            chunk: first,
            score: 1.0,
            cosine: 0.5,
            bm25: 1.0,
            leg: iret_retrieve::Leg::Both,
        }],
        cycle: 1,
        features: Default::default(),
    };
    let hits = iret_retrieve::Params::default().follow_hits;
    let spoken: std::collections::HashSet<&str> = ["union", "order"].into_iter().collect();
    let followed =
        iret_retrieve::follow::definitions_called(&corpus, &[strong(0.9)], &spoken, hits);
    assert_eq!(followed, [file("db/sql/compiler.py")]);
    // A weak hit is not followed; nor is a callee the task does not speak of.
    assert!(
        iret_retrieve::follow::definitions_called(&corpus, &[strong(0.5)], &spoken, hits)
            .is_empty()
    );
    let silent: std::collections::HashSet<&str> = ["union"].into_iter().collect();
    assert!(
        iret_retrieve::follow::definitions_called(&corpus, &[strong(0.9)], &silent, hits)
            .is_empty()
    );
}

/// The files the task's evidence says raise what it quotes (`Pointers::raises`).
fn raisers(corpus: &Corpus, task: &str) -> Vec<String> {
    let mut state =
        iret_retrieve::initial_state(&Query::new(task), &embedder(), &Default::default()).unwrap();
    state.point(corpus, &Default::default());
    state
        .pointers
        .raises
        .keys()
        .map(|&f| corpus.index.files[f as usize].path.clone())
        .collect()
}

/// A quoted warning is the literal with a value formatted in: the file holding the
/// literal's longest part is the one that raises it.
#[test]
fn a_quoted_message_points_at_the_file_holding_its_literal() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    write(
        r,
        "domains/std.py",
        "def get_fignumber(self, figtype, labelid):\n    logger.warning(__('no number is assigned for %s: %s'), figtype, labelid)\n",
    );
    write(
        r,
        "builders/latex.py",
        "def assemble(self):\n    # numbers are assigned for every table\n    return self.number\n",
    );
    let (_idx, corpus) = indexed(r);
    let task = "v3.3 upgrade started generating \"WARNING: no number is assigned for table\" warnings\nWe've updated to Sphinx 3.3 in our documentation, and suddenly the following warning started popping up in our builds when we build either singlehtml or latex:\n\n`WARNING: no number is assigned for table:`\n\nI looked through the changelog but it didn't seem like there was anything related to numref that was changed.";
    let raisers = raisers(&corpus, task);
    assert_eq!(raisers, ["domains/std.py"]);
}

/// A quoted traceback weighs its frames in the codebase by their rank from where it was
/// raised; frames outside the codebase (the user's script, libraries) do not count.
#[test]
fn a_traceback_points_hardest_at_where_it_was_raised() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    write(
        r,
        "lib/plot/artist.py",
        "def draw(artist):\n    return artist.render()\n",
    );
    write(
        r,
        "lib/plot/cm.py",
        "def to_rgba(self, x):\n    return self.norm(x)\n",
    );
    write(
        r,
        "lib/plot/colors.py",
        "def __call__(self, value):\n    raise ValueError('Invalid vmin or vmax')\n",
    );
    write(
        r,
        "lib/plot/colorbar.py",
        "def update_normal(self, mappable):\n    self.norm = mappable.norm\n",
    );
    let (_idx, corpus) = indexed(r);
    let task = "Setting norm with existing colorbar fails\nAfter the colorbar has been created, setting the norm fails with an invalid vmin value, although vmin and vmax are valid for the new norm and the data has no negative values.\n```\nTraceback (most recent call last):\n  File \"/home/u/script.py\", line 3, in <module>\n    plot.autoscale()\n  File \"/env/site-packages/plot/artist.py\", line 51, in draw\n  File \"/env/site-packages/plot/cm.py\", line 511, in to_rgba\n  File \"/env/site-packages/plot/colors.py\", line 1694, in __call__\n  File \"/env/site-packages/numpy/core/fromnumeric.py\", line 9, in amin\nValueError: Invalid vmin or vmax\n```";
    let mut state =
        iret_retrieve::initial_state(&Query::new(task), &embedder(), &Default::default()).unwrap();
    state.point(&corpus, &Default::default());
    let mut raised: Vec<(String, f32)> = state
        .pointers
        .raised
        .iter()
        .map(|(&f, &w)| (corpus.index.files[f as usize].path.clone(), w))
        .collect();
    raised.sort_by(|a, b| b.1.total_cmp(&a.1));
    // numpy's frame is innermost but outside the codebase: colors.py raised.
    assert_eq!(
        raised,
        [
            ("lib/plot/colors.py".to_string(), 1.0),
            ("lib/plot/cm.py".to_string(), 0.5),
            ("lib/plot/artist.py".to_string(), 1.0 / 3.0),
        ]
    );
    // Every frame is a mention too (an installed package's path names the source file
    // under `lib/`); the file only the prose names is not a frame.
    let mentioned = |p: &str| {
        state
            .pointers
            .mentioned
            .keys()
            .any(|&f| corpus.index.files[f as usize].path == p)
    };
    assert!(mentioned("lib/plot/colors.py") && mentioned("lib/plot/artist.py"));
    assert!(!state
        .pointers
        .raised
        .keys()
        .any(|&f| corpus.index.files[f as usize].path.ends_with("colorbar.py")));
}

/// A diagnostic code the task reports (`E108`) points at the file holding it as the ID
/// the check raises, not at files that merely mention the number.
#[test]
fn a_diagnostic_code_points_at_the_check_that_raises_it() {
    let src = tempfile::tempdir().unwrap();
    let r = src.path();
    write(
        r,
        "admin/checks.py",
        "def _check_list_display_item(obj, item):\n    return [checks.Error('The value refers to a missing field.', obj=obj, id='admin.E108')]\n",
    );
    write(
        r,
        "admin/utils.py",
        "def label_for_field(name, model):\n    # see E108 in the checks: a missing field\n    return name\n",
    );
    let (_idx, corpus) = indexed(r);
    let task = "Error E108 does not cover some cases\nI have two models, Question and Choice. And if I write list_display = [\"choice\"] in QuestionAdmin, I get no errors. But when I visit the admin page, a trace is returned from label_for_field.";
    let raisers = raisers(&corpus, task);
    assert_eq!(raisers, ["admin/checks.py"]);
}

/// A report's uncovered concepts are mapped to codebase terms only when
/// `Params::report_aliases` says so (off by default); a one-line task's always are.
#[test]
fn report_aliases_can_be_switched_off_for_reports_only() {
    let (_s, _i, index) = repo();
    let report = "rate limiting for the api\nOur clients hammer the server and we would like the api to refuse \
        requests beyond a configured budget per client and window, returning a clear status, so that one \
        noisy client cannot starve every other client of the service during busy hours of the day.";
    let learned = |task: &str, report_aliases: bool| {
        let mut opts = Options::default();
        opts.params.report_aliases = report_aliases;
        let out = run(&index, &embedder(), &Query::new(task), &opts).unwrap();
        out.cycles
            .iter()
            .filter_map(|c| c.refinement.as_ref())
            .map(|r| r.learned.len())
            .sum::<usize>()
    };
    assert!(
        learned(report, true) > 0,
        "a report learns aliases by default"
    );
    assert_eq!(learned(report, false), 0);
    assert!(
        learned("rate limiting for the api", false) > 0,
        "a one-line task still learns"
    );
}

#[test]
fn an_abbreviation_code_writes_covers_its_word() {
    let (_s, _i, index) = repo();
    let out = single_shot(&index, "the utility that formats a date");
    let format = out
        .evaluated
        .iter()
        .find(|e| e.path == "src/util/format.ts")
        .expect("format.ts is evaluated");
    // `util` (its folder) covers "utility"; nothing in tax.ts does.
    assert!(
        !format.missing.contains(&"utility".to_string()),
        "{format:?}"
    );
    let tax = out
        .evaluated
        .iter()
        .find(|e| e.path == "src/billing/tax.ts");
    if let Some(tax) = tax {
        assert!(tax.missing.contains(&"utility".to_string()), "{tax:?}");
    }
}

#[test]
fn an_issue_templates_hidden_comments_do_not_steer_the_answer() {
    let (_s, _i, index) = repo();
    let paths =
        |out: &Outcome| -> Vec<String> { out.evaluated.iter().map(|e| e.path.clone()).collect() };
    let plain = single_shot(&index, "requests are not rate limited");
    let commented = single_shot(
        &index,
        "requests are not rate limited\n<!-- invoice tax amount: describe the invoice total -->",
    );
    assert!(
        paths(&plain)[0].ends_with("throttle.ts"),
        "{:?}",
        paths(&plain)
    );
    assert_eq!(paths(&commented), paths(&plain));
    let shown = single_shot(
        &index,
        "requests are not rate limited\ninvoice tax amount: describe the invoice total",
    );
    assert_ne!(
        paths(&shown),
        paths(&plain),
        "the same words, shown, do count"
    );
}
