//! The semi-external bow-tie against Tarjan's algorithm and breadth-first
//! searches in memory, on generated graphs.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use proptest::prelude::*;

use super::*;

#[path = "../../../tests/common/tarjan.rs"]
mod tarjan;
use crate::graph::EdgeWriter;
use crate::progress::Silent;
use tarjan::tarjan;

/// Writes `arcs` (any order, duplicates allowed, self-loops dropped) as a
/// forward and a transposed edge file in `dir`.
pub(crate) fn write_graph(dir: &Path, n: u64, arcs: &[(u64, u64)]) -> (PathBuf2, PathBuf2) {
    let mut a: Vec<(u64, u64)> = arcs.iter().copied().filter(|(s, d)| s != d).collect();
    a.sort_unstable();
    a.dedup();
    let f = dir.join("edges.wm");
    let t = dir.join("edges-t.wm");
    let mut w = EdgeWriter::create(&f, Direction::Forward, n).unwrap();
    for &(s, d) in &a {
        w.push(s, d).unwrap();
    }
    w.finish().unwrap();
    let mut r: Vec<(u64, u64)> = a.iter().map(|&(s, d)| (d, s)).collect();
    r.sort_unstable();
    let mut w = EdgeWriter::create(&t, Direction::Transposed, n).unwrap();
    for &(s, d) in &r {
        w.push(s, d).unwrap();
    }
    w.finish().unwrap();
    (f, t)
}

type PathBuf2 = std::path::PathBuf;

fn bfs(starts: &[usize], adj: &[Vec<usize>], allowed: impl Fn(usize) -> bool) -> Vec<bool> {
    let mut seen = vec![false; adj.len()];
    let mut q: VecDeque<usize> = VecDeque::new();
    for &s in starts {
        seen[s] = true;
        q.push_back(s);
    }
    while let Some(u) = q.pop_front() {
        for &v in &adj[u] {
            if !seen[v] && allowed(v) {
                seen[v] = true;
                q.push_back(v);
            }
        }
    }
    seen
}

/// The bow-tie computed in memory: Tarjan for the SCCs, searches for the
/// parts around the largest SCC (the one holding `pivot` when it is one of
/// several largest).
fn naive(n: u64, arcs: &[(u64, u64)], pivot: u64) -> BowTie {
    let n = n as usize;
    let mut adj = vec![Vec::new(); n];
    let mut radj = vec![Vec::new(); n];
    for &(s, d) in arcs {
        if s != d && !adj[s as usize].contains(&(d as usize)) {
            adj[s as usize].push(d as usize);
            radj[d as usize].push(s as usize);
        }
    }
    let comp = tarjan(n, &adj);
    let mut size: BTreeMap<usize, u64> = BTreeMap::new();
    for &c in &comp {
        *size.entry(c).or_default() += 1;
    }
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for &s in size.values() {
        *sizes.entry(s).or_default() += 1;
    }
    let largest = size.values().copied().max().unwrap_or(0);
    let giant = if n > 0 && size[&comp[pivot as usize]] == largest {
        Some(comp[pivot as usize])
    } else {
        size.iter().find(|(_, &s)| s == largest).map(|(&c, _)| c)
    };
    let scc: Vec<bool> = (0..n).map(|v| Some(comp[v]) == giant).collect();
    let roots: Vec<usize> = (0..n).filter(|&v| scc[v]).collect();
    let f = bfs(&roots, &adj, |_| true);
    let b = bfs(&roots, &radj, |_| true);
    let ins: Vec<usize> = (0..n).filter(|&v| b[v] && !f[v]).collect();
    let outs: Vec<usize> = (0..n).filter(|&v| f[v] && !b[v]).collect();
    let x = |v: usize| !f[v] && !b[v];
    let ri = bfs(&ins, &adj, x);
    let ro = bfs(&outs, &radj, x);
    let (mut tubes, mut tendrils, mut disconnected) = (0, 0, 0);
    for v in (0..n).filter(|&v| x(v)) {
        match (ri[v], ro[v]) {
            (true, true) => tubes += 1,
            (false, false) => disconnected += 1,
            _ => tendrils += 1,
        }
    }
    BowTie {
        nodes: n as u64,
        arcs: 0,
        scc_count: size.len() as u64,
        largest_scc: largest,
        pivot: 0,
        r#in: ins.len() as u64,
        out: outs.len() as u64,
        tendrils,
        tubes,
        disconnected,
        scc_sizes: sizes,
        passes: Passes::default(),
    }
}

fn parts(b: &BowTie) -> [u64; 9] {
    [
        b.nodes,
        b.scc_count,
        b.largest_scc,
        b.r#in,
        b.out,
        b.tendrils,
        b.tubes,
        b.disconnected,
        b.scc_sizes.values().sum(),
    ]
}

/// splitmix64.
struct Rng(u64);
impl Rng {
    fn below(&mut self, k: u64) -> u64 {
        crate::dedup::minwise::splitmix64(&mut self.0) % k
    }
}

