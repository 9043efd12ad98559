//! The IQ3 quantization lattices: ggml's `iq3xs_init_impl`, computed once.
//!
//! A grid point is 4 levels `l` in 0..8 (value `2l + 1`), indexed by the
//! 12-bit key `sum l_i << 3i`. Keys off the grid map to a list of nearby
//! grid points (every point at the nearest `nwant` distinct squared
//! distances, ordered by distance then index), searched at quantization time.

use std::sync::OnceLock;

use super::super::iq_grids::{IQ3S_GRID, IQ3XXS_GRID};

pub(crate) struct Grid3 {
    /// Per grid index, the 4 values `2l + 1`.
    pub(crate) points: Vec<[i8; 4]>,
    /// Per 12-bit key: the grid index, or `-(offset + 1)` of its neighbour
    /// list in `neighbours` (a count, then that many grid indices).
    map: Vec<i32>,
    neighbours: Vec<u16>,
}

impl Grid3 {
    /// The grid index of `key`, or the neighbour list when off the grid.
    pub(crate) fn lookup(&self, key: usize) -> Result<usize, &[u16]> {
        let m = self.map[key];
        if m >= 0 {
            return Ok(m as usize);
        }
        let off = (-(m + 1)) as usize;
        let n = self.neighbours[off] as usize;
        Err(&self.neighbours[off + 1..off + 1 + n])
    }
}

/// The levels of a dequantization grid, ranked: entry value -> `l`.
fn ranked_points(grid: &[[u8; 4]]) -> Vec<[i8; 4]> {
    let mut levels: Vec<u8> = grid.iter().flatten().copied().collect();
    levels.sort_unstable();
    levels.dedup();
    grid.iter()
        .map(|p| p.map(|v| 2 * levels.iter().position(|&l| l == v).unwrap_or(0) as i8 + 1))
        .collect()
}

fn build(grid: &[[u8; 4]], nwant: usize) -> Grid3 {
    let points = ranked_points(grid);
    let mut map = vec![-1i32; 4096];
    for (i, p) in points.iter().enumerate() {
        let key: usize = (0..4).map(|k| (((p[k] - 1) / 2) as usize) << (3 * k)).sum();
        map[key] = i as i32;
    }
    let mut neighbours = Vec::new();
    let mut dist: Vec<(i32, usize)> = Vec::with_capacity(points.len());
    for key in 0..4096 {
        if map[key] >= 0 {
            continue;
        }
        let pos: [i32; 4] = std::array::from_fn(|k| 2 * ((key >> (3 * k)) & 7) as i32 + 1);
        dist.clear();
        dist.extend(points.iter().enumerate().map(|(j, p)| {
            let d2 = (0..4).map(|k| (p[k] as i32 - pos[k]).pow(2)).sum::<i32>();
            (d2, j)
        }));
        dist.sort_unstable();
        map[key] = -(neighbours.len() as i32 + 1);
        let start = neighbours.len();
        neighbours.push(0);
        let (mut d2, mut nhave) = (dist[0].0, 1);
        for &(d, j) in &dist {
            if d > d2 {
                if nhave == nwant {
                    break;
                }
                d2 = d;
                nhave += 1;
            }
            neighbours.push(j as u16);
        }
        neighbours[start] = (neighbours.len() - start - 1) as u16;
    }
    Grid3 {
        points,
        map,
        neighbours,
    }
}

/// IQ3_XXS's 256-point lattice (neighbours at the 2 nearest distances).
pub(crate) fn iq3_xxs() -> &'static Grid3 {
    static G: OnceLock<Grid3> = OnceLock::new();
    G.get_or_init(|| build(&IQ3XXS_GRID, 2))
}

/// IQ3_S's 512-point lattice (neighbours at the 3 nearest distances).
pub(crate) fn iq3_s() -> &'static Grid3 {
    static G: OnceLock<Grid3> = OnceLock::new();
    G.get_or_init(|| build(&IQ3S_GRID, 3))
}

/// ggml's `iq3_find_best_neighbour`: the neighbour minimising the weighted
/// squared error at `scale`; writes its levels to `l`, returns its index.
pub(crate) fn best_neighbour(
    g: &Grid3,
    neighbours: &[u16],
    xval: &[f32],
    weight: &[f32],
    scale: f32,
    l: &mut [i8],
) -> usize {
    let mut best_d2 = f32::MAX;
    // ggml stops the process when no distance beats FLT_MAX (NaN or
    // infinite input); the first neighbour keeps us going.
    let mut best = neighbours.first().copied().unwrap_or(0) as usize;
    for &j in neighbours {
        let p = &g.points[j as usize];
        let mut d2 = 0.0f32;
        for i in 0..4 {
            let diff = scale * p[i] as f32 - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if d2 < best_d2 {
            best_d2 = d2;
            best = j as usize;
        }
    }
    for (l, &p) in l.iter_mut().zip(&g.points[best]) {
        *l = (p - 1) / 2;
    }
    best
}
