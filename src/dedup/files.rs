//! The near-duplicate stages' files: kinds `sketches`, `pairs` and `clusters`
//! (spec: `formats/dedup.md`), their readers, and the sequential sketch
//! cursor the verification joins walk.
//!
//! All three share the page-file layout ([`crate::container::pagefile`]), keyed
//! by docID (the first docID of a pair, the cluster id for clusters) instead
//! of a page number.

use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::container::pagefile::{get_bytes, get_u64, PageFile, PageFileWriter};
use crate::container::FileKind;
use crate::docs::DocTable;
use crate::error::{Error, IoContext, Result};
use crate::sort::{Combine, ExternalSorter, SortConfig};
use crate::varint;

/// The sketch files: per docID, its host, its sketch and, in a file whose
/// header says so, its shingle set (see [`SketchRecord`]). Version 2: the
/// shingle length of the sets is a header parameter (version 1 said it in the
/// footer metadata).
pub const SKETCHES: FileKind = FileKind {
    tag: "sketches",
    version: 2,
    what: "per docID its host, near-duplicate sketch and optionally its shingle set",
    verify: |path| {
        PageFile::open(path, &SKETCHES)?
            .container()
            .verify(|_, _, _| Ok(()))?;
        for_each_sketch(path, |_| Ok(()))
    },
    dump: dump_sketches,
};

/// The pair files: keyed by the first docID, `varint b − a` and the
/// similarity as `f32` little-endian.
pub const PAIRS: FileKind = FileKind {
    tag: "pairs",
    version: 1,
    what: "near-duplicate pairs (a < b) with their similarity",
    verify: |path| {
        PageFile::open(path, &PAIRS)?
            .container()
            .verify(|_, _, _| Ok(()))?;
        for_each_pair(path, |_, _, _| Ok(()))
    },
    dump: |path, out| {
        writeln!(out, "# docid_a\tdocid_b\tsimilarity").at("stdout")?;
        for_each_pair(path, |a, b, sim| {
            writeln!(out, "{a}\t{b}\t{sim}").at("stdout")
        })
    },
};

/// The cluster files: keyed by cluster id (its smallest docID), `varint
/// docID`, `u8 keep`.
pub const CLUSTERS: FileKind = FileKind {
    tag: "clusters",
    version: 1,
    what: "near-duplicate clusters: members and the one kept per cluster",
    verify: |path| {
        PageFile::open(path, &CLUSTERS)?
            .container()
            .verify(|_, _, _| Ok(()))?;
        for_each_cluster_member(path, |_, _, _| Ok(()))
    },
    dump: |path, out| {
        writeln!(out, "# cluster_id\tdocid\tkeep").at("stdout")?;
        for_each_cluster_member(path, |c, d, keep| {
            writeln!(out, "{c}\t{d}\t{}", u8::from(keep)).at("stdout")
        })
    },
};

/// The header parameters of a sketch file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SketchParams {
    /// The algorithm.
    pub algorithm: String,
    /// The shingle length `k` of the shingle sets the records hold (with
    /// `--verify exact`); `None`: no sets.
    pub shingle_set: Option<u64>,
}

/// One record of a sketch file (`sketches-ALG.wm`), borrowed from its block.
///
/// Payload: `varint host`, `varint n ‖ n bytes` sketch, and — in a file whose
/// header parameters have `"shingle_set": k` (written with `--verify exact`)
/// — `varint 8m ‖ m × u64 LE`, the page's `k`-word shingle set: the sorted,
/// distinct Rabin fingerprints of [`crate::dedup::shingle::shingle_set`].
#[derive(Clone, Copy, Debug)]
pub struct SketchRecord<'a> {
    /// The docID.
    pub doc: u64,
    /// The doc's host number (from the doc table).
    pub host: u64,
    /// The sketch bytes (the algorithm's sketch, little-endian values).
    pub sketch: &'a [u8],
    /// The shingle set as `u64` little-endian values, strictly increasing;
    /// `None` in a file written without shingle sets.
    pub shingles: Option<&'a [u8]>,
}

/// `u64` little-endian values of a byte string whose length is a multiple of 8.
pub(crate) fn le_values(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(8).map(|c| {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        u64::from_le_bytes(a)
    })
}

