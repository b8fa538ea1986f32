use crate::Cli;
use anyhow::Context;
use iret_engine::budget::Retrieve;
use iret_engine::{ChunkAnswer, CycleAnswer, RetrieveAnswer, RetrieveRequest};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The task in plain words, e.g. "Fix the authentication token expiry bug".
    #[arg(required_unless_present = "stdin_json")]
    pub task: Option<String>,
    /// A folder of the repository: its index is the nearest `.iret` above it, else the one
    /// at the git root (built there on first use).
    #[arg(long, short = 'C', default_value = ".")]
    pub path: PathBuf,
    /// Where the index lives (default: <repository root>/.iret).
    #[arg(long)]
    pub index_dir: Option<PathBuf>,
    /// An extra keyword to search for (repeat the flag for more: `-w refreshToken -w jwt`).
    #[arg(long = "keywords", short = 'w', value_name = "WORD")]
    pub keywords: Vec<String>,
    /// Only files matching this glob (`auth`, `src/**/*.ts`; repeat the flag for more:
    /// a file matching any of them).
    #[arg(long, short = 'g', value_name = "GLOB")]
    pub include: Vec<String>,
    /// Never files matching this glob (repeat the flag for more).
    #[arg(long, short = 'x', value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Retrieval cycles (1 = single-shot hybrid search).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub cycles: u32,
    /// Return files scored at least this relevant (0-1).
    #[arg(long, default_value_t = 0.7, value_parser = relevance)]
    pub min_relevance: f32,
    /// At most this many files.
    #[arg(short = 'k', long = "top", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub top: u32,
    /// The whole answer within N tokens, as printed (the text, or with --json the JSON;
    /// the shipped tokenizer counts): whole chunks give way first, best kept; what was
    /// left out is said on stderr. At least 100.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(100..))]
    pub budget: Option<u32>,
    /// Print each cycle (dispatch terms, evaluations, refinements, stop reason) to stderr;
    /// with --json, also as the answer's `cycles`.
    #[arg(long)]
    pub trace: bool,
    /// One JSON document on stdout (the same answer the MCP `retrieve` tool gives).
    #[arg(long)]
    pub json: bool,
    /// Read the query as JSON on stdin: {"task": "...", "keywords": [], "include": [], "exclude": []}.
    #[arg(long)]
    pub stdin_json: bool,
    /// Answer from the index as it is, without re-indexing changed files first.
    #[arg(long)]
    pub no_refresh: bool,
    /// Never build an index: fail when the repository has none.
    #[arg(long)]
    pub no_index: bool,
}

