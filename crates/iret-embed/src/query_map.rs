//! The tuned query encoder: a linear map on the shipped model's query vector,
//! `q' = normalise(W q + b)`, trained by `scripts/encoder/train.py` to place a task near
//! the chunks of the files it is about (`models/query-map`, compiled in). Documents keep
//! the shipped model's vectors, so every index, the embedding cache and a team's store
//! stay valid: only queries go through the map ([`Mapped`]).
use crate::{EmbedError, Embedder};
use serde::Deserialize;
use std::path::Path;
use std::sync::{Arc, OnceLock};

static SHIPPED_MANIFEST: &[u8] = include_bytes!("../../../models/query-map/manifest.json");
static SHIPPED_MAP: &[u8] = include_bytes!("../../../models/query-map/map.bin");

/// The environment variable naming a query-map folder to use instead of the shipped one.
pub const QUERY_MAP_DIR: &str = "IRET_QUERY_MAP_DIR";

#[derive(Debug, Deserialize)]
struct Manifest {
    kind: String,
    dims: usize,
    /// The id of the model whose query vectors it maps (its documents' model).
    base_model: String,
}

/// `W` (row-major, dims × dims) and `b`.
#[derive(Debug)]
pub struct QueryMap {
    base_model: String,
    dims: usize,
    w: Vec<f32>,
    b: Vec<f32>,
}

impl QueryMap {
    /// The map compiled into the binary, loaded once per process; or the folder
    /// `IRET_QUERY_MAP_DIR` names ([`QueryMap::load`]), to measure a newly trained one.
    pub fn shipped() -> Result<Arc<Self>, EmbedError> {
        static SHIPPED: OnceLock<Result<Arc<QueryMap>, String>> = OnceLock::new();
        SHIPPED
            .get_or_init(|| {
                let map = match std::env::var_os(QUERY_MAP_DIR) {
                    Some(dir) => Self::load(Path::new(&dir)),
                    None => {
                        Self::from_parts("the shipped query map", SHIPPED_MANIFEST, SHIPPED_MAP)
                    }
                };
                map.map(Arc::new).map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|reason| EmbedError::ModelInvalid {
                dir: "query map".into(),
                reason,
            })
    }

    /// A folder with `manifest.json` and `map.bin`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| EmbedError::ModelInvalid {
                dir: dir.display().to_string(),
                reason: format!("cannot read {name}: {e}"),
            })
        };
        Self::from_parts(
            &dir.display().to_string(),
            &read("manifest.json")?,
            &read("map.bin")?,
        )
    }

    fn from_parts(source: &str, manifest: &[u8], blob: &[u8]) -> Result<Self, EmbedError> {
        let invalid = |reason: String| EmbedError::ModelInvalid {
            dir: source.to_string(),
            reason,
        };
        let m: Manifest =
            serde_json::from_slice(manifest).map_err(|e| invalid(format!("manifest.json: {e}")))?;
        if m.kind != "linear" {
            return Err(invalid(format!(
                "a query map of kind {:?} (this iret reads \"linear\")",
                m.kind
            )));
        }
        let want = 4 * m.dims * (m.dims + 1);
        if m.dims == 0 || blob.len() != want {
            return Err(invalid(format!(
                "map.bin holds {} bytes; {} dimensions need {want}",
                blob.len(),
                m.dims
            )));
        }
        let floats: Vec<f32> = blob
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if floats.iter().any(|x| !x.is_finite()) {
            return Err(invalid("map.bin holds a value that is not finite".into()));
        }
        let (w, b) = floats.split_at(m.dims * m.dims);
        Ok(Self {
            base_model: m.base_model,
            dims: m.dims,
            w: w.to_vec(),
            b: b.to_vec(),
        })
    }

    /// Whether it maps `model`'s vectors: the same model id and dimensions.
    pub fn fits(&self, model: &dyn Embedder) -> bool {
        model.model_id() == self.base_model && model.dims() == self.dims
    }

    pub fn base_model(&self) -> &str {
        &self.base_model
    }

    /// `normalise(W v + b)`; `v` unchanged when its length is not the map's.
    pub fn apply(&self, v: &[f32]) -> Vec<f32> {
        if v.len() != self.dims {
            return v.to_vec();
        }
        let mut out: Vec<f32> = self
            .w
            .chunks_exact(self.dims)
            .zip(&self.b)
            .map(|(row, b)| crate::dot(row, v) + b)
            .collect();
        crate::normalize(&mut out);
        out
    }
}

/// A query embedder: it embeds as the base model does (same space, same id, so an index
/// of that model answers it), and [`Embedder::map_query`] sends a query's vector through
/// the map for the vector leg. It embeds queries only, never an index's texts.
pub struct Mapped {
    inner: Arc<dyn Embedder>,
    map: Arc<QueryMap>,
}

