//! The learned ranker iret ships: gradient-boosted trees trained with a ranking objective
//! (LightGBM's LambdaMART, the training tool in `training/`) on tasks mined from public histories,
//! exported to ONNX and run by the ONNX Runtime the embedder already bundles. It reads the
//! features `iret_retrieve::ranking::Features` names that its manifest lists, by name and
//! in the manifest's order (a model of a feature this build does not compute is refused),
//! and calibrates its score to a probability with the manifest's Platt parameters, placed in
//! the relevance bands the manifest names.
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
}

/// `p = 1 / (1 + e^-(a · context + b))`, the context of a score within its task being
/// [`calibration_inputs`]; then `p` placed in the relevance bands.
#[derive(Debug, Clone, Deserialize)]
pub struct Calibration {
    pub a: [f32; 3],
    pub b: f32,
    /// Absent in a model trained before the bands: relevance is the probability itself.
    #[serde(default)]
    pub bands: Option<Bands>,
}

/// The probabilities that become relevance 0.2 and 0.7, placed by the training tool on
/// held-out scores (0.7 where most targets reach, 0.2 where nearly all do): a task has few
/// targets among dozens of candidates, so a probability alone would leave a target that
/// leads its task below the band of files to read.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Bands {
    pub weak: f32,
    pub strong: f32,
}

impl Bands {
    /// Piecewise linear through (0, 0), (weak, 0.2), (strong, 0.7), (1, 1); the training
    /// tool's `calibration.relevance` (`training/tests/calibration_cases.json` holds both).
    pub fn relevance(&self, p: f32) -> f32 {
        let segment = |p: f32, (x0, y0): (f32, f32), (x1, y1): (f32, f32)| {
            y0 + (y1 - y0) * ((p - x0) / (x1 - x0))
        };
        let p = p.clamp(0.0, 1.0);
        if p <= self.weak {
            segment(p, (0.0, 0.0), (self.weak, 0.2))
        } else if p <= self.strong {
            segment(p, (self.weak, 0.2), (self.strong, 0.7))
        } else {
            segment(p, (self.strong, 0.7), (1.0, 1.0))
        }
    }
}

/// What calibration reads of each score within one task's candidates: the score, its
/// distance below the best, and for the best its margin over the second (1 when alone).
/// The training tool's `calibration.context` computes the same (`training/tests/calibration_cases.json` holds both to it).
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
    /// Where each of the model's inputs sits in `Features::row`.
    columns: Vec<usize>,
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
        let columns = columns(&manifest.features)?;
        let env = iret_embed::onnx_environment()?;
        let session = Session::builder(&env)
            .and_then(|mut b| b.commit_from_memory(onnx))
            .map_err(|e| anyhow::anyhow!("the ranker's ONNX model does not load: {e}"))?;
        Ok(Self {
            id: format!("{} ({}, {} trees)", id, manifest.kind, manifest.trees),
            manifest,
            columns,
            session: Mutex::new(session),
        })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

/// Where each of the model's inputs sits among this build's features; a name this build
/// does not compute, or one listed twice, refuses the model.
fn columns(names: &[String]) -> anyhow::Result<Vec<usize>> {
    let unknown: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !Features::NAMES.contains(n))
        .collect();
    anyhow::ensure!(
        unknown.is_empty(),
        "the ranker reads features this build does not compute ({unknown:?}): retrain it \
         with the training tool (training/, `python -m iret_training train`)"
    );
    let columns: Vec<usize> = names
        .iter()
        .map(|n| {
            Features::NAMES
                .iter()
                .position(|m| m == n)
                .expect("checked")
        })
        .collect();
    let mut seen = columns.clone();
    seen.sort_unstable();
    seen.dedup();
    anyhow::ensure!(
        seen.len() == columns.len(),
        "the ranker's manifest lists a feature twice"
    );
    Ok(columns)
}

impl Ranker for OnnxRanker {
    fn id(&self) -> &str {
        &self.id
    }

    fn score(&self, rows: &[Features]) -> anyhow::Result<Vec<f32>> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let width = self.columns.len();
        let data: Vec<f32> = rows
            .iter()
            .flat_map(|f| {
                let row = f.row();
                self.columns.iter().map(move |&c| row[c])
            })
            .collect();
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
        let scores = scores.to_vec();
        Ok(scores)
    }

    fn relevance(&self, scores: &[f32]) -> Vec<f32> {
        let c = &self.manifest.calibration;
        calibration_inputs(scores)
            .iter()
            .map(|x| {
                let z: f32 = x.iter().zip(&c.a).map(|(x, w)| x * w).sum::<f32>() + c.b;
                let p = 1.0 / (1.0 + (-z).exp());
                c.bands.map_or(p, |b| b.relevance(p))
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
        let p = ranker.relevance(&s);
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
    fn a_model_reads_the_features_its_manifest_names_in_its_order() {
        let err = columns(&["cos_best".into(), "no_such_feature".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no_such_feature"), "{err}");
        assert!(columns(&["cos_best".into(), "cos_best".into()]).is_err());
        let at = |n: &str| Features::NAMES.iter().position(|m| *m == n).unwrap();
        assert_eq!(
            columns(&["standing".into(), "cos_best".into()]).unwrap(),
            vec![at("standing"), at("cos_best")]
        );
    }

    #[test]
    fn calibration_inputs_agree_with_the_training_tool() {
        // The same cases training/tests/test_calibration.py checks `calibration.context`
        // against: the two implementations must stay equal.
        let cases: serde_json::Value = serde_json::from_str(include_str!(
            "../../../training/tests/calibration_cases.json"
        ))
        .unwrap();
        for case in cases
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c.get("scores").is_some())
        {
            let scores: Vec<f32> = serde_json::from_value(case["scores"].clone()).unwrap();
            let want: Vec<[f32; 3]> = serde_json::from_value(case["inputs"].clone()).unwrap();
            assert_eq!(calibration_inputs(&scores), want, "{case}");
        }
    }

    #[test]
    fn relevance_bands_agree_with_the_training_tool() {
        let cases: serde_json::Value = serde_json::from_str(include_str!(
            "../../../training/tests/calibration_cases.json"
        ))
        .unwrap();
        let banded: Vec<&serde_json::Value> = cases
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c.get("bands").is_some())
            .collect();
        assert!(!banded.is_empty());
        for case in banded {
            let bands: Bands = serde_json::from_value(case["bands"].clone()).unwrap();
            let p: Vec<f32> = serde_json::from_value(case["probabilities"].clone()).unwrap();
            let want: Vec<f32> = serde_json::from_value(case["relevance"].clone()).unwrap();
            for (p, want) in p.iter().zip(want) {
                let got = bands.relevance(*p);
                assert!((got - want).abs() < 1e-5, "{p} -> {got}, want {want}");
            }
        }
    }

    #[test]
    fn a_folder_without_the_model_is_a_clear_error() {
        let dir = std::env::temp_dir().join("iret-rank-missing-folder");
        let err = OnnxRanker::load(&dir).unwrap_err().to_string();
        assert!(err.contains("manifest.json"), "{err}");
    }
}
