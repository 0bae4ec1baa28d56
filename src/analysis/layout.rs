//! Serving an index from several machines: Henzinger's layout algorithm
//! with imaginary index loads and the greedy scheduler (*Combinatorial
//! Algorithms for Web Search Engines*, §4), simulated on measured loads.
//!
//! # The model (Henzinger §4)
//!
//! The documents are split into `n` subindices `f₁ … fₙ`; `m` machines hold
//! `s` subindices each (`m·s ≥ n`, so some subindices can have copies). A
//! query sends one request to every subindex; a request for `f_j` must go to
//! a machine holding `f_j` and puts load `l(t, j)` on it. The index load of
//! `f_j` is `FL_j = Σ_t l(t, j)`; the measured `α` and `β` are defined by
//! `L ≤ FL_j ≤ (1 + α)·L` (`L = min FL_j`) and `β = max l(t, j)`.
//!
//! * **Layout with imaginary index loads** ([`imaginary_layout`]): every
//!   subindex carries an imaginary load of 1 and every machine is filled to
//!   exactly `n/m`. First each machine takes `n div m` whole subindices (in
//!   order: subindex `i·(n div m) + k` on machine `i`); then the remaining
//!   `n mod m` subindices are poured, one after the other, onto machine 0,
//!   1, …, each machine taking as much as fills it. A subindex is stored on
//!   every machine that got part of its imaginary load: a subindex poured
//!   across a machine boundary gets a copy on each side, and a machine
//!   holds at most `n div m + 2` subindices — the paper's assumption
//!   `s ≥ n div m + 2`.
//!   Computed in integers: loads in units of `1/m`, a subindex `m` units, a
//!   machine `n`.
//! * **Greedy scheduling** ([`greedy_schedule`]): requests, in the log's
//!   order (per query, subindices in order), each go to the least loaded
//!   machine holding a copy (the lowest-numbered on ties).
//! * **The guarantee** [7]: the maximum machine load `ML*` of the two
//!   together satisfies `ML* ≤ 2(1 + α)·Opt + 2β`, `Opt` the maximum load of
//!   the best layout and schedule. `Opt` is at least `max(Σ FL_j / m, β)`
//!   (the [`LayoutReport::lower_bound`]); the report checks the bound against
//!   that, which implies it against `Opt`.
//! * **Baselines**: *no duplication* — each subindex on one machine, placed
//!   heaviest first on the machine with the least index load so far that has
//!   a free slot (LPT on the measured loads, which knows more than any real
//!   layout would); *hand duplication* — that layout plus copies of the
//!   heaviest subindices in the free slots, as many copies as the imaginary
//!   layout makes (so both use the same memory), each on the least loaded
//!   machine without one, with the greedy scheduler: the "hand chosen"
//!   duplication the paper compares with.
//!
//! # Loads
//!
//! What a request costs is behind [`SubindexCost`]. [`SearcherCost`] runs
//! the searcher itself: each query is evaluated on each subindex's docID
//! range alone ([`crate::search::Searcher::evaluate_in`]: the same short and
//! full passes, the doclist cursors started at the range's first docID —
//! skipping the postings blocks before it unread — and stopped at its end),
//! and the request's load is what that evaluation did: by default its
//! [`Work`] (postings decoded plus hits read, deterministic, so the report is
//! the same on every run), or its measured time ([`Load::Time`], the median
//! of three runs). [`DocFrequencyCost`] is the cheaper proxy for jobs
//! without an index: the sum of the query words' document frequencies in
//! the subindex, counted in one pass over the token streams (`text.wm`).
//!
//! When no query log is given, [`sample_queries`] makes one from the job's
//! own vocabulary: the pages of smallest `splitmix64(docID ⊕ seed)`, from each
//! one to three distinct words of at least three letters, picked at
//! random — so queries follow the words' document frequencies as real
//! queries roughly do.

use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use serde::Serialize;

use super::mix64;

use crate::docs::DocTable;
use crate::error::{Error, Result};
use crate::search::{self, Searcher, Work};