pub fn run_search(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let mut req = RetrieveRequest {
        task: args.task.clone().unwrap_or_default(),
        keywords: args.keywords.clone(),
        include: args.include.clone(),
        exclude: args.exclude.clone(),
        cycles: Some(args.cycles),
        min_relevance: Some(args.min_relevance),
        max_files: Some(args.top),
        budget_tokens: args.budget,
        trace: args.trace,
    };
    if args.stdin_json {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        let q: iret_retrieve::Query = serde_json::from_str(&s).context("--stdin-json expects {\"task\": \"...\", \"keywords\": [...], \"include\": [...], \"exclude\": [...]}")?;
        req.task = q.task;
        req.keywords.splice(0..0, q.keywords);
        req.include.splice(0..0, q.include);
        req.exclude.splice(0..0, q.exclude);
    }
    if req.task.trim().is_empty() {
        anyhow::bail!("the task is empty: say what you are looking for");
    }
    let engine = super::open_engine(
        cli,
        &args.path,
        args.index_dir.as_deref(),
        !args.no_index,
        !args.no_refresh,
        false,
    )?;
    let answer = if args.json {
        engine.retrieve(&req)?
    } else {
        let count = |s: &str| engine.count_tokens(s);
        let whole = |r: &Retrieve| count(&render_text(r.answer));
        let cost = |c: &ChunkAnswer| count(&render_chunk("", c)) + 1;
        engine.retrieve_fitted(&req, &whole, &cost)?
    };
    if let Some(share) = answer.index.freshness.strip_prefix("embedding ") {
        let how = if answer.index.tier == "static" {
            "answered from the static tier (the shipped static model's vectors and keywords)"
        } else {
            "chunks not embedded yet answered by keywords alone"
        };
        eprintln!("iret: the index is still being embedded ({share} done); {how}");
    } else if answer.index.freshness == "busy" {
        eprintln!("iret: another iret is updating the index; answering from the current one");
    } else if let Some(n) = answer.index.freshness.strip_prefix("refreshed ") {
        eprintln!(
            "iret: {n} changed since the index was built; refreshed it first (--no-refresh skips)"
        );
    }
    if args.trace {
        for c in &answer.cycles {
            eprintln!("{}", trace_line(c));
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
    } else {
        if answer.below_threshold {
            eprintln!(
                "iret: no file reached relevance {:.2}; the best candidates:",
                answer.min_relevance
            );
        }
        print!("{}", render_text(&answer));
    }
    let b = &answer.budget;
    if let Some(limit) = b.limit {
        // The text shows a few lines of each chunk: its code figure is the JSON's.
        let code = if args.json {
            format!(" ({} of code)", b.code_tokens)
        } else {
            String::new()
        };
        eprintln!(
            "iret: {} tokens of a {limit}-token budget{code}; left out: {} chunks, {} files",
            b.tokens, b.omitted_chunks, b.omitted_files
        );
    }
    Ok(if answer.below_threshold || answer.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The answer as text: each file with its relevance and reason, what it misses, and its
/// first two chunks (a few lines of each).
fn render_text(answer: &RetrieveAnswer) -> String {
    let mut out = String::new();
    for f in &answer.files {
        out.push_str(&format!("{}  {:.2}  {}\n", f.path, f.relevance, f.reason));
        if !f.missing.is_empty() {
            out.push_str(&format!("  missing: {}\n", f.missing.join(", ")));
        }
        for c in f.chunks.iter().take(2) {
            out.push_str(&render_chunk(&f.path, c));
        }
    }
    out
}

fn render_chunk(path: &str, c: &ChunkAnswer) -> String {
    let mut out = format!("  {path}:{}-{}  {}\n", c.start_line, c.end_line, c.symbol);
    for line in snippet(&c.code, 4).lines() {
        out.push_str(&format!("    {line}\n"));
    }
    out
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

fn trace_line(c: &CycleAnswer) -> String {
    let terms: Vec<&str> = c.terms.iter().map(String::as_str).take(8).collect();
    let more = if c.terms.len() > 8 { " …" } else { "" };
    let evals: Vec<String> = c
        .evaluated
        .iter()
        .take(4)
        .map(|s| {
            format!(
                "{} {:.2}",
                s.path.rsplit('/').next().unwrap_or(&s.path),
                s.relevance
            )
        })
        .collect();
    let mut s = format!(
        "cycle {}  dispatch [{}{more}]  evaluate {}",
        c.cycle,
        terms.join(" "),
        evals.join(", ")
    );
    if !c.learned.is_empty() {
        let added: Vec<String> = c
            .learned
            .iter()
            .map(|t| match t.file.rsplit('/').next() {
                Some(f) if !f.is_empty() => format!("+{} ({f})", t.word),
                _ => format!("+{}", t.word),
            })
            .collect();
        s.push_str(&format!("  refine {}", added.join(" ")));
    }
    if !c.focus.is_empty() {
        s.push_str(&format!(" focus {}", c.focus.len()));
    }
    if !c.excluded.is_empty() {
        s.push_str(&format!(" exclude {}", c.excluded.len()));
    }
    if let Some(stop) = &c.stop {
        s.push_str(&format!("  → stop: {stop}"));
    }
    s
}
