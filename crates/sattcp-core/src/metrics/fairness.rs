//! The main study's metrics (seed 000 §4.3, seed 001 §6): efficiency, max-min fair shares and
//! the fairness index relative to them, and plain Jain fairness.
//!
//! All rates are `f64` in any one unit (bits per second recommended) used for every argument:
//! throughputs `x_i`, what the servers scheduled `S_i`, and the capacity `C`. These are
//! computed once per run from counters, never on the event path. Every sum runs in index
//! order, so results are reproducible bit for bit.
//!
//! `C` is an input: the maximum TCP goodput of the bottleneck after TCP/IP/LLC/AAL5/cell
//! overheads (37.80 Mbps for MSS 1024 and 40.39 Mbps for MSS 9180 on 45 Mbps, seed 000 §4.3),
//! computed from the framing by the ATM code.

/// Max-min fair shares `e_i` of a capacity among sources that scheduled `S_i` (seed 000 §4.3).
///
/// The seed's iteration: the fair share is the remaining capacity divided by the number of
/// remaining sources; every source scheduling strictly less than that share gets `e_i = S_i`
/// and leaves, its rate subtracted from the capacity; repeat until all remaining sources
/// schedule at least the share, which they all get. If every source schedules less than its
/// share, `e_i = S_i` for all and the shares sum to less than `C`. O(N) per round, at most N
/// rounds.
///
/// Panics if `capacity` or any `S_i` is negative or not finite.
pub fn max_min_shares(capacity: f64, scheduled: &[f64]) -> Vec<f64> {
    water_fill(capacity, scheduled).0
}

/// The shares and the number of rounds of the iteration (the last round fixes no source,
/// unless every source was fixed).
fn water_fill(capacity: f64, scheduled: &[f64]) -> (Vec<f64>, u32) {
    assert!(
        capacity.is_finite() && capacity >= 0.0,
        "capacity must be finite and >= 0, got {capacity}"
    );
    for (i, &s) in scheduled.iter().enumerate() {
        assert!(
            s.is_finite() && s >= 0.0,
            "scheduled[{i}] must be finite and >= 0, got {s}"
        );
    }
    let mut shares: Vec<Option<f64>> = vec![None; scheduled.len()];
    let mut remaining_capacity = capacity;
    let mut remaining = scheduled.len();
    let mut rounds = 0;
    while remaining > 0 {
        rounds += 1;
        let share = remaining_capacity / remaining as f64;
        let mut fixed_any = false;
        for (e, &s) in shares.iter_mut().zip(scheduled) {
            if e.is_none() && s < share {
                *e = Some(s);
                remaining_capacity -= s;
                remaining -= 1;
                fixed_any = true;
            }
        }
        if !fixed_any {
            shares
                .iter_mut()
                .filter(|e| e.is_none())
                .for_each(|e| *e = Some(share));
            break;
        }
    }
    (
        shares
            .into_iter()
            .map(|e| e.expect("every source gets a share"))
            .collect(),
        rounds,
    )
}

/// Efficiency `E = sum x_i / C` (seed 000 §4.3). Panics unless `capacity > 0`.
pub fn efficiency(throughputs: &[f64], capacity: f64) -> f64 {
    assert!(
        capacity.is_finite() && capacity > 0.0,
        "capacity must be finite and > 0, got {capacity}"
    );
    throughputs.iter().sum::<f64>() / capacity
}

/// Jain's index of `values`: `(sum v)^2 / (N sum v^2)`, in `[1/N, 1]`. `None` when there are no
/// values or all are 0 (the index is 0/0 there).
pub fn jain(values: &[f64]) -> Option<f64> {
    let n = values.len();
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|v| v * v).sum();
    if n == 0 || sum_sq == 0.0 {
        return None;
    }
    Some(sum * sum / (n as f64 * sum_sq))
}

/// The fairness index `F = (sum x_i/e_i)^2 / (N sum (x_i/e_i)^2)` (seed 000 §4.3), with
/// `e_i` the max-min fair shares ([`max_min_shares`]).
///
/// Sources with `e_i = 0` (they scheduled nothing, so have nothing to be fair to) are left out,
/// and `N` counts only the others. `None` when no source is left or every ratio is 0.
pub fn fairness(throughputs: &[f64], shares: &[f64]) -> Option<f64> {
    assert_eq!(throughputs.len(), shares.len(), "one share per throughput");
    let ratios: Vec<f64> = throughputs
        .iter()
        .zip(shares)
        .filter(|(_, &e)| e > 0.0)
        .map(|(&x, &e)| x / e)
        .collect();
    jain(&ratios)
}

