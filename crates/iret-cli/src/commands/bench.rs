use crate::Cli;
use iret_bench::{report, run_bench, Config, Mode};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Benchmark folder in semble's format (repos.json + annotations/).
    #[arg(long)]
    pub dataset: PathBuf,
    /// Folder with one extracted corpus per repo name (scripts/extract-corpus.py).
    #[arg(long)]
    pub corpora: PathBuf,
    /// Where indexes are kept between runs (default: <corpora>/../iret-indexes).
    #[arg(long)]
    pub index_root: Option<PathBuf>,
    /// Only these repos (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub repos: Option<Vec<String>>,
    /// Modes side by side: bm25, dense, hybrid, iterative.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "bm25,dense,hybrid,iterative"
    )]
    pub modes: Vec<String>,
    /// Also run hybrid with each ranking signal switched off.
    #[arg(long)]
    pub ablation: bool,
    /// Rebuild every index (measures index time; embeddings still come from the cache).
    #[arg(long)]
    pub reindex: bool,
    /// Write per-query results and the summary as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let embedder: std::sync::Arc<dyn iret_embed::Embedder> =
        std::sync::Arc::new(super::load_embedder(cli)?);
    let mut modes = args
        .modes
        .iter()
        .map(|m| Mode::parse(m))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if args.ablation {
        modes.extend(Mode::ablations());
    }
    let cfg = Config {
        dataset: args.dataset.clone(),
        corpora: args.corpora.clone(),
        index_root: args
            .index_root
            .clone()
            .unwrap_or_else(|| args.corpora.join("..").join("iret-indexes")),
        repos: args.repos.clone(),
        modes,
        reindex: args.reindex,
        progress: true,
    };
    let runs = run_bench(&cfg, embedder)?;
    if runs.is_empty() {
        anyhow::bail!("no repo was benchmarked: check --corpora and --repos");
    }
    let summary = report::summarise(&runs);
    println!("{}", report::table(&runs, &summary));
    if let Some(path) = &args.json {
        std::fs::write(
            path,
            serde_json::to_vec_pretty(&serde_json::json!({"runs": runs, "summary": summary}))?,
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
