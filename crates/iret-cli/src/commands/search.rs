use crate::Cli;
use anyhow::Context;
use iret_index::Index;
use iret_retrieve::r#loop::CycleTrace;
use iret_retrieve::{run, Corpus, Options, Query};
use serde_json::json;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The task in plain words, e.g. "Fix the authentication token expiry bug".
    #[arg(required_unless_present = "stdin_json")]
    pub task: Option<String>,
    /// Repository root (its index lives in <PATH>/.iret unless --index-dir says otherwise).
    #[arg(long, short = 'C', default_value = ".")]
    pub path: PathBuf,
    /// Where the index lives (default: <PATH>/.iret).
    #[arg(long)]
    pub index_dir: Option<PathBuf>,
    /// Extra keywords to search for (repeatable).
    #[arg(long = "keywords", short = 'w', num_args = 1..)]
    pub keywords: Vec<String>,
    /// Only files matching these globs (repeatable; `auth`, `src/**/*.ts`).
    #[arg(long, short = 'g', num_args = 1..)]
    pub include: Vec<String>,
    /// Never files matching these globs (repeatable).
    #[arg(long, short = 'x', num_args = 1..)]
    pub exclude: Vec<String>,
    /// Retrieval cycles (1 = single-shot hybrid search).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub cycles: u32,
    /// Return files scored at least this relevant (0-1).
    #[arg(long, default_value_t = 0.7, value_parser = relevance)]
    pub min_relevance: f32,
    /// At most this many files.
    #[arg(short = 'k', long = "top", default_value_t = 10)]
    pub top: usize,
    /// Print each cycle (dispatch terms, evaluations, refinements, stop reason) to stderr.
    #[arg(long)]
    pub trace: bool,
    /// One JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Read the query as JSON on stdin: {"task": "...", "keywords": [], "include": [], "exclude": []}.
    #[arg(long)]
    pub stdin_json: bool,
    /// Answer from the index as it is, without re-indexing changed files first.
    #[arg(long)]
    pub no_refresh: bool,
}

