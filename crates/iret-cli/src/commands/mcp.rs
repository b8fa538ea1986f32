use crate::Cli;
use anyhow::Context;
use iret_embed::{Embedder, TokenCounter};
use iret_engine::{Engine, OpenOptions};
use iret_mcp::roots::Roots;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// What `iret mcp --help` explains.
pub const LONG_ABOUT: &str =
    "Serve repositories to coding agents as an MCP server over stdin/stdout: those named on
the command line (default: the one holding the current folder) and the roots the client
offers, one process and one model for all of them.

Tools:
  retrieve      the evaluate-and-refine loop: the files that matter for a task, each with a
                relevance (0-1), a reason, the concepts it misses and its best chunks; and
                `next` (the codebase's words it learned, files to exclude, gaps) to pass back
                for another round. The whole answer stays within budget_tokens (default
                8000); trace: true adds each cycle's trace. Arguments: task, keywords,
                include, exclude, cycles, min_relevance, max_files, budget_tokens, trace.
  search        single-shot hybrid search: query, include, exclude, k, budget_tokens.
  find_related  files tied to a file by imports, use and similar code: path, line, k.
  status        files, chunks, stale files, model, embedded share; every root served.

Every tool takes an optional `root`: a path to a served repository or to a folder inside
it; without it a call goes to the first. The first repository is opened at start, the others
on their first call. An index is built on first use (unless --no-index); each opened
repository is watched and its index updated in the background as files change, so a call
after an edit answers at once (--no-watch, or where watching fails: refreshed before a call
instead). Paths must stay inside the served repositories. Logs go to stderr.

Add it to an MCP client with the command `iret mcp /path/to/repo [/path/to/other]` (see
README.md).";

/// Serve this repository to agents over MCP (stdio).
#[derive(clap::Args)]
pub struct Args {
    /// Folders of the repositories to serve (each one's root is found as for `iret
    /// search`; default: the current folder's).
    pub paths: Vec<PathBuf>,
    /// Where the index lives (default: <repository root>/.iret); with one repository only.
    #[arg(long)]
    pub index_dir: Option<PathBuf>,
    /// Never build an index: fail when the repository has none.
    #[arg(long)]
    pub no_index: bool,
    /// Answer from the index as it is, without checking for changed files.
    #[arg(long)]
    pub no_refresh: bool,
    /// Do not watch the repositories: check for changed files before each call instead.
    #[arg(long)]
    pub no_watch: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    if args.index_dir.is_some() && paths.len() > 1 {
        anyhow::bail!("--index-dir names one index: serve one repository with it");
    }
    let (first, first_dir) = super::locate(&paths[0], args.index_dir.as_deref());
    let model = super::model_dir(cli)?;
    let embedder: Arc<dyn Embedder> = iret_embed::load_model(&model)?;
    let tokens = Arc::new(TokenCounter::load(&model)?);
    let opener = Opener {
        embedder: embedder.clone(),
        tokens,
        shipped: cli.model_dir.is_none(),
        index: !args.no_index,
        refresh: !args.no_refresh,
        store: super::store::target(cli)?,
        ranker: super::ranker(cli)?,
        query_map: super::query_map(cli, embedder.as_ref())?,
        child: super::Child::of(cli),
    };
    let engine = opener.open(&first, &first_dir)?;
    let roots = Roots::new(Box::new(move |root: &Path| {
        opener.open(root, &iret_engine::maintain::index_dir_of(root))
    }))
    .watching(!args.no_watch && !args.no_refresh);
    roots.add_open(engine);
    for path in &paths[1..] {
        let (root, _) = super::locate(path, None);
        if !roots.add(&root) && !root.is_dir() {
            anyhow::bail!("{} is not a directory", path.display());
        }
    }
    let served: Vec<String> = roots.list().into_iter().map(|r| r.root).collect();
    eprintln!("iret mcp: serving {} over stdio", served.join(", "));
    iret_mcp::serve_stdio(roots)?;
    Ok(ExitCode::SUCCESS)
}

/// A model and its tokenizer's counter.
type Model = (Arc<dyn Embedder>, Arc<TokenCounter>);

/// Opens a served repository's engine: every one shares the model (an index built with
/// `iret index --static` shares the shipped static model, loaded once when first needed).
struct Opener {
    embedder: Arc<dyn Embedder>,
    tokens: Arc<TokenCounter>,
    /// The shipped models serve (no `--model-dir`): an index built with `--static` is
    /// read by the shipped static model.
    shipped: bool,
    index: bool,
    refresh: bool,
    /// `--store`: each repository's collection in it.
    store: Option<super::store::Target>,
    /// `--ranker`.
    ranker: Option<Arc<dyn iret_retrieve::ranking::Ranker>>,
    /// `--query-model`.
    query_map: Option<Arc<iret_embed::QueryMap>>,
    /// The background build of a repository without an index: this run's model and store.
    child: super::Child,
}

impl Opener {
    /// The model that reads the index in `dir` (the tokenizer is the same for both).
    fn model(&self, dir: &Path) -> anyhow::Result<Model> {
        if self.shipped && iret_engine::maintain::built_static(dir) {
            let model = iret_embed::shipped_static().context(
                "the shipped static model (for an index built with --static) cannot be loaded",
            )?;
            return Ok((model, self.tokens.clone()));
        }
        Ok((self.embedder.clone(), self.tokens.clone()))
    }

    fn open(&self, root: &Path, dir: &Path) -> anyhow::Result<Engine> {
        if self.index && !readable(dir) && root.is_dir() {
            index_in_background(&self.child, root, dir);
        }
        let (embedder, tokens) = self.model(dir)?;
        let remote = match &self.store {
            Some(target) => Some(super::store::remote(super::store::connect_to_query(
                target,
                root,
                dir,
                embedder.model_id(),
                embedder.dims(),
            )?)),
            None => None,
        };
        let opts = OpenOptions {
            index_if_missing: self.index,
            refresh: self.refresh,
            complete_in_background: true,
            remote,
            ranker: self.ranker.clone(),
            query_map: self.query_map.clone(),
            ..OpenOptions::default()
        };
        let engine = Engine::open(root, dir, embedder, Some(tokens), &opts)?;
        if engine.opened != "opened" {
            eprintln!("iret mcp: {}: {}", root.display(), engine.opened);
        }
        Ok(engine)
    }
}

/// Whether this iret can read the live generation (there is one, in this format, by this
/// chunker and tokenizer).
fn readable(dir: &std::path::Path) -> bool {
    iret_engine::maintain::readable(dir)
}

/// A repository never indexed, or indexed by an older iret, is indexed by a background
/// `iret index`, so the server can start answering from the keyword tier (written before
/// the embedding) instead of holding the client's handshake for the whole build. Returns
/// once a readable generation is live or the indexer has ended (then the engine builds,
/// or reports why not).
fn index_in_background(child: &super::Child, root: &Path, dir: &Path) {
    let why = if dir.join("CURRENT").is_file() {
        "an index this iret cannot read"
    } else {
        "no index yet"
    };
    eprintln!(
        "iret mcp: {} has {why}; indexing it in the background",
        root.display()
    );
    let Ok(mut cmd) = child.index(root, dir) else {
        return;
    };
    let spawned = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = spawned else {
        return;
    };
    let started = std::time::Instant::now();
    while !readable(dir) && started.elapsed().as_secs() < 600 {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
