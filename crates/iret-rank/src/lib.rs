//! The learned ranker iret ships: gradient-boosted trees trained with a ranking objective
//! (LightGBM's LambdaMART, `scripts/ranker/train.py`) on tasks mined from public histories,
//! exported to ONNX and run by the ONNX Runtime the embedder already bundles. It reads the
//! features `iret_retrieve::ranking::Features` names, in the order its manifest lists
//! (a model trained on other features is refused), and calibrates its score to a
//! probability with the manifest's Platt parameters.
//!
//! The model's files (`models/ranker/ranker.onnx`, `manifest.json`) are compiled in;
//! [`OnnxRanker::load`] reads another folder's.
use anyhow::Context;
use iret_retrieve::ranking::{Features, Ranker};
use ort::session::Session;
use ort::value::Tensor;
use serde::Deserialize;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

static SHIPPED_ONNX: &[u8] = include_bytes!("../../../models/ranker/ranker.onnx");
static SHIPPED_MANIFEST: &str = include_str!("../../../models/ranker/manifest.json");

/// The environment variable naming a ranker folder to use instead of the shipped one.
pub const RANKER_DIR: &str = "IRET_RANKER_DIR";

/// What `manifest.json` says of the trees.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub kind: String,
    /// The model's inputs, in order.
    pub features: Vec<String>,
    pub calibration: Calibration,
    pub trees: usize,
    /// The score the trees boost from (train.py `--base-weight`): `weight` times the
    /// feature `feature`, added to the trees' output. None: the trees alone.
    #[serde(default)]
    pub base: Option<Base>,
}

/// A linear starting score, added to the trees' output.
#[derive(Debug, Clone, Deserialize)]
pub struct Base {
    pub feature: String,
    pub weight: f32,
}

/// `p = 1 / (1 + e^-(a · context + b))`, the context of a score within its task being
/// [`calibration_inputs`].
#[derive(Debug, Clone, Deserialize)]
pub struct Calibration {
    pub a: [f32; 3],
    pub b: f32,
}

/// What calibration reads of each score within one task's candidates: the score, its
/// distance below the best, and for the best its margin over the second (1 when alone).
/// `scripts/ranker/train.py` (`context`) computes the same.
pub fn calibration_inputs(scores: &[f32]) -> Vec<[f32; 3]> {
    let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sorted = scores.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let margin = sorted.get(1).map_or(1.0, |second| top - second);
    scores
        .iter()
        .map(|&s| [s, s - top, if s == top { margin } else { 0.0 }])
        .collect()
}

pub struct OnnxRanker {
    id: String,
    manifest: Manifest,
    session: Mutex<Session>,
}

impl std::fmt::Debug for OnnxRanker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxRanker")
            .field("id", &self.id)
            .field("trees", &self.manifest.trees)
            .finish()
    }
}

impl OnnxRanker {
    /// The ranker compiled into the binary, loaded once per process; or, when
    /// `IRET_RANKER_DIR` names a folder ([`OnnxRanker::load`]), that one: a newly trained
    /// model measured without rebuilding.
    pub fn shipped() -> anyhow::Result<Arc<dyn Ranker>> {
        static SHIPPED: OnceLock<Result<Arc<dyn Ranker>, String>> = OnceLock::new();
        SHIPPED
            .get_or_init(|| {
                let ranker = match std::env::var_os(RANKER_DIR) {
                    Some(dir) => Self::load(Path::new(&dir)),
                    None => Self::from_parts("shipped", SHIPPED_MANIFEST, SHIPPED_ONNX),
                };
                ranker
                    .map(|r| Arc::new(r) as Arc<dyn Ranker>)
                    .map_err(|e| format!("{e:#}"))
            })
            .clone()
            .map_err(|e| anyhow::anyhow!("the learned ranker: {e}"))
    }

