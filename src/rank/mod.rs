//! PageRank out of core (Brin & Page 1998; Henzinger's reset-vector form).
//!
//! ```text
//! PR₊[j] = (1−d)·v[j] + d·( Σ_{i→j} PR[i]/outdeg(i)  +  D·u[j] )
//! ```
//!
//! `d` is the damping (the probability of following a link, 0.85 by default;
//! Henzinger writes the reset probability, her d = 1 − ours), `v` the reset
//! (preference) vector — uniform, or from a personalization file for
//! topic-flavoured / personalized PageRank — `D` the rank held by dangling nodes
//! (no out-links), spread by `u` (uniform, or `v`). Iteration starts from `v` and
//! stops when the L1 change falls below the tolerance, or at the iteration cap.
//!
//! # Three modes, one answer — bit for bit
//!
//! * [`memory`]: vectors in RAM, in-links held as an in-memory CSR when the
//!   budget allows (streamed from the transposed edge file otherwise); rayon
//!   over destination ranges.
//! * [`blocked`] (Haveliwala 1999): destinations cut into blocks that fit the
//!   budget; arcs partitioned once by destination block and sorted by source;
//!   per block, the contribution vector is streamed from disk.
//! * [`sortmerge`]: `(dst, src, contribution)` messages sorted externally and
//!   merged into the next vector.
//!
//! All modes add each node's in-contributions in increasing source order
//! starting from 0.0, compute every term with the same expression, and sum the
//! dangling mass and the L1 change in fixed chunks of docIDs ([`ChunkedSum`]),
//! so they produce the same bits whatever the mode, thread count or budget. That
//! is also what makes a resumed run bit-identical to an uninterrupted one: each
//! iteration's vector is checkpointed atomically and is all the next one needs.

pub mod blocked;
pub mod memory;
pub mod sortmerge;
pub mod vector;

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::docs::DocTable;
use crate::error::{Error, IoContext, Result};
use crate::graph::EdgeFile;
use crate::job::{
    phase, share, Figure, FigureList, Job, JobFile, Outcome, Phase, Settings, Stage, StageContext,
    StageId,
};
use crate::progress::Unit;
use crate::units::thousands;
pub use vector::{RankVector, VectorReader, VectorWriter};

/// Chunk length of [`ChunkedSum`].
pub const SUM_CHUNK: u64 = 1 << 16;

/// Where dangling nodes' rank goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dangling {
    /// Spread uniformly over all nodes.
    Uniform,
    /// Spread like the preference (reset) vector.
    Preference,
}

/// How to run the iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Memory if the vectors fit the budget, else blocked.
    #[default]
    Auto,
    /// Vectors in RAM.
    Memory,
    /// Haveliwala's block strategy.
    Blocked,
    /// Sorted messages.
    SortMerge,
}

impl Mode {
    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Memory => "memory",
            Mode::Blocked => "blocked",
            Mode::SortMerge => "sort-merge",
        }
    }
}

/// PageRank parameters.
#[derive(Clone, Debug)]
pub struct PageRankOptions {
    /// Probability of following a link.
    pub damping: f64,
    /// Stop when the L1 change is below this.
    pub tol: f64,
    /// Stop after this many iterations. The default, 200, leaves the stop to
    /// the tolerance on web graphs: power iteration from a uniform start needs
    /// 105 (cnr-2000) and 106 (uk-2007-05@100000) iterations to come within an
    /// L1 distance of 1e-9 of the fixed point, and 116 and 110 to get an L1
    /// change below 1e-10, so a cap of 100 stops short (L1 distance 2.2e-9
    /// and 2.5e-9).
    pub max_iter: u32,
    /// Personalization file (`docid-or-URL<TAB>weight` lines).
    pub personalize: Option<PathBuf>,
    /// Where dangling mass goes.
    pub dangling: Dangling,
    /// Execution mode.
    pub mode: Mode,
}

impl Default for PageRankOptions {
    fn default() -> Self {
        PageRankOptions {
            damping: 0.85,
            tol: 1e-10,
            max_iter: 200,
            personalize: None,
            dangling: Dangling::Uniform,
            mode: Mode::Auto,
        }
    }
}

