use crate::Cli;
use iret_engine::maintain;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

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
    /// Embed in the foreground however many texts there are. Without it, a build with
    /// more than --background-above texts to embed stops once its static tier is live
    /// (searches answer from it at once) and finishes the embedding in a background
    /// `iret index`.
    #[arg(long)]
    pub wait: bool,
    /// Texts to embed above which the embedding goes to the background (about 12 min of
    /// the transformer on 2 cores at 50,000).
    #[arg(long, env = "IRET_BACKGROUND_ABOVE", default_value_t = super::BACKGROUND_ABOVE, value_name = "TEXTS")]
    pub background_above: usize,
    /// With --store: take the vectors the store holds, but push nothing to it (a
    /// reader's build; background builds started by `search` and `mcp` use it).
    #[arg(long)]
    pub no_push: bool,
    /// Index what ignore files leave out too (ripgrep's word): `.gitignore`, `.ignore`,
    /// `.iretignore` and git's excludes are not read; vendored and build folders stay
    /// skipped (a `!vendor/` line in .iretignore brings one back). The index remembers
    /// it: searches, the server and `iret status` refresh it the same way until an
    /// `iret index --ignore`.
    #[arg(long, overrides_with = "ignore")]
    pub no_ignore: bool,
    /// Honour ignore files again (the default; undoes an earlier --no-ignore).
    #[arg(long, overrides_with = "no_ignore")]
    pub ignore: bool,
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
    let store = match super::store::target(cli)? {
        Some(target) => Some(super::store::connect(
            &target,
            &args.at.path,
            embedder.model_id(),
            embedder.dims(),
            true,
        )?),
        None => None,
    };
    let opts = maintain::BuildOptions {
        progress: !args.quiet && std::io::stderr().is_terminal(),
        limits: None,
        force: args.force,
        embedding_cache: None,
        // A cold build answers from static vectors within seconds, while the model embeds.
        static_tier: true,
        // A store takes only the model's own vectors: the build embeds them all first.
        tier_only_above: (!args.wait && store.is_none()).then_some(args.background_above),
        remote: store.clone().map(|s| s as Arc<dyn maintain::RemoteVectors>),
        walk: if args.no_ignore {
            Some(maintain::WalkOptions { no_ignore: true })
        } else if args.ignore {
            Some(maintain::WalkOptions::default())
        } else {
            None
        },
        segment_bytes: None,
    };
    let report = maintain::index(&args.at.path, &index_dir, embedder.as_ref(), &opts)?;
    for note in &report.notes {
        eprintln!("iret: warning: {note}");
    }
    if report.deferred > 0 {
        let pid = super::embed_in_background(cli, &args.at.path, &index_dir)?;
        eprintln!(
            "iret: {} files, {} chunks: the first tier is live and searches answer from it now; \
             {} texts are left to embed (a first build above --background-above {} texts \
             embeds in the background), so a background `iret index` (pid {pid}) embeds them (`iret status` follows it; its log: {}; \
             `iret index --wait` embeds in the foreground)",
            report.files,
            report.chunks,
            report.deferred,
            args.background_above,
            index_dir.join(super::BACKGROUND_LOG).display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !args.quiet {
        eprintln!("{}", report.summary());
    }
    if let Some(why) = &report.nothing {
        eprintln!("iret: {why}");
        return Ok(ExitCode::from(2));
    }
    if let Some(store) = store.filter(|_| !args.no_push) {
        let progress = !args.quiet && std::io::stderr().is_terminal();
        let ref_name = super::store::ref_name(cli, &args.at.path);
        let commit = maintain::head_of(&args.at.path);
        let pushed = iret_chroma::push_index(
            &store,
            &index_dir,
            embedder.model_id(),
            &ref_name,
            commit.as_deref(),
            progress,
        )?;
        if !args.quiet {
            eprintln!("{}", pushed.summary(&store));
        }
    }
    Ok(ExitCode::SUCCESS)
}
