//! The layout and the scheduler against brute force on tiny instances.

use proptest::prelude::*;

use super::*;

/// The best maximum load over every layout and every schedule: every
/// assignment of requests to machines whose implied layout fits the slots
/// (the subindices without requests placed in the slots left).
fn brute_force_opt(n: usize, m: usize, slots: usize, loads: &[f64]) -> f64 {
    let t = loads.len();
    let mut best = f64::INFINITY;
    let mut assign = vec![0usize; t];
    loop {
        let mut held = vec![vec![false; n]; m];
        let mut machine = vec![0.0; m];
        for (r, &i) in assign.iter().enumerate() {
            held[i][r % n] = true;
            machine[i] += loads[r];
        }
        let used: Vec<usize> = held
            .iter()
            .map(|h| h.iter().filter(|&&x| x).count())
            .collect();
        let unplaced = (0..n).filter(|&j| !held.iter().any(|h| h[j])).count();
        let free: usize = used.iter().map(|&u| slots.saturating_sub(u)).sum();
        if used.iter().all(|&u| u <= slots) && free >= unplaced {
            best = best.min(machine.iter().copied().fold(0.0, f64::max));
        }
        // Next assignment.
        let mut k = 0;
        while k < t {
            assign[k] += 1;
            if assign[k] < m {
                break;
            }
            assign[k] = 0;
            k += 1;
        }
        if k == t {
            return best;
        }
    }
}

#[test]
fn imaginary_layout_fills_every_machine_to_n_over_m() {
    for n in 1..20 {
        for m in 1..7 {
            let slots = n / m + 2;
            let layout = imaginary_layout(n, m, slots).unwrap();
            // Every subindex somewhere; no machine over its slots; copies
            // only where a subindex was split.
            for j in 0..n {
                assert!(layout.iter().any(|l| l.contains(&j)), "n {n} m {m}");
            }
            assert!(layout.iter().all(|l| l.len() <= slots));
            let copies: usize = layout.iter().map(Vec::len).sum::<usize>() - n;
            assert!(copies < m, "n {n} m {m}: {copies} extra copies");
            if n % m == 0 {
                assert_eq!(copies, 0);
            }
        }
    }
    assert!(imaginary_layout(7, 3, 3).is_err());
}

#[test]
fn greedy_sends_each_request_to_the_least_loaded_holder() {
    // Subindex 0 on both machines, 1 on machine 1 only.
    let layout = vec![vec![0], vec![0, 1]];
    let loads = [5.0, 1.0, 2.0, 1.0];
    // q0: f0 → m0 (tie, lowest) 5; f1 → m1 1. q1: f0 → m1 (1 < 5) 3; f1 → m1 4.
    assert_eq!(greedy_schedule(&layout, 2, &loads).unwrap(), vec![5.0, 4.0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn within_henzingers_bound_of_the_brute_force_optimum(
        n in 2usize..5,
        m in 2usize..4,
        queries in 1usize..3,
        raw in proptest::collection::vec(1u32..100, 8),
    ) {
        let t = queries * n;
        prop_assume!(t <= 8);
        let loads: Vec<f64> = raw[..t].iter().map(|&x| x as f64).collect();
        let slots = n / m + 2;
        let r = replay(n, m, slots, &loads, queries).unwrap();
        let opt = brute_force_opt(n, m, slots, &loads);
        prop_assert!(r.lower_bound <= opt + 1e-9, "{} > opt {}", r.lower_bound, opt);
        prop_assert!(r.max_load >= opt - 1e-9);
        prop_assert!(
            r.max_load <= 2.0 * (1.0 + r.alpha) * opt + 2.0 * r.beta + 1e-9,
            "ML* {} > 2(1+{})·{} + 2·{}", r.max_load, r.alpha, opt, r.beta
        );
        prop_assert!(r.bound_holds);
        prop_assert!(r.no_duplication_max_load >= opt - 1e-9);
        prop_assert!(r.hand_duplication_max_load >= opt - 1e-9);
    }
}

#[test]
fn document_frequency_cost_counts_docs_per_subindex() {
    let cuts = [0u64, 3, 6];
    let texts = [
        (0u64, "apple pie apple"),
        (1, "pie"),
        (4, "apple"),
        (5, "banana apple"),
    ];
    let queries = vec![
        Query {
            words: vec!["apple".into()],
        },
        Query {
            words: vec!["apple".into(), "pie".into()],
        },
    ];
    let cost = DocFrequencyCost::measure(&cuts, &queries, |f| {
        texts.iter().try_for_each(|&(d, t)| f(d, t))
    })
    .unwrap();
    assert_eq!(cost.subindices(), 2);
    assert_eq!(cost.cost(0, &queries[0]), 1.0);
    assert_eq!(cost.cost(1, &queries[0]), 2.0);
    assert_eq!(cost.cost(0, &queries[1]), 3.0);
    assert_eq!(cost.cost(1, &queries[1]), 2.0);
    let sampled = sample_queries(2, 1, |f| texts.iter().try_for_each(|&(d, t)| f(d, t))).unwrap();
    assert_eq!(sampled.len(), 2);
    assert!(sampled
        .iter()
        .all(|q| !q.words.is_empty() && q.words.len() <= 3));
}