/// Sums values fed in docID order in fixed chunks of [`SUM_CHUNK`] docIDs, so
/// that a parallel sum over chunks and a streaming sum give the same bits.
#[derive(Clone, Debug, Default)]
pub struct ChunkedSum {
    total: f64,
    chunk: f64,
    chunk_id: u64,
}

impl ChunkedSum {
    /// Adds the value of docID `i` (docIDs fed in increasing order; docIDs
    /// with nothing to add may be left out).
    #[inline]
    pub fn add(&mut self, i: u64, v: f64) {
        let c = i / SUM_CHUNK;
        if c != self.chunk_id {
            self.total += self.chunk;
            self.chunk = 0.0;
            self.chunk_id = c;
        }
        self.chunk += v;
    }

    /// The sum.
    pub fn total(&self) -> f64 {
        self.total + self.chunk
    }

    /// The chunked sum of a whole slice (docIDs `0..`), in parallel.
    pub fn of_slice(values: &[f64], f: impl Fn(usize, f64) -> f64 + Sync) -> f64 {
        use rayon::prelude::*;
        let partials: Vec<f64> = values
            .par_chunks(SUM_CHUNK as usize)
            .enumerate()
            .map(|(c, chunk)| {
                let base = c * SUM_CHUNK as usize;
                let mut s = 0.0;
                for (k, &v) in chunk.iter().enumerate() {
                    s += f(base + k, v);
                }
                s
            })
            .collect();
        let mut total = 0.0;
        for p in partials {
            total += p;
        }
        total
    }
}

/// The per-iteration constants, shared by the modes.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Damping.
    pub damping: f64,
    /// Dangling mass of the previous vector.
    pub dangling_mass: f64,
    /// 1/n, for uniform vectors.
    pub uniform: f64,
}

impl Step {
    /// The new value of a node: `acc` is its in-contributions summed in source
    /// order, `v` and `u` its reset and dangling-distribution values.
    #[inline]
    pub fn value(&self, acc: f64, v: f64, u: f64) -> f64 {
        (1.0 - self.damping) * v + self.damping * (acc + self.dangling_mass * u)
    }
}

/// The graph and vectors an iteration works on, as files.
pub struct Inputs {
    /// Nodes.
    pub n: u64,
    /// Arcs.
    pub m: u64,
    /// Forward edge file.
    pub forward: PathBuf,
    /// Transposed edge file.
    pub transposed: PathBuf,
    /// Out-degrees as a vector file (f64).
    pub degrees: PathBuf,
    /// Reset vector file, `None` = uniform.
    pub preference: Option<PathBuf>,
    /// Dangling distribution.
    pub dangling: Dangling,
    /// The stage's temporary directory.
    pub tmp: PathBuf,
}

/// One iteration's result.
#[derive(Clone, Copy, Debug)]
pub struct IterationOutcome {
    /// L1 distance between the new and the previous vector.
    pub l1: f64,
    /// Sum of the new vector.
    pub sum: f64,
}

/// A mode's engine: computes iteration t+1's vector file from iteration t's.
pub trait Iterate {
    /// Computes iteration `t` (≥ 1): reads `prev` (a vector file), writes the
    /// next vector to `next` with footer metadata `meta(outcome)`.
    fn iterate(
        &mut self,
        t: u32,
        prev: &Path,
        next: &Path,
        meta: &dyn Fn(IterationOutcome) -> Value,
    ) -> Result<IterationOutcome>;
}

/// Computes the L1 change and sum of a new vector in memory against the
/// previous one, in the fixed chunk order.
pub fn l1_and_sum(prev: &[f64], next: &[f64]) -> IterationOutcome {
    IterationOutcome {
        l1: ChunkedSum::of_slice(next, |j, v| (v - prev[j]).abs()),
        sum: ChunkedSum::of_slice(next, |_, v| v),
    }
}

/// Writes the next vector node by node, in docID order, from each node's
/// in-contributions sum: adds the reset and dangling terms (streaming the
/// preference vector) and accumulates the L1 change (streaming the previous
/// vector) and the sum. Shared by the streaming modes.
pub struct NextVector<'a> {
    step: Step,
    dangling_uniform: bool,
    pref: Option<VectorReader<'a>>,
    prev: VectorReader<'a>,
    w: VectorWriter,
    l1: ChunkedSum,
    sum: ChunkedSum,
}

