//! Chunk vectors: a flat matrix (exact scores) and an HNSW graph for the nearest-neighbour
//! leg of dispatch. A build holds them in memory ([`VectorsBuilder`]: f32 rows and
//! hnsw_rs's graph); a served index reads them from the generation's files ([`Vectors`]:
//! the f16 rows of `vectors.f16`, in chunk order, and the graph's adjacency tables,
//! [`crate::graph`], both mapped).
//!
//! On disk: `vectors.f16` always; with a graph, also hnsw_rs's dump (what the next
//! incremental build updates; its data file holds the points' vectors again) and
//! `graph.bin`. The graph only finds the candidates: their scores are computed exactly
//! on the rows.
//!
//! hnsw_rs cannot delete points, so an incremental update keeps the graph, marks the
//! points of removed chunks dead and inserts the new ones. Graph points are "slots";
//! `slots[p]` is the chunk a point stands for (or [`DEAD`]). When too many points are dead
//! the graph is rebuilt from the vectors.
use crate::graph::{self, Graph, Layers};
use crate::mapped::Bytes;
use crate::store::{corrupt, io_err, load_bin, load_f16, save_bin, save_f16, StoreError};
use half::f16;
use half::slice::HalfFloatSliceExt;
use hnsw_rs::prelude::*;
use std::path::Path;

const MAX_CONNECTIONS: usize = 16;
/// Candidates kept while inserting a point (graph quality against build time).
const EF_CONSTRUCTION: usize = 100;
/// The same for a cheap model's vectors (a static index): a 249k-chunk graph builds in
/// 28 s instead of 61 s (docs/journal/benchmarks.md, session 9); a static vector is a coarser
/// neighbour than the graph's search error.
const EF_CONSTRUCTION_QUICK: usize = 40;
const BASENAME: &str = "hnsw";
/// hnsw_rs's (private) NB_LAYER_MAX: a graph with fewer layers cannot be dumped.
const HNSW_LAYERS: usize = 16;
const SLOTS_FILE: &str = "hnsw.slots";
/// The vectors of a generation without a graph.
pub(crate) const FLAT_FILE: &str = "vectors.f16";
pub use crate::graph::DEAD;
/// Up to this many chunks a query scans every vector (a few milliseconds at 50,000 on one
/// core: faster than the graph at `ef` = 400 and exact); above it, the graph answers.
pub const EXACT_UP_TO: usize = 50_000;
/// Rebuild instead of updating once this share of the graph's points would be dead.
const MAX_DEAD_SHARE: f64 = 0.25;

/// `1 - dot` for unit vectors, clamped at 0 (rounding can push a dot product past 1,
/// which anndists' DistDot asserts against).
#[derive(Debug, Default, Clone, Copy)]
pub struct UnitDot;

impl Distance<f16> for UnitDot {
    fn eval(&self, a: &[f16], b: &[f16]) -> f32 {
        // Converted a block at a time (F16C where the CPU has it).
        const BLOCK: usize = 64;
        let (mut x, mut y) = ([0f32; BLOCK], [0f32; BLOCK]);
        let mut sum = 0.0;
        for (a, b) in a.chunks(BLOCK).zip(b.chunks(BLOCK)) {
            let n = a.len().min(b.len());
            a[..n].convert_to_f32_slice(&mut x[..n]);
            b[..n].convert_to_f32_slice(&mut y[..n]);
            sum += iret_embed::dot(&x[..n], &y[..n]);
        }
        (1.0 - sum).max(0.0)
    }
}

/// `rows` as the f16 points the graph holds.
fn to_f16(rows: &[f32]) -> Vec<f16> {
    let mut out = vec![f16::ZERO; rows.len()];
    out.convert_from_f32_slice(rows);
    out
}

/// The vectors as a build holds them.
pub struct VectorsBuilder {
    pub dims: usize,
    pub data: Vec<f32>,
    hnsw: Option<Hnsw<'static, f16, UnitDot>>,
    /// Graph point → chunk (or [`DEAD`]); one entry per point of `hnsw`.
    slots: Vec<u32>,
    /// `ef_construction` of a graph built from these vectors.
    effort: usize,
}

impl VectorsBuilder {
    pub fn new(dims: usize, data: Vec<f32>) -> Self {
        Self {
            dims,
            data,
            hnsw: None,
            slots: Vec::new(),
            effort: EF_CONSTRUCTION,
        }
    }

