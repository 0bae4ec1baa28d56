//! Strongly connected components and the bow-tie of a link graph (IIR §19.2,
//! after Broder et al., *Graph structure in the Web*, 2000), semi-externally:
//! a few bits and one label per node in memory, the arcs streamed from the
//! edge files (`edges.wm` and its transpose `edges-t.wm`).
//!
//! # The parts
//!
//! Around the largest SCC, every node is in exactly one of: **SCC**; **IN**
//! (reaches the SCC, is not reached from it); **OUT** (reached from it, does
//! not reach it); **tubes** (reached from IN and reaching OUT without passing
//! through the SCC); **tendrils** (reached from IN, or reaching OUT, but not
//! both); **disconnected** (none of these). The six sizes sum to the nodes.
//! No SCC straddles two parts (a cycle through two parts would put its nodes
//! in the SCC), which the component search below uses.
//!
//! # The algorithm (Multistep, semi-externally)
//!
//! Slota, Rajamanickam and Madduri's *Multistep* (IPDPS 2014) — a pivot's
//! forward–backward search for the giant component, trimming, and colouring
//! for the many small ones — with each step a *drain* over an edge file:
//!
//! * **Drain.** A bit set of *pending* nodes; the file is swept block by
//!   block, and a pending node's list, when the sweep reaches it, is
//!   expanded (its bit cleared, its neighbours updated, newly changed ones
//!   marked pending). A node marked ahead of the sweep is expanded in the same
//!   sweep (Gauss–Seidel), so sweeps alternate direction — blocks in
//!   increasing order, then decreasing — and with host-local docIDs most
//!   chains, in either direction, finish in one or two sweeps. A block whose
//!   node range holds no pending bit is not read, so late sweeps touch a
//!   few blocks. The drain ends when nothing is pending.
//! * **Pivot** (1 pass over each file): the node with the largest
//!   in-degree × out-degree.
//! * **Giant SCC**: `F` = reached from the pivot (drain of `edges.wm`), `B` =
//!   reaching it (drain of `edges-t.wm`); SCC = `F ∩ B`, OUT = `F \ B`, IN =
//!   `B \ F`. Then `RI` = reached from IN through nodes outside `F ∪ B`, `RO`
//!   = reaching OUT likewise: tubes = `RI ∩ RO`, tendrils = `RI △ RO`.
//! * **Other SCCs**, among the *active* nodes (not yet in a found component),
//!   arcs followed only inside one part (IN, OUT, `RI \ RO`, `RO \ RI`,
//!   tubes, disconnected):
//!   * *trim*: a node with no active in-neighbour (or none out) is an SCC of
//!     its own; counting (1 pass) then peeling by a drain, counts held in the
//!     label array, repeats until a trim in each direction removes nothing;
//!   * *colour* (Orzan 2004): every active node takes the largest node id
//!     that reaches it (drain of `edges.wm`, labels start as the node's own
//!     id); each node `r` whose label is `r` is a root, and the nodes of
//!     label `r` that reach `r` (drain of `edges-t.wm` inside label `r`) are
//!     its SCC. Their sizes are counted in the label array, then they leave.
//!
//!   Trims alternate direction until two in a row remove under 1/64 of
//!   the active nodes; then a colouring round; and again, until no node is
//!   active. Colouring alone can
//!   need one round per SCC of a long chain whose ids fall along the arcs;
//!   trimming in alternating sweeps removes such chains of singletons whole.
//! * If some other SCC turns out larger than the pivot's (the pivot missed
//!   the giant), the parts are computed again around it.
//!
//! Memory: seven bit sets (`F`, `B`, `RI`, `RO`, active, pending, found) and
//! the label array, 4 bytes per node below 2³² nodes and 8 beyond: 4.9 bytes a
//! node, against 8 for one PageRank vector. Refused with a budget error when
//! that exceeds the budget. Why not a semi-external DFS (Sibeyn et al.) or an
//! external-memory contraction: those need a spanning tree or a sort of the
//! arcs per round; the drains read only blocks with work and need no
//! scratch files, and the measured passes (below, and in the result's
//! [`Passes`]) stay small on web graphs, where almost all nodes outside the
//! giant SCC are singletons that trimming removes in a few sweeps.
//!
//! # Resuming
//!
//! After each step (and each colouring round, at most every
//! [`BowTieOptions::checkpoint_every`]) the arrays and the scalar state go to
//! a checkpoint (`nodesets` kind, [`super::checkpoint`]) in the temporary
//! directory; a later call with the same edge files starts from it. Every
//! step is deterministic, so a resumed run reports what an uninterrupted one
//! does, passes included.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::checkpoint::{self, Arrays, ArraysMut};
use super::nodeset::{NodeBits, NodeLabels};
use crate::error::{Error, IoContext, Result};
use crate::graph::{Direction, EdgeFile};
use crate::progress::{Reporter, Unit};