impl<'a> NextVector<'a> {
    /// Starts the vector at `path` (a scratch vector: not fsynced).
    pub fn create(
        path: &Path,
        n: u64,
        step: Step,
        dangling: Dangling,
        pref: Option<&'a RankVector>,
        prev: &'a RankVector,
    ) -> Result<NextVector<'a>> {
        Ok(NextVector {
            step,
            dangling_uniform: dangling == Dangling::Uniform,
            pref: pref.map(RankVector::reader),
            prev: prev.reader(),
            w: VectorWriter::scratch(path, n, json!({}))?,
            l1: ChunkedSum::default(),
            sum: ChunkedSum::default(),
        })
    }

    /// Node `j`'s value from its in-contributions sum `acc`.
    #[inline]
    pub fn push(&mut self, j: u64, acc: f64) -> Result<()> {
        let v = match self.pref.as_mut() {
            Some(r) => r.get(j)?,
            None => self.step.uniform,
        };
        let u = if self.dangling_uniform {
            self.step.uniform
        } else {
            v
        };
        let new = self.step.value(acc, v, u);
        self.w.push(new)?;
        self.l1.add(j, (new - self.prev.get(j)?).abs());
        self.sum.add(j, new);
        Ok(())
    }

    /// Nodes `first..first + accs.len()`'s values from their in-contributions
    /// sums: the same as [`NextVector::push`] on each, a vector block at a time.
    pub fn push_slice(&mut self, first: u64, accs: &[f64]) -> Result<()> {
        let (mut j, mut rest) = (first, accs);
        while !rest.is_empty() {
            let prev = self.prev.run(j)?;
            let pref = match self.pref.as_mut() {
                Some(r) => Some(r.run(j)?),
                None => None,
            };
            let take = rest
                .len()
                .min(prev.len())
                .min(pref.map_or(usize::MAX, <[f64]>::len));
            for k in 0..take {
                let v = pref.map_or(self.step.uniform, |p| p[k]);
                let u = if self.dangling_uniform {
                    self.step.uniform
                } else {
                    v
                };
                let new = self.step.value(rest[k], v, u);
                self.w.push(new)?;
                let i = j + k as u64;
                self.l1.add(i, (new - prev[k]).abs());
                self.sum.add(i, new);
            }
            j += take as u64;
            rest = &rest[take..];
        }
        Ok(())
    }

    /// Publishes the vector with metadata `meta(outcome)`.
    pub fn finish(self, meta: &dyn Fn(IterationOutcome) -> Value) -> Result<IterationOutcome> {
        let outcome = IterationOutcome {
            l1: self.l1.total(),
            sum: self.sum.total(),
        };
        self.w.finish(&meta(outcome))?;
        Ok(outcome)
    }
}

/// Memory (bytes) the memory mode needs for `n` nodes and `m` arcs: four
/// vectors (previous, next, contributions, degrees), the preference vector if
/// any, and the in-link CSR.
pub fn memory_mode_bytes(n: u64, m: u64, personalized: bool) -> (u64, u64) {
    let vectors = n * 8 * (4 + u64::from(personalized));
    let csr = (n + 1) * 8 + m * if n <= u32::MAX as u64 { 4 } else { 8 };
    (vectors, csr)
}

/// The identity of an input file outside the job: its absolute path, size
/// and checksum, so that a changed file makes the stage run again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIdentity {
    /// Absolute path.
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// crc32c of the contents, 8 hex digits.
    pub crc32c: String,
}

impl FileIdentity {
    /// Reads `p` and describes it.
    pub fn of(p: &Path) -> Result<FileIdentity> {
        let bytes = std::fs::read(p).at(p)?;
        Ok(FileIdentity {
            path: std::fs::canonicalize(p)
                .at(p)?
                .to_string_lossy()
                .into_owned(),
            bytes: bytes.len() as u64,
            crc32c: format!("{:08x}", crc32c::crc32c(&bytes)),
        })
    }
}

/// The parameters PageRank records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageRankParams {
    /// Probability of following a link.
    pub damping: f64,
    /// L1 change to stop at.
    pub tol: f64,
    /// Iteration cap.
    pub max_iter: u32,
    /// The personalization file, if any.
    pub personalize: Option<FileIdentity>,
    /// Where dangling mass goes.
    pub dangling: Dangling,
}

