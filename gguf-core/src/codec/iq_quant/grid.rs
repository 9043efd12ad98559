//! The quantization lattices of the grid types: ggml's `iq2xs_init_impl`
//! and `iq3xs_init_impl`, computed once per type.
//!
//! A lattice point is `dims` levels `l` (value `2l + 1`), indexed by the key
//! `sum l_i << (bits * i)`. The points are the codec's dequantization grids
//! with their values ranked (ggml keeps the same lattice twice, as keys and
//! as values). Keys off the lattice map to a list of nearby points (every
//! point at the nearest `nwant` distinct squared distances, ordered by
//! distance then index), searched at quantization time.

use std::sync::OnceLock;

use super::super::iq_grids::{
    IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID,
};

/// The value `2l + 1` of each level `l`.
pub(crate) const ODD: [f32; 8] = [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0];

pub(crate) struct Lattice {
    dims: usize,
    bits: usize,
    /// `dims` values `2l + 1` per point.
    points: Vec<i8>,
    /// Per key: the point's index, or `-(offset + 1)` of its neighbour list
    /// in `neighbours` (a count, then that many point indices).
    map: Vec<i32>,
    neighbours: Vec<u16>,
}

impl Lattice {
    /// The values `2l + 1` of point `i`.
    pub(crate) fn point(&self, i: usize) -> &[i8] {
        &self.points[i * self.dims..(i + 1) * self.dims]
    }

    /// The key of levels `l` (`dims` of them).
    pub(crate) fn key(&self, l: &[i8]) -> usize {
        l.iter()
            .take(self.dims)
            .enumerate()
            .map(|(i, &l)| (l as usize) << (self.bits * i))
            .sum()
    }

    /// The point of `key`, or the neighbour list when it is off the lattice.
    pub(crate) fn lookup(&self, key: usize) -> Result<usize, &[u16]> {
        match self.map.get(key) {
            Some(&m) if m >= 0 => Ok(m as usize),
            Some(&m) => {
                let off = (-(m + 1)) as usize;
                let n = self.neighbours[off] as usize;
                Err(&self.neighbours[off + 1..off + 1 + n])
            }
            None => Err(&[]),
        }
    }

    /// ggml's `iq2_find_best_neighbour` / `iq3_find_best_neighbour`: the
    /// neighbour minimising the weighted squared error at `scale`; writes
    /// its levels to `l` and returns its index.
    pub(crate) fn best_neighbour(
        &self,
        neighbours: &[u16],
        xval: &[f32],
        weight: &[f32],
        scale: f32,
        l: &mut [i8],
    ) -> usize {
        // A point's value `2l + 1` is `ODD[l]` exactly.
        let best = self.nearest(neighbours, xval, weight, scale, &ODD);
        self.levels_of(best, l);
        best
    }

    /// The neighbour whose values `scale * values[l]` (`l` each level of
    /// the point) are nearest to `xval` in `weight`ed squared error, the
    /// first of equals: ggml's neighbour searches. The AVX2 kernel scores 8
    /// neighbours at once, each in its own lane with this loop's operations
    /// in this order, and picks as this loop does.
    pub(crate) fn nearest(
        &self,
        neighbours: &[u16],
        xval: &[f32],
        weight: &[f32],
        scale: f32,
        values: &[f32; 8],
    ) -> usize {
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if super::super::avx2() {
            let (Some(x), Some(w)) = (xval.get(..self.dims), weight.get(..self.dims)) else {
                return self.nearest_portable(neighbours, xval, weight, scale, values);
            };
            // SAFETY: `avx2()` saw the CPU has AVX2.
            #[allow(unsafe_code)]
            return unsafe {
                super::super::x86::nearest_point(
                    self.points_of(),
                    self.dims,
                    neighbours,
                    x,
                    w,
                    scale,
                    values,
                )
            };
        }
        self.nearest_portable(neighbours, xval, weight, scale, values)
    }

