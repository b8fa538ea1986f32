//! Text embedders for iret.
//!
//! [`Embedder`] is the one seam between retrieval logic and the model: the index and the
//! retrieval loop only ever see this trait. [`OnnxEmbedder`] runs the shipped local model
//! through fastembed + ONNX Runtime; [`FakeEmbedder`] is deterministic and needs no model,
//! so ranking logic can be unit-tested.
mod bundled;
mod fake;
mod model;
mod onnx;
mod query_map;
mod runtime;
mod static_model;
mod tokens;

pub use bundled::{bundled_model_dir, bundled_static_model_dir, shipped_static};
pub use fake::FakeEmbedder;
pub use model::{locate_model_dir, ModelManifest, DEFAULT_MODEL, STATIC_MODEL};
pub use onnx::OnnxEmbedder;
pub use query_map::{Mapped, QueryMap, QUERY_MAP_DIR};
pub use runtime::{cache_dir, environment as onnx_environment, ort_library_path};
pub use static_model::StaticEmbedder;
pub use tokens::TokenCounter;

/// What can go wrong while loading or running an embedder.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("no embedding model found (looked in: {tried}). Set IRET_MODEL_DIR or pass --model-dir to a folder with manifest.json and model.onnx")]
    ModelMissing { tried: String },
    #[error("the model folder {dir} is unusable: {reason}")]
    ModelInvalid { dir: String, reason: String },
    #[error("ONNX Runtime could not be loaded from {path}: {reason}. Set ORT_DYLIB_PATH to a libonnxruntime.so (version {version})")]
    Runtime {
        path: String,
        reason: String,
        version: &'static str,
    },
    #[error("embedding failed: {0}")]
    Inference(String),
}

/// Turns texts into L2-normalised vectors of a fixed dimension.
pub trait Embedder: Send + Sync {
    /// Identifies the model (and variant); recorded in the index manifest.
    fn model_id(&self) -> &str;
    /// Vector dimension.
    fn dims(&self) -> usize;
    /// Embeds one batch. Callers batch; implementations may split further.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Embedding is cheaper than looking a vector up (a static table): builds embed
    /// every text directly, without the embedding cache or a keyword tier first.
    fn is_cheap(&self) -> bool {
        false
    }
    /// The vector the vector leg searches with for a query embedded as `v`: `v` itself,
    /// unless a tuned query encoder maps it ([`Mapped`]). Evaluate and refine compare
    /// texts in the documents' own space and use `v`.
    fn map_query(&self, v: Vec<f32>) -> Vec<f32> {
        v
    }
}

/// Loads the model in `dir`: a static table (`"kind": "static"` in its manifest, see
/// [`StaticEmbedder`]) or a transformer run by ONNX Runtime ([`OnnxEmbedder`]).
pub fn load_model(dir: &std::path::Path) -> Result<std::sync::Arc<dyn Embedder>, EmbedError> {
    let kind = std::fs::read(dir.join("manifest.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|m| m.get("kind").and_then(|k| k.as_str()).map(str::to_string));
    Ok(match kind.as_deref() {
        Some("static") => std::sync::Arc::new(StaticEmbedder::load(dir)?),
        _ => std::sync::Arc::new(OnnxEmbedder::load(dir)?),
    })
}

/// Whether an index's vectors come from a static model: its id says so (the distilling
/// script names every static model `static-…`).
pub fn is_static_model(model_id: &str) -> bool {
    model_id.starts_with("static-")
}

/// Scales `v` to unit length (no-op for the zero vector).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Dot product; equals cosine similarity for normalised vectors.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