/// What PageRank measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageRankFigures {
    /// Iterations computed in all (across resumes).
    pub iterations: u32,
    /// The last iteration's L1 change.
    pub l1: f64,
    /// Whether the L1 change fell below the tolerance.
    pub converged: bool,
    /// The mode that ran the last iterations.
    pub mode: Mode,
    /// Nodes.
    pub nodes: u64,
    /// Arcs.
    pub arcs: u64,
    /// Sum of the published vector.
    pub sum: f64,
    /// The iteration an interrupted run resumed after, if it did.
    pub resumed_from: Option<u32>,
}

/// The `pagerank` stage.
pub struct PageRank {
    /// Its options.
    pub opts: PageRankOptions,
}

/// What holds memory at the same time in `pagerank`, by mode (one runs):
/// memory mode's vectors and CSR adjacency (the whole budget: the mode is
/// chosen when they fit it); blocked mode's part writers while it splits the
/// arcs, then its accumulators (the fixed-size chunk and vector-block
/// buffers per thread beside them are outside the budget, see
/// [`blocked`]); sort–merge mode's message sort.
const SHARES: &[Phase] = &[
    phase("memory mode", &[share("memory mode", 1.0)]),
    phase(
        "blocked mode, splitting the arcs",
        &[share("part writers", 0.25)],
    ),
    phase("blocked mode, iterating", &[share("accumulators", 0.5)]),
    phase("sort-merge mode", &[share("messages", 0.8)]),
];

impl Stage for PageRank {
    type Params = PageRankParams;
    type Figures = PageRankFigures;

    fn id(&self) -> StageId {
        StageId::PageRank
    }

    fn params(&self) -> Result<PageRankParams> {
        let o = &self.opts;
        if !(o.damping >= 0.0 && o.damping < 1.0) {
            return Err(Error::usage(format!(
                "--damping must be in [0, 1), got {}",
                o.damping
            )));
        }
        if o.tol.is_nan() || o.tol <= 0.0 || o.max_iter == 0 {
            return Err(Error::usage("--tol must be > 0 and --max-iter ≥ 1"));
        }
        Ok(PageRankParams {
            damping: o.damping,
            tol: o.tol,
            max_iter: o.max_iter,
            personalize: o.personalize.as_deref().map(FileIdentity::of).transpose()?,
            dangling: o.dangling,
        })
    }

    fn inputs(&self) -> Vec<JobFile> {
        vec![JobFile::Edges, JobFile::EdgesT, JobFile::Docs]
    }

    fn outputs(&self) -> Vec<JobFile> {
        vec![JobFile::Ranks, JobFile::RankPlot]
    }

    fn records(f: &PageRankFigures) -> u64 {
        f.nodes
    }

    fn shares(&self) -> &'static [Phase] {
        SHARES
    }

    fn headline(&self, f: &PageRankFigures) -> String {
        format!(
            "{} after {} iterations",
            if f.converged {
                "converged"
            } else {
                "stopped at --max-iter"
            },
            thousands(u64::from(f.iterations))
        )
    }

    fn stats(&self, f: &PageRankFigures) -> Vec<Figure> {
        FigureList::new()
            .group("Stages")
            .count(
                "pagerank_iterations",
                "PageRank iterations",
                u64::from(f.iterations),
            )
            .flag("pagerank_converged", "PageRank converged", f.converged)
            .number("pagerank_l1", "PageRank last L1 change", f.l1)
            .build()
    }

    fn run(&self, cx: &mut StageContext) -> Result<PageRankFigures> {
        run_pagerank(&self.opts, &self.params()?, cx)
    }
}

/// Runs (or resumes, or skips) PageRank on `job`.
pub fn pagerank(
    job: &mut Job,
    opts: &PageRankOptions,
    s: &Settings,
) -> Result<Outcome<PageRankFigures>> {
    job.run(&PageRank { opts: opts.clone() }, s)
}