    /// [`nearest`](Self::nearest) as ggml writes it: the reference.
    pub(crate) fn nearest_portable(
        &self,
        neighbours: &[u16],
        xval: &[f32],
        weight: &[f32],
        scale: f32,
        values: &[f32; 8],
    ) -> usize {
        let mut best_d2 = f32::MAX;
        // ggml stops the process when no distance beats FLT_MAX (NaN or
        // infinite input); the first neighbour keeps us going.
        let mut best = neighbours.first().copied().unwrap_or(0) as usize;
        for &j in neighbours {
            let mut d2 = 0.0f32;
            for ((&p, &x), &w) in self.point(j as usize).iter().zip(xval).zip(weight) {
                let q = values[((p - 1) / 2) as usize & 7];
                let diff = scale * q - x;
                d2 += w * diff * diff;
            }
            if d2 < best_d2 {
                best_d2 = d2;
                best = j as usize;
            }
        }
        best
    }

    /// Every point's values, `dims` per point.
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    pub(crate) fn points_of(&self) -> &[i8] {
        &self.points
    }

    /// Values per point.
    #[cfg(all(
        any(test, feature = "testing"),
        feature = "simd",
        target_arch = "x86_64"
    ))]
    pub(crate) fn dims(&self) -> usize {
        self.dims
    }

    /// Writes the levels `l` of point `i`.
    pub(crate) fn levels_of(&self, i: usize, l: &mut [i8]) {
        for (l, &p) in l.iter_mut().zip(self.point(i)) {
            *l = (p - 1) / 2;
        }
    }
}

fn build<const D: usize, T: Copy + Into<i32>>(
    grid: &[[T; D]],
    bits: usize,
    map_size: usize,
    nwant: usize,
) -> Lattice {
    let mut levels: Vec<i32> = grid.iter().flatten().map(|&v| v.into()).collect();
    levels.sort_unstable();
    levels.dedup();
    let rank = |v: T| levels.iter().position(|&l| l == v.into()).unwrap_or(0) as i8;
    let points: Vec<i8> = grid.iter().flatten().map(|&v| 2 * rank(v) + 1).collect();
    let mut lat = Lattice {
        dims: D,
        bits,
        points,
        map: vec![-1; map_size],
        neighbours: Vec::new(),
    };
    for i in 0..grid.len() {
        let l: Vec<i8> = lat.point(i).iter().map(|p| (p - 1) / 2).collect();
        let key = lat.key(&l);
        lat.map[key] = i as i32;
    }
    let mask = (1usize << bits) - 1;
    let mut dist: Vec<(i32, usize)> = Vec::with_capacity(grid.len());
    for key in 0..map_size {
        if lat.map[key] >= 0 {
            continue;
        }
        dist.clear();
        dist.extend((0..grid.len()).map(|j| {
            let d2 = lat
                .point(j)
                .iter()
                .enumerate()
                .map(|(k, &p)| {
                    let pos = 2 * ((key >> (bits * k)) & mask) as i32 + 1;
                    (p as i32 - pos).pow(2)
                })
                .sum::<i32>();
            (d2, j)
        }));
        // Every point at the `nwant` smallest distinct distances, by
        // distance then index: ggml sorts all points; selecting the
        // cut-off first and sorting only those gives the same list.
        let mut nearest: Vec<i32> = Vec::with_capacity(nwant + 1);
        for &(d, _) in &dist {
            if let Err(at) = nearest.binary_search(&d)
                && at < nwant
            {
                nearest.insert(at, d);
                nearest.truncate(nwant);
            }
        }
        let cutoff = nearest.last().copied().unwrap_or(i32::MAX);
        dist.retain(|&(d, _)| d <= cutoff);
        dist.sort_unstable();
        lat.map[key] = -(lat.neighbours.len() as i32 + 1);
        let start = lat.neighbours.len();
        lat.neighbours.push(0);
        lat.neighbours.extend(dist.iter().map(|&(_, j)| j as u16));
        lat.neighbours[start] = (lat.neighbours.len() - start - 1) as u16;
    }
    lat
}

