//! `iret cache`: the embedding cache every index on this machine shares.
use iret_engine::maintain::embedding_cache as cache;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Remove the cache (indexes keep their vectors; new texts are embedded again).
    #[arg(long)]
    pub clear: bool,
    /// Check every page and entry of the cache (exit 1 when something is damaged; the
    /// next `iret index` rebuilds what is).
    #[arg(long, conflicts_with = "clear")]
    pub verify: bool,
    /// One JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let dir = cache::user_dir();
    if args.clear {
        let freed = cache::clear(&dir)
            .map_err(|e| anyhow::anyhow!("cannot remove the cache in {}: {e}", dir.display()))?;
        eprintln!(
            "removed the embedding cache in {} ({:.1} MB)",
            dir.display(),
            freed as f64 / 1e6
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.verify {
        return Ok(match cache::verify(&dir) {
            Ok(n) => {
                println!("ok: {n} entries checked in {}", dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!(
                    "iret: the embedding cache in {} is damaged: {e}",
                    dir.display()
                );
                ExitCode::from(1)
            }
        });
    }
    let stats = cache::stats(&dir)
        .map_err(|e| anyhow::anyhow!("cannot read the cache in {}: {e}", dir.display()))?;
    if args.json {
        let doc = serde_json::json!({
            "path": dir.join(cache::DB_FILE),
            "entries": stats.as_ref().map_or(0, |s| s.entries),
            "bytes": stats.as_ref().map_or(0, |s| s.bytes),
            "cap_bytes": cache::cap_bytes(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("path       {}", dir.join(cache::DB_FILE).display());
    match stats {
        Some(s) => {
            println!("entries    {}", s.entries);
            println!("size       {:.1} MB", s.bytes as f64 / 1e6);
        }
        None => println!("entries    0 (no cache yet)"),
    }
    println!(
        "cap        {:.0} MB (IRET_EMBED_CACHE_MAX; least recently used go first)",
        cache::cap_bytes() as f64 / 1e6
    );
    Ok(ExitCode::SUCCESS)
}