fn run_pagerank(
    opts: &PageRankOptions,
    params: &PageRankParams,
    cx: &mut StageContext,
) -> Result<PageRankFigures> {
    let tmp = cx.tmp().to_path_buf();
    let s = cx.settings().clone();
    let forward_path = cx.input(JobFile::Edges)?.to_path_buf();
    let forward = EdgeFile::open(&forward_path)?;
    let n = forward.stats().nodes;
    let m = forward.stats().arcs;
    if n == 0 {
        return Err(Error::usage_at(&forward_path, "the graph has no nodes"));
    }

    // Static inputs, built once and kept as checkpoints.
    let degrees = tmp.join("degrees.wm");
    if RankVector::open(&degrees).is_err() {
        write_degrees(&forward, &degrees)?;
    }
    let preference = match &opts.personalize {
        None => None,
        Some(file) => {
            let p = tmp.join("preference.wm");
            if RankVector::open(&p).is_err() {
                write_preference(file, cx.input(JobFile::Docs)?, n, &p, &s)?;
            }
            Some(p)
        }
    };
    let inputs = Inputs {
        n,
        m,
        forward: forward_path,
        transposed: cx.input(JobFile::EdgesT)?.to_path_buf(),
        degrees,
        preference,
        dangling: opts.dangling,
        tmp: tmp.clone(),
    };

    let (vectors, csr) = memory_mode_bytes(n, m, inputs.preference.is_some());
    let budget = cx.budget().clone();
    let in_memory = budget.bytes("memory mode")?;
    let mode = match opts.mode {
        Mode::Auto if vectors + csr <= in_memory => Mode::Memory,
        Mode::Auto => Mode::Blocked,
        m => m,
    };
    if mode == Mode::Memory && vectors > in_memory {
        cx.note(&format!(
            "warning: memory mode needs {} for its vectors, more than --mem {}",
            crate::resources::format_bytes(vectors),
            crate::resources::format_bytes(s.mem)
        ));
    }

    // Where to start: the last checkpointed iteration, or v.
    let (mut t, mut history) = match last_checkpoint(&tmp)? {
        Some((t, history)) if cx.resumed() => (t, history),
        _ => {
            write_start(&inputs, &iteration_path(&tmp, 0))?;
            (0, Vec::new())
        }
    };
    let resumed_from = (t > 0).then_some(t);
    if let Some(t) = resumed_from {
        cx.note(&format!("resuming after iteration {t}"));
    }

    let mut engine: Box<dyn Iterate> = match mode {
        Mode::Memory => Box::new(memory::MemoryEngine::new(
            &inputs,
            opts.damping,
            in_memory.saturating_sub(vectors),
        )?),
        Mode::Blocked => Box::new(blocked::BlockedEngine::new(
            &inputs,
            opts.damping,
            budget.bytes("accumulators")?,
            budget.bytes("part writers")?,
            &s,
        )?),
        Mode::SortMerge => Box::new(sortmerge::SortMergeEngine::new(
            &inputs,
            opts.damping,
            budget.bytes("messages")?,
            &s,
        )?),
        Mode::Auto => return Err(Error::internal("mode auto was not resolved")),
    };

    let task = cx.task(
        &format!("iterating ({})", mode.name()),
        Some(opts.max_iter as u64),
        Unit::Steps,
    );
    task.set_position(t as u64);
    let converged = |h: &[f64]| h.last().is_some_and(|&l1| l1 < opts.tol);
    while t < opts.max_iter && !converged(&history) {
        let prev = iteration_path(&tmp, t);
        let next = iteration_path(&tmp, t + 1);
        let hist_so_far = history.clone();
        let meta = move |o: IterationOutcome| {
            let mut history = hist_so_far.clone();
            history.push(o.l1);
            IterationMeta {
                iteration: t + 1,
                sum: o.sum,
                history,
            }
            .to_json()
        };
        let outcome = engine.iterate(t + 1, &prev, &next, &meta)?;
        crate::publish::failpoint("pagerank.iteration")?;
        history.push(outcome.l1);
        std::fs::remove_file(&prev).at(&prev)?;
        t += 1;
        task.set_position(t as u64);
        task.set_message(format!("L1 change {:.3e}", outcome.l1));
        // Re-estimate the iterations left from the contraction rate, for the ETA.
        if let [.., a, b] = history[..] {
            if b > 0.0 && a > b {
                let left = ((opts.tol / b).ln() / (b / a).ln()).ceil().max(0.0);
                task.set_total((t as f64 + left).min(opts.max_iter as f64) as u64);
            }
        }
    }
    drop(task);

    // Publish.
    let last = RankVector::open(iteration_path(&tmp, t))?;
    let sum = IterationMeta::of(&last)?.sum;
    let l1 = history.last().copied().unwrap_or(f64::NAN);
    // The mode is not recorded in the file: every mode writes the same bytes.
    let meta = json!({
        "iterations": t,
        "l1": l1,
        "converged": converged(&history),
        "sum": sum,
        "history": history,
    });
    let header = serde_json::to_value(params).map_err(|e| Error::internal(e.to_string()))?;
    let mut w = VectorWriter::create(cx.output(JobFile::Ranks)?, n, header)?;
    let (mut scratch, mut block) = (Vec::new(), Vec::new());
    for i in 0..last.container().blocks().len() {
        last.read_block(i, &mut scratch, &mut block)?;
        w.extend(&block)?;
    }
    w.finish(&meta)?;
    let points: Vec<(f64, f64)> = history
        .iter()
        .enumerate()
        .map(|(i, &l)| ((i + 1) as f64, l))
        .collect();
    let svg = crate::plot::line_plot_svg(
        &format!(
            "PageRank convergence (d = {}, {} mode)",
            opts.damping,
            mode.name()
        ),
        "iteration",
        "L1 change",
        &points,
        true,
    );
    crate::publish::write_atomic(cx.output(JobFile::RankPlot)?, svg.as_bytes())?;
    Ok(PageRankFigures {
        iterations: t,
        l1,
        converged: converged(&history),
        mode,
        nodes: n,
        arcs: m,
        sum,
        resumed_from,
    })
}