/// A query: its words, lowercased.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Query {
    /// The words.
    pub words: Vec<String>,
}

/// What serving one request costs a machine.
pub trait SubindexCost {
    /// Number of subindices.
    fn subindices(&self) -> usize;
    /// The load request `query` puts on the machine serving `subindex`.
    fn cost(&self, subindex: usize, query: &Query) -> f64;
    /// What a load counts, for the report.
    fn unit(&self) -> &'static str;
}

/// Which machine holds which subindices (`machines[i]`, increasing).
pub type Layout = Vec<Vec<usize>>;

/// How the documents are cut into subindices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Ranges of docIDs with equal numbers of crawled docs.
    Range,
    /// The same, each cut moved forward to the next host boundary (a host's
    /// docs are contiguous), so no host is split.
    Host,
}

/// The docID boundaries of `n` subindices: subindex `j` holds docIDs
/// `cuts[j]..cuts[j + 1]`. One pass over the doc table.
pub fn split_docs(docs: &Path, n: usize, split: Split) -> Result<Vec<u64>> {
    let t = DocTable::open(docs)?;
    let crawled = t.crawled().max(1);
    let mut cuts = vec![0u64];
    let mut seen = 0u64;
    let mut prev_host = None;
    let mut want_cut = false;
    for d in t.iter() {
        let (id, doc) = d?;
        if cuts.len() < n {
            let target = crawled * cuts.len() as u64 / n as u64;
            if seen >= target && seen > 0 {
                want_cut = true;
            }
            if want_cut && (split == Split::Range || prev_host != Some(doc.host)) {
                cuts.push(id);
                want_cut = false;
            }
        }
        if doc.crawled {
            seen += 1;
        }
        prev_host = Some(doc.host);
    }
    while cuts.len() < n + 1 {
        cuts.push(t.len());
    }
    *cuts.last_mut().unwrap_or(&mut 0) = t.len();
    Ok(cuts)
}

/// The proxy load: a query costs a subindex the sum of its words'
/// document frequencies there.
pub struct DocFrequencyCost {
    words: HashMap<String, usize>,
    /// `df[j * words + w]`.
    df: Vec<u64>,
    n: usize,
}

impl DocFrequencyCost {
    /// Counts, for the words of `queries`, their document frequency in each
    /// subindex (`cuts` from [`split_docs`]). `for_each_text` calls its
    /// argument with every doc's (docID, space-separated words).
    pub fn measure(
        cuts: &[u64],
        queries: &[Query],
        for_each_text: impl FnOnce(&mut dyn FnMut(u64, &str) -> Result<()>) -> Result<()>,
    ) -> Result<DocFrequencyCost> {
        let mut words = HashMap::new();
        for q in queries {
            for w in &q.words {
                let k = words.len();
                words.entry(w.clone()).or_insert(k);
            }
        }
        let n = cuts.len().saturating_sub(1);
        let nw = words.len();
        let mut df = vec![0u64; n * nw];
        let mut seen: Vec<u32> = vec![u32::MAX; nw];
        let mut doc_no = 0u32;
        for_each_text(&mut |doc, text| {
            let j = cuts
                .partition_point(|&c| c <= doc)
                .saturating_sub(1)
                .min(n.saturating_sub(1));
            doc_no = doc_no.wrapping_add(1);
            for w in text.split(' ') {
                if let Some(&k) = words.get(w) {
                    if seen[k] != doc_no {
                        seen[k] = doc_no;
                        df[j * nw + k] += 1;
                    }
                }
            }
            Ok(())
        })?;
        Ok(DocFrequencyCost { words, df, n })
    }
}

impl SubindexCost for DocFrequencyCost {
    fn subindices(&self) -> usize {
        self.n
    }
    fn cost(&self, subindex: usize, query: &Query) -> f64 {
        let nw = self.words.len();
        query
            .words
            .iter()
            .filter_map(|w| self.words.get(w))
            .map(|&k| self.df[subindex * nw + k] as f64)
            .sum()
    }
    fn unit(&self) -> &'static str {
        "document frequencies (proxy)"
    }
}