impl SketchRecord<'_> {
    /// The shingle set as numbers.
    pub fn shingle_set(&self) -> Option<Vec<u64>> {
        self.shingles.map(|s| le_values(s).collect())
    }
}

/// Reads one sketch-file payload; `with_set`: the file holds shingle sets,
/// checked to be whole `u64`s in strictly increasing order when `check`.
pub(crate) fn parse_sketch<'a>(
    doc: u64,
    input: &mut &'a [u8],
    with_set: bool,
    check: bool,
) -> Result<SketchRecord<'a>> {
    let host = get_u64(input, "host")?;
    let (sketch, set) = parse_tail(input, with_set, check)?;
    Ok(SketchRecord {
        doc,
        host,
        sketch,
        shingles: set,
    })
}

/// Reads a sketch-file payload's tail after the host: `(sketch, shingle
/// set)`, as [`parse_sketch`].
pub(crate) fn parse_tail<'a>(
    input: &mut &'a [u8],
    with_set: bool,
    check: bool,
) -> Result<(&'a [u8], Option<&'a [u8]>)> {
    let sketch = get_bytes(input, "sketch")?;
    let set = if with_set {
        let set = get_bytes(input, "shingle set")?;
        if check && set.len() % 8 != 0 {
            return Err(Error::record(format!(
                "shingle set of {} bytes: expected a multiple of 8",
                set.len()
            )));
        }
        if check
            && !le_values(set)
                .zip(le_values(set).skip(1))
                .all(|(a, b)| a < b)
        {
            return Err(Error::record("shingle set not strictly increasing"));
        }
        Some(set)
    } else {
        None
    };
    Ok((sketch, set))
}

/// Opens a sketch file with its header parameters.
pub fn open_sketches(path: &Path) -> Result<(PageFile, SketchParams)> {
    let file = PageFile::open(path, &SKETCHES)?;
    let params = file.container().params_as::<SketchParams>()?;
    Ok((file, params))
}

/// Reads a sketch file: calls `f` for every record, in docID order.
pub fn for_each_sketch(
    path: &Path,
    mut f: impl FnMut(SketchRecord<'_>) -> Result<()>,
) -> Result<()> {
    let (file, params) = open_sketches(path)?;
    let with_set = params.shingle_set.is_some();
    file.for_each(|doc, input| f(parse_sketch(doc, input, with_set, true)?))
}

fn dump_sketches(path: &Path, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "# docid\thost\tsketch_hex\tshingles").at("stdout")?;
    let mut hex = String::new();
    for_each_sketch(path, |r| {
        hex.clear();
        for b in r.sketch {
            let _ = std::fmt::Write::write_fmt(&mut hex, format_args!("{b:02x}"));
        }
        let set = r
            .shingles
            .map_or("-".to_string(), |s| (s.len() / 8).to_string());
        writeln!(out, "{}\t{}\t{hex}\t{set}", r.doc, r.host).at("stdout")
    })
}

/// Block size and zstd level of the pair and cluster files.
const BLOCK_BYTES: usize = 256 << 10;
const LEVEL: i32 = 3;

/// Writes a pair file (`pairs-ALG.wm`): pairs pushed in `(a, b)` order.
pub struct PairWriter {
    w: PageFileWriter,
    payload: Vec<u8>,
    pairs: u64,
}

impl PairWriter {
    /// Starts the pair file at `path`.
    pub fn create(path: &Path) -> Result<PairWriter> {
        Ok(PairWriter {
            w: PageFileWriter::create(path, &PAIRS, BLOCK_BYTES, LEVEL)?,
            payload: Vec::new(),
            pairs: 0,
        })
    }

    /// Appends pair `(a, b)`, `a < b`, with its similarity.
    pub fn push(&mut self, a: u64, b: u64, similarity: f32) -> Result<()> {
        let gap = b
            .checked_sub(a)
            .filter(|&d| d > 0)
            .ok_or_else(|| Error::internal(format!("pair ({a}, {b}) is not a < b")))?;
        self.payload.clear();
        varint::put(&mut self.payload, gap);
        self.payload.extend_from_slice(&similarity.to_le_bytes());
        self.pairs += 1;
        self.w.push(a, &self.payload)
    }

    /// Publishes the file, its metadata naming `algorithm`; returns the pairs
    /// written.
    pub fn finish(self, algorithm: &str) -> Result<u64> {
        self.w
            .finish(&serde_json::json!({"algorithm": algorithm, "pairs": self.pairs}))?;
        Ok(self.pairs)
    }
}

