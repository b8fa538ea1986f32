//! A deterministic embedder for tests: no model, no I/O.
//!
//! Each word (identifiers split on case and underscores, lower-cased) is hashed to a
//! signed coordinate, so texts sharing words are similar. `with_concepts` maps words to
//! a shared concept, which lets tests express "throttle means rate limiting" exactly.
use crate::{normalize, EmbedError, Embedder};
use std::collections::HashMap;

pub struct FakeEmbedder {
    dims: usize,
    concepts: HashMap<String, String>,
}

impl FakeEmbedder {
    pub fn new(dims: usize) -> Self {
        Self {
            dims: dims.max(8),
            concepts: HashMap::new(),
        }
    }

    /// Words in one group embed identically (e.g. `["rate", "throttle"]`).
    pub fn with_concepts(mut self, groups: &[&[&str]]) -> Self {
        for group in groups {
            for word in *group {
                self.concepts
                    .insert(word.to_lowercase(), group[0].to_lowercase());
            }
        }
        self
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dims];
        for word in words(text) {
            let key = self.concepts.get(&word).unwrap_or(&word);
            let h = blake3::hash(key.as_bytes());
            let bytes = h.as_bytes();
            let idx =
                u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize % self.dims;
            let sign = if bytes[4] & 1 == 0 { 1.0 } else { -1.0 };
            v[idx] += sign;
        }
        normalize(&mut v);
        v
    }
}

fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in text.split(|c: char| !c.is_alphanumeric()) {
        let mut cur = String::new();
        let mut prev_lower = false;
        for c in raw.chars() {
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur).to_lowercase());
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            cur.push(c);
        }
        if !cur.is_empty() {
            out.push(cur.to_lowercase());
        }
    }
    out
}

impl Embedder for FakeEmbedder {
    fn model_id(&self) -> &str {
        "fake"
    }
    fn dims(&self) -> usize {
        self.dims
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dot;

    #[test]
    fn deterministic_and_normalised() {
        let e = FakeEmbedder::new(64);
        let a = e.embed(&["refreshToken expiry"]).unwrap();
        let b = e.embed(&["refreshToken expiry"]).unwrap();
        assert_eq!(a, b);
        assert!((dot(&a[0], &a[0]) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn shared_words_are_closer_than_disjoint_ones() {
        let e = FakeEmbedder::new(256);
        let v = e
            .embed(&["token expiry", "isTokenExpired check", "database pool"])
            .unwrap();
        assert!(dot(&v[0], &v[1]) > dot(&v[0], &v[2]));
    }

    #[test]
    fn concepts_join_synonyms() {
        let e = FakeEmbedder::new(256).with_concepts(&[&["rate", "throttle"]]);
        let v = e.embed(&["rate", "throttle", "session"]).unwrap();
        assert!((dot(&v[0], &v[1]) - 1.0).abs() < 1e-5);
        assert!(dot(&v[0], &v[2]) < 0.5);
    }
}
