//! The HNSW graph as a served index walks it. hnsw_rs builds the graph and updates it in
//! place (see [`crate::vectors`]); a generation also stores its layers as flat adjacency
//! tables (`graph.bin`), which a query walks on the mapped file: a search reads the few
//! thousand points it visits, not the graph of a whole repository (hnsw_rs loads every
//! point and neighbour list into memory before it can answer).
//!
//! Layout, little-endian: a header (magic, points, entry point, layers, dimensions), each
//! point's chunk (u32, [`DEAD`] for a removed chunk's point); layer 0: each point's first
//! neighbour (u64, one past the last) and the neighbours (u32 points); each upper layer:
//! its member count (u64), members (u32, sorted), their first neighbours (u64) and the
//! neighbours; then the points of removed chunks, which the walk still passes through:
//! their count (u64), their ids (u32, sorted) and their vectors (f16).
use crate::mapped::{put_u32s, put_u64s, u32_at, u64_at, Bytes};
use crate::store::{corrupt, StoreError};
use half::f16;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::Path;

pub(crate) const FILE: &str = "graph.bin";
const MAGIC: &[u8; 8] = b"IRETGRF1";
const HEADER: usize = 40;

/// Where one layer's tables are.
struct Layer {
    /// Upper layers: (first byte, count) of the sorted member list.
    members: Option<(usize, usize)>,
    offsets: usize,
    neighbours: usize,
}

pub(crate) struct Graph {
    bytes: Bytes,
    points: usize,
    entry: u32,
    dims: usize,
    layers: Vec<Layer>,
    /// (first byte, count) of the removed chunks' point ids; their vectors follow.
    dead: (usize, usize),
}

/// A point whose chunk is gone (the walk passes through it; it is never an answer).
pub const DEAD: u32 = u32::MAX;

/// A built graph's shape, as [`encode`] takes it: the entry point, per layer each member
/// point with its neighbours, and the vectors of the removed chunks' points.
pub(crate) struct Layers {
    pub entry: u32,
    pub lists: Vec<Vec<(u32, Vec<u32>)>>,
    pub dead: Vec<(u32, Vec<f16>)>,
}

/// The adjacency tables of a graph (points are the slots of `slots`).
pub(crate) fn encode(layers: Layers, slots: &[u32], dims: usize) -> Vec<u8> {
    let points = slots.len();
    let Layers {
        entry,
        mut lists,
        mut dead,
    } = layers;
    let top = lists.len().saturating_sub(1);
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    put_u64s(
        &mut out,
        [points as u64, entry as u64, top as u64 + 1, dims as u64],
    );
    put_u32s(&mut out, slots.iter().copied());
    for (l, layer) in lists.iter_mut().enumerate() {
        layer.sort_unstable_by_key(|(slot, _)| *slot);
        if l == 0 {
            // Every point is in layer 0: indexed by point, no member list.
            let mut full = vec![Vec::new(); points];
            for (slot, ns) in layer.drain(..) {
                if let Some(f) = full.get_mut(slot as usize) {
                    *f = ns;
                }
            }
            put_adjacency(&mut out, full.iter().map(Vec::as_slice));
        } else {
            put_u64s(&mut out, [layer.len() as u64]);
            put_u32s(&mut out, layer.iter().map(|(s, _)| *s));
            put_adjacency(&mut out, layer.iter().map(|(_, ns)| ns.as_slice()));
        }
    }
    dead.sort_unstable_by_key(|(slot, _)| *slot);
    put_u64s(&mut out, [dead.len() as u64]);
    put_u32s(&mut out, dead.iter().map(|(s, _)| *s));
    for (_, v) in &dead {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out
}

fn put_adjacency<'a>(out: &mut Vec<u8>, lists: impl Iterator<Item = &'a [u32]> + Clone) {
    let mut at = 0u64;
    put_u64s(
        out,
        std::iter::once(0).chain(lists.clone().map(|ns| {
            at += ns.len() as u64;
            at
        })),
    );
    for ns in lists {
        put_u32s(out, ns.iter().copied());
    }
}

/// A distance and a point, ordered by distance then point.
#[derive(PartialEq)]
struct Near(f32, u32);

impl Eq for Near {}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

impl Graph {
    pub(crate) fn open(path: &Path, dims: usize) -> Result<Self, StoreError> {
        Self::parse(Bytes::open(path, true)?, dims).map_err(|why| corrupt(path, why))
    }

    pub(crate) fn from_bytes(bytes: Vec<u8>, dims: usize) -> Self {
        Self::parse(Bytes::Owned(bytes), dims).expect("a graph just encoded reads back")
    }

    /// Reads the header and the section sizes (a few bytes per layer).
    /// Gives back the mapped pages read so far ([`Bytes::release`]).
    pub fn release(&self) {
        self.bytes.release();
    }

