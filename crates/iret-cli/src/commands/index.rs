use crate::Cli;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Repository root to index.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Where to keep the index (default: <PATH>/.iret).
    #[arg(long)]
    pub index_dir: Option<PathBuf>,
    /// No progress bar or summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Rebuild even when no file changed.
    #[arg(long)]
    pub force: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let embedder = super::load_embedder(cli)?;
    let index_dir = args
        .index_dir
        .clone()
        .unwrap_or_else(|| iret_index::default_index_dir(&args.path));
    let opts = iret_index::BuildOptions {
        progress: !args.quiet && std::io::stderr().is_terminal(),
        limits: None,
        force: args.force,
    };
    let report = iret_index::build(&args.path, &index_dir, &embedder, &opts)?;
    if !args.quiet {
        eprintln!("{}", report.summary());
    }
    Ok(ExitCode::SUCCESS)
}