/// The footer metadata of an iteration checkpoint (`iter-NNNNN.wm` in the
/// stage's temporary directory): what a resumed run needs to go on exactly
/// where the interrupted one stopped.
#[derive(Debug, Deserialize)]
struct IterationMeta {
    /// The iteration this vector is the result of (0: the start vector).
    iteration: u32,
    /// Σ of the vector's entries.
    sum: f64,
    /// The L1 change of every iteration so far, the last one included.
    history: Vec<f64>,
}

impl IterationMeta {
    fn to_json(&self) -> Value {
        json!({"iteration": self.iteration, "sum": self.sum, "history": self.history})
    }

    /// Reads a checkpoint's metadata; a checkpoint without it is damaged.
    fn of(v: &RankVector) -> Result<IterationMeta> {
        serde_json::from_value(v.container().meta().clone()).map_err(|e| {
            v.container()
                .meta_error(format!("not an iteration checkpoint: {e}"))
        })
    }
}

/// Path of iteration `t`'s checkpoint.
pub fn iteration_path(tmp: &Path, t: u32) -> PathBuf {
    tmp.join(format!("iter-{t:05}.wm"))
}

/// The last valid checkpoint: (iteration, history of L1 changes). Older or
/// damaged checkpoints are removed.
fn last_checkpoint(tmp: &Path) -> Result<Option<(u32, Vec<f64>)>> {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return Ok(None);
    };
    let mut found: Vec<(u32, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let t = name
                .strip_prefix("iter-")?
                .strip_suffix(".wm")?
                .parse()
                .ok()?;
            Some((t, p))
        })
        .collect();
    found.sort();
    let mut best = None;
    while let Some((t, p)) = found.pop() {
        if best.is_none() {
            if let Ok(v) = RankVector::open(&p) {
                if let (Ok(()), Ok(meta)) = (v.verify(), IterationMeta::of(&v)) {
                    best = Some((t, meta.history));
                    continue;
                }
            }
        }
        std::fs::remove_file(&p).at(&p)?;
    }
    Ok(best)
}

/// Writes the out-degree of every node as a vector (f64, 0 for dangling nodes).
fn write_degrees(forward: &EdgeFile, path: &Path) -> Result<()> {
    let n = forward.stats().nodes;
    let mut w = VectorWriter::scratch(path, n, json!({"what": "out-degrees"}))?;
    let mut next = 0u64;
    for list in forward.lists() {
        let (node, dsts) = list?;
        while next < node {
            w.push(0.0)?;
            next += 1;
        }
        w.push(dsts.len() as f64)?;
        next += 1;
    }
    while next < n {
        w.push(0.0)?;
        next += 1;
    }
    w.finish(&json!({}))?;
    Ok(())
}

