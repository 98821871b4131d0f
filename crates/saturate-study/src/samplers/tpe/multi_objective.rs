//! Multi-objective parts of TPE: the non-domination split with a hypervolume tie-break,
//! and the hypervolume-contribution weights of l(x) (Optuna's MOTPE).

use crate::study::{dominates, StudyView};
use crate::trial::{FrozenTrial, StudyDirection};

const EPS: f64 = 1e-12;

fn losses(directions: &[StudyDirection], trial: &FrozenTrial) -> Vec<f64> {
    let values = trial.values.as_deref().unwrap_or(&[]);
    directions
        .iter()
        .zip(values)
        .map(|(d, v)| d.to_loss(*v))
        .collect()
}

/// Non-domination rank of each point (0 = Pareto front).
pub(crate) fn non_domination_ranks(points: &[Vec<f64>]) -> Vec<usize> {
    let n = points.len();
    let mut rank = vec![usize::MAX; n];
    let mut current = 0;
    let mut left = n;
    while left > 0 {
        let front: Vec<usize> = (0..n)
            .filter(|&i| rank[i] == usize::MAX)
            .filter(|&i| {
                !(0..n).any(|j| rank[j] == usize::MAX && dominates(&points[j], &points[i]))
            })
            .collect();
        for &i in &front {
            rank[i] = current;
        }
        left -= front.len();
        current += 1;
    }
    rank
}

/// Hypervolume dominated by `points` (losses) and bounded by `reference`.
pub(crate) fn hypervolume(points: &[Vec<f64>], reference: &[f64]) -> f64 {
    let points: Vec<&Vec<f64>> = points
        .iter()
        .filter(|p| p.iter().zip(reference).all(|(x, r)| x < r))
        .collect();
    hypervolume_of(&points, reference)
}

fn hypervolume_of(points: &[&Vec<f64>], reference: &[f64]) -> f64 {
    if points.is_empty() {
        return 0.0;
    }
    let d = reference.len();
    if d == 1 {
        let best = points.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min);
        return reference[0] - best;
    }
    // Slice along the last objective: between consecutive values, the (d−1)-dimensional
    // volume of the points at or below the slice.
    let mut sorted: Vec<&Vec<f64>> = points.to_vec();
    sorted.sort_by(|a, b| a[d - 1].total_cmp(&b[d - 1]));
    let mut volume = 0.0;
    for i in 0..sorted.len() {
        let top = if i + 1 < sorted.len() {
            sorted[i + 1][d - 1]
        } else {
            reference[d - 1]
        };
        let height = top - sorted[i][d - 1];
        if height <= 0.0 {
            continue;
        }
        let projected: Vec<Vec<f64>> = sorted[..=i].iter().map(|p| p[..d - 1].to_vec()).collect();
        let refs: Vec<&Vec<f64>> = projected.iter().collect();
        volume += height * hypervolume_of(&refs, &reference[..d - 1]);
    }
    volume
}

/// Optuna's `_get_reference_point`: 1.1× the worst point (0.9× when negative), 0 → EPS.
fn reference_point(points: &[Vec<f64>]) -> Vec<f64> {
    let d = points[0].len();
    (0..d)
        .map(|k| {
            let worst = points
                .iter()
                .map(|p| p[k])
                .fold(f64::NEG_INFINITY, f64::max);
            let r = (1.1 * worst).max(0.9 * worst);
            if r == 0.0 {
                EPS
            } else {
                r
            }
        })
        .collect()
}

/// Greedy hypervolume subset selection: `k` of `candidates` (indices into `points`).
fn select_by_hypervolume(points: &[Vec<f64>], candidates: &[usize], k: usize) -> Vec<usize> {
    let subset: Vec<Vec<f64>> = candidates.iter().map(|&i| points[i].clone()).collect();
    let reference = reference_point(&subset);
    let mut chosen: Vec<usize> = Vec::new();
    let mut chosen_points: Vec<Vec<f64>> = Vec::new();
    let mut left: Vec<usize> = (0..candidates.len()).collect();
    while chosen.len() < k && !left.is_empty() {
        let base = hypervolume(&chosen_points, &reference);
        let (pos, _) = left
            .iter()
            .enumerate()
            .map(|(pos, &c)| {
                let mut with = chosen_points.clone();
                with.push(subset[c].clone());
                (pos, hypervolume(&with, &reference) - base)
            })
            .fold(
                (0, f64::NEG_INFINITY),
                |best, x| if x.1 > best.1 { x } else { best },
            );
        let c = left.remove(pos);
        chosen_points.push(subset[c].clone());
        chosen.push(candidates[c]);
    }
    chosen
}

