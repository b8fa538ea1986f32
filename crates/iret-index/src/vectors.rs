//! Chunk vectors: a flat matrix (exact scores) and an HNSW graph (hnsw_rs) for the
//! nearest-neighbour leg of dispatch.
use crate::store::StoreError;
use hnsw_rs::prelude::*;
use std::path::Path;

const MAX_CONNECTIONS: usize = 16;
const EF_CONSTRUCTION: usize = 100;
const BASENAME: &str = "hnsw";
/// hnsw_rs's (private) NB_LAYER_MAX: a graph with fewer layers cannot be dumped.
const HNSW_LAYERS: usize = 16;

/// `1 - dot` for unit vectors, clamped at 0 (rounding can push a dot product past 1,
/// which anndists' DistDot asserts against).
#[derive(Debug, Default, Clone, Copy)]
pub struct UnitDot;

impl Distance<f32> for UnitDot {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        (1.0 - iret_embed::dot(a, b)).max(0.0)
    }
}

pub struct Vectors {
    pub dims: usize,
    pub data: Vec<f32>,
    hnsw: Option<Hnsw<'static, f32, UnitDot>>,
}

impl Vectors {
    pub fn new(dims: usize, data: Vec<f32>) -> Self {
        Self {
            dims,
            data,
            hnsw: None,
        }
    }

    pub fn len(&self) -> usize {
        self.data.len() / self.dims.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn get(&self, i: usize) -> &[f32] {
        &self.data[i * self.dims..(i + 1) * self.dims]
    }

    /// Builds the HNSW graph over all vectors (parallel inserts).
    pub fn build_graph(&mut self) {
        let n = self.len();
        if n == 0 {
            return;
        }
        // hnsw_rs only dumps graphs built with its maximum layer count.
        let hnsw =
            Hnsw::<f32, UnitDot>::new(MAX_CONNECTIONS, n, HNSW_LAYERS, EF_CONSTRUCTION, UnitDot);
        let rows: Vec<(&[f32], usize)> = (0..n).map(|i| (self.get(i), i)).collect();
        hnsw.parallel_insert_slice(&rows);
        self.hnsw = Some(hnsw);
    }

    pub fn dump_graph(&self, dir: &Path) -> Result<(), StoreError> {
        if let Some(h) = &self.hnsw {
            h.file_dump(dir, BASENAME)
                .map_err(|e| StoreError::Corrupt {
                    path: dir.into(),
                    reason: e.to_string(),
                })?;
        }
        Ok(())
    }

    /// Loads the dumped graph; a missing or unreadable one is rebuilt from the vectors.
    pub fn load_graph(&mut self, dir: &Path) {
        if self.is_empty() {
            return;
        }
        if dir.join(format!("{BASENAME}.hnsw.graph")).is_file() {
            // The loaded graph borrows its loader for its whole life: give it a 'static one
            // (a few bytes per load). A corrupt file may make hnsw_rs panic: contain it.
            let loaded = std::panic::catch_unwind(|| {
                let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, BASENAME)));
                io.load_hnsw::<f32, UnitDot>()
            });
            if let Ok(Ok(h)) = loaded {
                if h.get_nb_point() == self.len() {
                    self.hnsw = Some(h);
                    return;
                }
            }
            eprintln!(
                "iret: the HNSW graph in {} is unreadable; rebuilding it in memory",
                dir.display()
            );
        }
        self.build_graph();
    }

    /// The `k` nearest chunks to `query` (cosine), among those `allow` accepts.
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        allow: &(dyn Fn(usize) -> bool + Sync),
    ) -> Vec<(usize, f32)> {
        match &self.hnsw {
            Some(h) if self.len() > k => {
                let filter = |id: &usize| allow(*id);
                let ef = (2 * k).max(128);
                h.search_filter(query, k, ef, Some(&filter))
                    .into_iter()
                    .map(|n| (n.d_id, 1.0 - n.distance))
                    .collect()
            }
            _ => self.exact(query, k, allow),
        }
    }

    /// Exact top-k by brute force (reference for tests and tiny indexes).
    pub fn exact(
        &self,
        query: &[f32],
        k: usize,
        allow: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        let mut scored: Vec<(usize, f32)> = (0..self.len())
            .filter(|&i| allow(i))
            .map(|i| (i, iret_embed::dot(query, self.get(i))))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(k);
        scored
    }
}