/// Bytes held besides the per-node arrays (a decoded block and its lists).
const STREAM_BYTES: u64 = 1 << 20;
/// Name of the checkpoint file in the temporary directory.
pub const CHECKPOINT: &str = "bowtie-state.wm";

/// When [`bow_tie`] may hold arcs in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InMemory {
    /// The whole graph when it fits the budget; otherwise the residual of
    /// the component search once it fits.
    #[default]
    Auto,
    /// Only the residual of the component search (a test hook for that path).
    ResidualOnly,
    /// Never: semi-external throughout.
    Never,
}

/// How to run [`bow_tie`].
#[derive(Clone, Debug)]
pub struct BowTieOptions {
    /// When arcs may be held in memory (the answer is the same either way).
    pub in_memory: InMemory,
    /// Least time between two checkpoints inside the component search
    /// (every step's end is checkpointed anyway).
    pub checkpoint_every: Duration,
    /// Stop with an error after writing this many checkpoints: a test hook
    /// simulating a crash at a chosen point.
    pub interrupt_after: Option<u32>,
}

impl Default for BowTieOptions {
    fn default() -> BowTieOptions {
        BowTieOptions {
            in_memory: InMemory::Auto,
            checkpoint_every: Duration::from_secs(30),
            interrupt_after: None,
        }
    }
}

/// How much of the edge files the computation read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passes {
    /// Sweeps over `edges.wm` (each reads only blocks with pending nodes).
    pub forward_sweeps: u64,
    /// Blocks of `edges.wm` read, all sweeps together.
    pub forward_blocks_read: u64,
    /// Blocks in `edges.wm`.
    pub forward_blocks: u64,
    /// Sweeps over `edges-t.wm`.
    pub transposed_sweeps: u64,
    /// Blocks of `edges-t.wm` read.
    pub transposed_blocks_read: u64,
    /// Blocks in `edges-t.wm`.
    pub transposed_blocks: u64,
    /// Colouring rounds.
    pub colour_rounds: u64,
    /// Trim drains.
    pub trims: u64,
    /// Nodes whose SCCs were found in memory (all of them when the whole
    /// graph fit the budget, the residual of the component search when it
    /// came to fit).
    #[serde(default)]
    pub in_memory_nodes: u64,
}

impl Passes {
    /// Blocks read over blocks in the file: full passes' worth of reading.
    pub fn forward_passes(&self) -> f64 {
        self.forward_blocks_read as f64 / self.forward_blocks.max(1) as f64
    }
    /// The same for the transposed file.
    pub fn transposed_passes(&self) -> f64 {
        self.transposed_blocks_read as f64 / self.transposed_blocks.max(1) as f64
    }
}

/// The bow-tie decomposition and the SCC sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BowTie {
    /// Nodes of the graph.
    pub nodes: u64,
    /// Arcs.
    pub arcs: u64,
    /// Strongly connected components (singletons included).
    pub scc_count: u64,
    /// Nodes of the largest SCC (the bow-tie's knot).
    pub largest_scc: u64,
    /// A node of the largest SCC (the pivot its search started from).
    pub pivot: u64,
    /// IN: reaches the SCC, not reached from it.
    pub r#in: u64,
    /// OUT: reached from the SCC, does not reach it.
    pub out: u64,
    /// Reached from IN or reaching OUT (outside SCC), not both.
    pub tendrils: u64,
    /// Reached from IN and reaching OUT, outside SCC.
    pub tubes: u64,
    /// None of the above.
    pub disconnected: u64,
    /// SCC size → number of SCCs of that size.
    pub scc_sizes: BTreeMap<u64, u64>,
    /// What was read.
    pub passes: Passes,
}

impl BowTie {
    /// The `--json` object: the parts, the SCC count and size distribution
    /// (`[[size, count], …]`), and the passes.
    pub fn json(&self) -> Value {
        json!({
            "nodes": self.nodes,
            "arcs": self.arcs,
            "scc_count": self.scc_count,
            "largest_scc": self.largest_scc,
            "in": self.r#in,
            "out": self.out,
            "tendrils": self.tendrils,
            "tubes": self.tubes,
            "disconnected": self.disconnected,
            "pivot": self.pivot,
            "scc_sizes": self.scc_sizes.iter().map(|(s, c)| [*s, *c]).collect::<Vec<_>>(),
            "passes": self.passes,
            "forward_passes": (self.passes.forward_passes() * 100.0).round() / 100.0,
            "transposed_passes": (self.passes.transposed_passes() * 100.0).round() / 100.0,
        })
    }

