//! `iret`: local code retrieval for coding agents. A thin shell over the library crates.
mod commands;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc: a build allocates and frees millions of small strings and lists (chunks,
/// tokens, postings); glibc's allocator spent about a fifth of a large build's time on them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "iret",
    version,
    about = "Find the files that matter for a coding task: hybrid (vector + BM25) search with an evaluate-and-refine loop, fully local."
)]
pub struct Cli {
    /// Folder with the embedding model (default: the model compiled into iret, written once to ~/.cache/iret).
    #[arg(long, global = true, env = "IRET_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// A team's index in Chroma: chroma+https://HOST:PORT[/TENANT/DATABASE][/COLLECTION]
    /// (TLS), or chroma+http:// (chroma:// for short); default collection:
    /// iret-<folder>-<model>-f<format>. `index` pushes what changed to it, as this
    /// checkout's branch; `search`, `mcp` and `watch` take the vectors it holds instead of
    /// embedding them and have it search them; `status` reports it. A token is read from
    /// IRET_STORE_TOKEN or the file IRET_STORE_TOKEN_FILE names (never from the address),
    /// sent as `Authorization: Bearer` (IRET_STORE_TOKEN_HEADER=X-Chroma-Token: Chroma's
    /// header); over plain HTTP only to this machine unless
    /// IRET_STORE_ALLOW_TOKEN_OVER_HTTP=1.
    #[arg(long, global = true, env = "IRET_STORE", value_name = "URL")]
    pub store: Option<String>,
    /// The CA bundle (PEM) a chroma+https:// store's certificate must chain to (a team's
    /// own CA); default: the system's trust store.
    #[arg(long, global = true, env = "IRET_STORE_CA", value_name = "FILE")]
    pub store_ca: Option<PathBuf>,
    /// The name this checkout's pushes are recorded under in the store (default: its git
    /// branch). A push never deletes records another ref needs.
    #[arg(long, global = true, env = "IRET_STORE_REF", value_name = "NAME")]
    pub store_ref: Option<String>,
    /// What orders the loop's answer and gives its relevance: `rules` (the hand-set
    /// weights) or `learned` (the shipped ranker, trained on tasks mined from public
    /// histories; IRET_RANKER_DIR names another ranker folder).
    #[arg(long, global = true, env = "IRET_RANKER", value_enum, default_value_t = commands::RankerChoice::Rules)]
    pub ranker: commands::RankerChoice,
    /// What the vector leg searches with: `shipped` (the shipped model's vector of the
    /// query) or `tuned` (that vector through the query map trained on tasks mined from
    /// public histories, see models/query-map; documents keep their vectors, so no index
    /// changes; IRET_QUERY_MAP_DIR names another map folder).
    #[arg(long, global = true, env = "IRET_QUERY_MODEL", value_enum, default_value_t = commands::QueryModel::Shipped)]
    pub query_model: commands::QueryModel,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Index a repository (default: the current directory) into <PATH>/.iret
    Index(commands::index::Args),
    /// Find the files that matter for a task (evaluate-and-refine loop; --cycles 1 = single shot)
    Search(commands::search::Args),
    /// Show the index: files, chunks, stale files, size on disk, model, format
    Status(commands::status::Args),
    /// Serve a repository to coding agents as an MCP server over stdio (retrieve, search, find_related, status)
    #[command(long_about = commands::mcp::LONG_ABOUT)]
    Mcp(commands::mcp::Args),
    /// Keep a repository's index fresh: update it in the background as files change
    /// (for editors; `iret mcp` watches the repositories it serves by itself)
    Watch(commands::watch::Args),
    /// Show or remove the embedding cache shared by every index on this machine
    /// (in ~/.cache/iret/embeddings; IRET_EMBED_CACHE moves it, IRET_EMBED_CACHE_MAX caps it)
    Cache(commands::cache::Args),
    /// Keep a team's store tidy: collect records no branch needs, forget a branch's push
    Store(commands::store::Args),
    /// Measure retrieval quality (NDCG@10, Recall, MRR) and latency on a semble-format benchmark
    Bench(commands::bench::Args),
    /// Add iret's MCP server to a coding agent's configuration (Claude Code, Codex,
    /// Gemini CLI, Cursor, VS Code, Zed, Windsurf, opencode, Cline), merged into what is
    /// there; `--print` shows it without writing, `--list` names the agents
    Setup(commands::setup::Args),
}

/// A closed pipe (`iret search … | head`) ends iret quietly, as it ends `cat` or `rg`,
/// instead of a panic in `println!`.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Index(args) => commands::index::run(&cli, args),
        Command::Search(args) => commands::search::run_search(&cli, args),
        Command::Bench(args) => commands::bench::run(&cli, args),
        Command::Mcp(args) => commands::mcp::run(&cli, args),
        Command::Status(args) => commands::status::run(&cli, args),
        Command::Cache(args) => commands::cache::run(args),
        Command::Watch(args) => commands::watch::run(&cli, args),
        Command::Store(args) => commands::store::run(&cli, args),
        Command::Setup(args) => commands::setup::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("iret: {e:#}");
            ExitCode::from(2)
        }
    }
}
