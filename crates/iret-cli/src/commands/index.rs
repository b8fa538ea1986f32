use crate::Cli;
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub at: super::Location,
    /// No progress bar or summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Rebuild even when no file changed.
    #[arg(long)]
    pub force: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let embedder = super::load_embedder(cli)?;
    let index_dir = args.at.index_dir();
    let opts = iret_index::BuildOptions {
        progress: !args.quiet && std::io::stderr().is_terminal(),
        limits: None,
        force: args.force,
        embedding_cache: None,
    };
    let report = iret_index::build(&args.at.path, &index_dir, embedder.as_ref(), &opts)?;
    for note in &report.notes {
        eprintln!("iret: warning: {note}");
    }
    if !args.quiet {
        eprintln!("{}", report.summary());
    }
    Ok(ExitCode::SUCCESS)
}