    /// The parts as a table, with their shares of the nodes (Broder et al.'s
    /// Figure 9 as numbers).
    pub fn table(&self) -> String {
        let pct = |x: u64| 100.0 * x as f64 / self.nodes.max(1) as f64;
        let mut s = String::new();
        for (name, x) in [
            ("SCC", self.largest_scc),
            ("IN", self.r#in),
            ("OUT", self.out),
            ("tendrils", self.tendrils),
            ("tubes", self.tubes),
            ("disconnected", self.disconnected),
        ] {
            s.push_str(&format!("{name:<13}{x:>14}  {:>6.2}%\n", pct(x)));
        }
        s.push_str(&format!("{:<13}{:>14}\n", "nodes", self.nodes));
        s.push_str(&format!(
            "{:<13}{:>14}  ({} of one node)\n",
            "SCCs",
            self.scc_count,
            self.scc_sizes.get(&1).copied().unwrap_or(0)
        ));
        s.push_str(&format!(
            "passes       {:.2} over the edges, {:.2} over the transpose ({} colouring rounds, {} trims)\n",
            self.passes.forward_passes(),
            self.passes.transposed_passes(),
            self.passes.colour_rounds,
            self.passes.trims
        ));
        s
    }

    /// The SCC size distribution on log-log axes: the number of SCCs of each
    /// size, the largest one marked.
    pub fn plot_svg(&self, title: &str) -> String {
        use crate::plot::{loglog_plot_svg, Series, SeriesStyle};
        let others: Vec<(f64, f64)> = self
            .scc_sizes
            .iter()
            .filter(|&(&s, _)| s != self.largest_scc)
            .map(|(&s, &c)| (s as f64, c as f64))
            .collect();
        let largest = vec![(self.largest_scc as f64, 1.0)];
        let series = [
            Series {
                label: "SCCs of each size".into(),
                color: "#1f77b4".into(),
                style: SeriesStyle::Dots,
                points: others,
            },
            Series {
                label: format!(
                    "largest SCC: {} nodes ({:.1}%)",
                    self.largest_scc,
                    100.0 * self.largest_scc as f64 / self.nodes.max(1) as f64
                ),
                color: "#d62728".into(),
                style: SeriesStyle::LineDots,
                points: largest,
            },
            // Not drawn: lowers the y axis a decade, so that sizes seen once
            // are not on the x axis.
            Series {
                label: String::new(),
                color: "none".into(),
                style: SeriesStyle::Dots,
                points: vec![(1.0, 0.1)],
            },
        ];
        loglog_plot_svg(title, "SCC size (nodes)", "number of SCCs", &series)
    }
}

/// The scalar state, checkpointed with the arrays.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct State {
    /// Next step to run.
    step: Step,
    pivot: u64,
    /// Sizes of the SCCs found outside the giant one.
    sizes: Vec<(u64, u64)>,
    /// The largest SCC found outside the giant one: (size, a node of it).
    largest_other: (u64, u64),
    /// Whether every SCC has been found (the parts may still be redone).
    components_done: bool,
    /// Consecutive trims that removed nothing.
    idle_trims: u32,
    /// Direction of the next trim (true: in-degree).
    trim_in_next: bool,
    /// At most this many arcs join active nodes of one part (counted by the
    /// last trim): what the residual pass would hold.
    #[serde(default)]
    residual_arcs: Option<u64>,
    passes: Passes,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Step {
    #[default]
    Pivot,
    Forward,
    Backward,
    FromIn,
    ToOut,
    Components,
    Done,
}

/// The four sets that decide a node's part.
struct Parts {
    fwd: NodeBits,
    bwd: NodeBits,
    ri: NodeBits,
    ro: NodeBits,
}

impl Parts {
    /// The part a node outside the giant SCC is in, as a code: equal codes,
    /// same part.
    #[inline]
    fn of(&self, v: u64) -> u8 {
        self.fwd.get(v) as u8
            | (self.bwd.get(v) as u8) << 1
            | (self.ri.get(v) as u8) << 2
            | (self.ro.get(v) as u8) << 3
    }
}

/// The in-memory arrays.
struct Arrays7 {
    parts: Parts,
    active: NodeBits,
    pending: NodeBits,
    found: NodeBits,
    labels: NodeLabels,
}

impl Arrays7 {
    fn new(n: u64) -> Arrays7 {
        Arrays7 {
            parts: Parts {
                fwd: NodeBits::new(n),
                bwd: NodeBits::new(n),
                ri: NodeBits::new(n),
                ro: NodeBits::new(n),
            },
            active: NodeBits::new(n),
            pending: NodeBits::new(n),
            found: NodeBits::new(n),
            labels: NodeLabels::new(n),
        }
    }

    fn bytes(n: u64) -> u64 {
        7 * NodeBits::bytes_for(n) + NodeLabels::bytes_for(n) + 2 * STREAM_BYTES
    }

    fn save(&self, path: &Path, params: &Value, state: &State) -> Result<()> {
        let state = serde_json::to_value(state).map_err(|e| Error::internal(e.to_string()))?;
        checkpoint::save(
            path,
            params,
            &state,
            &Arrays {
                bits: vec![
                    ("forward", &self.parts.fwd),
                    ("backward", &self.parts.bwd),
                    ("from-in", &self.parts.ri),
                    ("to-out", &self.parts.ro),
                    ("active", &self.active),
                    ("pending", &self.pending),
                    ("found", &self.found),
                ],
                labels: Some(("labels", &self.labels)),
            },
        )
    }

