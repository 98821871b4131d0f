//! The region that a set of points does not dominate, cut into boxes (Lacour, Klamroth and
//! Fonseca, "A Box Decomposition Algorithm to Compute the Hypervolume Indicator", 2017,
//! Algorithm 2, as Optuna's `_hypervolume/box_decomposition.py` applies it). The expected
//! hypervolume improvement of a point is then a sum over boxes of the volume of each box that
//! the point dominates (Daulton et al., "Differentiable Expected Hypervolume Improvement",
//! NeurIPS 2020, eq. 1).
//!
//! Values here are **maximised**: the boxes cover the points above the reference point that
//! no given point is at least as good as in every objective.

/// Boxes `[lower, lower + width]`, `count × m` row-major; a width may be infinite.
#[derive(Debug, Clone)]
pub(crate) struct Boxes {
    pub(crate) m: usize,
    pub(crate) lower: Vec<f64>,
    pub(crate) width: Vec<f64>,
}

impl Boxes {
    /// The number of boxes.
    pub(crate) fn count(&self) -> usize {
        self.lower.len() / self.m.max(1)
    }

    /// The hypervolume that `y` adds to the points the boxes were built from: the volume of
    /// each box below `y`, summed.
    #[cfg(test)]
    pub(crate) fn improvement(&self, y: &[f64]) -> f64 {
        (0..self.count())
            .map(|b| {
                (0..self.m)
                    .map(|j| {
                        let k = b * self.m + j;
                        (y[j] - self.lower[k]).clamp(0.0, self.width[k])
                    })
                    .product::<f64>()
            })
            .sum()
    }
}

/// Optuna's `_get_reference_point` for values to maximise: in loss terms (`-y`), the worst
/// loss times 1.1 (0.9 when negative), nudged one ulp further; returned in `y` terms.
pub(crate) fn reference_point(y: &[Vec<f64>]) -> Vec<f64> {
    let m = y[0].len();
    (0..m)
        .map(|j| {
            let worst = y.iter().map(|p| -p[j]).fold(f64::NEG_INFINITY, f64::max);
            let r = (1.1 * worst).max(0.9 * worst);
            -next_up(r)
        })
        .collect()
}

fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
}

/// The non-dominated region of `y` (maximised) above `reference`, as boxes (Optuna's
/// `_get_non_dominated_box_bounds` of `acqf.py`). Points not strictly above the reference
/// in every objective take no part.
pub(crate) fn non_dominated_boxes(y: &[Vec<f64>], reference: &[f64]) -> Boxes {
    let m = reference.len();
    let reference_loss: Vec<f64> = reference.iter().map(|r| -r).collect();
    let losses: Vec<Vec<f64>> = y
        .iter()
        .map(|p| p.iter().map(|v| -v).collect::<Vec<f64>>())
        .filter(|l| l.iter().zip(&reference_loss).all(|(a, r)| a < r))
        .collect();
    let front = unique_sorted_front(losses);
    let (lower_loss, upper_loss) = loss_boxes(&front, &reference_loss);
    // Back to maximisation: a loss box [l, u] is the value box [-u, -l].
    let count = lower_loss.len();
    let mut lower = Vec::with_capacity(count * m);
    let mut width = Vec::with_capacity(count * m);
    for b in 0..count {
        for j in 0..m {
            let lo = -upper_loss[b][j];
            let hi = -lower_loss[b][j];
            lower.push(lo);
            width.push(hi - lo);
        }
    }
    Boxes { m, lower, width }
}

