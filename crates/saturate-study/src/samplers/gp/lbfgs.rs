//! A compact limited-memory BFGS minimiser with optional box bounds (after Byrd, Lu,
//! Nocedal and Zhu, "A Limited Memory Algorithm for Bound Constrained Optimization", 1995,
//! simplified): variables at a bound whose gradient points outward are held fixed, the
//! two-loop recursion gives the direction on the free ones, and a backtracking line search
//! runs along the projected path. The stopping rules are L-BFGS-B's: the projected
//! gradient's largest component at most `pgtol`, or a relative decrease of the objective
//! below `factr` times the machine epsilon.

/// Settings of one minimisation (scipy's `fmin_l_bfgs_b` names).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LbfgsSettings {
    /// Pairs of corrections kept.
    pub m: usize,
    /// Stop when `(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) <= factr * eps`.
    pub factr: f64,
    /// Stop when the projected gradient's largest component is at most this.
    pub pgtol: f64,
    /// Iterations at most.
    pub max_iters: usize,
    /// Function evaluations per line search at most.
    pub max_line_search: usize,
}

impl Default for LbfgsSettings {
    fn default() -> Self {
        Self {
            m: 10,
            factr: 1e7,
            pgtol: 1e-5,
            max_iters: 15000,
            max_line_search: 20,
        }
    }
}

/// How a minimisation ended.
#[derive(Debug, Clone)]
pub(crate) struct LbfgsResult {
    pub x: Vec<f64>,
    pub f: f64,
    pub iterations: usize,
    /// False when the line search found no decrease (L-BFGS-B's abnormal termination) or
    /// the objective was not finite at the start.
    pub converged: bool,
}

fn project(x: &mut [f64], bounds: Option<&[(f64, f64)]>) {
    if let Some(bounds) = bounds {
        for (v, (lo, hi)) in x.iter_mut().zip(bounds) {
            *v = v.clamp(*lo, *hi);
        }
    }
}