    fn load(&mut self, path: &Path, params: &Value) -> Result<Option<State>> {
        let state = checkpoint::load(
            path,
            params,
            &mut ArraysMut {
                bits: vec![
                    ("forward", &mut self.parts.fwd),
                    ("backward", &mut self.parts.bwd),
                    ("from-in", &mut self.parts.ri),
                    ("to-out", &mut self.parts.ro),
                    ("active", &mut self.active),
                    ("pending", &mut self.pending),
                    ("found", &mut self.found),
                ],
                labels: Some(("labels", &mut self.labels)),
            },
        )?;
        Ok(state.and_then(|s| serde_json::from_value(s).ok()))
    }
}

/// An edge file read block by block, forward or backward, for drains.
struct Stream {
    file: EdgeFile,
    keys: Vec<u64>,
    nodes: u64,
    scratch: Vec<u8>,
    raw: Vec<u8>,
    buf: Vec<u64>,
    flat: Vec<u64>,
    lists: Vec<(u64, usize, usize)>,
}

impl Stream {
    fn new(file: EdgeFile) -> Result<Stream> {
        let mut keys = Vec::with_capacity(file.container().blocks().len());
        for (i, b) in file.container().blocks().iter().enumerate() {
            let k = <[u8; 8]>::try_from(b.key.as_slice()).map_err(|_| {
                Error::corrupt(
                    file.path(),
                    format!("block {i}"),
                    b.offset,
                    "first key is not 8 bytes",
                )
            })?;
            keys.push(u64::from_be_bytes(k));
        }
        Ok(Stream {
            nodes: file.stats().nodes,
            file,
            keys,
            scratch: Vec::new(),
            raw: Vec::new(),
            buf: Vec::new(),
            flat: Vec::new(),
            lists: Vec::new(),
        })
    }

    fn blocks(&self) -> u64 {
        self.keys.len() as u64
    }

    fn load(&mut self, i: usize) -> Result<()> {
        self.file
            .container()
            .read_block_into(i, &mut self.scratch, &mut self.raw)?;
        self.flat.clear();
        self.lists.clear();
        let (flat, lists) = (&mut self.flat, &mut self.lists);
        self.file
            .visit_block(i, &self.raw, &mut self.buf, &mut |node, dsts| {
                let start = flat.len();
                flat.extend_from_slice(dsts);
                lists.push((node, start, flat.len()));
                Ok(())
            })
    }

    /// One full pass in node order: `f(node, neighbours)` for every list
    /// piece of the blocks whose range holds a node of `only`.
    fn scan(
        &mut self,
        only: &NodeBits,
        reads: &mut u64,
        mut f: impl FnMut(u64, &[u64]),
    ) -> Result<()> {
        for i in 0..self.keys.len() {
            let hi = self.keys.get(i + 1).copied().unwrap_or(self.nodes);
            if !only.any_in(self.keys[i], hi) {
                continue;
            }
            self.load(i)?;
            *reads += 1;
            for &(node, s, e) in &self.lists {
                f(node, &self.flat[s..e]);
            }
        }
        Ok(())
    }

