use crate::Cli;
use iret_bench::checkout::Mirror;
use iret_bench::history::{tasks_from_history, HistoryOptions};
use iret_bench::localise::{self, LocConfig, Mirrors};
use iret_bench::{report, run_bench, Config, Mode};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_long_help = knobs_help())]
pub struct Args {
    /// Benchmark folder (repos.json + annotations/): semble's format, or with --mirrors a
    /// localisation set whose entries name a `repo` and a `revision` (SWE-bench style).
    #[arg(long, required_unless_present = "history")]
    pub dataset: Option<PathBuf>,
    /// Folder with one extracted corpus per repo name (scripts/extract-corpus.py); with
    /// --mirrors or --history, one checkout per repository is written and updated here.
    #[arg(long)]
    pub corpora: PathBuf,
    /// Local git mirrors (`<owner>+<name>/repo`): each instance's commit is checked out
    /// from them, in commit order, its index carried over (file-level Acc@k).
    #[arg(long)]
    pub mirrors: Option<PathBuf>,
    /// A repository's own history as tasks: this git directory's commits with descriptive
    /// messages (query: the message; gold: the non-test source files it modified, searched
    /// on the parent's tree).
    #[arg(long, conflicts_with = "dataset")]
    pub history: Option<PathBuf>,
    /// With --history: how many tasks (the newest qualifying commits).
    #[arg(long, default_value_t = 100)]
    pub commits: usize,
    /// With --history: the newest commit considered.
    #[arg(long, default_value = "HEAD")]
    pub until: String,
    /// Localisation: at most this many instances per repository (the first in commit order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Where indexes are kept between runs (default: <corpora>/../iret-indexes).
    #[arg(long)]
    pub index_root: Option<PathBuf>,
    /// Only these repos (comma-separated; localisation: instance names or owner/name).
    #[arg(long, value_delimiter = ',')]
    pub repos: Option<Vec<String>>,
    /// Modes side by side: bm25, dense, hybrid, iterative (the loop, ordered by the
    /// hand-set rules), learned (the loop, ordered by the shipped learned ranker;
    /// IRET_RANKER_DIR names another ranker folder). A mode takes knob overrides after
    /// `@`, `+`-separated: `hybrid@vw=0.7+coh=0.4` (the keys are listed at the end of
    /// `iret bench --help`).
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
    /// Write every candidate of the loop's modes with its ranking features, one
    /// tab-separated row each (the task, the file, whether it is gold, each feature by
    /// name): the data a learned ranker is trained and validated on. In a semble-format
    /// run, a task is `<repo>:<n>` (its place in the annotations) and a candidate is gold
    /// when it holds one of the task's targets, relevant or secondary.
    #[arg(long, value_name = "FILE")]
    pub features: Option<PathBuf>,
    /// Localisation: write what a query encoder is trained on (`scripts/encoder/`): per
    /// task, its text and vector, its gold files, and the chunks of the tree it was
    /// written for that a trained query must tell apart (the gold files' chunks, the
    /// vector leg's top 200, 100 at random), one JSON line each; the vectors in FILE.vec.
    #[arg(long, value_name = "FILE")]
    pub pairs: Option<PathBuf>,
    /// With --history: a task's text: the commit's subject and body (`full`), its subject
    /// alone (`subject`, one line, like a search), or both as two tasks (`both`; a commit
    /// without a body makes one task).
    #[arg(long, value_enum, default_value_t = TaskText::Full)]
    pub task_text: TaskText,
}

/// `--task-text`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TaskText {
    Full,
    Subject,
    Both,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let embedder: std::sync::Arc<dyn iret_embed::Embedder> = super::load_embedder(cli)?;
    let mut modes = args
        .modes
        .iter()
        .map(|m| Mode::parse(m))
        .collect::<anyhow::Result<Vec<_>>>()?;
    if args.ablation {
        modes.extend(Mode::ablations());
    }
    if args.mirrors.is_some() || args.history.is_some() {
        return localisation(args, modes, embedder);
    }
    if args.pairs.is_some() {
        anyhow::bail!("--pairs is for localisation runs (--mirrors or --history)");
    }
    let dataset = args.dataset.clone().expect("clap requires --dataset");
    let cfg = Config {
        dataset,
        corpora: args.corpora.clone(),
        index_root: args
            .index_root
            .clone()
            .unwrap_or_else(|| args.corpora.join("..").join("iret-indexes")),
        repos: args.repos.clone(),
        modes,
        reindex: args.reindex,
        progress: true,
        serve: super::store::target(cli)?.map(|target| serve(target, embedder.clone())),
        features: args
            .features
            .as_deref()
            .map(iret_bench::features::FeatureSink::create)
            .transpose()?,
    };
    let runs = run_bench(&cfg, embedder)?;
    if runs.is_empty() {
        anyhow::bail!("no repo was benchmarked: check --corpora and --repos");
    }
    let summary = report::summarise(&runs);
    println!("{}", report::table(&runs, &summary));
    write_json(args, serde_json::json!({"runs": runs, "summary": summary}))?;
    Ok(ExitCode::SUCCESS)
}