/// The study's per-run figures.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StudyMetrics {
    /// `C`, as given.
    pub capacity: f64,
    /// `e_i`, one per source.
    pub shares: Vec<f64>,
    pub efficiency: f64,
    /// `F` relative to the max-min shares; `None` as in [`fairness`].
    pub fairness: Option<f64>,
    /// Jain's index of the throughputs themselves; `None` as in [`jain`].
    pub jain: Option<f64>,
    /// Sources left out of `fairness` because they scheduled nothing.
    pub idle_sources: usize,
}

/// Every figure of seed 000 §4.3 from the throughputs `x_i` and the scheduled rates `S_i` (both
/// per source, in the unit of `capacity`).
pub fn study_metrics(capacity: f64, throughputs: &[f64], scheduled: &[f64]) -> StudyMetrics {
    assert_eq!(
        throughputs.len(),
        scheduled.len(),
        "one scheduled rate per throughput"
    );
    let shares = max_min_shares(capacity, scheduled);
    StudyMetrics {
        capacity,
        efficiency: efficiency(throughputs, capacity),
        fairness: fairness(throughputs, &shares),
        jain: jain(throughputs),
        idle_sources: shares.iter().filter(|&&e| e == 0.0).count(),
        shares,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn every_source_below_its_share_gets_what_it_scheduled() {
        // C/N = 10/3 = 3.33 > 1, 2, 3.
        let (e, rounds) = water_fill(10.0, &[1.0, 2.0, 3.0]);
        assert_close(&e, &[1.0, 2.0, 3.0]);
        assert_eq!(rounds, 1);
    }

    #[test]
    fn no_source_below_its_share_all_get_c_over_n() {
        let (e, rounds) = water_fill(12.0, &[5.0, 6.0, 7.0, 100.0]);
        assert_close(&e, &[3.0; 4]);
        assert_eq!(rounds, 1);
        // Exactly at the share is not "less than" it: same result either way.
        assert_close(&max_min_shares(10.0, &[2.0; 5]), &[2.0; 5]);
    }

    #[test]
    fn cascade_over_several_rounds() {
        // C = 9, S = [2.5, 0.5, 50, 2.2]:
        // round 1: share 9/4 = 2.25; 0.5 and 2.2 are below -> fixed; 6.3 left for 2 sources.
        // round 2: share 3.15; 2.5 is below (it was not in round 1) -> fixed; 3.8 left for 1.
        // round 3: share 3.8; 50 is not below -> e = 3.8.
        let (e, rounds) = water_fill(9.0, &[2.5, 0.5, 50.0, 2.2]);
        assert_close(&e, &[2.5, 0.5, 3.8, 2.2]);
        assert_eq!(rounds, 3);
        assert!(
            (e.iter().sum::<f64>() - 9.0).abs() < 1e-12,
            "capacity fully shared"
        );
    }

    #[test]
    fn idle_and_empty_sources() {
        assert_close(&max_min_shares(10.0, &[0.0, 10.0, 20.0]), &[0.0, 5.0, 5.0]);
        assert!(max_min_shares(10.0, &[]).is_empty());
        assert_close(&max_min_shares(0.0, &[1.0, 2.0]), &[0.0, 0.0]);
    }

    #[test]
    fn max_min_shares_are_max_min_fair() {
        // Property on a deterministic spread: sum <= C, e_i <= S_i, and every source that did
        // not get all it scheduled gets the largest share of all.
        let s: Vec<f64> = (0..100).map(|i| ((i * 37) % 101) as f64 * 0.01).collect();
        let c = 37.8;
        let e = max_min_shares(c, &s);
        let max = e.iter().cloned().fold(0.0, f64::max);
        assert!(e.iter().sum::<f64>() <= c + 1e-9);
        for (ei, si) in e.iter().zip(&s) {
            assert!(*ei <= *si + 1e-12 || (ei - max).abs() < 1e-12);
            if ei < si {
                assert!((ei - max).abs() < 1e-12);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn max_min_invariants(
            capacity in 0.0f64..100.0,
            scheduled in proptest::collection::vec(0.0f64..10.0, 0..40),
        ) {
            let e = max_min_shares(capacity, &scheduled);
            let total: f64 = e.iter().sum();
            proptest::prop_assert!(total <= capacity + 1e-9);
            let top = e.iter().cloned().fold(0.0, f64::max);
            for (ei, si) in e.iter().zip(&scheduled) {
                // Nobody gets more than it scheduled unless it is at the common top share, and
                // whoever is held below its demand is at that top share.
                proptest::prop_assert!(*ei <= *si + 1e-9 || (ei - top).abs() <= 1e-9);
                if *ei < *si - 1e-9 {
                    proptest::prop_assert!((ei - top).abs() <= 1e-9);
                }
            }
            // Capacity is left over only if every demand is met.
            if total < capacity - 1e-9 {
                for (ei, si) in e.iter().zip(&scheduled) {
                    proptest::prop_assert!((ei - si).abs() <= 1e-9);
                }
            }
            // The order of the sources does not matter.
            let mut rev = scheduled.clone();
            rev.reverse();
            let mut e_rev = max_min_shares(capacity, &rev);
            e_rev.reverse();
            for (a, b) in e.iter().zip(&e_rev) {
                proptest::prop_assert!((a - b).abs() <= 1e-9);
            }
        }
    }

    #[test]
    #[should_panic(expected = "scheduled[1] must be finite")]
    fn negative_scheduled_rate_panics() {
        max_min_shares(1.0, &[0.5, -1.0]);
    }

    #[test]
    fn fairness_edge_cases() {
        // Everyone gets exactly their share: perfectly fair.
        assert_eq!(fairness(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), Some(1.0));
        // Proportional to shares is fair too.
        assert_eq!(fairness(&[0.5, 1.0], &[1.0, 2.0]), Some(1.0));
        // One of N gets everything: 1/N.
        assert_eq!(fairness(&[4.0, 0.0, 0.0, 0.0], &[1.0; 4]), Some(0.25));
        // Hand-computed: ratios 1 and 0.5 -> 1.5^2 / (2 * 1.25) = 0.9.
        assert!((fairness(&[2.0, 1.0], &[2.0, 2.0]).unwrap() - 0.9).abs() < 1e-15);
        // A source that scheduled nothing is left out, not counted as unfair.
        assert_eq!(fairness(&[1.0, 0.0, 3.0], &[1.0, 0.0, 3.0]), Some(1.0));
        assert_eq!(fairness(&[0.0, 0.0], &[0.0, 0.0]), None);
        assert_eq!(
            fairness(&[0.0, 0.0], &[1.0, 1.0]),
            None,
            "0/0: nobody got anything"
        );
        assert_eq!(fairness(&[], &[]), None);
    }

    #[test]
    fn jain_and_efficiency() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0]), Some(0.5));
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0]), None);
        assert!((efficiency(&[10.0, 8.9], 37.8) - 0.5).abs() < 1e-12);
        assert_eq!(efficiency(&[], 40.39), 0.0);
    }

    #[test]
    fn study_metrics_of_a_small_run() {
        // C = 9 Mbps, S = [0.5, 2.2, 2.5, 50] -> e = [0.5, 2.2, 2.5, 3.8] (cascade above);
        // x = [0.5, 1.1, 2.5, 3.8]: ratios [1, 0.5, 1, 1] -> 3.5^2 / (4 * 3.25) = 12.25/13.
        let m = study_metrics(
            9e6,
            &[0.5e6, 1.1e6, 2.5e6, 3.8e6],
            &[0.5e6, 2.2e6, 2.5e6, 50e6],
        );
        assert!((m.efficiency - 7.9 / 9.0).abs() < 1e-12);
        assert!((m.fairness.unwrap() - 12.25 / 13.0).abs() < 1e-12);
        assert!(
            m.jain.unwrap() < m.fairness.unwrap(),
            "raw Jain penalises unequal demands"
        );
        assert_eq!(m.idle_sources, 0);
        assert_eq!(m.capacity, 9e6);
    }
}