    /// Sweeps, alternating direction, until no node is pending; `expand(node,
    /// neighbours, pending)` is called for every list piece of a node that
    /// was pending when the sweep reached it (its bit is cleared first).
    /// Nodes without a list here have nothing to expand: their bits are
    /// cleared as sweeps pass them.
    fn drain(
        &mut self,
        pending: &mut NodeBits,
        sweeps: &mut u64,
        reads: &mut u64,
        mut expand: impl FnMut(u64, &[u64], &mut NodeBits),
    ) -> Result<()> {
        let mut reverse = false;
        let nb = self.keys.len();
        while !pending.is_empty() {
            *sweeps += 1;
            pending.clear_range(0, self.keys.first().copied().unwrap_or(self.nodes));
            // The node whose list the previous piece belonged to, and whether
            // it is being expanded (a list split across blocks is expanded
            // whole or not at all).
            let mut last: Option<(u64, bool)> = None;
            for step in 0..nb {
                let i = if reverse { nb - 1 - step } else { step };
                let lo = self.keys[i];
                let next = self.keys.get(i + 1).copied().unwrap_or(self.nodes);
                let continues = |node: u64| last.is_some_and(|(n, e)| e && n == node);
                if !pending.any_in(lo, next) && !continues(lo) && !continues(next) {
                    continue;
                }
                self.load(i)?;
                *reads += 1;
                // Nodes of the block's range without a list here.
                let mut prev = None;
                for &(node, _, _) in &self.lists {
                    if let Some(p) = prev {
                        pending.clear_range(p + 1, node);
                    }
                    prev = Some(node);
                }
                if let Some(p) = prev {
                    pending.clear_range(p + 1, next);
                }
                let count = self.lists.len();
                for k in 0..count {
                    let (node, s, e) = self.lists[if reverse { count - 1 - k } else { k }];
                    let expanding = match last {
                        Some((n, e)) if n == node => e,
                        _ => {
                            let e = pending.get(node);
                            if e {
                                pending.remove(node);
                            }
                            last = Some((node, e));
                            e
                        }
                    };
                    if expanding {
                        expand(node, &self.flat[s..e], pending);
                    }
                }
            }
            reverse = !reverse;
        }
        Ok(())
    }
}

/// The bow-tie decomposition and every SCC's size of the graph in
/// `forward` (an `edges` file) and `transposed` (its transpose), with
/// checkpoints in `tmp`, within `budget` bytes. See the module doc.
pub fn bow_tie(
    forward: &Path,
    transposed: &Path,
    tmp: &Path,
    budget: u64,
    reporter: &dyn Reporter,
    opts: &BowTieOptions,
) -> Result<BowTie> {
    let fwd_file = EdgeFile::open(forward)?;
    let bwd_file = EdgeFile::open(transposed)?;
    if fwd_file.direction() != Direction::Forward || bwd_file.direction() != Direction::Transposed {
        return Err(Error::usage(format!(
            "{} must be a forward edge file and {} a transposed one",
            forward.display(),
            transposed.display()
        )));
    }
    let n = fwd_file.stats().nodes;
    let arcs = fwd_file.stats().arcs;
    if bwd_file.stats().nodes != n || bwd_file.stats().arcs != arcs {
        return Err(Error::usage(format!(
            "{} and {} are not transposes of one graph ({n} nodes, {arcs} arcs vs {} and {})",
            forward.display(),
            transposed.display(),
            bwd_file.stats().nodes,
            bwd_file.stats().arcs
        )));
    }
    let need = Arrays7::bytes(n);
    if need > budget {
        return Err(Error::budget(
            format!("bowtie: seven bit sets and a label per node for {n} nodes"),
            need,
            budget,
        ));
    }
    if opts.in_memory == InMemory::Auto && memory::fits(n, arcs, budget) {
        let task = reporter.task("bowtie: in memory", None, Unit::Steps);
        let found = memory::bow_tie(&fwd_file, &bwd_file)?;
        drop(task);
        return Ok(summarize(
            n,
            arcs,
            &found.parts,
            found.pivot,
            &found.sizes,
            found.passes,
        ));
    }
    let params = json!({
        "nodes": n,
        "arcs": arcs,
        "forward": format!("{:08x}", fwd_file.container().checksum()),
        "transposed": format!("{:08x}", bwd_file.container().checksum()),
    });
    std::fs::create_dir_all(tmp).at(tmp)?;
    let ck_path = tmp.join(CHECKPOINT);
    let mut a = Arrays7::new(n);
    let mut st = match a.load(&ck_path, &params)? {
        Some(st) => {
            reporter.note(&format!(
                "bowtie: resuming at step {:?} (checkpoint in {})",
                st.step,
                tmp.display()
            ));
            st
        }
        None => {
            a = Arrays7::new(n);
            State {
                trim_in_next: true,
                ..State::default()
            }
        }
    };
    let mut fs = Stream::new(fwd_file)?;
    let mut bs = Stream::new(bwd_file)?;
    st.passes.forward_blocks = fs.blocks();
    st.passes.transposed_blocks = bs.blocks();
    let task = reporter.task("bowtie", None, Unit::Steps);
    let mut saved = 0u32;
    let mut last_save = Instant::now();
    let mut checkpoint = |a: &Arrays7, st: &State, forced: bool| -> Result<()> {
        if !forced && last_save.elapsed() < opts.checkpoint_every {
            return Ok(());
        }
        a.save(&ck_path, &params, st)?;
        crate::publish::failpoint("bowtie.checkpoint")?;
        last_save = Instant::now();
        saved += 1;
        if opts.interrupt_after.is_some_and(|k| saved >= k) {
            return Err(Error::internal(
                "bowtie: interrupted after a checkpoint (test hook)",
            ));
        }
        Ok(())
    };

    while st.step != Step::Done {
        task.set_message(format!("{:?}", st.step));
        match st.step {
            Step::Pivot => {
                st.pivot = pivot(&mut a, &mut fs, &mut bs, &mut st.passes)?;
                st.step = Step::Forward;
            }
            Step::Forward | Step::Backward => {
                let forward = st.step == Step::Forward;
                let reach = if forward {
                    &mut a.parts.fwd
                } else {
                    &mut a.parts.bwd
                };
                reach.clear();
                a.pending.clear();
                if n > 0 {
                    reach.insert(st.pivot);
                    a.pending.insert(st.pivot);
                }
                let (stream, sweeps, reads) = side(forward, &mut fs, &mut bs, &mut st.passes);
                stream.drain(&mut a.pending, sweeps, reads, |_, nbrs, pending| {
                    for &v in nbrs {
                        if reach.insert(v) {
                            pending.insert(v);
                        }
                    }
                })?;
                st.step = if forward {
                    Step::Backward
                } else {
                    Step::FromIn
                };
            }
            Step::FromIn | Step::ToOut => {
                // Seeds: IN (from-in) or OUT (to-out); reach through nodes
                // outside F ∪ B only.
                let from_in = st.step == Step::FromIn;
                let (seeds_of, other) = if from_in {
                    (&a.parts.bwd, &a.parts.fwd)
                } else {
                    (&a.parts.fwd, &a.parts.bwd)
                };
                let mut reach = seeds_of.clone();
                reach.subtract(other);
                a.pending.clone_from(&reach);
                let (fwd, bwd) = (&a.parts.fwd, &a.parts.bwd);
                let (stream, sweeps, reads) = side(from_in, &mut fs, &mut bs, &mut st.passes);
                stream.drain(&mut a.pending, sweeps, reads, |_, nbrs, pending| {
                    for &v in nbrs {
                        if !fwd.get(v) && !bwd.get(v) && reach.insert(v) {
                            pending.insert(v);
                        }
                    }
                })?;
                // Keep the nodes outside F ∪ B only.
                reach.subtract(&a.parts.fwd);
                reach.subtract(&a.parts.bwd);
                if from_in {
                    a.parts.ri = reach;
                    st.step = Step::ToOut;
                } else {
                    a.parts.ro = reach;
                    st.step = if st.components_done {
                        Step::Done
                    } else {
                        a.active.fill();
                        let mut giant = a.parts.fwd.clone();
                        giant.and_with(&a.parts.bwd);
                        a.active.subtract(&giant);
                        Step::Components
                    };
                }
            }
            Step::Components => {
                if a.active.is_empty() {
                    st.components_done = true;
                    let giant = {
                        let mut g = a.parts.fwd.clone();
                        g.and_with(&a.parts.bwd);
                        g.count()
                    };
                    if st.largest_other.0 > giant {
                        // The pivot missed the giant component: its SCC is
                        // an ordinary one, and the parts are redone around
                        // the largest.
                        add_size(&mut st.sizes, giant, 1);
                        add_size(&mut st.sizes, st.largest_other.0, -1);
                        st.pivot = st.largest_other.1;
                        st.largest_other = (giant, st.pivot);
                        st.step = Step::Forward;
                    } else {
                        st.step = Step::Done;
                    }
                } else if opts.in_memory != InMemory::Never
                    && st.residual_arcs.is_some_and(|m| {
                        memory::residual_bytes(a.active.count(), m)
                            <= budget.saturating_sub(Arrays7::bytes(n))
                    })
                {
                    residual_in_memory(&mut a, &mut fs, &mut st)?;
                } else if st.idle_trims < 2 {
                    // A trim that removes under 1/64 of the active nodes is
                    // not worth another full counting pass: colour instead.
                    let before = a.active.count();
                    let removed = trim(&mut a, &mut fs, &mut bs, &mut st)?;
                    st.idle_trims = if removed * 64 < before {
                        st.idle_trims + 1
                    } else {
                        0
                    };
                    st.trim_in_next = !st.trim_in_next;
                } else {
                    colour_round(&mut a, &mut fs, &mut bs, &mut st)?;
                    st.idle_trims = 0;
                    task.set_message(format!(
                        "components: round {}, {} nodes left",
                        st.passes.colour_rounds,
                        a.active.count()
                    ));
                    checkpoint(&a, &st, false)?;
                    continue;
                }
            }
            Step::Done => {}
        }
        checkpoint(&a, &st, true)?;
    }
    drop(task);
    Ok(summarize(n, arcs, &a.parts, st.pivot, &st.sizes, st.passes))
}

/// The result from the four part sets around the giant SCC (`fwd ∩ bwd`)
/// and the sizes of the other SCCs.
fn summarize(
    n: u64,
    arcs: u64,
    parts: &Parts,
    pivot: u64,
    other_sizes: &[(u64, u64)],
    passes: Passes,
) -> BowTie {
    let count_and = |x: &NodeBits, y: &NodeBits| {
        x.words()
            .iter()
            .zip(y.words())
            .map(|(p, q)| (p & q).count_ones() as u64)
            .sum::<u64>()
    };
    let largest = count_and(&parts.fwd, &parts.bwd);
    let out = parts.fwd.count() - largest;
    let r#in = parts.bwd.count() - largest;
    let tubes = count_and(&parts.ri, &parts.ro);
    let tendrils = parts.ri.count() + parts.ro.count() - 2 * tubes;
    let mut sizes: BTreeMap<u64, u64> = other_sizes.iter().copied().collect();
    if n > 0 {
        *sizes.entry(largest).or_default() += 1;
    }
    sizes.retain(|_, c| *c > 0);
    BowTie {
        nodes: n,
        arcs,
        scc_count: sizes.values().sum(),
        largest_scc: largest,
        pivot,
        r#in,
        out,
        tendrils,
        tubes,
        disconnected: n - largest - r#in - out - tendrils - tubes,
        scc_sizes: sizes,
        passes,
    }
}

/// The stream of one direction (forward: `edges.wm`) with its counters.
fn side<'a>(
    forward: bool,
    fs: &'a mut Stream,
    bs: &'a mut Stream,
    p: &'a mut Passes,
) -> (&'a mut Stream, &'a mut u64, &'a mut u64) {
    if forward {
        (fs, &mut p.forward_sweeps, &mut p.forward_blocks_read)
    } else {
        (bs, &mut p.transposed_sweeps, &mut p.transposed_blocks_read)
    }
}