/// What [`SearcherCost`] takes as a request's load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// The evaluation's [`Work::entries`]: postings decoded plus hits read.
    Work,
    /// The evaluation's wall time in microseconds, the median of three runs.
    Time,
}

/// The measured load: every distinct query evaluated by the searcher on
/// every subindex's docID range.
pub struct SearcherCost {
    /// Distinct queries' rows in `loads`.
    rows: HashMap<Vec<String>, usize>,
    /// `loads[row * n + j]`.
    loads: Vec<f64>,
    /// The work of each entry of `loads` (also under [`Load::Time`]).
    work: Vec<Work>,
    n: usize,
    unit: &'static str,
}

impl SearcherCost {
    /// Evaluates each distinct query of `queries` on each subindex (`cuts`
    /// from [`split_docs`]) with `searcher`, wanting `want` matches as a
    /// search for the first `want` results would. Memory: a load and its
    /// work per (distinct query, subindex), refused beyond `budget`.
    pub fn measure(
        searcher: &Searcher,
        cuts: &[u64],
        queries: &[Query],
        want: usize,
        load: Load,
        budget: u64,
    ) -> Result<SearcherCost> {
        let n = cuts.len().saturating_sub(1);
        let mut rows = HashMap::new();
        let mut distinct = Vec::new();
        for q in queries {
            if !rows.contains_key(&q.words) {
                rows.insert(q.words.clone(), distinct.len());
                distinct.push(q);
            }
        }
        let need = (distinct.len() * n * (8 + std::mem::size_of::<Work>())) as u64;
        if need > budget {
            return Err(Error::budget(
                "layout: one measured load per (distinct query, subindex)",
                need,
                budget,
            ));
        }
        let docid = |d: u64| u32::try_from(d).unwrap_or(u32::MAX);
        let mut loads = Vec::with_capacity(distinct.len() * n);
        let mut work = Vec::with_capacity(distinct.len() * n);
        for q in distinct {
            let query = search::Query::parse(&q.words.join(" "));
            for j in 0..n {
                let range = docid(cuts[j])..docid(cuts[j + 1]);
                let run = || -> Result<(Work, f64)> {
                    let t = std::time::Instant::now();
                    let w = searcher
                        .evaluate_in(&query, range.clone(), want)?
                        .map(|e| e.work)
                        .unwrap_or_default();
                    Ok((w, t.elapsed().as_secs_f64() * 1e6))
                };
                let (w, l) = match load {
                    Load::Work => {
                        let (w, _) = run()?;
                        (w, w.entries() as f64)
                    }
                    Load::Time => {
                        let mut times = [0.0f64; 3];
                        let mut w = Work::default();
                        for t in &mut times {
                            (w, *t) = run()?;
                        }
                        times.sort_by(f64::total_cmp);
                        (w, times[1])
                    }
                };
                loads.push(l);
                work.push(w);
            }
        }
        Ok(SearcherCost {
            rows,
            loads,
            work,
            n,
            unit: match load {
                Load::Work => "searcher's entries decoded (postings + hits)",
                Load::Time => "searcher's µs (median of 3)",
            },
        })
    }

    /// The work of `query`'s request to `subindex` (zero for a query not
    /// measured).
    pub fn work(&self, subindex: usize, query: &Query) -> Work {
        self.rows
            .get(&query.words)
            .map(|&r| self.work[r * self.n + subindex])
            .unwrap_or_default()
    }
}

impl SubindexCost for SearcherCost {
    fn subindices(&self) -> usize {
        self.n
    }
    fn cost(&self, subindex: usize, query: &Query) -> f64 {
        self.rows
            .get(&query.words)
            .map_or(0.0, |&r| self.loads[r * self.n + subindex])
    }
    fn unit(&self) -> &'static str {
        self.unit
    }
}