pub fn run_search(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let query = if args.stdin_json {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        let mut q: Query = serde_json::from_str(&s).context("--stdin-json expects {\"task\": \"...\", \"keywords\": [...], \"include\": [...], \"exclude\": [...]}")?;
        q.keywords.extend(args.keywords.iter().cloned());
        q.include.extend(args.include.iter().cloned());
        q.exclude.extend(args.exclude.iter().cloned());
        q
    } else {
        Query {
            task: args.task.clone().unwrap_or_default(),
            keywords: args.keywords.clone(),
            include: args.include.clone(),
            exclude: args.exclude.clone(),
        }
    };
    if query.task.trim().is_empty() {
        anyhow::bail!("the task is empty: say what you are looking for");
    }
    let index_dir = args
        .index_dir
        .clone()
        .unwrap_or_else(|| iret_index::default_index_dir(&args.path));
    let embedder = super::load_embedder(cli)?;
    let mut index = Index::open(&index_dir, Some(iret_embed::Embedder::model_id(&embedder)))?;
    if !args.no_refresh {
        let status = iret_index::status::status_of(&args.path, &index_dir, &index);
        if status.stale() > 0 {
            eprintln!(
                "iret: {} files changed since the index was built; refreshing (--no-refresh skips)",
                status.stale()
            );
            let opts = iret_index::BuildOptions {
                progress: false,
                limits: None,
                force: false,
            };
            let model_id = iret_embed::Embedder::model_id(&embedder).to_string();
            // The open index is the starting point of the update, which hands back the new one.
            index = match iret_index::refresh(&args.path, &index_dir, &embedder, &opts, index) {
                Ok((_, Some(updated))) => updated,
                Ok((_, None)) => Index::open(&index_dir, Some(&model_id))?,
                // Another `iret index` is writing: answer from the live generation.
                Err(iret_index::BuildError::Store(iret_index::StoreError::Locked(_))) => {
                    eprintln!(
                        "iret: another iret is updating the index; answering from the current one"
                    );
                    Index::open(&index_dir, Some(&model_id))?
                }
                Err(e) => return Err(e.into()),
            };
        }
    }
    let opts = Options {
        cycles: args.cycles as usize,
        min_relevance: args.min_relevance,
        ..Options::default()
    };
    let corpus = Corpus::new(index);
    let index = &corpus.index;
    let outcome = run(&corpus, &embedder, &query, &opts)?;
    if args.trace {
        for c in &outcome.cycles {
            eprintln!("{}", trace_line(c));
        }
    }
    let mut files: Vec<_> = outcome
        .relevant(args.min_relevance)
        .into_iter()
        .take(args.top)
        .collect();
    let below = files.is_empty();
    if below {
        // Nothing reached the bar: show the best few, marked as such, rather than nothing.
        files = outcome.evaluated.iter().take(3.min(args.top)).collect();
    }
    if args.json {
        let doc = json!({
            "query": query,
            "min_relevance": args.min_relevance,
            "below_threshold": below,
            "files": files.iter().map(|e| json!({
                "path": e.path,
                "relevance": e.relevance,
                "reason": e.reason,
                "missing": e.missing,
                "cycle": e.cycle,
                "chunks": e.chunks.iter().map(|h| {
                    let c = &index.chunks[h.chunk as usize];
                    json!({"start_line": c.start_line, "end_line": c.end_line, "symbol": c.symbol, "score": h.score, "snippet": snippet(&c.text, 12)})
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "cycles": outcome.cycles,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        if below {
            eprintln!(
                "iret: no file reached relevance {:.2}; the best candidates:",
                args.min_relevance
            );
        }
        for e in &files {
            println!("{}  {:.2}  {}", e.path, e.relevance, e.reason);
            if !e.missing.is_empty() {
                println!("  missing: {}", e.missing.join(", "));
            }
            for h in e.chunks.iter().take(2) {
                let c = &index.chunks[h.chunk as usize];
                println!("  {}:{}-{}  {}", e.path, c.start_line, c.end_line, c.symbol);
                for line in snippet(&c.text, 4).lines() {
                    println!("    {line}");
                }
            }
        }
    }
    Ok(if files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn relevance(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?} is not a relevance between 0 and 1")),
    }
}

fn snippet(text: &str, lines: usize) -> String {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .take(lines)
        .map(|l| {
            if l.len() > 160 {
                &l[..l.floor_char_boundary(160)]
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn trace_line(c: &CycleTrace) -> String {
    let terms: Vec<&str> = c.terms.iter().map(String::as_str).take(8).collect();
    let more = if c.terms.len() > 8 { " …" } else { "" };
    let evals: Vec<String> = c
        .scores
        .iter()
        .take(4)
        .map(|(p, r)| format!("{} {r:.2}", p.rsplit('/').next().unwrap_or(p)))
        .collect();
    let mut s = format!(
        "cycle {}  dispatch [{}{more}]  evaluate {}",
        c.cycle,
        terms.join(" "),
        evals.join(", ")
    );
    if let Some(r) = &c.refinement {
        let added: Vec<String> = r
            .added_words()
            .iter()
            .map(|t| match t.file.rsplit('/').next() {
                Some(f) if !f.is_empty() => format!("+{} ({f})", t.word),
                _ => format!("+{}", t.word),
            })
            .collect();
        if !added.is_empty() {
            s.push_str(&format!("  refine {}", added.join(" ")));
        }
        if !r.focus.is_empty() {
            s.push_str(&format!(" focus {}", r.focus.len()));
        }
        if !r.excluded.is_empty() {
            s.push_str(&format!(" exclude {}", r.excluded.len()));
        }
    }
    if let Some(stop) = &c.stop {
        s.push_str(&format!("  → stop: {stop}"));
    }
    s
}
