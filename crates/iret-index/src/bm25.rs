//! BM25 over chunk token lists.
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Bm25Params {
    pub k1: f32,
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
    }
}

/// Inverted index: term → (doc, term frequency).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Bm25 {
    postings: HashMap<String, Vec<(u32, u16)>>,
    doc_len: Vec<u32>,
    avg_len: f32,
}

impl Bm25 {
    pub fn build(docs: &[Vec<String>]) -> Self {
        let mut index = Self::default();
        index.extend(docs);
        index
    }

    /// Appends documents; their ids continue after the existing ones.
    pub fn extend(&mut self, docs: &[Vec<String>]) {
        for tokens in docs {
            let id = self.doc_len.len() as u32;
            let mut tf: HashMap<&str, u16> = HashMap::new();
            for t in tokens {
                let n = tf.entry(t.as_str()).or_default();
                *n = n.saturating_add(1);
            }
            for (term, n) in tf {
                match self.postings.get_mut(term) {
                    Some(list) => list.push((id, n)),
                    None => {
                        self.postings.insert(term.to_string(), vec![(id, n)]);
                    }
                }
            }
            self.doc_len.push(tokens.len() as u32);
        }
        self.update_average();
    }

    /// Keeps the documents `remap` maps to a new id (renumbered), drops the others.
    /// `remap` has one entry per current document; kept ids must stay in order.
    pub fn retain_remap(&mut self, remap: &[Option<u32>]) {
        assert_eq!(
            remap.len(),
            self.doc_len.len(),
            "one remap entry per document"
        );
        self.postings.retain(|_, list| {
            list.retain_mut(|(doc, _)| match remap[*doc as usize] {
                Some(new) => {
                    *doc = new;
                    true
                }
                None => false,
            });
            !list.is_empty()
        });
        let mut doc_len = Vec::with_capacity(self.doc_len.len());
        for (len, keep) in self.doc_len.iter().zip(remap) {
            if keep.is_some() {
                doc_len.push(*len);
            }
        }
        self.doc_len = doc_len;
        self.update_average();
    }

    fn update_average(&mut self) {
        self.avg_len =
            self.doc_len.iter().map(|&l| l as f32).sum::<f32>() / self.doc_len.len().max(1) as f32;
    }

    pub fn num_docs(&self) -> usize {
        self.doc_len.len()
    }

    /// Number of documents containing `term`.
    pub fn df(&self, term: &str) -> usize {
        self.postings.get(term).map_or(0, Vec::len)
    }

    /// The documents containing `term`.
    pub fn docs_with(&self, term: &str) -> impl Iterator<Item = u32> + '_ {
        self.postings
            .get(term)
            .into_iter()
            .flat_map(|list| list.iter().map(|(doc, _)| *doc))
    }

    pub fn idf(&self, term: &str) -> f32 {
        let n = self.num_docs() as f32;
        let df = self.df(term) as f32;
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    /// Scores every document matching at least one of `terms` (weights per term), in
    /// document order. `allow` filters documents before ranking. Scores accumulate in a
    /// dense table (a long task's hundred terms touch most documents), each document's
    /// terms summed in the order given.
    pub fn score(
        &self,
        terms: &[(String, f32)],
        params: Bm25Params,
        allow: &dyn Fn(u32) -> bool,
    ) -> Vec<(u32, f32)> {
        let mut acc = vec![0f32; self.doc_len.len()];
        let mut hit = vec![false; self.doc_len.len()];
        let mut touched: Vec<u32> = Vec::new();
        let avg = self.avg_len.max(1.0);
        for (term, weight) in terms {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let idf = self.idf(term) * weight;
            for &(doc, tf) in list {
                let d = doc as usize;
                if !hit[d] {
                    if !allow(doc) {
                        continue;
                    }
                    hit[d] = true;
                    touched.push(doc);
                }
                let tf = tf as f32;
                let len = self.doc_len[d] as f32;
                let norm = params.k1 * (1.0 - params.b + params.b * len / avg);
                acc[d] += idf * tf * (params.k1 + 1.0) / (tf + norm);
            }
        }
        touched.sort_unstable();
        touched.into_iter().map(|d| (d, acc[d as usize])).collect()
    }

    /// Terms of the index (for vocabulary statistics).
    pub fn terms(&self) -> impl Iterator<Item = (&str, usize)> {
        self.postings.iter().map(|(t, p)| (t.as_str(), p.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(texts: &[&str]) -> Vec<Vec<String>> {
        texts
            .iter()
            .map(|t| t.split_whitespace().map(String::from).collect())
            .collect()
    }

    #[test]
    fn matches_hand_computed_score() {
        let idx = Bm25::build(&docs(&[
            "token expiry token",
            "user profile",
            "session token",
        ]));
        let p = Bm25Params { k1: 1.2, b: 0.75 };
        let s: HashMap<u32, f32> = idx
            .score(&[("expiry".into(), 1.0)], p, &|_| true)
            .into_iter()
            .collect();
        // df=1, N=3: idf = ln((3-1+0.5)/(1+0.5)+1) = ln(2.6667); tf=1, len=3, avg=7/3.
        let idf = (2.5f32 / 1.5 + 1.0).ln();
        let norm = 1.2 * (1.0 - 0.75 + 0.75 * 3.0 / (7.0 / 3.0));
        let expected = idf * 2.2 / (1.0 + norm);
        assert!((s[&0] - expected).abs() < 1e-5, "{} vs {expected}", s[&0]);
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn rarer_terms_and_higher_tf_score_higher() {
        let idx = Bm25::build(&docs(&[
            "token token expiry",
            "token",
            "token user",
            "user",
        ]));
        let s: HashMap<u32, f32> = idx
            .score(
                &[("token".into(), 1.0), ("expiry".into(), 1.0)],
                Bm25Params::default(),
                &|_| true,
            )
            .into_iter()
            .collect();
        assert!(s[&0] > s[&1] && s[&0] > s[&2]);
        let filtered = idx.score(&[("token".into(), 1.0)], Bm25Params::default(), &|d| d != 0);
        assert_eq!(filtered.iter().map(|(d, _)| *d).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn removing_and_appending_matches_a_fresh_build() {
        let mut idx = Bm25::build(&docs(&["token expiry", "user profile", "session token"]));
        // Drop "user profile", keep the others (renumbered), append one.
        idx.retain_remap(&[Some(0), None, Some(1)]);
        idx.extend(&docs(&["refresh token token"]));
        let fresh = Bm25::build(&docs(&[
            "token expiry",
            "session token",
            "refresh token token",
        ]));
        assert_eq!(idx.num_docs(), 3);
        assert_eq!(idx.df("user"), 0);
        assert!(idx.terms().all(|(t, _)| t != "profile"));
        let q = [("token".into(), 1.0), ("refresh".into(), 1.0)];
        let (a, b) = (
            idx.score(&q, Bm25Params::default(), &|_| true),
            fresh.score(&q, Bm25Params::default(), &|_| true),
        );
        assert_eq!(a.len(), b.len());
        for ((da, sa), (db, sb)) in a.iter().zip(&b) {
            assert_eq!(da, db);
            assert!((sa - sb).abs() < 1e-6);
        }
    }
}