/// A query log of (at most) `count` queries from the vocabulary of the docs
/// that `for_each_text` walks (see the module doc), in increasing order of
/// the pages' keys.
pub fn sample_queries(
    count: usize,
    seed: u64,
    for_each_text: impl FnOnce(&mut dyn FnMut(u64, &str) -> Result<()>) -> Result<()>,
) -> Result<Vec<Query>> {
    let mut heap: BinaryHeap<(u64, Vec<String>)> = BinaryHeap::new();
    for_each_text(&mut |doc, text| {
        let key = mix64(doc ^ seed);
        if heap.len() >= count && heap.peek().is_none_or(|(k, _)| *k <= key) {
            return Ok(());
        }
        let mut cands: Vec<&str> = text
            .split(' ')
            .filter(|w| w.chars().count() >= 3 && w.chars().all(char::is_alphabetic))
            .collect();
        cands.sort_unstable();
        cands.dedup();
        if cands.is_empty() {
            return Ok(());
        }
        let mut r = key;
        let k = 1 + (mix64(r) % 3) as usize;
        let mut words = Vec::new();
        for _ in 0..k.min(cands.len()) {
            r = mix64(r);
            let i = (r % cands.len() as u64) as usize;
            words.push(cands.swap_remove(i).to_string());
        }
        heap.push((key, words));
        if heap.len() > count {
            heap.pop();
        }
        Ok(())
    })?;
    let mut v = heap.into_vec();
    v.sort();
    Ok(v.into_iter().map(|(_, words)| Query { words }).collect())
}

/// Reads a query log: one query a line, words separated by white space
/// (lowercased); empty lines and `#` lines skipped.
pub fn read_queries(path: &Path) -> Result<Vec<Query>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| Query {
            words: l.split_whitespace().map(str::to_lowercase).collect(),
        })
        .collect())
}

/// Henzinger's layout with imaginary index loads for `n` subindices on `m`
/// machines of `slots` subindices each (see the module doc). Refused when
/// `slots < n div m + 2` would not hold a machine's share (the paper's
/// assumption) or there are no machines.
pub fn imaginary_layout(n: usize, m: usize, slots: usize) -> Result<Layout> {
    if m == 0 || n == 0 {
        return Err(Error::usage(
            "the layout needs at least one machine and one subindex",
        ));
    }
    let q = n / m;
    let need = if n.is_multiple_of(m) { q } else { q + 2 };
    if slots < need {
        return Err(Error::usage(format!(
            "{m} machines of {slots} slots cannot hold {n} subindices by imaginary loads: a machine needs n div m + 2 = {need} slots"
        )));
    }
    let mut layout: Layout = (0..m).map(|i| (i * q..(i + 1) * q).collect()).collect();
    // In units of 1/m: a subindex is m, a machine's room after step 1 is n − q·m.
    let room = (n - q * m) as u64;
    let mut left = vec![room; m];
    let mut machine = 0;
    for j in q * m..n {
        let mut load = m as u64;
        while load > 0 {
            let take = load.min(left[machine]);
            if take > 0 {
                layout[machine].push(j);
                left[machine] -= take;
                load -= take;
            }
            if left[machine] == 0 {
                machine += 1;
                if machine == m {
                    break;
                }
            }
        }
    }
    Ok(layout)
}

/// Each subindex on one machine, heaviest (by `index_loads`) first, on the
/// machine with the least index load that has a free slot (ties: lowest).
pub fn no_duplication_layout(index_loads: &[f64], m: usize, slots: usize) -> Result<Layout> {
    let n = index_loads.len();
    if m == 0 || m * slots < n {
        return Err(Error::usage(format!(
            "{m} machines of {slots} slots cannot hold {n} subindices"
        )));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| index_loads[b].total_cmp(&index_loads[a]).then(a.cmp(&b)));
    let mut layout: Layout = vec![Vec::new(); m];
    let mut load = vec![0.0f64; m];
    for j in order {
        let i = (0..m)
            .filter(|&i| layout[i].len() < slots)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .ok_or_else(|| Error::internal("no free slot left"))?;
        layout[i].push(j);
        load[i] += index_loads[j];
    }
    layout.iter_mut().for_each(|l| l.sort_unstable());
    Ok(layout)
}

