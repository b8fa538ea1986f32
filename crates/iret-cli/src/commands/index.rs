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
    /// Embed with the shipped static model (a token table, no transformer): an index of
    /// any size in seconds to minutes, searched with the same hybrid loop, somewhat less
    /// accurate. Searches on it use the static model too; `iret index` without the flag
    /// re-embeds it with the transformer.
    #[arg(long = "static")]
    pub static_model: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let index_dir = args.at.index_dir();
    if args.static_model && cli.model_dir.is_some() {
        anyhow::bail!("--static uses the shipped static model: leave out --model-dir (or point --model-dir at a static model)");
    }
    let model = if args.static_model {
        iret_embed::bundled_static_model_dir()?
    } else {
        super::model_dir(cli)?
    };
    let embedder = iret_embed::load_model(&model)?;
    let opts = iret_index::BuildOptions {
        progress: !args.quiet && std::io::stderr().is_terminal(),
        limits: None,
        force: args.force,
        embedding_cache: None,
        // A cold build answers from static vectors within seconds, while the model embeds.
        static_tier: true,
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