    /// A ranker folder: `ranker.onnx` and `manifest.json`.
    pub fn load(dir: &Path) -> anyhow::Result<Self> {
        let manifest = std::fs::read_to_string(dir.join("manifest.json"))
            .with_context(|| format!("{}: no manifest.json", dir.display()))?;
        let onnx = std::fs::read(dir.join("ranker.onnx"))
            .with_context(|| format!("{}: no ranker.onnx", dir.display()))?;
        Self::from_parts(&dir.display().to_string(), &manifest, &onnx)
    }

    fn from_parts(id: &str, manifest: &str, onnx: &[u8]) -> anyhow::Result<Self> {
        let manifest: Manifest =
            serde_json::from_str(manifest).context("the ranker's manifest.json")?;
        check_features(&manifest.features)?;
        if let Some(base) = &manifest.base {
            anyhow::ensure!(
                Features::NAMES.contains(&base.feature.as_str()),
                "the ranker boosts from {:?}, which this build does not compute",
                base.feature
            );
        }
        let env = iret_embed::onnx_environment()?;
        let session = Session::builder(&env)
            .and_then(|mut b| b.commit_from_memory(onnx))
            .map_err(|e| anyhow::anyhow!("the ranker's ONNX model does not load: {e}"))?;
        Ok(Self {
            id: format!("{} ({}, {} trees)", id, manifest.kind, manifest.trees),
            manifest,
            session: Mutex::new(session),
        })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

/// The model's inputs are this build's features, in the same order.
fn check_features(names: &[String]) -> anyhow::Result<()> {
    let ours = Features::NAMES;
    if names.len() != ours.len() || names.iter().zip(ours).any(|(a, b)| a != b) {
        let theirs: Vec<&str> = names.iter().map(String::as_str).collect();
        let missing: Vec<&&str> = ours.iter().filter(|n| !theirs.contains(n)).collect();
        anyhow::bail!(
            "the ranker was trained on other features ({} against this build's {}; \
             not in the model: {missing:?}): retrain it with scripts/ranker/train.py",
            names.len(),
            ours.len()
        );
    }
    Ok(())
}

impl Ranker for OnnxRanker {
    fn id(&self) -> &str {
        &self.id
    }

    fn score(&self, rows: &[Features]) -> anyhow::Result<Vec<f32>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let width = Features::NAMES.len();
        let data: Vec<f32> = rows.iter().flat_map(|f| f.row()).collect();
        let input = Tensor::from_array(([rows.len(), width], data))
            .map_err(|e| anyhow::anyhow!("the ranker's input: {e}"))?;
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let outputs = session
            .run(ort::inputs!["features" => input])
            .map_err(|e| anyhow::anyhow!("the ranker failed: {e}"))?;
        let (_, scores) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| anyhow::anyhow!("the ranker's output: {e}"))?;
        anyhow::ensure!(
            scores.len() == rows.len(),
            "the ranker gave {} scores for {} rows",
            scores.len(),
            rows.len()
        );
        let mut scores = scores.to_vec();
        if let Some(base) = &self.manifest.base {
            let col = Features::NAMES
                .iter()
                .position(|n| *n == base.feature)
                .expect("checked on load");
            for (s, f) in scores.iter_mut().zip(rows) {
                let v = f.row()[col];
                // train.py reads a missing value as 0 here (nan_to_num).
                *s += base.weight * if v.is_nan() { 0.0 } else { v };
            }
        }
        Ok(scores)
    }