/// Whether the SCC `(size, root)` ranks above `other` for the knot of the
/// bow-tie: larger, or as large with a smaller root (its largest node).
/// Both paths, semi-external and in memory, choose by this rule.
fn outranks(scc: (u64, u64), other: (u64, u64)) -> bool {
    scc.0 > other.0 || (scc.0 == other.0 && scc.1 < other.1)
}

/// Adds `delta` SCCs of `size` to a (size, count) list kept sorted by size.
fn add_size(sizes: &mut Vec<(u64, u64)>, size: u64, delta: i64) {
    match sizes.binary_search_by_key(&size, |&(s, _)| s) {
        Ok(i) => sizes[i].1 = (sizes[i].1 as i64 + delta).max(0) as u64,
        Err(i) if delta > 0 => sizes.insert(i, (size, delta as u64)),
        Err(_) => {}
    }
}

/// The node with the largest in-degree × out-degree (smallest id on ties):
/// out-degrees are counted into the labels in one pass over the forward
/// file, then one pass over the transposed file multiplies.
fn pivot(a: &mut Arrays7, fs: &mut Stream, bs: &mut Stream, p: &mut Passes) -> Result<u64> {
    let mut all = NodeBits::new(fs.nodes);
    all.fill();
    let labels = &mut a.labels;
    fs.scan(&all, &mut p.forward_blocks_read, |u, d| {
        labels.set(u, labels.get(u) + d.len() as u64)
    })?;
    p.forward_sweeps += 1;
    // In-degrees arrive in pieces; the product is taken once a node's list is whole.
    let (mut best, mut best_score) = (0u64, 0u128);
    let mut current: Option<(u64, u64)> = None;
    let mut consider = |(v, indeg): (u64, u64)| {
        let score = indeg as u128 * labels.get(v) as u128;
        if score > best_score {
            (best, best_score) = (v, score);
        }
    };
    bs.scan(
        &all,
        &mut p.transposed_blocks_read,
        |v, d| match &mut current {
            Some((c, k)) if *c == v => *k += d.len() as u64,
            _ => {
                if let Some(done) = current.replace((v, d.len() as u64)) {
                    consider(done);
                }
            }
        },
    )?;
    if let Some(done) = current {
        consider(done);
    }
    p.transposed_sweeps += 1;
    a.labels = NodeLabels::new(fs.nodes);
    Ok(best)
}