/// Writes a cluster file (`clusters-ALG.wm`): members pushed in `(cluster,
/// docID)` order, each cluster's id its smallest member.
pub struct ClusterWriter {
    w: PageFileWriter,
    payload: Vec<u8>,
    clusters: u64,
    members: u64,
    last: Option<u64>,
}

impl ClusterWriter {
    /// Starts the cluster file at `path`.
    pub fn create(path: &Path) -> Result<ClusterWriter> {
        Ok(ClusterWriter {
            w: PageFileWriter::create(path, &CLUSTERS, BLOCK_BYTES, LEVEL)?,
            payload: Vec::new(),
            clusters: 0,
            members: 0,
            last: None,
        })
    }

    /// Appends `doc`, a member of cluster `cluster`, kept or not.
    pub fn push(&mut self, cluster: u64, doc: u64, keep: bool) -> Result<()> {
        if doc < cluster {
            return Err(Error::internal(format!(
                "cluster {cluster}: member {doc} below the cluster id"
            )));
        }
        if self.last != Some(cluster) {
            self.clusters += 1;
            self.last = Some(cluster);
        }
        self.payload.clear();
        varint::put(&mut self.payload, doc);
        self.payload.push(u8::from(keep));
        self.members += 1;
        self.w.push(cluster, &self.payload)
    }

    /// Publishes the file, its metadata naming `algorithm`; returns (clusters,
    /// members) written.
    pub fn finish(self, algorithm: &str) -> Result<(u64, u64)> {
        self.w.finish(&serde_json::json!({
            "algorithm": algorithm, "clusters": self.clusters, "docs": self.members
        }))?;
        Ok((self.clusters, self.members))
    }
}

/// Reads a pair file: calls `f(a, b, similarity)` in order.
pub fn for_each_pair(path: &Path, mut f: impl FnMut(u64, u64, f32) -> Result<()>) -> Result<()> {
    let file = PageFile::open(path, &PAIRS)?;
    file.for_each(|a, input| {
        let d = get_u64(input, "pair")?;
        let (sim, rest) = input
            .split_first_chunk::<4>()
            .ok_or_else(|| Error::record("pair similarity cut"))?;
        *input = rest;
        let sim = f32::from_le_bytes(*sim);
        let b = a
            .checked_add(d)
            .filter(|&b| b > a)
            .ok_or_else(|| Error::record(format!("pair ({a}, {a} + {d}) is not a < b")))?;
        if !(0.0..=1.0).contains(&sim) {
            return Err(Error::record(format!(
                "pair ({a}, {b}): similarity {sim} outside [0, 1]"
            )));
        }
        f(a, b, sim)
    })
}

/// Reads a pair file with both docs' URLs: calls `f(a, b, similarity,
/// url_a, url_b)` in the file's (a, b) order. The URLs are joined from the
/// doc table `docs` by sort–merge, never by a lookup per pair: the pairs
/// (by a) meet the table in one walk, are sorted by (b, a) to meet it again,
/// then sorted back by (a, b); both sorts run under `cfg` (in
/// subdirectories of its directory, removed at the end).
pub fn for_each_pair_with_urls(
    pairs: &Path,
    docs: &Path,
    cfg: SortConfig,
    mut f: impl FnMut(u64, u64, f32, &str, &str) -> Result<()>,
) -> Result<()> {
    let table = DocTable::open(docs)?;
    let sort = |name: &str| {
        let mut c = cfg.clone();
        c.dir = cfg.dir.join(name);
        c.label = format!("{}: {name}", cfg.label);
        ExternalSorter::<(u64, Vec<u8>)>::new(c, Combine::None)
    };
    // (b, [a, similarity, url_a]).
    let mut by_b = sort("by-b")?;
    let mut walk = table.walk();
    for_each_pair(pairs, |a, b, sim| {
        let mut rec = a.to_be_bytes().to_vec();
        rec.extend(sim.to_le_bytes());
        rec.extend(walk.get(a)?.url.as_bytes());
        by_b.push((b, rec))
    })?;
    // (a, [b, similarity, len(url_a), url_a, url_b]).
    let mut by_a = sort("by-a")?;
    let mut walk = table.walk();
    let mut sorted = by_b.finish()?;
    while let Some((b, rec)) = sorted.next_record()? {
        let (a, rest) = rec
            .split_first_chunk::<8>()
            .filter(|(_, rest)| rest.len() >= 4)
            .ok_or_else(|| Error::internal("pair record cut"))?;
        let mut out = b.to_be_bytes().to_vec();
        out.extend(&rest[..4]);
        varint::put_bytes(&mut out, &rest[4..]);
        out.extend(walk.get(b)?.url.as_bytes());
        by_a.push((u64::from_be_bytes(*a), out))?;
    }
    drop(sorted);
    let mut sorted = by_a.finish()?;
    while let Some((a, rec)) = sorted.next_record()? {
        let bad = || Error::internal("pair record cut");
        let (b, rest) = rec.split_first_chunk::<8>().ok_or_else(bad)?;
        let (sim, mut rest) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
        let url_a = varint::get_bytes(&mut rest).ok_or_else(bad)?;
        let url_b = rest;
        fn text(b: &[u8]) -> Result<&str> {
            std::str::from_utf8(b).map_err(|_| Error::internal("URL not UTF-8"))
        }
        f(
            a,
            u64::from_be_bytes(*b),
            f32::from_le_bytes(*sim),
            text(url_a)?,
            text(url_b)?,
        )?;
    }
    drop(sorted);
    crate::sort::remove_sort_dir(&cfg.dir)
}

