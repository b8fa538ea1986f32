//! The shipped local model, run through fastembed on ONNX Runtime.
use crate::model::ModelManifest;
use crate::{normalize, runtime, EmbedError, Embedder};
use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The ONNX session is created on the first `embed` call: a re-index that finds every
/// chunk in the embedding cache never loads the model.
pub struct OnnxEmbedder {
    id: String,
    dims: usize,
    dir: PathBuf,
    inner: OnceLock<Mutex<TextEmbedding>>,
}

impl OnnxEmbedder {
    /// Opens `dir` (a folder with manifest.json, model.onnx and tokenizer files). The
    /// manifest and files are checked now; the session is created on first use.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let manifest = ModelManifest::load(dir)?;
        for name in [
            manifest.onnx.as_str(),
            "tokenizer.json",
            "config.json",
            "special_tokens_map.json",
            "tokenizer_config.json",
        ] {
            if !dir.join(name).is_file() {
                return Err(EmbedError::ModelInvalid {
                    dir: dir.display().to_string(),
                    reason: format!("{name} is missing"),
                });
            }
        }
        Ok(Self {
            id: format!(
                "{}@{}",
                manifest.id,
                &manifest.onnx_sha256[..12.min(manifest.onnx_sha256.len())]
            ),
            dims: manifest.dims,
            dir: dir.to_path_buf(),
            inner: OnceLock::new(),
        })
    }

    fn session(&self) -> Result<&Mutex<TextEmbedding>, EmbedError> {
        if let Some(s) = self.inner.get() {
            return Ok(s);
        }
        let session = Self::create(&self.dir)?;
        Ok(self.inner.get_or_init(|| Mutex::new(session)))
    }

    fn create(dir: &Path) -> Result<TextEmbedding, EmbedError> {
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
        // ORT's SkipLayerNormalization kernel takes 18% of this model's time on one
        // sequence (160 µs a call against 28 µs for Add + LayerNormalization): without the
        // fusion a cold index of serde takes 20.2 s instead of 22.5 s (docs/journal/benchmarks.md),
        // equally close to the fp32 model (cos min 0.9951 either way).
        let options = InitOptionsUserDefined::new()
            .with_environment(env)
            .with_max_length(manifest.max_length)
            .with_session_config(
                "optimization.disable_specified_optimizers",
                DISABLED_OPTIMIZERS,
            );
        TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| {
            EmbedError::ModelInvalid {
                dir: dir.display().to_string(),
                reason: e.to_string(),
            }
        })
    }
}

/// ONNX Runtime graph optimisations iret turns off (slower than what they replace here).
const DISABLED_OPTIMIZERS: &str = "SkipLayerNormFusion";

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
        let mut model = self.session()?.lock().unwrap_or_else(|p| p.into_inner());
        // One text per model call. The int8 model quantises activations per call, so in a
        // batch a text's vector depends on its batch mates (padding included): batches of
        // 32 drift to cos 0.994 from the text alone, which is how queries are embedded.
        // Alone, a text gets the same vector in every build, query or update; and memory
        // stays at one sequence's working set (peak RSS of a cold index 1.08 GB → 0.18 GB,
        // at the same speed on 2 cores).
        let mut out = model
            .embed(texts, Some(1))
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