    /// A graph built from these vectors takes less care ([`EF_CONSTRUCTION_QUICK`]): for
    /// a cheap model's vectors.
    pub fn quick(mut self) -> Self {
        self.effort = EF_CONSTRUCTION_QUICK;
        self
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
        let hnsw = Hnsw::<f16, UnitDot>::new(MAX_CONNECTIONS, n, HNSW_LAYERS, self.effort, UnitDot);
        let points = to_f16(&self.data);
        let rows: Vec<(&[f16], usize)> = points.chunks_exact(self.dims).zip(0..n).collect();
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
        previous: VectorsBuilder,
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
        let points: Vec<Vec<f16>> = inserted.iter().map(|&c| to_f16(self.get(c))).collect();
        let rows: Vec<(&[f16], usize)> = points
            .iter()
            .enumerate()
            .map(|(j, p)| (p.as_slice(), base + j))
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

    /// Writes the vectors into a generation's folder: the rows, and with a graph its
    /// dump, slot table and adjacency tables.
    pub fn save(&self, dir: &Path) -> Result<(), StoreError> {
        save_f16(&dir.join(FLAT_FILE), &self.data)?;
        self.save_graph(dir)
    }

    /// The graph's files alone (none without a graph): beside a generation's flat vectors
    /// that are already on disk.
    pub fn save_graph(&self, dir: &Path) -> Result<(), StoreError> {
        match &self.hnsw {
            Some(h) => save_graph_files(dir, h, &self.slots, self.dims),
            None => Ok(()),
        }
    }

    /// Builds the graph of a generation's flat vectors (`dir`'s `vectors.f16`, `n` rows of
    /// `dims`), reading them from the mapped file a block at a time: only the graph is in
    /// memory while it is built (its points are f16 copies of the rows, made by the
    /// graph, as [`Self::build_graph`]'s are). Writes the graph's files into `out`.
    pub fn graph_from_file(
        dir: &Path,
        dims: usize,
        n: usize,
        quick: bool,
        out: &Path,
    ) -> Result<(), StoreError> {
        const BLOCK: usize = 1 << 15;
        let path = dir.join(FLAT_FILE);
        let rows = Bytes::open(&path, false)?;
        if rows.len() != n * dims * 2 {
            return Err(corrupt(&path, "vectors and chunks disagree"));
        }
        if n == 0 {
            return Ok(());
        }
        let effort = if quick {
            EF_CONSTRUCTION_QUICK
        } else {
            EF_CONSTRUCTION
        };
        let hnsw = Hnsw::<f16, UnitDot>::new(MAX_CONNECTIONS, n, HNSW_LAYERS, effort, UnitDot);
        let mut points = vec![f16::ZERO; BLOCK * dims];
        for start in (0..n).step_by(BLOCK) {
            let end = (start + BLOCK).min(n);
            let block = &mut points[..(end - start) * dims];
            let bytes = &rows[start * dims * 2..end * dims * 2];
            for (p, b) in block.iter_mut().zip(bytes.chunks_exact(2)) {
                *p = f16::from_le_bytes([b[0], b[1]]);
            }
            let batch: Vec<(&[f16], usize)> = block.chunks_exact(dims).zip(start..end).collect();
            hnsw.parallel_insert_slice(&batch);
            rows.release();
        }
        drop(points);
        let slots: Vec<u32> = (0..n as u32).collect();
        // The graph leaves memory before its adjacency tables are encoded.
        let layers = dump_graph(out, &hnsw, &slots)?;
        drop(hnsw);
        write_layers(out, layers, &slots, dims)?;
        crate::memory::give_back();
        Ok(())
    }

    /// The served form, in memory (a build's result, and tests).
    pub fn freeze(&self) -> Vectors {
        let graph = self.hnsw.as_ref().map(|h| {
            Graph::from_bytes(
                graph::encode(layers_of(h, &self.slots), &self.slots, self.dims),
                self.dims,
            )
        });
        Vectors::new(
            self.dims,
            Bytes::Owned(crate::store::f16_bytes(&self.data)),
            self.len(),
            graph,
        )
    }

    /// Reads what [`VectorsBuilder::save`] wrote for `chunks` chunks of `dims` values,
    /// graph included (to update it).
    pub fn load(dir: &Path, dims: usize, chunks: usize) -> Result<Self, StoreError> {
        let flat = dir.join(FLAT_FILE);
        let data = load_f16(&flat)?;
        if data.len() != chunks * dims {
            return Err(corrupt(&flat, "vectors and chunks disagree"));
        }
        let graph_file = dir.join(format!("{BASENAME}.hnsw.data"));
        if chunks == 0 || !graph_file.is_file() {
            return Ok(Self::new(dims, data));
        }
        let slots: Vec<u32> = load_bin(&dir.join(SLOTS_FILE))?;
        // Check the graph's data file first: hnsw_rs ends the process on a truncated one
        // instead of returning an error.
        check_graph_data(&graph_file, &slots, dims, chunks)?;
        // The loaded graph borrows its loader for its whole life: give it a 'static one (a
        // few bytes per load). A corrupt file may make hnsw_rs panic: contain it.
        let loaded = std::panic::catch_unwind(|| {
            let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, BASENAME)));
            io.load_hnsw::<f16, UnitDot>()
        });
        match loaded {
            Ok(Ok(hnsw)) if hnsw.get_nb_point() == slots.len() => Ok(Self {
                dims,
                data,
                hnsw: Some(hnsw),
                slots,
                effort: EF_CONSTRUCTION,
            }),
            _ => {
                eprintln!(
                    "iret: the HNSW graph in {} is unreadable; rebuilding it in memory",
                    dir.display()
                );
                let mut vectors = Self::new(dims, data);
                vectors.build_graph();
                Ok(vectors)
            }
        }
    }
}