/// The rows sorted lexicographically without duplicates (`np.unique(axis=0)`), then only
/// those that no other row weakly dominates (losses: lower is better).
fn unique_sorted_front(mut rows: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    rows.sort_by(|a, b| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    rows.dedup();
    let dominated: Vec<bool> = (0..rows.len())
        .map(|i| {
            (0..rows.len()).any(|k| k != i && rows[k].iter().zip(&rows[i]).all(|(a, b)| a <= b))
        })
        .collect();
    rows.into_iter()
        .zip(dominated)
        .filter(|(_, d)| !d)
        .map(|(r, _)| r)
        .collect()
}

/// Box bounds `(lower, upper)` of the region of losses that `front` (sorted, unique, mutually
/// non-dominated) does not dominate, below `reference` (Optuna's
/// `box_decomposition._get_non_dominated_box_bounds`).
fn loss_boxes(front: &[Vec<f64>], reference: &[f64]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let m = reference.len();
    let (upper_set, _) = upper_bound_set(front, reference);
    // The sign-flipped upper bound set, as points of a front whose lower bound set is wanted.
    let negated: Vec<Vec<f64>> = upper_set
        .iter()
        .map(|u| u.iter().map(|v| -v).collect())
        .collect();
    let negated_front = unique_sorted_front(negated);
    let infinity = vec![f64::INFINITY; m];
    let (lower_set, def_points) = upper_bound_set(&negated_front, &infinity);
    let (box_low, box_high) = box_bounds(&lower_set, &def_points, &infinity);
    // -[low, high] = [-high, -low].
    let lower = box_high
        .iter()
        .map(|r| r.iter().map(|v| -v).collect())
        .collect();
    let upper = box_low
        .iter()
        .map(|r| r.iter().map(|v| -v).collect())
        .collect();
    (lower, upper)
}

/// Lacour et al.'s Algorithm 2: the upper bound set `U(N)` of the sorted front, and the
/// defining points of each bound (`def[b][k]` is the point `z^k(u_b)`, a row of `m`).
#[allow(clippy::type_complexity)]
fn upper_bound_set(front: &[Vec<f64>], reference: &[f64]) -> (Vec<Vec<f64>>, Vec<Vec<Vec<f64>>>) {
    let m = reference.len();
    let mut bounds = vec![reference.to_vec()];
    let mut defs = vec![(0..m)
        .map(|k| {
            (0..m)
                .map(|j| {
                    if j == k {
                        reference[k]
                    } else {
                        f64::NEG_INFINITY
                    }
                })
                .collect::<Vec<f64>>()
        })
        .collect::<Vec<_>>()];
    for sol in front {
        let dominated: Vec<bool> = bounds
            .iter()
            .map(|u| sol.iter().zip(u).all(|(s, v)| s < v))
            .collect();
        if !dominated.iter().any(|d| *d) {
            continue;
        }
        let mut kept_bounds = Vec::with_capacity(bounds.len());
        let mut kept_defs = Vec::with_capacity(bounds.len());
        let mut new_bounds = Vec::new();
        let mut new_defs = Vec::new();
        for (b, (u, def)) in bounds.into_iter().zip(defs).enumerate() {
            if !dominated[b] {
                kept_bounds.push(u);
                kept_defs.push(def);
                continue;
            }
            for j in 0..m {
                // Coordinate 0 always updates (the front is sorted by it); coordinate j > 0
                // when sol[j] is at least max_{k ≠ j} z^k(u)[j].
                let update = j == 0
                    || sol[j]
                        >= (0..m)
                            .filter(|k| *k != j)
                            .map(|k| def[k][j])
                            .fold(f64::NEG_INFINITY, f64::max);
                if update {
                    let mut d = def.clone();
                    d[j] = sol.clone();
                    let mut v = u.clone();
                    v[j] = sol[j];
                    new_bounds.push(v);
                    new_defs.push(d);
                }
            }
        }
        kept_bounds.extend(new_bounds);
        kept_defs.extend(new_defs);
        bounds = kept_bounds;
        defs = kept_defs;
    }
    (bounds, defs)
}

/// Eq. (2) of Lacour et al.: each bound's box, empty ones dropped.
#[allow(clippy::type_complexity)]
fn box_bounds(
    upper_set: &[Vec<f64>],
    defs: &[Vec<Vec<f64>>],
    reference: &[f64],
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let m = reference.len();
    let mut lows = Vec::new();
    let mut highs = Vec::new();
    for (u, def) in upper_set.iter().zip(defs) {
        let mut low = vec![0.0; m];
        let mut high = vec![0.0; m];
        low[0] = def[0][0];
        high[0] = reference[0];
        for k in 0..m - 1 {
            // max over the defining points 0..=k of their coordinate k + 1.
            low[k + 1] = (0..=k)
                .map(|r| def[r][k + 1])
                .fold(f64::NEG_INFINITY, f64::max);
            high[k + 1] = u[k + 1];
        }
        if low.iter().zip(&high).all(|(l, h)| h > l) {
            lows.push(low);
            highs.push(high);
        }
    }
    (lows, highs)
}