impl Mapped {
    /// None when the map was not trained for `inner`'s vectors.
    pub fn new(inner: Arc<dyn Embedder>, map: Arc<QueryMap>) -> Option<Self> {
        map.fits(inner.as_ref()).then_some(Self { inner, map })
    }
}

impl Embedder for Mapped {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dims(&self) -> usize {
        self.inner.dims()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed(texts)
    }

    fn map_query(&self, v: Vec<f32>) -> Vec<f32> {
        self.map.apply(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FakeEmbedder;

    fn blob(dims: usize, w: &[f32], b: &[f32]) -> (Vec<u8>, Vec<u8>) {
        let manifest = format!(r#"{{"kind":"linear","dims":{dims},"base_model":"fake"}}"#);
        let bytes = w.iter().chain(b).flat_map(|x| x.to_le_bytes()).collect();
        (manifest.into_bytes(), bytes)
    }

    #[test]
    fn the_map_multiplies_adds_and_normalises() {
        let (m, b) = blob(2, &[0.0, 2.0, 1.0, 0.0], &[0.0, 1.0]);
        let map = QueryMap::from_parts("t", &m, &b).unwrap();
        // W (1, 0) + b = (0, 1) + (0, 1) = (0, 2) → (0, 1).
        assert_eq!(map.apply(&[1.0, 0.0]), vec![0.0, 1.0]);
        // W (0, 1) + b = (2, 0) + (0, 1) → (2, 1) / √5.
        let v = map.apply(&[0.0, 1.0]);
        assert!((v[0] - 2.0 / 5f32.sqrt()).abs() < 1e-6 && (v[1] - 1.0 / 5f32.sqrt()).abs() < 1e-6);
        assert_eq!(
            map.apply(&[1.0, 0.0, 0.0]),
            vec![1.0, 0.0, 0.0],
            "another length passes"
        );
    }

    #[test]
    fn a_broken_map_is_refused_with_its_reason() {
        let (m, b) = blob(2, &[1.0, 0.0, 0.0, 1.0], &[0.0]);
        let err = QueryMap::from_parts("t", &m, &b).unwrap_err().to_string();
        assert!(err.contains("20 bytes") && err.contains("24"), "{err}");
        let (m, b) = blob(1, &[f32::NAN], &[0.0]);
        assert!(QueryMap::from_parts("t", &m, &b)
            .unwrap_err()
            .to_string()
            .contains("finite"));
        let err =
            QueryMap::from_parts("t", br#"{"kind":"mlp","dims":1,"base_model":"x"}"#, &[0; 8])
                .unwrap_err()
                .to_string();
        assert!(err.contains("mlp"), "{err}");
    }

    #[test]
    fn it_maps_only_the_model_it_was_trained_for() {
        let fake: Arc<dyn Embedder> = Arc::new(FakeEmbedder::new(8));
        // The identity with the first two coordinates swapped.
        let mut w = vec![0.0f32; 64];
        for i in 2..8 {
            w[i * 8 + i] = 1.0;
        }
        w[1] = 1.0;
        w[8] = 1.0;
        let (m, b) = blob(8, &w, &[0.0; 8]);
        let mut other = QueryMap::from_parts("t", &m, &b).unwrap();
        other.base_model = "all-minilm-l6-v2-int8pc-ff".into();
        assert!(
            Mapped::new(fake.clone(), Arc::new(other)).is_none(),
            "trained for another model"
        );
        let mut map = QueryMap::from_parts("t", &m, &b).unwrap();
        map.base_model = fake.model_id().to_string();
        let mapped = Mapped::new(fake.clone(), Arc::new(map)).expect("fits");
        let raw = fake.embed(&["rate limiting"]).unwrap().remove(0);
        assert_eq!(
            mapped.embed(&["rate limiting"]).unwrap().remove(0),
            raw,
            "embeds as the base"
        );
        let got = mapped.map_query(raw.clone());
        let mut want = raw.clone();
        want.swap(0, 1);
        assert!(
            got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6),
            "{got:?} {want:?}"
        );
        assert_eq!(mapped.model_id(), fake.model_id());
    }

    #[test]
    fn the_shipped_map_loads() {
        let map = QueryMap::from_parts("shipped", SHIPPED_MANIFEST, SHIPPED_MAP).unwrap();
        let model: serde_json::Value = serde_json::from_str(include_str!(
            "../../../models/all-minilm-l6-v2/manifest.json"
        ))
        .unwrap();
        let id = format!(
            "{}@{}",
            model["id"].as_str().unwrap(),
            &model["onnx_sha256"].as_str().unwrap()[..12]
        );
        assert_eq!(
            map.base_model(),
            id,
            "it maps the shipped model, as OnnxEmbedder names it"
        );
    }
}