/// The vectors a served index reads: f16 rows in chunk order and the graph, mapped. Up
/// to [`EXACT_UP_TO`] chunks, where every query scans every row, the rows are also held
/// decoded (at most 50,000 × 384 f32s, 77 MB): the scan then costs what it did when
/// indexes were loaded whole.
pub struct Vectors {
    pub dims: usize,
    /// Little-endian f16 values, `dims` per chunk.
    rows: Bytes,
    /// The rows as f32, for an index small enough to be scanned.
    decoded: Option<Vec<f32>>,
    len: usize,
    graph: Option<Graph>,
}

impl Vectors {
    /// The vectors of a generation of `chunks` chunks of `dims` values.
    pub fn open(dir: &Path, dims: usize, chunks: usize) -> Result<Self, StoreError> {
        let flat = dir.join(FLAT_FILE);
        let rows = Bytes::open(&flat, true)?;
        if rows.len() != 2 * chunks * dims {
            return Err(corrupt(&flat, "vectors and chunks disagree"));
        }
        let graph_path = dir.join(graph::FILE);
        let graph = if graph_path.is_file() {
            Some(Graph::open(&graph_path, dims)?)
        } else {
            None
        };
        Ok(Self::new(dims, rows, chunks, graph))
    }

    /// Gives back the mapped pages of the rows and the graph read so far
    /// ([`Bytes::release`]).
    pub fn release(&self) {
        self.rows.release();
        if let Some(graph) = &self.graph {
            graph.release();
        }
    }

    fn new(dims: usize, rows: Bytes, len: usize, graph: Option<Graph>) -> Self {
        let mut vectors = Self {
            dims,
            rows,
            decoded: None,
            len,
            graph,
        };
        if len <= EXACT_UP_TO {
            let mut all = vec![0f32; len * dims];
            convert(&vectors.rows, &mut all);
            vectors.decoded = Some(all);
        }
        vectors
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Points of the graph whose chunk is gone.
    pub fn dead_points(&self) -> usize {
        self.graph.as_ref().map_or(0, Graph::dead_points)
    }

    /// Row `i` into `out` (`dims` values).
    fn read(&self, i: usize, out: &mut [f32]) {
        let (from, to) = (i * self.dims, (i + 1) * self.dims);
        match &self.decoded {
            Some(all) => out.copy_from_slice(&all[from..to]),
            None => convert(&self.rows[2 * from..2 * to], out),
        }
    }

    /// Chunk `i`'s vector.
    pub fn row(&self, i: usize) -> Vec<f32> {
        let mut out = vec![0.0; self.dims];
        self.read(i, &mut out);
        out
    }

    /// `query · row i` (the same sum as [`iret_embed::dot`] of the two).
    pub fn dot(&self, i: usize, query: &[f32]) -> f32 {
        if let Some(all) = &self.decoded {
            return iret_embed::dot(query, &all[i * self.dims..(i + 1) * self.dims]);
        }
        const STACK: usize = 1024;
        if self.dims <= STACK {
            let mut buf = [0f32; STACK];
            self.read(i, &mut buf[..self.dims]);
            iret_embed::dot(query, &buf[..self.dims])
        } else {
            iret_embed::dot(query, &self.row(i))
        }
    }

    /// The `k` nearest chunks to `query` (cosine), among those `allow` accepts: exact up
    /// to [`EXACT_UP_TO`] chunks (a scan of the flat matrix is faster there than the
    /// graph at `ef` = 2k), through the HNSW graph above.
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        allow: &(dyn Fn(usize) -> bool + Sync),
    ) -> Vec<(usize, f32)> {
        if self.len() > EXACT_UP_TO.max(k) {
            if let Some(hits) = self.nearest_by_graph(query, k, allow) {
                return hits;
            }
        }
        self.exact(query, k, allow)
    }

