//! Chunk vectors: a flat matrix (exact scores) and an HNSW graph (hnsw_rs) for the
//! nearest-neighbour leg of dispatch.
//!
//! hnsw_rs cannot delete points, so an incremental update keeps the graph, marks the
//! points of removed chunks dead and inserts the new ones. Graph points are "slots";
//! `slots[p]` is the chunk a point stands for (or [`DEAD`]). When too many points are dead
//! the graph is rebuilt from the vectors.
use crate::store::{load_bin, save_bin, StoreError};
use hnsw_rs::prelude::*;
use std::path::Path;

const MAX_CONNECTIONS: usize = 16;
const EF_CONSTRUCTION: usize = 100;
const BASENAME: &str = "hnsw";
/// hnsw_rs's (private) NB_LAYER_MAX: a graph with fewer layers cannot be dumped.
const HNSW_LAYERS: usize = 16;
const SLOTS_FILE: &str = "hnsw.slots";
/// A graph point whose chunk is gone.
pub const DEAD: u32 = u32::MAX;
/// Rebuild instead of updating once this share of the graph's points would be dead.
const MAX_DEAD_SHARE: f64 = 0.25;

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
    /// Graph point → chunk (or [`DEAD`]); one entry per point of `hnsw`.
    slots: Vec<u32>,
}

impl Vectors {
    pub fn new(dims: usize, data: Vec<f32>) -> Self {
        Self {
            dims,
            data,
            hnsw: None,
            slots: Vec::new(),
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
        self.hnsw = None;
        self.slots.clear();
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
        self.slots = (0..n as u32).collect();
    }

    /// Takes over `previous`'s graph for these vectors: `remap[c]` is where previous chunk
    /// `c` went (None: removed); chunks from `first_new` on that no previous chunk went to
    /// are inserted. Rebuilds instead when the old graph is missing or would be too
    /// sparse. Returns whether the graph was updated in place (false: rebuilt).
    pub fn update_graph(
        &mut self,
        previous: Vectors,
        remap: &[Option<u32>],
        first_new: usize,
    ) -> bool {
        let Some(hnsw) = previous.hnsw else {
            self.build_graph();
            return false;
        };
        let mut slots: Vec<u32> = previous
            .slots
            .iter()
            .map(|&c| match remap.get(c as usize) {
                Some(Some(new)) if c != DEAD => *new,
                _ => DEAD,
            })
            .collect();
        let revived: std::collections::HashSet<u32> = slots
            .iter()
            .copied()
            .filter(|&c| c != DEAD && c as usize >= first_new)
            .collect();
        let inserted: Vec<usize> = (first_new..self.len())
            .filter(|c| !revived.contains(&(*c as u32)))
            .collect();
        let dead = slots.iter().filter(|&&c| c == DEAD).count();
        if (dead as f64) > MAX_DEAD_SHARE * (slots.len() + inserted.len()) as f64 {
            self.build_graph();
            return false;
        }
        let base = slots.len();
        let rows: Vec<(&[f32], usize)> = inserted
            .iter()
            .enumerate()
            .map(|(j, &c)| (self.get(c), base + j))
            .collect();
        slots.extend(inserted.iter().map(|&c| c as u32));
        hnsw.parallel_insert_slice(&rows);
        self.hnsw = Some(hnsw);
        self.slots = slots;
        true
    }

    /// Points of the graph whose chunk is gone.
    pub fn dead_points(&self) -> usize {
        self.slots.iter().filter(|&&c| c == DEAD).count()
    }

    pub fn dump_graph(&self, dir: &Path) -> Result<(), StoreError> {
        if let Some(h) = &self.hnsw {
            h.file_dump(dir, BASENAME)
                .map_err(|e| StoreError::Corrupt {
                    path: dir.into(),
                    reason: e.to_string(),
                })?;
            save_bin(&dir.join(SLOTS_FILE), &self.slots)?;
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
            let slots: Vec<u32> = match load_bin(&dir.join(SLOTS_FILE)) {
                Ok(s) => s,
                Err(_) => (0..self.len() as u32).collect(),
            };
            if let Ok(Ok(h)) = loaded {
                if h.get_nb_point() == slots.len() && self.slots_cover_every_chunk(&slots) {
                    self.hnsw = Some(h);
                    self.slots = slots;
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

    /// Every chunk has exactly one live point.
    fn slots_cover_every_chunk(&self, slots: &[u32]) -> bool {
        let mut seen = vec![false; self.len()];
        for &c in slots.iter().filter(|&&c| c != DEAD) {
            match seen.get_mut(c as usize) {
                Some(s) if !*s => *s = true,
                _ => return false,
            }
        }
        seen.iter().all(|&s| s)
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
                let chunk = |slot: usize| self.slots.get(slot).copied().unwrap_or(DEAD);
                let filter = |id: &usize| {
                    let c = chunk(*id);
                    c != DEAD && allow(c as usize)
                };
                let ef = (2 * k).max(128);
                h.search_filter(query, k, ef, Some(&filter))
                    .into_iter()
                    .map(|n| (chunk(n.d_id) as usize, 1.0 - n.distance))
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
