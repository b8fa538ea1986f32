//! Token counts with the shipped model's own tokenizer (no truncation): how budgets of
//! "about N tokens" are measured.
use crate::EmbedError;
use std::path::Path;

pub struct TokenCounter {
    tokenizer: tokenizers::Tokenizer,
}

impl TokenCounter {
    /// The tokenizer of a model folder (`tokenizer.json`).
    pub fn load(model_dir: &Path) -> Result<Self, EmbedError> {
        Ok(Self {
            tokenizer: plain_tokenizer(model_dir)?,
        })
    }

    /// Tokens of `text` (special tokens excluded).
    pub fn count(&self, text: &str) -> usize {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.len())
            // A text the tokenizer cannot take is counted by a rough rule rather than lost.
            .unwrap_or_else(|_| text.len() / 3)
    }
}

/// A model folder's `tokenizer.json` without truncation or padding: every token of a text.
pub(crate) fn plain_tokenizer(model_dir: &Path) -> Result<tokenizers::Tokenizer, EmbedError> {
    let invalid = |e: tokenizers::Error| EmbedError::ModelInvalid {
        dir: model_dir.display().to_string(),
        reason: format!("tokenizer.json: {e}"),
    };
    let mut tokenizer =
        tokenizers::Tokenizer::from_file(model_dir.join("tokenizer.json")).map_err(invalid)?;
    tokenizer.with_truncation(None).map_err(invalid)?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}