    /// The graph's answer (at `ef` = 2k, at least 128), rescored exactly; `None` without
    /// a graph.
    pub fn nearest_by_graph(
        &self,
        query: &[f32],
        k: usize,
        allow: &(dyn Fn(usize) -> bool + Sync),
    ) -> Option<Vec<(usize, f32)>> {
        let g = self.graph.as_ref()?;
        let mut buf = vec![0f32; self.dims];
        let mut distance = |p: u32| {
            match g.chunk(p) {
                DEAD => g.dead_vector(p, &mut buf),
                c if (c as usize) < self.len => self.read(c as usize, &mut buf),
                _ => buf.fill(0.0),
            }
            (1.0 - iret_embed::dot(query, &buf)).max(0.0)
        };
        let accept = |p: u32| {
            let c = g.chunk(p);
            c != DEAD && (c as usize) < self.len && allow(c as usize)
        };
        let ef = (2 * k).max(128);
        let mut hits: Vec<(usize, f32)> = g
            .search(&mut distance, k, ef, &accept)
            .into_iter()
            .map(|(p, _)| {
                let c = g.chunk(p) as usize;
                (c, self.dot(c, query))
            })
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1));
        Some(hits)
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
            .map(|i| (i, self.dot(i, query)))
            .collect();
        top_k(&mut scored, k);
        scored
    }
}

/// Keeps the `k` best of `hits` (score, then id), best first, without sorting the rest
/// (a scan of every vector, a long task's keywords matching most of a codebase).
pub fn top_k(hits: &mut Vec<(usize, f32)>, k: usize) {
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k == 0 {
        hits.clear();
        return;
    }
    if hits.len() > k {
        hits.select_nth_unstable_by(k - 1, order);
        hits.truncate(k);
    }
    hits.sort_by(order);
}

/// A graph's files in `dir`: hnsw_rs's dump, the slot table, the adjacency tables.
fn save_graph_files(
    dir: &Path,
    hnsw: &Hnsw<'static, f16, UnitDot>,
    slots: &[u32],
    dims: usize,
) -> Result<(), StoreError> {
    let layers = dump_graph(dir, hnsw, slots)?;
    write_layers(dir, layers, slots, dims)
}

/// hnsw_rs's dump and the slot table in `dir`; the graph's shape, to encode.
fn dump_graph(
    dir: &Path,
    hnsw: &Hnsw<'static, f16, UnitDot>,
    slots: &[u32],
) -> Result<Layers, StoreError> {
    hnsw.file_dump(dir, BASENAME).map_err(|e| corrupt(dir, e))?;
    save_bin(&dir.join(SLOTS_FILE), &slots)?;
    Ok(layers_of(hnsw, slots))
}

/// The adjacency tables queries walk (`graph.bin`).
fn write_layers(dir: &Path, layers: Layers, slots: &[u32], dims: usize) -> Result<(), StoreError> {
    let path = dir.join(graph::FILE);
    std::fs::write(&path, graph::encode(layers, slots, dims)).map_err(io_err(&path))
}

