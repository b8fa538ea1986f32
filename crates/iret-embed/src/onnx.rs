//! The shipped local model, run through fastembed on ONNX Runtime.
use crate::model::ModelManifest;
use crate::{normalize, runtime, EmbedError, Embedder};
use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use std::path::Path;
use std::sync::Mutex;

pub struct OnnxEmbedder {
    id: String,
    dims: usize,
    inner: Mutex<TextEmbedding>,
}

impl OnnxEmbedder {
    /// Loads `dir` (a folder with manifest.json, model.onnx and tokenizer files).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let manifest = ModelManifest::load(dir)?;
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| EmbedError::ModelInvalid {
                dir: dir.display().to_string(),
                reason: format!("cannot read {name}: {e}"),
            })
        };
        let tokenizer_files = TokenizerFiles {
            tokenizer_file: read("tokenizer.json")?,
            config_file: read("config.json")?,
            special_tokens_map_file: read("special_tokens_map.json")?,
            tokenizer_config_file: read("tokenizer_config.json")?,
        };
        let model = UserDefinedEmbeddingModel::new(read(&manifest.onnx)?, tokenizer_files)
            .with_pooling(Pooling::Mean);
        let env = runtime::environment()?;
        let options = InitOptionsUserDefined::new()
            .with_environment(env)
            .with_max_length(manifest.max_length);
        let inner = TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| {
            EmbedError::ModelInvalid {
                dir: dir.display().to_string(),
                reason: e.to_string(),
            }
        })?;
        Ok(Self {
            id: format!("{}@{}", manifest.id, &manifest.onnx_sha256[..12.min(manifest.onnx_sha256.len())]),
            dims: manifest.dims,
            inner: Mutex::new(inner),
        })
    }
}

impl Embedder for OnnxEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dims(&self) -> usize {
        self.dims
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut model = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = model
            .embed(texts, Some(texts.len()))
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        for v in &mut out {
            if v.len() != self.dims {
                return Err(EmbedError::Inference(format!(
                    "model returned {} dims, manifest says {}",
                    v.len(),
                    self.dims
                )));
            }
            normalize(v);
        }
        Ok(out)
    }
}