/// A web-like graph: a giant cycle through a third of the nodes with
/// shortcuts, chains into and out of it in both id directions, small cycles
/// in the tendrils, and random local arcs.
pub(crate) fn web_like(n: u64, seed: u64) -> Vec<(u64, u64)> {
    let mut r = Rng(seed);
    let mut arcs = Vec::new();
    let core = (n / 3).max(2).min(n);
    let perm: Vec<u64> = {
        let mut p: Vec<u64> = (0..n).collect();
        for i in (1..n as usize).rev() {
            let j = r.below(i as u64 + 1) as usize;
            p.swap(i, j);
        }
        p
    };
    for i in (0..core).filter(|_| core >= 2) {
        arcs.push((perm[i as usize], perm[((i + 1) % core) as usize]));
        arcs.push((perm[i as usize], perm[r.below(core) as usize]));
    }
    for i in core..n {
        let v = perm[i as usize];
        match r.below(6) {
            // IN: a chain towards an earlier node (into the core eventually).
            0 | 1 => arcs.push((v, perm[r.below(i) as usize])),
            // OUT: reached from an earlier node.
            2 | 3 => arcs.push((perm[r.below(i) as usize], v)),
            // A small cycle with the previous node.
            4 => {
                let u = perm[i as usize - 1];
                arcs.push((u, v));
                arcs.push((v, u));
            }
            _ => {}
        }
        if r.below(4) == 0 {
            let w = (v + 1 + r.below(5)) % n;
            arcs.push((v, w));
        }
    }
    arcs
}

fn run(dir: &Path, n: u64, arcs: &[(u64, u64)], opts: &BowTieOptions) -> Result<BowTie> {
    let (f, t) = write_graph(dir, n, arcs);
    bow_tie(&f, &t, &dir.join("tmp"), 1 << 30, &Silent, opts)
}

/// Semi-external throughout.
fn semi_external() -> BowTieOptions {
    BowTieOptions {
        in_memory: InMemory::Never,
        ..BowTieOptions::default()
    }
}

/// The result without what was read.
fn answer(b: &BowTie) -> BowTie {
    BowTie {
        passes: Passes::default(),
        ..b.clone()
    }
}

/// The bow-tie by each path — the whole graph in memory, semi-external with
/// the residual in memory, semi-external throughout — checked to agree in
/// everything but the passes; the semi-external one is returned.
fn run_each_path(n: u64, arcs: &[(u64, u64)]) -> BowTie {
    let mut got = Vec::new();
    for mode in [InMemory::Auto, InMemory::ResidualOnly, InMemory::Never] {
        let dir = tempfile::tempdir().unwrap();
        let opts = BowTieOptions {
            in_memory: mode,
            ..BowTieOptions::default()
        };
        let b = run(dir.path(), n, arcs, &opts).unwrap();
        match mode {
            InMemory::Auto => assert_eq!(b.passes.in_memory_nodes, n, "{b:?}"),
            InMemory::Never => assert_eq!(b.passes.in_memory_nodes, 0, "{b:?}"),
            InMemory::ResidualOnly => assert!(b.passes.in_memory_nodes < n.max(1), "{b:?}"),
        }
        got.push(b);
    }
    for b in &got[..2] {
        assert_eq!(answer(b), answer(&got[2]), "n = {n}");
    }
    got.pop().unwrap()
}

#[test]
fn matches_tarjan_on_web_like_graphs() {
    for (n, seed) in [
        (1u64, 1u64),
        (2, 2),
        (50, 3),
        (400, 4),
        (3000, 5),
        (20_000, 6),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let arcs = web_like(n, seed);
        let got = run(dir.path(), n, &arcs, &semi_external()).unwrap();
        assert_eq!(answer(&got), answer(&run_each_path(n, &arcs)));
        let want = naive(n, &arcs, got.pivot);
        assert_eq!(parts(&got), parts(&want), "n = {n}: {got:?}");
        assert_eq!(got.scc_sizes, want.scc_sizes, "n = {n}");
        assert_eq!(
            got.largest_scc + got.r#in + got.out + got.tendrils + got.tubes + got.disconnected,
            n
        );
    }
}

#[test]
fn a_reversed_chain_is_trimmed_not_coloured_one_round_per_node() {
    // n-1 → n-2 → … → 0: every SCC a singleton, ids falling along the arcs.
    let n = 5000u64;
    let arcs: Vec<(u64, u64)> = (1..n).map(|v| (v, v - 1)).collect();
    let dir = tempfile::tempdir().unwrap();
    let got = run(dir.path(), n, &arcs, &semi_external()).unwrap();
    assert_eq!(got.scc_count, n);
    assert_eq!(got.largest_scc, 1);
    assert!(got.passes.colour_rounds <= 2, "{:?}", got.passes);
    assert!(got.passes.forward_passes() < 20.0, "{:?}", got.passes);
}