/// One trim in the direction `st.trim_in_next`: counts each active node's
/// active same-part in-neighbours (out-neighbours), then peels the nodes
/// whose count reaches 0, each an SCC of one. Returns the nodes removed.
fn trim(a: &mut Arrays7, fs: &mut Stream, bs: &mut Stream, st: &mut State) -> Result<u64> {
    let by_in = st.trim_in_next;
    st.passes.trims += 1;
    let Arrays7 {
        parts,
        active,
        pending,
        labels,
        ..
    } = a;
    for v in active.iter() {
        labels.set(v, 0);
    }
    // Count over the file that lists a node's in-neighbours (by_in) or
    // out-neighbours; peel over the other.
    let (count_stream, count_sweeps, count_reads) = side(!by_in, fs, bs, &mut st.passes);
    *count_sweeps += 1;
    count_stream.scan(active, count_reads, |v, nbrs| {
        if active.get(v) {
            let pv = parts.of(v);
            let k = nbrs
                .iter()
                .filter(|&&w| active.get(w) && parts.of(w) == pv)
                .count() as u64;
            labels.set(v, labels.get(v) + k);
        }
    })?;
    // The arcs among active nodes of one part: the residual pass's bound.
    st.residual_arcs = Some(active.iter().map(|v| labels.get(v)).sum());
    // Peel: the zero-count nodes leave; their arcs lower their neighbours' counts.
    pending.clear();
    for v in active.iter() {
        if labels.get(v) == 0 {
            pending.insert(v);
        }
    }
    active.subtract(pending);
    let mut removed = pending.count();
    let (peel_stream, sweeps, reads) = side(by_in, fs, bs, &mut st.passes);
    peel_stream.drain(pending, sweeps, reads, |u, nbrs, pending| {
        let pu = parts.of(u);
        for &v in nbrs {
            if active.get(v) && parts.of(v) == pu {
                let c = labels.get(v) - 1;
                labels.set(v, c);
                if c == 0 {
                    active.remove(v);
                    pending.insert(v);
                    removed += 1;
                }
            }
        }
    })?;
    add_size(&mut st.sizes, 1, removed as i64);
    Ok(removed)
}

