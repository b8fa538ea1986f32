use crate::Cli;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `iret mcp --help` explains.
pub const LONG_ABOUT: &str =
    "Serve the repository to coding agents as an MCP server over stdin/stdout.

Tools:
  retrieve      the evaluate-and-refine loop: the files that matter for a task, each with a
                relevance (0-1), a reason, the concepts it misses and its best chunks, packed
                into budget_tokens (default 8000); what each cycle learned in the codebase's
                words; and `next` (keywords, exclude, gaps) to pass back for another round.
                Arguments: task, keywords, include, exclude, cycles, min_relevance,
                max_files, budget_tokens.
  search        single-shot hybrid search: query, include, exclude, k, budget_tokens.
  find_related  files tied to a file by imports, use and similar code: path, line, k.
  status        files, chunks, stale files, model, embedded share.

The index is built on first use (unless --no-index) and refreshed before a call when files
changed. Paths must stay inside the repository. Logs go to stderr.

Add it to an MCP client with the command `iret mcp /path/to/repo` (see README.md).";

/// Serve this repository to agents over MCP (stdio).
#[derive(clap::Args)]
pub struct Args {
    /// A folder of the repository to serve (its root is found as for `iret search`).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Where the index lives (default: <repository root>/.iret).
    #[arg(long)]
    pub index_dir: Option<PathBuf>,
    /// Never build an index: fail when the repository has none.
    #[arg(long)]
    pub no_index: bool,
    /// Answer from the index as it is, without checking for changed files.
    #[arg(long)]
    pub no_refresh: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let (root, dir) = super::locate(&args.path, args.index_dir.as_deref());
    if !args.no_index && !readable(&dir) && root.is_dir() {
        index_in_background(&root, &dir);
    }
    let engine = super::open_engine(
        cli,
        &args.path,
        args.index_dir.as_deref(),
        !args.no_index,
        !args.no_refresh,
        true,
    )?;
    eprintln!("iret mcp: serving {} over stdio", engine.root().display());
    iret_mcp::serve_stdio(engine)?;
    Ok(ExitCode::SUCCESS)
}

/// Whether this iret can read the live generation (there is one, in this format, by this
/// chunker and tokenizer).
fn readable(dir: &std::path::Path) -> bool {
    iret_index::live_manifest(dir).is_ok_and(|m| m.check_compatible(None).is_ok())
}

/// A repository never indexed, or indexed by an older iret, is indexed by a background
/// `iret index`, so the server can start answering from the keyword tier (written before
/// the embedding) instead of holding the client's handshake for the whole build. Returns
/// once a readable generation is live or the indexer has ended (then the engine builds,
/// or reports why not).
fn index_in_background(root: &std::path::Path, dir: &std::path::Path) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let why = if dir.join("CURRENT").is_file() {
        "an index this iret cannot read"
    } else {
        "no index yet"
    };
    eprintln!(
        "iret mcp: {} has {why}; indexing it in the background",
        root.display()
    );
    let child = std::process::Command::new(exe)
        .args(["index", "-q"])
        .arg(root)
        .arg("--index-dir")
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
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