/// The shape of hnsw_rs's graph `hnsw` (points are slots; see [`graph::encode`]).
fn layers_of(hnsw: &Hnsw<'static, f16, UnitDot>, slots: &[u32]) -> Layers {
    let top = hnsw.get_max_level_observed() as usize;
    // Per layer, per point: its neighbours (upper layers hold a few points each).
    let mut lists: Vec<Vec<(u32, Vec<u32>)>> = vec![Vec::new(); top + 1];
    let mut dead: Vec<(u32, Vec<f16>)> = Vec::new();
    let mut entry = 0u32;
    for p in hnsw.get_point_indexation() {
        let slot = p.get_origin_id() as u32;
        let level = p.get_point_id().0 as usize;
        if level == top {
            entry = slot;
        }
        for (l, ns) in p
            .get_neighborhood_id()
            .into_iter()
            .enumerate()
            .take(level + 1)
        {
            lists[l].push((slot, ns.iter().map(|n| n.d_id as u32).collect()));
        }
        if slots.get(slot as usize) == Some(&DEAD) {
            dead.push((slot, p.get_v().to_vec()));
        }
    }
    Layers { entry, lists, dead }
}

/// Little-endian f16 `bytes` into `out` (F16C where the CPU has it, on a little-endian
/// machine whose bytes are aligned, as a mapped file's are).
fn convert(bytes: &[u8], out: &mut [f32]) {
    #[cfg(target_endian = "little")]
    {
        // SAFETY: every bit pattern is a valid u16.
        let (head, bits, tail) = unsafe { bytes.align_to::<u16>() };
        if head.is_empty() && tail.is_empty() {
            use half::slice::HalfBitsSliceExt;
            bits.reinterpret_cast::<f16>().convert_to_f32_slice(out);
            return;
        }
    }
    for (x, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *x = f16::from_le_bytes([b[0], b[1]]).to_f32();
    }
}

/// hnsw_rs's tag before the data file's header and before each point's vector.
const DATA_MAGIC: u32 = 0xa67f_0000;

/// Checks a graph's data file (hnsw_rs's dump, native-endian: a header of tag and
/// dimension, then per point its tag, slot, byte length and f16 values) holds every
/// chunk exactly once.
fn check_graph_data(
    path: &Path,
    slots: &[u32],
    dims: usize,
    chunks: usize,
) -> Result<(), StoreError> {
    let bytes = std::fs::read(path).map_err(|e| corrupt(path, e))?;
    let bad = |why: &str| corrupt(path, why);
    let u32_at = |b: &[u8]| b.first_chunk::<4>().map(|x| u32::from_ne_bytes(*x));
    let u64_at = |b: &[u8]| b.first_chunk::<8>().map(|x| u64::from_ne_bytes(*x));
    if u32_at(&bytes) != Some(DATA_MAGIC) || u64_at(&bytes[4..]) != Some(dims as u64) {
        return Err(bad("not a graph data file of these vectors"));
    }
    let record = 20 + 2 * dims;
    let body = &bytes[12..];
    if body.len() != record * slots.len() {
        return Err(bad("truncated graph data"));
    }
    let mut seen = vec![false; chunks];
    for r in body.chunks_exact(record) {
        let slot = u64_at(&r[4..]).unwrap_or(u64::MAX) as usize;
        if u32_at(r) != Some(DATA_MAGIC) || u64_at(&r[12..]) != Some(2 * dims as u64) {
            return Err(bad("a point of the graph data is malformed"));
        }
        let chunk = *slots.get(slot).ok_or_else(|| bad("a point has no slot"))?;
        if chunk == DEAD {
            continue;
        }
        let c = chunk as usize;
        if c >= chunks || seen[c] {
            return Err(bad("the graph's points and the chunks disagree"));
        }
        seen[c] = true;
    }
    if seen.iter().any(|&s| !s) {
        return Err(bad("a chunk has no point in the graph"));
    }
    Ok(())
}

#[cfg(test)]
mod top_k_tests {
    use super::top_k;

    #[test]
    fn top_k_keeps_the_best_in_order_with_ties_by_id() {
        let all: Vec<(usize, f32)> =
            vec![(4, 0.5), (1, 0.9), (7, 0.5), (2, 0.1), (3, 0.9), (0, 0.5)];
        let mut sorted = all.clone();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for k in 0..=all.len() + 1 {
            let mut hits = all.clone();
            top_k(&mut hits, k);
            assert_eq!(hits, sorted[..k.min(all.len())], "k = {k}");
        }
    }
}
