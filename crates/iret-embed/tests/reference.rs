//! The shipped model reproduces reference vectors computed by an independent numpy
//! forward pass of the original fp32 weights (tests/fixtures/model-reference.json).
use iret_embed::{dot, locate_model_dir, Embedder, OnnxEmbedder};

#[derive(serde::Deserialize)]
struct Reference {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

#[test]
fn shipped_model_matches_reference_vectors() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/model-reference.json"
    );
    let reference: Reference =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let dir = locate_model_dir(None).expect("the repository ships models/all-minilm-l6-v2");
    let manifest = iret_embed::ModelManifest::load(&dir).unwrap();
    let embedder = OnnxEmbedder::load(&dir).unwrap();
    assert_eq!(embedder.dims(), 384);
    let texts: Vec<&str> = reference.texts.iter().map(String::as_str).collect();
    let got = embedder.embed(&texts).unwrap();
    // Floors per variant, as scripts/export-model.py checks them: fp32 matches to 1e-4;
    // dynamic int8 quantises activations per batch, so it is close but not exact.
    let floor = match manifest.id.rsplit('-').next() {
        Some("fp32") => 0.9999,
        Some("int8pc") => 0.98,
        _ => 0.99,
    };
    for (i, (g, r)) in got.iter().zip(&reference.vectors).enumerate() {
        let cos = dot(g, r);
        assert!(
            cos >= floor,
            "text {i} ({:?}): cosine {cos} < {floor}",
            texts[i]
        );
    }
    // A text's vector does not depend on the other texts of the call: alone, first of
    // many, or beside a long text, it is the same vector.
    let long = "fn handler(req: Request) -> Response { route(req) } ".repeat(40);
    for (i, t) in texts.iter().enumerate() {
        let alone = embedder.embed(&[t]).unwrap().remove(0);
        assert_eq!(alone, got[i], "text {i} alone vs in the reference batch");
        let mixed = embedder.embed(&[long.as_str(), t]).unwrap().remove(1);
        assert_eq!(alone, mixed, "text {i} alone vs beside a long text");
    }
}

#[test]
fn missing_model_dir_is_a_clear_error() {
    let err = locate_model_dir(Some(std::path::Path::new("/nonexistent/iret-model"))).unwrap_err();
    assert!(err.to_string().contains("IRET_MODEL_DIR"), "{err}");
}