/// [`no_duplication_layout`] plus `copies` copies of the heaviest
/// subindices, each on the machine with the least index load that has a
/// free slot and no copy of it yet (its load counted as shared by its copies).
pub fn hand_duplication_layout(
    index_loads: &[f64],
    m: usize,
    slots: usize,
    copies: usize,
) -> Result<Layout> {
    let mut layout = no_duplication_layout(index_loads, m, slots)?;
    let n = index_loads.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| index_loads[b].total_cmp(&index_loads[a]).then(a.cmp(&b)));
    let holders = |layout: &Layout, j: usize| layout.iter().filter(|l| l.contains(&j)).count();
    let load = |layout: &Layout, i: usize| -> f64 {
        layout[i]
            .iter()
            .map(|&j| index_loads[j] / holders(layout, j) as f64)
            .sum()
    };
    for &j in order.iter().cycle().take(copies.min(n * m)) {
        let target = (0..m)
            .filter(|&i| layout[i].len() < slots && !layout[i].contains(&j))
            .min_by(|&a, &b| {
                load(&layout, a)
                    .total_cmp(&load(&layout, b))
                    .then(a.cmp(&b))
            });
        if let Some(i) = target {
            layout[i].push(j);
            layout[i].sort_unstable();
        }
    }
    Ok(layout)
}