/// Reads a cluster file: calls `f(cluster, doc, keep)` in order.
pub fn for_each_cluster_member(
    path: &Path,
    mut f: impl FnMut(u64, u64, bool) -> Result<()>,
) -> Result<()> {
    let file = PageFile::open(path, &CLUSTERS)?;
    file.for_each(|c, input| {
        let (d, keep) = decode_cluster_member(c, input)?;
        f(c, d, keep)
    })
}

/// Decodes the payload of a cluster record of cluster `c`: (member docID,
/// keep flag).
pub fn decode_cluster_member(c: u64, input: &mut &[u8]) -> Result<(u64, bool)> {
    let d = get_u64(input, "member")?;
    let (&keep, rest) = input
        .split_first()
        .ok_or_else(|| Error::record("keep flag cut"))?;
    *input = rest;
    if d < c || keep > 1 {
        return Err(Error::record(format!(
            "cluster {c}: member {d} with keep flag {keep} (members are ≥ the cluster id, flags 0 or 1)"
        )));
    }
    Ok((d, keep == 1))
}

/// A sequential reader of a sketch file for merge joins: hands out the
/// payload of docIDs asked in increasing order.
pub(crate) struct SketchCursor<'a> {
    file: &'a PageFile,
    pub(crate) with_set: bool,
    block: usize,
    buf: (Vec<u8>, Vec<u8>),
    pending: VecDeque<(u64, Vec<u8>)>,
}

impl<'a> SketchCursor<'a> {
    pub(crate) fn new(file: &'a PageFile, params: &SketchParams) -> SketchCursor<'a> {
        SketchCursor {
            file,
            with_set: params.shingle_set.is_some(),
            block: 0,
            buf: (Vec::new(), Vec::new()),
            pending: VecDeque::new(),
        }
    }

    /// The payload of `doc` (docs asked in increasing order), if present.
    pub(crate) fn seek(&mut self, doc: u64) -> Result<Option<&[u8]>> {
        loop {
            match self.pending.front() {
                Some((d, _)) if *d < doc => {
                    self.pending.pop_front();
                }
                Some((d, _)) if *d == doc => {
                    return Ok(self.pending.front().map(|(_, p)| p.as_slice()));
                }
                Some(_) => return Ok(None),
                None => {
                    if self.block == self.file.container().blocks().len() {
                        return Ok(None);
                    }
                    let (pending, with_set) = (&mut self.pending, self.with_set);
                    self.file
                        .visit_block(self.block, &mut self.buf, |d, input| {
                            // Copy exactly this record's payload (records are
                            // self-delimiting: host, sketch, [shingle set]).
                            let start = *input;
                            parse_sketch(d, input, with_set, true)?;
                            pending.push_back((d, start[..start.len() - input.len()].to_vec()));
                            Ok(())
                        })?;
                    self.block += 1;
                }
            }
        }
    }
}
