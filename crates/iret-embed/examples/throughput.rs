//! iret's embedder over texts from a JSON-lines file (one string per line), in the
//! batches a build uses: texts/s, to set beside ONNX Runtime alone on the same texts
//! (the journal's session figures). `cargo run --release -p iret-embed --example throughput -- texts.jsonl`
use iret_embed::{Embedder, OnnxEmbedder};
use std::io::BufRead;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: throughput TEXTS.jsonl"))?;
    let texts: Vec<String> = std::io::BufReader::new(std::fs::File::open(path)?)
        .lines()
        .map(|l| Ok(serde_json::from_str(&l?)?))
        .collect::<anyhow::Result<_>>()?;
    let e = OnnxEmbedder::load(&iret_embed::locate_model_dir(None)?)?;
    e.embed(&["warm up"])?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    for batch in refs.chunks(32) {
        e.embed(batch)?;
    }
    let s = started.elapsed().as_secs_f64();
    println!(
        "iret OnnxEmbedder: {} texts in {s:.2} s = {:.0} texts/s",
        texts.len(),
        texts.len() as f64 / s
    );
    Ok(())
}