/// Splits COMPLETE trials of a multi-objective study: whole non-domination ranks while
/// they fit in `n_below`, then a hypervolume subset of the next rank.
pub(crate) fn split_multi_objective<T: std::ops::Deref<Target = FrozenTrial>>(
    directions: &[StudyDirection],
    trials: Vec<T>,
    n_below: usize,
) -> (Vec<T>, Vec<T>) {
    if n_below == 0 {
        return (Vec::new(), trials);
    }
    if n_below >= trials.len() {
        return (trials, Vec::new());
    }
    let points: Vec<Vec<f64>> = trials.iter().map(|t| losses(directions, t)).collect();
    let ranks = non_domination_ranks(&points);
    let mut below_mask = vec![false; trials.len()];
    let mut taken = 0;
    let mut rank = 0;
    loop {
        let members: Vec<usize> = (0..trials.len()).filter(|&i| ranks[i] == rank).collect();
        if taken + members.len() <= n_below {
            for &i in &members {
                below_mask[i] = true;
            }
            taken += members.len();
            rank += 1;
            if taken == n_below {
                break;
            }
        } else {
            for i in select_by_hypervolume(&points, &members, n_below - taken) {
                below_mask[i] = true;
            }
            break;
        }
    }
    let mut below = Vec::new();
    let mut above = Vec::new();
    for (t, is_below) in trials.into_iter().zip(below_mask) {
        if is_below {
            below.push(t);
        } else {
            above.push(t);
        }
    }
    (below, above)
}

/// Weights of the l(x) kernels: each below trial's normalised hypervolume contribution
/// (EPS for dominated ones).
pub(crate) fn weights_below(study: &StudyView<'_>, below: &[&FrozenTrial]) -> Vec<f64> {
    if below.len() <= 1 {
        return vec![1.0; below.len()];
    }
    let points: Vec<Vec<f64>> = below
        .iter()
        .map(|t| losses(study.directions(), t))
        .collect();
    let reference = reference_point(&points);
    let on_front: Vec<bool> = (0..points.len())
        .map(|i| !points.iter().any(|p| dominates(p, &points[i])))
        .collect();
    let front: Vec<Vec<f64>> = points
        .iter()
        .zip(&on_front)
        .filter(|(_, f)| **f)
        .map(|(p, _)| p.clone())
        .collect();
    let total = hypervolume(&front, &reference);
    if !total.is_finite() {
        return vec![1.0; below.len()];
    }
    let mut contributions = vec![0.0; points.len()];
    let mut k = 0;
    for (i, is_front) in on_front.iter().enumerate() {
        if *is_front {
            let mut without = front.clone();
            without.remove(k);
            contributions[i] = total - hypervolume(&without, &reference);
            k += 1;
        }
    }
    let max = contributions.iter().copied().fold(EPS, f64::max);
    contributions.iter().map(|c| (c / max).max(EPS)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypervolume_of_a_staircase() {
        let points = vec![vec![1.0, 3.0], vec![2.0, 2.0], vec![3.0, 1.0]];
        // Reference (4, 4): 3·1 + 2·1 + 1·1 = 6.
        assert!((hypervolume(&points, &[4.0, 4.0]) - 6.0).abs() < 1e-12);
        let cube = vec![vec![0.0, 0.0, 0.0]];
        assert!((hypervolume(&cube, &[2.0, 2.0, 2.0]) - 8.0).abs() < 1e-12);
    }

    #[test]
    fn ranks_peel_fronts() {
        let points = vec![
            vec![1.0, 1.0],
            vec![2.0, 2.0],
            vec![0.0, 3.0],
            vec![3.0, 3.0],
        ];
        assert_eq!(non_domination_ranks(&points), vec![0, 1, 0, 2]);
    }
}