    fn probabilities(&self, scores: &[f32]) -> Vec<f32> {
        let c = &self.manifest.calibration;
        calibration_inputs(scores)
            .iter()
            .map(|x| {
                let z: f32 = x.iter().zip(&c.a).map(|(x, w)| x * w).sum::<f32>() + c.b;
                1.0 / (1.0 + (-z).exp())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_ranker_loads_and_scores_a_stronger_candidate_higher() {
        let ranker = OnnxRanker::shipped().unwrap();
        // As a loop's first and thirtieth candidates read (every feature consistent).
        let weak = Features {
            cos_best: 0.2,
            cos_top3: 0.18,
            cos_rel: 0.3,
            bm25_best: 0.05,
            fused_best: 0.1,
            chunk_hits: 1.0,
            coherence: 0.1,
            body_share: 1.0,
            rules_score: 0.1,
            dispatch_rank: 30.0,
            standing: 0.07,
            relevance: f32::NAN,
            eval_similarity: f32::NAN,
            eval_coverage: f32::NAN,
            eval_structure: f32::NAN,
            rules_rank: 30.0,
            file_chunks: 2.0,
            path_depth: 2.0,
            ..Features::default()
        };
        let strong = Features {
            cos_best: 0.65,
            cos_top3: 0.55,
            cos_rel: 1.0,
            bm25_best: 1.0,
            fused_best: 1.0,
            chunk_hits: 3.0,
            coherence: 1.3,
            body_share: 1.0,
            name_share: 1.0,
            rules_score: 1.5,
            dispatch_rank: 1.0,
            standing: 1.0,
            evaluated: 1.0,
            relevance: 0.95,
            eval_similarity: 1.0,
            eval_coverage: 1.0,
            eval_structure: 0.8,
            rules_rank: 1.0,
            file_chunks: 2.0,
            path_depth: 2.0,
            ..Features::default()
        };
        let s = ranker.score(&[weak, strong]).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[1] > s[0], "{s:?}");
        let p = ranker.probabilities(&s);
        assert!((0.0..=1.0).contains(&p[0]) && p[1] > p[0], "{p:?}");
        assert!(ranker.score(&[]).unwrap().is_empty());
    }

    #[test]
    fn calibration_reads_each_score_against_its_tasks_best() {
        let x = calibration_inputs(&[1.0, 3.0, 2.5]);
        assert_eq!(
            x[1],
            [3.0, 0.0, 0.5],
            "the best: its margin over the second"
        );
        assert_eq!(x[0], [1.0, -2.0, 0.0]);
        assert_eq!(x[2], [2.5, -0.5, 0.0]);
        assert_eq!(calibration_inputs(&[0.7]), vec![[0.7, 0.0, 1.0]]);
    }

    #[test]
    fn a_model_of_other_features_is_refused_by_name() {
        let err = check_features(&["cos_best".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("other features"), "{err}");
        let ours: Vec<String> = Features::NAMES.iter().map(|s| s.to_string()).collect();
        assert!(check_features(&ours).is_ok());
        let mut swapped = ours.clone();
        swapped.swap(0, 1);
        assert!(check_features(&swapped).is_err());
    }

    #[test]
    fn a_base_adds_its_weight_times_its_feature_to_the_trees_score() {
        let mut manifest: serde_json::Value = serde_json::from_str(SHIPPED_MANIFEST).unwrap();
        let trees = OnnxRanker::from_parts("t", SHIPPED_MANIFEST, SHIPPED_ONNX).unwrap();
        manifest["base"] = serde_json::json!({"feature": "rules_score", "weight": 2.0});
        let based = OnnxRanker::from_parts("b", &manifest.to_string(), SHIPPED_ONNX).unwrap();
        let rows = [
            Features {
                rules_score: 0.25,
                ..Features::default()
            },
            Features {
                rules_score: f32::NAN,
                ..Features::default()
            },
        ];
        let (t, b) = (trees.score(&rows).unwrap(), based.score(&rows).unwrap());
        assert!((b[0] - t[0] - 0.5).abs() < 1e-5, "{t:?} {b:?}");
        assert!((b[1] - t[1]).abs() < 1e-6, "a missing value adds nothing");
        manifest["base"]["feature"] = serde_json::json!("no_such_feature");
        let err = OnnxRanker::from_parts("x", &manifest.to_string(), SHIPPED_ONNX)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no_such_feature"), "{err}");
    }

    #[test]
    fn a_folder_without_the_model_is_a_clear_error() {
        let dir = std::env::temp_dir().join("iret-rank-missing-folder");
        let err = OnnxRanker::load(&dir).unwrap_err().to_string();
        assert!(err.contains("manifest.json"), "{err}");
    }
}