/// The projected gradient's largest component: zero for a component at a bound whose
/// descent direction leaves the box.
fn projected_gradient_norm(x: &[f64], g: &[f64], bounds: Option<&[(f64, f64)]>) -> f64 {
    let mut norm: f64 = 0.0;
    for i in 0..x.len() {
        let mut gi = g[i];
        if let Some(bounds) = bounds {
            let (lo, hi) = bounds[i];
            gi = if gi < 0.0 {
                (x[i] - hi).max(gi)
            } else {
                (x[i] - lo).min(gi)
            };
        }
        norm = norm.max(gi.abs());
    }
    norm
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Minimises `f` (value and gradient) from `x0`; `Err` from `f` stops and propagates.
pub(crate) fn minimize<E>(
    mut f: impl FnMut(&[f64]) -> Result<(f64, Vec<f64>), E>,
    x0: &[f64],
    bounds: Option<&[(f64, f64)]>,
    settings: LbfgsSettings,
) -> Result<LbfgsResult, E> {
    let n = x0.len();
    let mut x = x0.to_vec();
    project(&mut x, bounds);
    let (mut fx, mut g) = f(&x)?;
    if !fx.is_finite() || g.iter().any(|v| !v.is_finite()) {
        return Ok(LbfgsResult {
            x,
            f: fx,
            iterations: 0,
            converged: false,
        });
    }
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let tolerance = settings.factr * f64::EPSILON;
    for iteration in 0..settings.max_iters {
        if projected_gradient_norm(&x, &g, bounds) <= settings.pgtol {
            return Ok(LbfgsResult {
                x,
                f: fx,
                iterations: iteration,
                converged: true,
            });
        }
        // Variables pinned at a bound by the gradient stay fixed this iteration.
        let free: Vec<bool> = (0..n)
            .map(|i| match bounds {
                Some(b) => {
                    let (lo, hi) = b[i];
                    !((x[i] <= lo && g[i] > 0.0) || (x[i] >= hi && g[i] < 0.0))
                }
                None => true,
            })
            .collect();
        let masked = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .zip(&free)
                .map(|(x, f)| if *f { *x } else { 0.0 })
                .collect()
        };
        // Two-loop recursion on the free variables.
        let mut q = masked(&g);
        let k = s_hist.len();
        let mut alpha = vec![0.0; k];
        let mut rho = vec![0.0; k];
        for j in (0..k).rev() {
            let (s, y) = (masked(&s_hist[j]), masked(&y_hist[j]));
            let sy = dot(&s, &y);
            rho[j] = if sy > 1e-300 { 1.0 / sy } else { 0.0 };
            alpha[j] = rho[j] * dot(&s, &q);
            for i in 0..n {
                q[i] -= alpha[j] * y[i];
            }
        }
        let gamma = match (s_hist.last(), y_hist.last()) {
            (Some(s), Some(y)) => {
                let (s, y) = (masked(s), masked(y));
                let yy = dot(&y, &y);
                if yy > 1e-300 {
                    dot(&s, &y) / yy
                } else {
                    1.0
                }
            }
            _ => 1.0,
        };
        for v in q.iter_mut() {
            *v *= gamma;
        }
        for j in 0..k {
            let (s, y) = (masked(&s_hist[j]), masked(&y_hist[j]));
            let beta = rho[j] * dot(&y, &q);
            for i in 0..n {
                q[i] += s[i] * (alpha[j] - beta);
            }
        }
        let mut direction: Vec<f64> = q.iter().map(|v| -v).collect();
        if dot(&direction, &g) >= 0.0 {
            // Not a descent direction: restart from steepest descent.
            direction = masked(&g).iter().map(|v| -v).collect();
            s_hist.clear();
            y_hist.clear();
        }
        // The first step is scaled so that no component moves more than the whole box
        // would allow, as L-BFGS-B's first iteration takes 1/|g|.
        let mut step = if s_hist.is_empty() {
            1.0 / dot(&direction, &direction).sqrt().max(1e-300)
        } else {
            1.0
        };
        let slope = dot(&direction, &g);
        let mut accepted = None;
        for _ in 0..settings.max_line_search {
            let mut trial: Vec<f64> = (0..n).map(|i| x[i] + step * direction[i]).collect();
            project(&mut trial, bounds);
            let moved: Vec<f64> = (0..n).map(|i| trial[i] - x[i]).collect();
            if moved.iter().all(|v| *v == 0.0) {
                break;
            }
            let (ft, gt) = f(&trial)?;
            let decrease = 1e-4 * dot(&g, &moved).min(step * slope).min(0.0);
            if ft.is_finite() && gt.iter().all(|v| v.is_finite()) && ft <= fx + decrease {
                accepted = Some((trial, ft, gt, moved));
                break;
            }
            step *= if ft.is_finite() { 0.5 } else { 0.1 };
        }
        let Some((trial, ft, gt, moved)) = accepted else {
            return Ok(LbfgsResult {
                x,
                f: fx,
                iterations: iteration,
                converged: false,
            });
        };
        let y: Vec<f64> = (0..n).map(|i| gt[i] - g[i]).collect();
        if dot(&moved, &y) > f64::EPSILON * dot(&y, &y) {
            s_hist.push(moved);
            y_hist.push(y);
            if s_hist.len() > settings.m {
                s_hist.remove(0);
                y_hist.remove(0);
            }
        }
        let reduction = (fx - ft) / fx.abs().max(ft.abs()).max(1.0);
        x = trial;
        fx = ft;
        g = gt;
        if reduction <= tolerance {
            return Ok(LbfgsResult {
                x,
                f: fx,
                iterations: iteration + 1,
                converged: true,
            });
        }
    }
    Ok(LbfgsResult {
        x,
        f: fx,
        iterations: settings.max_iters,
        converged: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_rosenbrock_to_its_optimum() {
        let rosen = |x: &[f64]| -> Result<(f64, Vec<f64>), ()> {
            let (a, b) = (x[0], x[1]);
            let f = 100.0 * (b - a * a).powi(2) + (1.0 - a).powi(2);
            let g = vec![
                -400.0 * a * (b - a * a) - 2.0 * (1.0 - a),
                200.0 * (b - a * a),
            ];
            Ok((f, g))
        };
        let settings = LbfgsSettings {
            pgtol: 1e-8,
            factr: 10.0,
            ..Default::default()
        };
        let r = minimize(rosen, &[-1.2, 1.0], None, settings).unwrap();
        assert!(r.converged);
        assert!(
            (r.x[0] - 1.0).abs() < 1e-4 && (r.x[1] - 1.0).abs() < 1e-4,
            "{:?}",
            r.x
        );
    }

    #[test]
    fn stops_at_an_active_bound() {
        // min (x - 2)^2 + (y + 1)^2 on [0, 1]^2 is at (1, 0).
        let f = |x: &[f64]| -> Result<(f64, Vec<f64>), ()> {
            Ok((
                (x[0] - 2.0).powi(2) + (x[1] + 1.0).powi(2),
                vec![2.0 * (x[0] - 2.0), 2.0 * (x[1] + 1.0)],
            ))
        };
        let r = minimize(
            f,
            &[0.5, 0.5],
            Some(&[(0.0, 1.0), (0.0, 1.0)]),
            Default::default(),
        )
        .unwrap();
        assert!(r.converged);
        assert_eq!(r.x, vec![1.0, 0.0]);
    }
}