/// Keys of 8 two-bit levels (up to 0xAAAA, levels 0..=2): ggml's map size.
const MAP2: usize = 43692;

/// IQ3_XXS's 256-point lattice (neighbours at the 2 nearest distances).
pub(crate) fn iq3_xxs() -> &'static Lattice {
    static G: OnceLock<Lattice> = OnceLock::new();
    G.get_or_init(|| build(&IQ3XXS_GRID, 3, 4096, 2))
}

/// IQ3_S's 512-point lattice (neighbours at the 3 nearest distances).
pub(crate) fn iq3_s() -> &'static Lattice {
    static G: OnceLock<Lattice> = OnceLock::new();
    G.get_or_init(|| build(&IQ3S_GRID, 3, 4096, 3))
}

/// IQ2_XXS's 256-point lattice (2 nearest distances).
pub(crate) fn iq2_xxs() -> &'static Lattice {
    static G: OnceLock<Lattice> = OnceLock::new();
    G.get_or_init(|| build(&IQ2XXS_GRID, 2, MAP2, 2))
}

/// IQ2_XS's 512-point lattice (2 nearest distances).
pub(crate) fn iq2_xs() -> &'static Lattice {
    static G: OnceLock<Lattice> = OnceLock::new();
    G.get_or_init(|| build(&IQ2XS_GRID, 2, MAP2, 2))
}

/// IQ2_S's 1024-point lattice (the nearest distance only).
pub(crate) fn iq2_s() -> &'static Lattice {
    static G: OnceLock<Lattice> = OnceLock::new();
    G.get_or_init(|| build(&IQ2S_GRID, 2, MAP2, 1))
}

/// IQ1_S and IQ1_M's 2048-point lattice (3 nearest distances).
pub(crate) fn iq1() -> &'static Lattice {
    static G: OnceLock<Lattice> = OnceLock::new();
    G.get_or_init(|| build(&IQ1S_GRID, 2, MAP2, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ggml's way: sort every point by (distance, index) and take them up
    /// to the `nwant`-th distinct distance.
    fn full_sort_list(lat: &Lattice, key: usize, nwant: usize) -> Vec<u16> {
        let mask = (1usize << lat.bits) - 1;
        let mut dist: Vec<(i32, usize)> = (0..lat.points.len() / lat.dims)
            .map(|j| {
                let d2 = (0..lat.dims)
                    .map(|k| {
                        let pos = 2 * ((key >> (lat.bits * k)) & mask) as i32 + 1;
                        (lat.point(j)[k] as i32 - pos).pow(2)
                    })
                    .sum::<i32>();
                (d2, j)
            })
            .collect();
        dist.sort_unstable();
        let (mut d2, mut nhave, mut out) = (dist[0].0, 1, Vec::new());
        for (d, j) in dist {
            if d > d2 {
                if nhave == nwant {
                    break;
                }
                d2 = d;
                nhave += 1;
            }
            out.push(j as u16);
        }
        out
    }

    #[test]
    fn neighbour_lists_equal_a_full_sort() {
        for (lat, nwant, keys) in [(iq3_xxs(), 2, 4096), (iq3_s(), 3, 4096), (iq2_s(), 1, MAP2)] {
            let mut off = 0;
            for key in (0..keys).step_by(7) {
                if let Err(list) = lat.lookup(key) {
                    assert_eq!(list, &full_sort_list(lat, key, nwant)[..], "key {key}");
                    off += 1;
                }
            }
            assert!(off > 100, "only {off} keys off the lattice");
        }
    }

    #[test]
    fn every_point_is_found_by_its_key() {
        for lat in [iq3_xxs(), iq3_s(), iq2_xxs(), iq2_xs(), iq2_s(), iq1()] {
            for i in 0..lat.points.len() / lat.dims {
                let mut l = vec![0i8; lat.dims];
                lat.levels_of(i, &mut l);
                assert_eq!(lat.lookup(lat.key(&l)), Ok(i));
            }
        }
    }
}
