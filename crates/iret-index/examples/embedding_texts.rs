//! Writes the texts a build of FOLDER embeds (chunk texts as the model sees them, then the
//! vocabulary terms), one JSON string per line, for throughput harnesses that must run on
//! the same texts as iret (`iret-embed`'s `throughput` example).
//! `cargo run --release -p iret-index --example embedding_texts -- FOLDER > texts.jsonl`
use iret_embed::FakeEmbedder;
use iret_index::{pipeline::embedding_text, Index};

fn main() -> anyhow::Result<()> {
    let folder = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: embedding_texts FOLDER"))?;
    // Chunking and the vocabulary do not depend on the model: a fake one builds them.
    let tmp = tempfile::tempdir()?;
    iret_index::build(
        folder.as_ref(),
        tmp.path(),
        &FakeEmbedder::new(8),
        &Default::default(),
    )?;
    let index = Index::open(tmp.path(), None)?;
    for c in index.chunks.iter() {
        let f = &index.files[c.file as usize];
        println!(
            "{}",
            serde_json::to_string(&embedding_text(&f.path, c.symbol, c.text))?
        );
    }
    for t in &index.vocab.terms {
        println!("{}", serde_json::to_string(t)?);
    }
    Ok(())
}
