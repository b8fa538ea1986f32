//! A static embedding model: a table of token vectors, and a text's vector is the mean of
//! its tokens' rows (normalised). No ONNX Runtime, no window: a text is embedded whole, in
//! microseconds. The table is distilled from the shipped transformer by
//! `scripts/distill-static.py` (the model2vec recipe); its folder holds `manifest.json`
//! (`"kind": "static"`), the table (`static.f16`: vocabulary × dims, little-endian f16,
//! row = token id) and the transformer's `tokenizer.json`.
use crate::{normalize, EmbedError, Embedder};
use std::path::Path;

#[derive(serde::Deserialize)]
struct StaticManifest {
    id: String,
    dims: usize,
    vocab: usize,
    table: String,
}

pub struct StaticEmbedder {
    id: String,
    dims: usize,
    /// vocab × dims, row-major.
    table: Vec<f32>,
    tokenizer: tokenizers::Tokenizer,
}

impl StaticEmbedder {
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let invalid = |reason: String| EmbedError::ModelInvalid {
            dir: dir.display().to_string(),
            reason,
        };
        let bytes = std::fs::read(dir.join("manifest.json"))
            .map_err(|e| invalid(format!("manifest.json: {e}")))?;
        let m: StaticManifest =
            serde_json::from_slice(&bytes).map_err(|e| invalid(format!("manifest.json: {e}")))?;
        let raw =
            std::fs::read(dir.join(&m.table)).map_err(|e| invalid(format!("{}: {e}", m.table)))?;
        if m.dims == 0 || raw.len() != m.vocab * m.dims * 2 {
            return Err(invalid(format!(
                "{} holds {} bytes, not {} tokens × {} dims of f16",
                m.table,
                raw.len(),
                m.vocab,
                m.dims
            )));
        }
        let table = raw
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect();
        let tokenizer = crate::tokens::plain_tokenizer(dir)?;
        Ok(Self {
            id: m.id,
            dims: m.dims,
            table,
            tokenizer,
        })
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = vec![0.0f32; self.dims];
        let mut add = |id: u32| {
            let start = id as usize * self.dims;
            // A token beyond the table (a tokenizer newer than it) adds nothing.
            if let Some(row) = self.table.get(start..start + self.dims) {
                v.iter_mut().zip(row).for_each(|(a, b)| *a += b);
            }
        };
        // The tokenizer splits on whitespace before anything else, so a text's tokens are
        // its words' tokens: each distinct word is tokenized once per thread (code repeats
        // its words; several times faster than tokenizing every text whole).
        WORDS.with(|memo| -> Result<(), EmbedError> {
            let mut memo = memo.borrow_mut();
            if memo.len() > MEMO_WORDS {
                memo.clear();
            }
            for word in text.split_whitespace() {
                if let Some(ids) = memo.get(word) {
                    ids.iter().for_each(|&id| add(id));
                    continue;
                }
                let ids = self.word_ids(word)?;
                ids.iter().for_each(|&id| add(id));
                memo.insert(word.to_string(), ids);
            }
            Ok(())
        })?;
        // The mean's direction is the sum's: normalising is enough.
        normalize(&mut v);
        Ok(v)
    }

    /// One word's token ids (only the ids: `encode_fast` skips the offsets).
    fn word_ids(&self, word: &str) -> Result<Vec<u32>, EmbedError> {
        self.tokenizer
            .encode_fast(word, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| EmbedError::Inference(e.to_string()))
    }
}

/// Words remembered per thread before the memo starts over.
const MEMO_WORDS: usize = 500_000;

thread_local! {
    static WORDS: std::cell::RefCell<std::collections::HashMap<String, Vec<u32>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

impl Embedder for StaticEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }

    fn is_cheap(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A static model folder over the shipped tokenizer whose table gives token `id` the
    /// row `[id, 1]`.
    fn folder(vocab: usize, bytes: Option<Vec<u8>>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-minilm-l6-v2");
        std::fs::copy(
            shipped.join("tokenizer.json"),
            dir.path().join("tokenizer.json"),
        )
        .unwrap();
        let manifest = serde_json::json!({"id": "static-test", "kind": "static", "dims": 2, "vocab": vocab, "table": "static.f16"});
        std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
        let table = bytes.unwrap_or_else(|| {
            (0..vocab)
                .flat_map(|id| [id as f32, 1.0])
                .flat_map(|x| half::f16::from_f32(x).to_le_bytes())
                .collect()
        });
        std::fs::write(dir.path().join("static.f16"), table).unwrap();
        dir
    }

    #[test]
    fn a_text_is_the_normalised_mean_of_its_token_rows() {
        let dir = folder(30522, None);
        let e = crate::load_model(dir.path()).unwrap();
        assert_eq!((e.model_id(), e.dims()), ("static-test", 2));
        let s = StaticEmbedder::load(dir.path()).unwrap();
        let ids = s.tokenizer.encode("token expiry", false).unwrap();
        let ids: Vec<f32> = ids
            .get_ids()
            .iter()
            .map(|&i| half::f16::from_f32(i as f32).to_f32())
            .collect();
        let mut want = vec![ids.iter().sum::<f32>(), ids.len() as f32];
        normalize(&mut want);
        let got = e.embed(&["token expiry"]).unwrap().remove(0);
        assert!(
            (got[0] - want[0]).abs() < 1e-5 && (got[1] - want[1]).abs() < 1e-5,
            "{got:?} {want:?}"
        );
        // A text with no tokens is the zero vector, not NaN.
        assert_eq!(e.embed(&[""]).unwrap()[0], vec![0.0, 0.0]);
    }

    #[test]
    fn a_table_of_the_wrong_size_is_refused() {
        let dir = folder(30522, Some(vec![0u8; 10]));
        let err = StaticEmbedder::load(dir.path()).err().unwrap().to_string();
        assert!(err.contains("not 30522 tokens"), "{err}");
    }

    #[test]
    fn word_by_word_tokens_are_the_whole_texts_tokens() {
        let dir = folder(30522, None);
        let s = StaticEmbedder::load(dir.path()).unwrap();
        let texts = [
            include_str!("static_model.rs"),
            include_str!("../../../tests/fixtures/ts-app/src/middleware/throttle.ts"),
            "naïve café — 東京 tokens\tand\r\nodd\u{3000}spaces __init__(self)",
        ];
        for text in texts {
            let mut whole = s
                .tokenizer
                .encode_fast(text, false)
                .unwrap()
                .get_ids()
                .to_vec();
            let mut words: Vec<u32> = text
                .split_whitespace()
                .flat_map(|w| s.word_ids(w).unwrap())
                .collect();
            whole.sort_unstable();
            words.sort_unstable();
            assert_eq!(whole, words, "{}", &text[..40.min(text.len())]);
        }
    }
}