/// Reads a personalization file into a normalized dense preference vector.
///
/// Lines: `docid-or-URL<TAB>weight`; a first field of digits only is a docID,
/// anything else a URL (or, for graph jobs, a node name) looked up in the doc
/// table. `#` lines are comments. Weights must be finite and ≥ 0, with a
/// positive total; repeated entries add up.
fn write_preference(file: &Path, docs: &Path, n: u64, out: &Path, s: &Settings) -> Result<()> {
    let reader = crate::input::open_maybe_gzip(file, Arc::new(Default::default()))?;
    let mut by_doc: BTreeMap<u64, f64> = BTreeMap::new();
    let mut by_url: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    for (k, line) in reader.split(b'\n').enumerate() {
        let line = line.at(file)?;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() || text.starts_with('#') {
            continue;
        }
        let bad = |detail: String| Error::Input {
            path: file.to_path_buf(),
            location: format!("line {}", k + 1),
            detail,
        };
        let (key, weight) = text
            .rsplit_once('\t')
            .ok_or_else(|| bad("expected `docid-or-URL<TAB>weight`".into()))?;
        let weight: f64 = weight
            .trim()
            .parse()
            .map_err(|_| bad(format!("weight {weight:?} is not a number")))?;
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(bad(format!("weight {weight} must be finite and ≥ 0")));
        }
        if !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()) {
            let id: u64 = key
                .parse()
                .map_err(|_| bad(format!("docID {key} is too large")))?;
            if id >= n {
                return Err(bad(format!("docID {id} is not in the graph ({n} nodes)")));
            }
            *by_doc.entry(id).or_default() += weight;
        } else {
            by_url
                .entry(key.to_string())
                .or_insert((0.0, (k + 1) as u64))
                .0 += weight;
        }
    }
    if !by_url.is_empty() {
        let table = DocTable::open(docs)?;
        for doc in table.iter() {
            let (id, d) = doc?;
            if let Some((w, _)) = by_url.remove(&d.url) {
                *by_doc.entry(id).or_default() += w;
            }
        }
        if let Some((url, (_, line))) = by_url.into_iter().next() {
            return Err(Error::Input {
                path: file.to_path_buf(),
                location: format!("line {line}"),
                detail: format!("URL {url:?} is not in the job's doc table"),
            });
        }
    }
    let total: f64 = by_doc.values().sum();
    if total.is_nan() || total <= 0.0 {
        return Err(Error::Input {
            path: file.to_path_buf(),
            location: "whole file".into(),
            detail: "the weights add up to zero: nothing to personalize on".into(),
        });
    }
    s.reporter.note(&format!(
        "pagerank: personalized on {} docs from {}",
        by_doc.len(),
        file.display()
    ));
    let mut w = VectorWriter::scratch(out, n, json!({"what": "preference"}))?;
    let mut next = 0u64;
    for (&id, &weight) in &by_doc {
        while next < id {
            w.push(0.0)?;
            next += 1;
        }
        w.push(weight / total)?;
        next += 1;
    }
    while next < n {
        w.push(0.0)?;
        next += 1;
    }
    w.finish(&json!({"docs": by_doc.len()}))?;
    Ok(())
}

/// Writes iteration 0: the preference vector (uniform when none).
fn write_start(inputs: &Inputs, path: &Path) -> Result<()> {
    let mut w = VectorWriter::scratch(path, inputs.n, json!({"iteration": 0}))?;
    match &inputs.preference {
        None => {
            let u = 1.0 / inputs.n as f64;
            for _ in 0..inputs.n {
                w.push(u)?;
            }
        }
        Some(p) => {
            let v = RankVector::open(p)?;
            let mut r = v.reader();
            for i in 0..inputs.n {
                w.push(r.get(i)?)?;
            }
        }
    }
    let start = IterationMeta {
        iteration: 0,
        sum: 1.0,
        history: Vec::new(),
    };
    w.finish(&start.to_json())?;
    Ok(())
}
