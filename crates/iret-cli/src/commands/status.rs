use iret_engine::maintain;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub at: super::Location,
    /// One JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cli: &crate::Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let (root, index_dir) = super::locate(&args.at.path, args.at.index_dir.as_deref());
    let full = maintain::status(&root, &index_dir)?;
    let s = &full.index;
    let store = match super::store::target(cli)? {
        Some(target) => Some(store_status(cli, &target, &root, &index_dir)?),
        None => None,
    };
    if args.json {
        let mut v = serde_json::to_value(&full)?;
        if let Some(store) = &store {
            v["store"] = serde_json::to_value(store)?;
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(st) = &store {
        print_store(st);
    }
    println!("index      {} ({})", index_dir.display(), s.generation);
    println!("files      {}", s.files);
    println!("chunks     {}", s.chunks);
    println!(
        "stale      {} ({} modified, {} added, {} deleted)",
        s.stale(),
        s.modified.len(),
        s.added.len(),
        s.deleted.len()
    );
    let tier = if s.tier == "static" {
        "static tier (the shipped static model's vectors)"
    } else {
        "keyword tier"
    };
    match (s.pending_vectors, full.progress) {
        (0, _) => println!("embedded   all chunks"),
        (_, Some(p)) => println!(
            "embedded   {tier}; a build is embedding ({} of {} texts done{})",
            p.embedded,
            p.total,
            match p.eta_text() {
                eta if eta.is_empty() => eta,
                eta => format!(", {eta}"),
            }
        ),
        (n, None) => {
            println!("embedded   {tier} ({n} chunks pending; `iret index` completes it)")
        }
    }
    if !s.skipped.is_empty() {
        let parts: Vec<String> = s.skipped.iter().map(|(r, n)| format!("{n} {r}")).collect();
        println!(
            "skipped    {} (a `!` line in .iretignore brings back what is skipped by default)",
            parts.join(", ")
        );
    }
    if s.no_ignore {
        println!("walk       ignore files not read (built with --no-ignore; `iret index --ignore` reads them again)");
    }
    let h = &s.history;
    match (&h.head, h.commits) {
        (None, _) => println!("history    none (not a git repository, or no commits)"),
        (Some(head), n) => println!(
            "history    {n} commits touching {} paths, up to {} ({} merges and {} commits over {} files read without files){}",
            h.paths,
            &head[..head.len().min(12)],
            h.merges,
            h.huge,
            maintain::HISTORY_MAX_FILES,
            if h.moved() { "; HEAD moved since: `iret index` updates it" } else { "" }
        ),
    }
    println!("on disk    {:.1} MB", s.bytes_on_disk as f64 / 1e6);
    match &s.embedding_cache {
        Some(c) => println!(
            "cache      {} embeddings, {:.1} of {:.0} MB, shared by every index ({}; `iret cache --clear` removes it)",
            c.entries,
            c.bytes as f64 / 1e6,
            c.cap_bytes as f64 / 1e6,
            c.path.display()
        ),
        None => println!("cache      none yet ({})", full.cache_dir.display()),
    }
    println!("model      {}", s.model_id);
    println!(
        "format     {} (chunker {})",
        s.format_version, s.chunker_version
    );
    for (label, list) in [
        ("modified", &s.modified),
        ("added", &s.added),
        ("deleted", &s.deleted),
    ] {
        for p in list.iter().take(10) {
            println!("  {label:<9} {p}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What the store holds for this index and this checkout's ref.
#[derive(serde::Serialize)]
struct StoreStatus {
    url: String,
    records: usize,
    chunks: usize,
    chunks_present: usize,
    /// This checkout's ref (its branch, or --store-ref).
    #[serde(rename = "ref")]
    ref_name: String,
    /// Every ref's latest push the collection records.
    refs: Vec<iret_chroma::RefInfo>,
}

fn store_status(
    cli: &crate::Cli,
    target: &super::store::Target,
    root: &std::path::Path,
    index_dir: &std::path::Path,
) -> anyhow::Result<StoreStatus> {
    let (model_id, dims) = maintain::live_model(index_dir)?;
    let store = super::store::connect(target, root, &model_id, dims, false)?;
    let (chunks, chunks_present) = store.coverage(index_dir)?;
    Ok(StoreStatus {
        url: store.url().to_string(),
        records: store.count()?,
        chunks,
        chunks_present,
        ref_name: super::store::ref_name(cli, root),
        refs: store.refs()?,
    })
}

fn print_store(st: &StoreStatus) {
    println!(
        "store      {}: {} records; {} of this index's {} chunks there",
        st.url, st.records, st.chunks_present, st.chunks
    );
    let mine = st.refs.iter().find(|r| r.name == st.ref_name);
    match mine {
        Some(r) => println!(
            "           this checkout's ref {}: {} records, pushed {}",
            r.name,
            r.records,
            ago(r.pushed_at)
        ),
        None => println!(
            "           this checkout's ref {} has not been pushed (`iret index --store …` pushes it)",
            st.ref_name
        ),
    }
    for r in st.refs.iter().filter(|r| r.name != st.ref_name) {
        println!(
            "           ref {}: {} records, pushed {}",
            r.name,
            r.records,
            ago(r.pushed_at)
        );
    }
}

/// `3 min ago`, by this machine's clock.
fn ago(unix: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(unix);
    let s = now.saturating_sub(unix);
    match s {
        0..=119 => format!("{s} s ago"),
        120..=7199 => format!("{} min ago", s / 60),
        7200..=172_799 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}