#[test]
fn a_pivot_outside_the_giant_component_is_corrected() {
    // Node 0 has the largest in × out degree but sits in a 2-cycle; the
    // giant SCC is the 10-cycle 100..110.
    let mut arcs = vec![(0, 1), (1, 0)];
    for v in 2..60 {
        arcs.push((v, 0));
        arcs.push((0, v));
        arcs.push((v, 100));
    }
    for v in 100..110 {
        arcs.push((v, if v == 109 { 100 } else { v + 1 }));
    }
    // 0 ↔ v makes one SCC of 0, 1, 2..60: fine, then make it one-way.
    let arcs: Vec<(u64, u64)> = arcs
        .into_iter()
        .filter(|&(s, d)| !(s == 0 && (2..60).contains(&d)))
        .chain((2..60).map(|v| (200 + v, v)))
        .chain((2..60).map(|v| (0, 200 + v)))
        .collect();
    let n = 300;
    let got = run_each_path(n, &arcs);
    let want = naive(n, &arcs, got.pivot);
    assert_eq!(parts(&got), parts(&want), "{got:?}");
    assert_eq!(got.scc_sizes, want.scc_sizes);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn matches_tarjan_on_random_graphs(n in 1u64..120, arcs in proptest::collection::vec((0u64..120, 0u64..120), 0..400)) {
        let arcs: Vec<(u64, u64)> = arcs.into_iter().map(|(s, d)| (s % n, d % n)).collect();
        let got = run_each_path(n, &arcs);
        let want = naive(n, &arcs, got.pivot);
        prop_assert_eq!(parts(&got), parts(&want));
        prop_assert_eq!(&got.scc_sizes, &want.scc_sizes);
    }
}

#[test]
fn an_interrupted_run_resumes_to_the_same_result() {
    let n = 20_000;
    let arcs = web_like(n, 9);
    let dir = tempfile::tempdir().unwrap();
    let every = BowTieOptions {
        in_memory: InMemory::Never,
        checkpoint_every: Duration::ZERO,
        interrupt_after: None,
    };
    let whole = run(dir.path(), n, &arcs, &every).unwrap();
    // Kill after the k-th checkpoint, for every k, then resume.
    let mut k = 1;
    loop {
        let d = tempfile::tempdir().unwrap();
        let (f, t) = write_graph(d.path(), n, &arcs);
        let tmp = d.path().join("tmp");
        let stop = BowTieOptions {
            interrupt_after: Some(k),
            ..every.clone()
        };
        match bow_tie(&f, &t, &tmp, 1 << 30, &Silent, &stop) {
            Ok(r) => {
                assert_eq!(r, whole);
                break;
            }
            Err(_) => {
                let resumed = bow_tie(&f, &t, &tmp, 1 << 30, &Silent, &every).unwrap();
                assert_eq!(resumed, whole, "resumed after checkpoint {k}");
            }
        }
        k += 3;
    }
    assert!(k > 4, "too few checkpoints to test resuming");
}

#[test]
fn refuses_a_budget_below_its_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let (f, t) = write_graph(dir.path(), 1_000_000, &[(0, 1)]);
    let err = bow_tie(
        &f,
        &t,
        &dir.path().join("tmp"),
        1 << 20,
        &Silent,
        &BowTieOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Budget { .. }), "{err}");
}

#[test]
fn the_paths_agree_when_several_sccs_tie_for_largest() {
    // Three 4-cycles and a 4-cycle-free pivot: node 20 has the largest
    // in × out degree but is a singleton, so every path must choose among
    // the tied cycles by the same rule (the smallest largest node).
    let mut arcs = Vec::new();
    for base in [12u64, 0, 6] {
        for i in 0..4 {
            arcs.push((base + i, base + (i + 1) % 4));
        }
    }
    for v in [1u64, 7, 13, 4, 5, 16] {
        arcs.push((v, 20));
        arcs.push((20, 21 + v % 3));
    }
    let got = run_each_path(30, &arcs);
    assert_eq!(got.largest_scc, 4);
    assert_eq!(got.pivot, 3, "{got:?}");
    let want = naive(30, &arcs, got.pivot);
    assert_eq!(parts(&got), parts(&want));
}

#[test]
fn the_residual_pass_runs_when_only_the_residual_fits() {
    let n = 100_000;
    let arcs = web_like(n, 11);
    let dir = tempfile::tempdir().unwrap();
    let (f, t) = write_graph(dir.path(), n, &arcs);
    let m = EdgeFile::open(&f).unwrap().stats().arcs;
    // Just too little for the whole graph: the residual pass must take over.
    let budget = memory::whole_bytes(n, m) - 1;
    let got = bow_tie(
        &f,
        &t,
        &dir.path().join("tmp"),
        budget,
        &Silent,
        &BowTieOptions::default(),
    )
    .unwrap();
    assert!(got.passes.in_memory_nodes > 0, "{:?}", got.passes);
    let semi = bow_tie(
        &f,
        &t,
        &dir.path().join("tmp2"),
        1 << 30,
        &Silent,
        &semi_external(),
    )
    .unwrap();
    assert_eq!(answer(&got), answer(&semi));
}
