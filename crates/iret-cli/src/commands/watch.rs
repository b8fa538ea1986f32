//! `iret watch`: keeps a repository's index fresh as files change, for editors and for
//! agents that call `iret search` (each search then answers at once).
use crate::Cli;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Watch a repository and update its index in the background as files change.
#[derive(clap::Args)]
pub struct Args {
    /// A folder of the repository (its index is found as for `iret search`).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Where the index lives (default: <repository root>/.iret).
    #[arg(long)]
    pub index_dir: Option<PathBuf>,
    /// Say nothing but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let engine = Arc::new(super::open_engine(
        cli,
        &args.path,
        args.index_dir.as_deref(),
        true,
        true,
        true,
    )?);
    // Changes made while iret was not watching go in first.
    let files = engine.update()?;
    let quiet = args.quiet;
    if !quiet && files > 0 {
        eprintln!("iret watch: took in {files} changed files");
    }
    let _watch = iret_engine::watch::watch(&engine, move |u| match &u.error {
        Some(e) => eprintln!("iret watch: the update failed: {e}"),
        None if !quiet && u.files > 0 => eprintln!(
            "iret watch: updated {} files in {} ms",
            u.files,
            u.took.as_millis()
        ),
        None => {}
    })?;
    if !quiet {
        eprintln!(
            "iret watch: watching {} (Ctrl-C stops)",
            engine.root().display()
        );
    }
    loop {
        std::thread::park();
    }
}