    fn parse(bytes: Bytes, dims: usize) -> Result<Self, &'static str> {
        const BAD: &str = "the graph's tables are truncated or disagree";
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err("not a graph file");
        }
        let points = u64_at(&bytes, 1) as usize;
        let entry = u64_at(&bytes, 2) as u32;
        let layer_count = u64_at(&bytes, 3) as usize;
        if u64_at(&bytes, 4) as usize != dims || points == 0 || entry as usize >= points {
            return Err("the graph is not of these vectors");
        }
        if layer_count == 0 || layer_count > 64 {
            return Err(BAD);
        }
        let end = bytes.len();
        let mut at = points
            .checked_mul(4)
            .and_then(|x| x.checked_add(HEADER))
            .filter(|&a| a <= end)
            .ok_or(BAD)?;
        let mut layers = Vec::with_capacity(layer_count);
        for l in 0..layer_count {
            let (members, n) = if l == 0 {
                (None, points)
            } else {
                let n = bytes.get(at..at + 8).ok_or(BAD).map(|b| u64_at(b, 0))? as usize;
                at += 8;
                let m = (at, n);
                at = n
                    .checked_mul(4)
                    .and_then(|x| x.checked_add(at))
                    .ok_or(BAD)?;
                (Some(m), n)
            };
            let offsets = at;
            at = n
                .checked_add(1)
                .and_then(|x| x.checked_mul(8))
                .and_then(|x| x.checked_add(at))
                .filter(|&a| a <= end)
                .ok_or(BAD)?;
            let total = u64_at(&bytes[offsets..], n) as usize;
            let neighbours = at;
            at = total
                .checked_mul(4)
                .and_then(|x| x.checked_add(at))
                .ok_or(BAD)?;
            layers.push(Layer {
                members,
                offsets,
                neighbours,
            });
        }
        let dead_count = bytes.get(at..at + 8).ok_or(BAD).map(|b| u64_at(b, 0))? as usize;
        let dead = (at + 8, dead_count);
        let size = dead_count
            .checked_mul(4 + 2 * dims)
            .and_then(|x| x.checked_add(at + 8));
        if size != Some(end) {
            return Err(BAD);
        }
        Ok(Self {
            bytes,
            points,
            entry,
            dims,
            layers,
            dead,
        })
    }

    pub(crate) fn dead_points(&self) -> usize {
        self.dead.1
    }

    /// The chunk point `p` stands for ([`DEAD`]: a removed chunk's).
    pub(crate) fn chunk(&self, p: u32) -> u32 {
        u32_at(&self.bytes[HEADER..], p as usize)
    }

    fn neighbours(&self, layer: usize, p: u32) -> impl Iterator<Item = u32> + '_ {
        let l = &self.layers[layer];
        let row = match l.members {
            None => Some(p as usize),
            Some((at, n)) => {
                let members = &self.bytes[at..at + 4 * n];
                let (mut lo, mut hi) = (0, n);
                let mut found = None;
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    match u32_at(members, mid).cmp(&p) {
                        Ordering::Less => lo = mid + 1,
                        Ordering::Greater => hi = mid,
                        Ordering::Equal => {
                            found = Some(mid);
                            break;
                        }
                    }
                }
                found
            }
        };
        let (start, end) = row.map_or((0, 0), |r| {
            let offsets = &self.bytes[l.offsets..];
            (u64_at(offsets, r) as usize, u64_at(offsets, r + 1) as usize)
        });
        let list = &self.bytes[l.neighbours + 4 * start..l.neighbours + 4 * end];
        list.chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .filter(|&n| (n as usize) < self.points)
    }

    /// The vector of a removed chunk's point `p` (zeros if it has none).
    pub(crate) fn dead_vector(&self, p: u32, out: &mut [f32]) {
        let (at, n) = self.dead;
        let ids = &self.bytes[at..at + 4 * n];
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match u32_at(ids, mid).cmp(&p) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => {
                    let v = at + 4 * n + 2 * self.dims * mid;
                    for (x, b) in out.iter_mut().zip(self.bytes[v..].chunks_exact(2)) {
                        *x = f16::from_le_bytes([b[0], b[1]]).to_f32();
                    }
                    return;
                }
            }
        }
        out.fill(0.0);
    }

    /// The points nearest by `distance` among those `accept` takes (best first, at most
    /// `k`): HNSW's search (greedy descent through the upper layers, then a beam of `ef`
    /// on layer 0); rejected points are passed through but never returned.
    pub(crate) fn search(
        &self,
        distance: &mut dyn FnMut(u32) -> f32,
        k: usize,
        ef: usize,
        accept: &dyn Fn(u32) -> bool,
    ) -> Vec<(u32, f32)> {
        let mut entry = self.entry;
        let mut best = distance(entry);
        for layer in (1..self.layers.len()).rev() {
            loop {
                let mut moved = false;
                for n in self.neighbours(layer, entry) {
                    let d = distance(n);
                    if d < best {
                        (entry, best, moved) = (n, d, true);
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        let mut visited = vec![0u64; self.points.div_ceil(64)];
        let mut visit = |p: u32| {
            let (w, b) = (p as usize / 64, 1u64 << (p % 64));
            let fresh = visited[w] & b == 0;
            visited[w] |= b;
            fresh
        };
        visit(entry);
        let mut candidates = BinaryHeap::from([Reverse(Near(best, entry))]);
        let mut results: BinaryHeap<Near> = BinaryHeap::new();
        if accept(entry) {
            results.push(Near(best, entry));
        }
        while let Some(Reverse(Near(d, p))) = candidates.pop() {
            if results.len() >= ef && results.peek().is_some_and(|w| d > w.0) {
                break;
            }
            for n in self.neighbours(0, p) {
                if !visit(n) {
                    continue;
                }
                let dn = distance(n);
                if results.len() < ef || results.peek().is_some_and(|w| dn < w.0) {
                    candidates.push(Reverse(Near(dn, n)));
                    if accept(n) {
                        results.push(Near(dn, n));
                        if results.len() > ef {
                            results.pop();
                        }
                    }
                }
            }
        }
        let mut out: Vec<(u32, f32)> = results
            .into_sorted_vec()
            .into_iter()
            .map(|Near(d, p)| (p, d))
            .collect();
        out.truncate(k);
        out
    }
}