/// Replays requests with the greedy scheduler: `loads[t * n + j]` is the
/// load of query `t`'s request to subindex `j`; each goes to the least
/// loaded machine holding `j`. Returns the machines' loads.
pub fn greedy_schedule(layout: &Layout, n: usize, loads: &[f64]) -> Result<Vec<f64>> {
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, subs) in layout.iter().enumerate() {
        for &j in subs {
            holders[j].push(i);
        }
    }
    if let Some(j) = holders.iter().position(Vec::is_empty) {
        return Err(Error::internal(format!("subindex {j} is on no machine")));
    }
    let mut machine = vec![0.0f64; layout.len()];
    for (r, &l) in loads.iter().enumerate() {
        let j = r % n;
        let i = holders[j]
            .iter()
            .copied()
            .min_by(|&a, &b| machine[a].total_cmp(&machine[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        machine[i] += l;
    }
    Ok(machine)
}

/// The simulation's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LayoutReport {
    /// What the loads count.
    pub load: String,
    /// Subindices.
    pub subindices: usize,
    /// Machines.
    pub machines: usize,
    /// Slots per machine.
    pub slots: usize,
    /// Queries replayed (each a request to every subindex).
    pub queries: usize,
    /// `ML*`: the maximum machine load, imaginary layout + greedy.
    pub max_load: f64,
    /// `max(Σ FL_j / m, β)`, at most `Opt`.
    pub lower_bound: f64,
    /// `2(1 + α)·lower_bound + 2β`.
    pub bound: f64,
    /// `max_load ≤ bound` (which implies the paper's bound against `Opt`).
    pub bound_holds: bool,
    /// No duplication (LPT on the loads), its maximum load.
    pub no_duplication_max_load: f64,
    /// Hand-chosen duplication + greedy, its maximum load.
    pub hand_duplication_max_load: f64,
    /// Copies beyond one per subindex, in the imaginary layout (and given
    /// to the hand duplication).
    pub extra_copies: usize,
    /// Measured `α`: `max FL / min FL − 1`.
    pub alpha: f64,
    /// Measured `β`: the largest single load.
    pub beta: f64,
    /// The index loads `FL_j`.
    pub index_loads: Vec<f64>,
    /// The machines' loads under the imaginary layout + greedy.
    pub machine_loads: Vec<f64>,
    /// The imaginary layout.
    pub layout: Layout,
}

/// Measures every request's load with `cost`, lays the subindices out on
/// `m` machines of `slots` slots in the three ways and replays the queries.
/// Memory: one load per (query, subindex).
pub fn simulate(
    cost: &dyn SubindexCost,
    queries: &[Query],
    m: usize,
    slots: usize,
    budget: u64,
) -> Result<LayoutReport> {
    let n = cost.subindices();
    let need = (queries.len() * n * 8) as u64;
    if need > budget {
        return Err(Error::budget(
            "layout: one load per (query, subindex)",
            need,
            budget,
        ));
    }
    let loads: Vec<f64> = queries
        .iter()
        .flat_map(|q| (0..n).map(move |j| cost.cost(j, q)))
        .collect();
    let mut report = replay(n, m, slots, &loads, queries.len())?;
    report.load = cost.unit().to_string();
    Ok(report)
}

/// [`simulate`] on loads already measured (`loads[t * n + j]`).
pub fn replay(
    n: usize,
    m: usize,
    slots: usize,
    loads: &[f64],
    queries: usize,
) -> Result<LayoutReport> {
    let mut fl = vec![0.0f64; n];
    for (r, &l) in loads.iter().enumerate() {
        fl[r % n] += l;
    }
    let beta = loads.iter().copied().fold(0.0, f64::max);
    let (lo, hi) = fl
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let alpha = if lo > 0.0 {
        hi / lo - 1.0
    } else {
        f64::INFINITY
    };
    let layout = imaginary_layout(n, m, slots)?;
    let machine_loads = greedy_schedule(&layout, n, loads)?;
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let extra_copies = layout.iter().map(Vec::len).sum::<usize>() - n;
    let nodup = greedy_schedule(&no_duplication_layout(&fl, m, slots)?, n, loads)?;
    let hand = greedy_schedule(
        &hand_duplication_layout(&fl, m, slots, extra_copies)?,
        n,
        loads,
    )?;
    let lower_bound = (fl.iter().sum::<f64>() / m as f64).max(beta);
    let bound = 2.0 * (1.0 + alpha) * lower_bound + 2.0 * beta;
    let max_load = max(&machine_loads);
    Ok(LayoutReport {
        load: "given".to_string(),
        subindices: n,
        machines: m,
        slots,
        queries,
        max_load,
        lower_bound,
        bound,
        bound_holds: max_load <= bound * (1.0 + 1e-12),
        no_duplication_max_load: max(&nodup),
        hand_duplication_max_load: max(&hand),
        extra_copies,
        alpha,
        beta,
        index_loads: fl,
        machine_loads,
        layout,
    })
}

impl LayoutReport {
    /// The report as a table.
    pub fn table(&self) -> String {
        let r = |x: f64| x / self.lower_bound.max(f64::MIN_POSITIVE);
        format!(
            "{} subindices on {} machines × {} slots, {} queries ({} extra copies)\n\
             loads: {}\n\
             measured α = {:.4}, β = {:.0}\n\
             {:<40}{:>16}  {:>6}\n\
             {:<40}{:>16.0}  {:>6.3}\n\
             {:<40}{:>16.0}  {:>6.3}\n\
             {:<40}{:>16.0}  {:>6.3}\n\
             {:<40}{:>16.0}  {:>6.3}\n\
             {:<40}{:>16.0}  {:>6.3}  {}\n",
            self.subindices,
            self.machines,
            self.slots,
            self.queries,
            self.extra_copies,
            self.load,
            self.alpha,
            self.beta,
            "",
            "max load",
            "× LB",
            "lower bound max(ΣFL/m, β) ≤ Opt",
            self.lower_bound,
            1.0,
            "imaginary loads + greedy (ML*)",
            self.max_load,
            r(self.max_load),
            "no duplication (LPT)",
            self.no_duplication_max_load,
            r(self.no_duplication_max_load),
            "hand duplication + greedy",
            self.hand_duplication_max_load,
            r(self.hand_duplication_max_load),
            "bound 2(1+α)·LB + 2β",
            self.bound,
            r(self.bound),
            if self.bound_holds {
                "holds"
            } else {
                "VIOLATED"
            }
        )
    }
}

#[cfg(test)]
mod tests;