/// `--mirrors` / `--history`: file localisation, instances visited in commit order.
fn localisation(
    args: &Args,
    modes: Vec<Mode>,
    embedder: std::sync::Arc<dyn iret_embed::Embedder>,
) -> anyhow::Result<ExitCode> {
    let (instances, mirrors) = match (&args.history, &args.dataset, &args.mirrors) {
        (Some(git_dir), _, _) => {
            let mirror = Mirror {
                git_dir: git_dir.clone(),
            };
            let repo = history_name(git_dir);
            let opts = HistoryOptions {
                repo: repo.clone(),
                until: args.until.clone(),
                commits: args.commits,
                min_words: 4,
                max_files: 3,
                full: args.task_text != TaskText::Subject,
                subject: args.task_text != TaskText::Full,
            };
            let tasks = tasks_from_history(&mirror, &opts)?;
            eprintln!(
                "iret bench: {} tasks from the history of {repo}",
                tasks.len()
            );
            (tasks, Mirrors::One(mirror))
        }
        (None, Some(dataset), Some(mirrors)) => (
            localise::load_instances(dataset)?,
            Mirrors::Folder(mirrors.clone()),
        ),
        _ => anyhow::bail!("--mirrors needs --dataset"),
    };
    let cfg = LocConfig {
        mirrors,
        checkouts: args.corpora.clone(),
        index_root: args
            .index_root
            .clone()
            .unwrap_or_else(|| args.corpora.join("..").join("iret-indexes")),
        only: args.repos.clone(),
        limit: args.limit,
        modes: modes.clone(),
        progress: true,
        features: args
            .features
            .as_deref()
            .map(iret_bench::features::FeatureSink::create)
            .transpose()?,
        pairs: args
            .pairs
            .as_deref()
            .map(iret_bench::pairs::PairSink::create)
            .transpose()?,
    };
    let runs = localise::run_localisation(&cfg, instances, embedder)?;
    if runs.is_empty() {
        anyhow::bail!("no instance was benchmarked: check --mirrors, --repos and the dataset");
    }
    let summary = localise::summarise(&runs, &modes);
    println!("{}", localise::table(&summary, &modes));
    write_json(args, serde_json::json!({"runs": runs, "summary": summary}))?;
    Ok(ExitCode::SUCCESS)
}

/// A name for a history run's folders: the mirror folder's (`owner+name/repo` → `owner/name`).
fn history_name(git_dir: &std::path::Path) -> String {
    let mut parts = git_dir
        .components()
        .rev()
        .filter_map(|c| c.as_os_str().to_str())
        .filter(|c| !matches!(*c, "repo" | ".git"));
    let name = parts.next().unwrap_or("history");
    name.trim_end_matches(".git").replacen('+', "/", 1)
}

/// `--json`: the per-query runs and the summary in one document.
fn write_json(args: &Args, doc: serde_json::Value) -> anyhow::Result<()> {
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)?;
    }
    Ok(())
}

/// `iret bench --store`: each repository's index pushed to its own collection of the
/// store (`<collection>-<repo>` when the address names one), the push reported.
fn serve(
    target: super::store::Target,
    embedder: std::sync::Arc<dyn iret_embed::Embedder>,
) -> iret_bench::Serve {
    std::sync::Arc::new(move |repo: &str, index: &iret_bench::ServedIndex| {
        let name = match &target.url.collection {
            Some(c) => format!("{c}-{repo}"),
            None => iret_chroma::collection_name(
                repo,
                embedder.model_id(),
                iret_engine::maintain::FORMAT_VERSION,
            ),
        };
        let at = target.url.with_collection(name);
        let store = std::sync::Arc::new(iret_chroma::Store::connect(
            &at,
            &target.access,
            repo,
            embedder.model_id(),
            embedder.dims(),
            true,
        )?);
        let pushed = iret_chroma::push(&store, index, "bench", None, false)?;
        eprintln!("iret bench: {repo}: {}", pushed.summary(&store));
        Ok(store as std::sync::Arc<dyn iret_engine::maintain::RemoteNearest>)
    })
}

/// The knob table for `iret bench --help`: each override key, its knob, default, stage
/// and meaning.
fn knobs_help() -> String {
    let mut out = String::from("Knobs (override keys of MODE@key=value):\n");
    for k in iret_retrieve::KNOBS {
        out.push_str(&format!(
            "  {:<6} {} = {} ({}): {}\n",
            k.key, k.name, k.default, k.acts, k.meaning
        ));
    }
    out
}