/// The residual pass: the SCCs among the active nodes (arcs inside one part
/// only), found in memory by Tarjan's algorithm over the arcs of one scan;
/// they are counted and every active node leaves.
fn residual_in_memory(a: &mut Arrays7, fs: &mut Stream, st: &mut State) -> Result<()> {
    let Arrays7 {
        parts,
        active,
        labels,
        ..
    } = a;
    // Dense indices in node order, held in the labels.
    let ids: Vec<u64> = active.iter().collect();
    for (i, &v) in ids.iter().enumerate() {
        labels.set(v, i as u64);
    }
    let bound = st.residual_arcs.unwrap_or(0) as usize;
    let p = &mut st.passes;
    p.forward_sweeps += 1;
    let mut row: Vec<u32> = Vec::new();
    let g = memory::Csr::from_lists(ids.len(), bound, |push| {
        fs.scan(active, &mut p.forward_blocks_read, |u, nbrs| {
            if !active.get(u) {
                return;
            }
            let pu = parts.of(u);
            row.clear();
            row.extend(
                nbrs.iter()
                    .filter(|&&w| active.get(w) && parts.of(w) == pu)
                    .map(|&w| labels.get(w) as u32),
            );
            push(labels.get(u) as usize, &row);
        })
    })?;
    let comps = memory::tarjan(&g);
    drop(g);
    let mut new_sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for (&size, &root) in comps.size.iter().zip(&comps.root) {
        let (size, root) = (size as u64, ids[root as usize]);
        *new_sizes.entry(size).or_default() += 1;
        if outranks((size, root), st.largest_other) {
            st.largest_other = (size, root);
        }
    }
    for (size, count) in new_sizes {
        add_size(&mut st.sizes, size, count as i64);
    }
    p.in_memory_nodes += ids.len() as u64;
    active.clear();
    Ok(())
}

/// One colouring round: labels = the largest id reaching each active node
/// (inside its part); roots collect the nodes of their label that reach
/// them; those SCCs are counted and leave.
fn colour_round(a: &mut Arrays7, fs: &mut Stream, bs: &mut Stream, st: &mut State) -> Result<()> {
    st.passes.colour_rounds += 1;
    let Arrays7 {
        parts,
        active,
        pending,
        found,
        labels,
    } = a;
    for v in active.iter() {
        labels.set(v, v);
    }
    pending.clone_from(active);
    let p = &mut st.passes;
    fs.drain(
        pending,
        &mut p.forward_sweeps,
        &mut p.forward_blocks_read,
        |u, nbrs, pending| {
            let (cu, pu) = (labels.get(u), parts.of(u));
            for &v in nbrs {
                if active.get(v) && labels.get(v) < cu && parts.of(v) == pu {
                    labels.set(v, cu);
                    pending.insert(v);
                }
            }
        },
    )?;
    // Roots, then the nodes of each root's label that reach it.
    found.clear();
    for v in active.iter() {
        if labels.get(v) == v {
            found.insert(v);
        }
    }
    pending.clone_from(found);
    bs.drain(
        pending,
        &mut p.transposed_sweeps,
        &mut p.transposed_blocks_read,
        |v, srcs, pending| {
            let cv = labels.get(v);
            for &w in srcs {
                if active.get(w) && labels.get(w) == cv && found.insert(w) {
                    pending.insert(w);
                }
            }
        },
    )?;
    // Sizes, counted in the roots' labels: roots marked pending and set to
    // 1, every other member adds 1 at its root.
    pending.clear();
    for v in found.iter() {
        if labels.get(v) == v {
            pending.insert(v);
        }
    }
    for r in pending.iter() {
        labels.set(r, 1);
    }
    for v in found.iter() {
        if !pending.get(v) {
            let r = labels.get(v);
            labels.set(r, labels.get(r) + 1);
        }
    }
    let mut new_sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for r in pending.iter() {
        let size = labels.get(r);
        *new_sizes.entry(size).or_default() += 1;
        if outranks((size, r), st.largest_other) {
            st.largest_other = (size, r);
        }
    }
    for (size, count) in new_sizes {
        add_size(&mut st.sizes, size, count as i64);
    }
    pending.clear();
    active.subtract(found);
    found.clear();
    Ok(())
}

mod memory;

#[cfg(test)]
mod tests;
