//! How far a text's vector in a batched call drifts from the text embedded alone (which is
//! how queries are embedded), per batch size, over paragraphs of the files in a folder.
//! `cargo run --release -p iret-embed --example fidelity -- <folder>`
use iret_embed::{dot, Embedder, OnnxEmbedder};
fn main() -> anyhow::Result<()> {
    let e = OnnxEmbedder::load(&iret_embed::locate_model_dir(None)?)?;
    let mut texts: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "crates/iret-retrieve/src".into()),
    )? {
        let p = entry?.path();
        if let Ok(t) = std::fs::read_to_string(&p) {
            for (i, part) in t.split("\n\n").enumerate() {
                if part.len() > 20 && i % 3 == 0 {
                    texts.push(part.chars().take(2000).collect());
                }
            }
        }
    }
    texts.sort_by_key(|t| t.len());
    let step = (texts.len() / 192).max(1);
    let texts: Vec<&str> = texts
        .iter()
        .step_by(step)
        .map(|s| s.as_str())
        .take(192)
        .collect();
    let single: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| e.embed(&[t]).unwrap().remove(0))
        .collect();
    for b in [4usize, 8, 16, 32, 64] {
        let mut worst = 1.0f32;
        let mut sum = 0.0;
        let mut short = 0.0;
        let mut long = 0.0;
        let n = texts.len();
        for (ci, chunk) in texts.chunks(b).enumerate() {
            let out = e.embed(chunk)?;
            for (j, v) in out.iter().enumerate() {
                let i = ci * b + j;
                let c = dot(v, &single[i]);
                worst = worst.min(c);
                sum += c;
                if i < n / 2 {
                    short += c
                } else {
                    long += c
                }
            }
        }
        println!(
            "batch {b:3}: mean cos {:.5} (short half {:.5}, long half {:.5}), worst {:.5}",
            sum / n as f32,
            short / (n / 2) as f32,
            long / (n - n / 2) as f32,
            worst
        );
    }
    Ok(())
}
