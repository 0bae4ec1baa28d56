//! WebGraph's BVGraph format in and out (Boldi and Vigna, *The WebGraph
//! Framework I: Compression Techniques*, WWW 2004), through the `webgraph`
//! crate (webgraph-rs), so that the LAW datasets and WebGraph's tools
//! (webgraph-cli, the Java WebGraph) read our graphs and we read theirs.
//!
//! A graph with basename `B` is three files:
//!
//! - `B.graph`: the successor lists of nodes `0..n` in order, as a bit
//!   stream (γ-coded out-degrees, references to one of the 7 previous lists
//!   with copy blocks, intervals of at least 4 consecutive successors, ζ₃-coded
//!   residual gaps);
//! - `B.properties`: a Java properties file: `nodes`, `arcs`, the codes and
//!   parameters (`windowsize`, `maxrefcount`, `minintervallength`,
//!   `compressionflags`, `endianness`), and statistics (`bitsperlink`, …);
//! - `B.offsets`: the γ-coded bit lengths of the lists (random access is
//!   built from it, e.g. by `webgraph build ef`).
//!
//! The byte layout is WebGraph's, specified in `webgraph`'s
//! `graphs::bvgraph` module doc; `formats/bvgraph.md` says what webmill
//! writes into it. We write big-endian streams with WebGraph's default codes
//! (version 0 of the format, which the Java implementation reads), and read
//! either endianness.
//!
//! The reader maps the `.graph` file (the crate's memory map, read in node
//! order, so the kernel may drop the pages behind; its own reader needs the
//! stream padded to 32-bit words, which LAW's files are not) and holds the 8
//! lists of the reference window. The crate's
//! decoder panics on a stream that ends early or does not decode; such a
//! panic is caught and reported as a corrupt file, and every decoded list is
//! checked (successors inside `0..n`, strictly increasing, arcs adding up to
//! the properties' count). A damaged stream can also decode to lists that
//! pass these checks; BVGraph has no checksum to catch that.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Once;

use dsi_bitstream::prelude::{Endianness, BE, LE};
use lender::Lender;
use webgraph::graphs::bvgraph::{
    get_endianness, BvComp, BvGraphSeq, CompFlags, DynCodesEncoder, OffsetsWriter,
};
use webgraph::traits::SequentialLabeling;

use super::EdgeFile;
use crate::error::{Error, IoContext, Result};
use crate::progress::Task;

/// The files of a BVGraph with one basename.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BvGraphFiles {
    /// The basename (`dir/cnr-2000`).
    pub basename: PathBuf,
    /// `BASENAME.graph`.
    pub graph: PathBuf,
    /// `BASENAME.properties`.
    pub properties: PathBuf,
    /// `BASENAME.offsets`.
    pub offsets: PathBuf,
}

impl BvGraphFiles {
    /// The files of the basename `arg`; `arg` may also name one of them
    /// (`cnr-2000.graph`). A basename whose file name has another extension
    /// is refused: WebGraph's tools would replace it (`a.b` → `a.graph`).
    pub fn new(arg: &Path) -> Result<BvGraphFiles> {
        let basename = match arg.extension().and_then(|e| e.to_str()) {
            Some("graph" | "properties" | "offsets") => arg.with_extension(""),
            _ => arg.to_path_buf(),
        };
        let name = basename
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.is_empty() || basename.extension().is_some() {
            return Err(Error::usage_at(
                arg,
                "not a BVGraph basename: give the path without extension (BASENAME for \
                 BASENAME.graph, BASENAME.properties, BASENAME.offsets), with no '.' in \
                 its file name (WebGraph's tools replace what follows the last '.')",
            ));
        }
        Ok(BvGraphFiles {
            graph: basename.with_extension("graph"),
            properties: basename.with_extension("properties"),
            offsets: basename.with_extension("offsets"),
            basename,
        })
    }

    /// The files a reader needs (`.graph`, `.properties`), each checked to
    /// be a readable file: an error names the first that is not.
    pub fn check_readable(&self) -> Result<()> {
        for path in [&self.graph, &self.properties] {
            let meta = std::fs::metadata(path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Error::usage_at(
                        path,
                        format!(
                            "missing: a BVGraph with basename {} needs {}.graph and {}.properties",
                            self.basename.display(),
                            self.basename.display(),
                            self.basename.display()
                        ),
                    )
                } else {
                    Error::io(path, e)
                }
            })?;
            if !meta.is_file() {
                return Err(Error::usage_at(path, "not a file"));
            }
        }
        Ok(())
    }
}

/// What a BVGraph holds, from its properties and its lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BvGraphInfo {
    /// Nodes (`0..nodes`).
    pub nodes: u64,
    /// Arcs.
    pub arcs: u64,
    /// Bytes of the `.graph` file.
    pub graph_bytes: u64,
}

thread_local! {
    /// Set while this thread runs the crate's decoder, whose panics on a bad
    /// stream are caught and reported as errors, not printed.
    static DECODING: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent for panics caught by
/// [`guarded`], and defers to the previous hook for every other panic.
fn quiet_decoder_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !DECODING.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs `f` (calls into the crate's decoder), turning a panic into an error
/// about `path`.
fn guarded<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    quiet_decoder_panics();
    DECODING.with(|d| d.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    DECODING.with(|d| d.set(false));
    result.unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the decoder failed".into());
        Err(Error::corrupt(
            path,
            "bit stream",
            0,
            format!("not a valid BVGraph stream ({why}); the file is truncated or damaged"),
        ))
    })
}

/// An error of the crate (an `anyhow` chain) about the file `path`.
fn crate_error(path: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::corrupt(path, what, 0, format!("{e:#}"))
}

/// Reads the BVGraph `files`, calling `f(node, successors)` for every node
/// in order (also for nodes without successors). `task` counts nodes.
pub fn read_lists(
    files: &BvGraphFiles,
    task: &dyn Task,
    mut f: impl FnMut(u64, &[u64]) -> Result<()>,
) -> Result<BvGraphInfo> {
    files.check_readable()?;
    let endianness = get_endianness(&files.basename)
        .map_err(|e| crate_error(&files.properties, "properties", e))?;
    match endianness.as_str() {
        "big" => read_lists_as::<BE>(files, task, &mut f),
        "little" => read_lists_as::<LE>(files, task, &mut f),
        other => Err(Error::corrupt(
            &files.properties,
            "property endianness",
            0,
            format!("unknown endianness {other:?}, expected \"big\" or \"little\""),
        )),
    }
}

fn read_lists_as<E: Endianness + 'static>(
    files: &BvGraphFiles,
    task: &dyn Task,
    f: &mut dyn FnMut(u64, &[u64]) -> Result<()>,
) -> Result<BvGraphInfo>
where
    webgraph::utils::MmapHelper<u32>: dsi_bitstream::dispatch::factory::CodesReaderFactoryHelper<E>,
{
    let graph_bytes = std::fs::metadata(&files.graph).at(&files.graph)?.len();
    let (_, declared_arcs, _) = webgraph::graphs::bvgraph::parse_properties::<E>(&files.properties)
        .map_err(|e| crate_error(&files.properties, "properties", e))?;
    let graph = guarded(&files.graph, || {
        BvGraphSeq::with_basename(&files.basename)
            .endianness::<E>()
            .load()
            .map_err(|e| crate_error(&files.graph, "header", e))
    })?;
    let nodes = graph.num_nodes() as u64;
    let mut arcs = 0u64;
    let mut list: Vec<u64> = Vec::new();
    let mut iter = graph.iter();
    for node in 0..nodes {
        let more = guarded(&files.graph, || {
            let Some((_, succ)) = iter.next() else {
                return Ok(false);
            };
            list.clear();
            list.extend(succ.into_iter().map(|s| s as u64));
            Ok(true)
        })?;
        if !more {
            return Err(Error::corrupt(
                &files.graph,
                format!("node {node}"),
                0,
                format!("the stream ends before node {node} of {nodes}"),
            ));
        }
        if let Some(bad) = list
            .windows(2)
            .position(|w| w[0] >= w[1])
            .map(|i| list[i + 1])
            .or_else(|| list.last().copied().filter(|&s| s >= nodes))
        {
            return Err(Error::corrupt(
                &files.graph,
                format!("node {node}"),
                0,
                format!(
                    "successor {bad} is out of order or outside the graph's {nodes} nodes \
                     (the stream is damaged)"
                ),
            ));
        }
        arcs += list.len() as u64;
        f(node, &list)?;
        if node % 65536 == 0 {
            task.set_position(node);
        }
    }
    if arcs != declared_arcs {
        return Err(Error::corrupt(
            &files.graph,
            "bit stream",
            0,
            format!(
                "{arcs} arcs decoded, {} declares {declared_arcs}",
                files.properties.display()
            ),
        ));
    }
    task.set_position(nodes);
    Ok(BvGraphInfo {
        nodes,
        arcs,
        graph_bytes,
    })
}

/// What [`write`] wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BvGraphWritten {
    /// Nodes.
    pub nodes: u64,
    /// Arcs.
    pub arcs: u64,
    /// Bytes of the `.graph` file.
    pub graph_bytes: u64,
    /// Bits of the `.graph` stream per arc.
    pub bits_per_arc: f64,
}

/// Writes the forward edge file `edges` as the BVGraph `files` (big-endian,
/// WebGraph's default codes and parameters): node `v` is docID `v`, each
/// list as stored (increasing, no duplicates). The three files are written
/// under temporary names and renamed into place once complete.
pub fn write(edges: &EdgeFile, files: &BvGraphFiles, task: &dyn Task) -> Result<BvGraphWritten> {
    if edges.direction() != super::Direction::Forward {
        return Err(Error::usage_at(
            edges.path(),
            "a BVGraph is written from a forward edge file (edges.wm)",
        ));
    }
    let nodes = edges.stats().nodes;
    if nodes > usize::MAX as u64 {
        return Err(Error::usage(
            "the graph has more nodes than this machine addresses",
        ));
    }
    let partial = |p: &Path| crate::publish::partial_path(p);
    let tmp_base = partial(&files.basename);
    let tmp = BvGraphFiles {
        graph: tmp_base.with_extension("graph"),
        properties: tmp_base.with_extension("properties"),
        offsets: tmp_base.with_extension("offsets"),
        basename: tmp_base.clone(),
    };
    let result = write_into(edges, &tmp, nodes, task);
    if result.is_err() {
        for p in [&tmp.graph, &tmp.properties, &tmp.offsets] {
            let _ = std::fs::remove_file(p);
        }
    }
    let (stats, flags) = result?;
    // Publish: the stream and offsets first, the properties (which name the
    // graph's size) last.
    for (from, to) in [
        (&tmp.graph, &files.graph),
        (&tmp.offsets, &files.offsets),
        (&tmp.properties, &files.properties),
    ] {
        std::fs::File::open(from)
            .and_then(|f| f.sync_all())
            .at(from)?;
        std::fs::rename(from, to).at(to)?;
    }
    crate::publish::sync_dir(&files.graph)?;
    let _ = flags;
    let graph_bytes = std::fs::metadata(&files.graph).at(&files.graph)?.len();
    Ok(BvGraphWritten {
        nodes,
        arcs: stats.num_arcs,
        graph_bytes,
        bits_per_arc: if stats.num_arcs > 0 {
            stats.written_bits as f64 / stats.num_arcs as f64
        } else {
            0.0
        },
    })
}

/// Compresses `edges` into the files `tmp`.
fn write_into(
    edges: &EdgeFile,
    tmp: &BvGraphFiles,
    nodes: u64,
    task: &dyn Task,
) -> Result<(webgraph::graphs::bvgraph::CompStats, CompFlags)> {
    let flags = CompFlags::default();
    let bits =
        dsi_bitstream::impls::buf_bit_writer::from_path::<BE, usize>(&tmp.graph).at(&tmp.graph)?;
    let encoder =
        DynCodesEncoder::new(bits, &flags).map_err(|e| crate_error(&tmp.graph, "codes", e))?;
    let offsets = OffsetsWriter::from_path(&tmp.offsets, true)
        .map_err(|e| crate_error(&tmp.offsets, "creating", e))?;
    let mut comp = BvComp::new(
        encoder,
        offsets,
        flags.compression_window,
        flags.max_ref_count,
        flags.min_interval_length,
        0,
        (),
    );
    let push_error = |e| crate_error(&tmp.graph, "writing", e);
    let mut next = 0u64;
    let mut current: Option<u64> = None;
    let mut list: Vec<usize> = Vec::new();
    let flush = |comp: &mut BvComp<_, _, ()>, node: u64, list: &[usize], next: &mut u64| {
        // Nodes without a list before `node` get empty ones.
        while *next < node {
            comp.push(std::iter::empty()).map_err(push_error)?;
            *next += 1;
        }
        comp.push(list.iter().map(|&s| (s, ())))
            .map_err(push_error)?;
        *next += 1;
        if (*next).is_multiple_of(65536) {
            task.set_position(*next);
        }
        Ok::<(), Error>(())
    };
    // A list split across blocks arrives in pieces with the same node.
    edges.for_each_list(|node, dsts| {
        if current != Some(node) {
            if let Some(prev) = current {
                flush(&mut comp, prev, &list, &mut next)?;
            }
            current = Some(node);
            list.clear();
        }
        list.extend(dsts.iter().map(|&d| d as usize));
        Ok(())
    })?;
    if let Some(prev) = current {
        flush(&mut comp, prev, &list, &mut next)?;
    }
    while next < nodes {
        comp.push(std::iter::empty()).map_err(push_error)?;
        next += 1;
    }
    let stats = comp.flush().map_err(push_error)?;
    let properties = flags
        .to_properties::<BE>(&stats)
        .map_err(|e| crate_error(&tmp.properties, "writing", e))?;
    std::fs::write(&tmp.properties, properties).at(&tmp.properties)?;
    task.set_position(nodes);
    Ok((stats, flags))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Direction, EdgeWriter};
    use crate::progress::Reporter;
    use crate::progress::Silent;

    fn edge_file(dir: &Path, n: u64, arcs: &[(u64, u64)]) -> EdgeFile {
        let p = dir.join("edges.wm");
        let mut w = EdgeWriter::create(&p, Direction::Forward, n).unwrap();
        for &(s, d) in arcs {
            w.push(s, d).unwrap();
        }
        w.finish().unwrap();
        EdgeFile::open(&p).unwrap()
    }

    /// Every non-empty list of a graph.
    type Lists = Vec<(u64, Vec<u64>)>;

    fn lists(files: &BvGraphFiles) -> Result<(BvGraphInfo, Lists)> {
        let mut out = Vec::new();
        let task = Silent.task("read", None, crate::progress::Unit::Records);
        let info = read_lists(files, task.as_ref(), |v, s| {
            if !s.is_empty() {
                out.push((v, s.to_vec()));
            }
            Ok(())
        })?;
        Ok((info, out))
    }

    #[test]
    fn a_written_graph_reads_back_with_its_empty_nodes() {
        let dir = tempfile::tempdir().unwrap();
        // Node 0 and the last two have no successors; 3 has a self-loop.
        let arcs = [
            (1, 2),
            (1, 3),
            (1, 4),
            (1, 5),
            (1, 6),
            (2, 1),
            (3, 3),
            (3, 9),
            (6, 0),
        ];
        let e = edge_file(dir.path(), 12, &arcs);
        let files = BvGraphFiles::new(&dir.path().join("g")).unwrap();
        let task = Silent.task("write", None, crate::progress::Unit::Records);
        let w = write(&e, &files, task.as_ref()).unwrap();
        assert_eq!((w.nodes, w.arcs), (12, 9));
        let (info, got) = lists(&files).unwrap();
        assert_eq!((info.nodes, info.arcs), (12, 9));
        let want: Vec<(u64, Vec<u64>)> = vec![
            (1, vec![2, 3, 4, 5, 6]),
            (2, vec![1]),
            (3, vec![3, 9]),
            (6, vec![0]),
        ];
        assert_eq!(got, want);
        // No temporary file is left.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn basenames_and_missing_files_are_named() {
        let b = BvGraphFiles::new(Path::new("/d/cnr-2000.graph")).unwrap();
        assert_eq!(b.basename, Path::new("/d/cnr-2000"));
        assert_eq!(b.properties, Path::new("/d/cnr-2000.properties"));
        assert!(BvGraphFiles::new(Path::new("/d/a.b")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let files = BvGraphFiles::new(&dir.path().join("none")).unwrap();
        let err = lists(&files).unwrap_err().to_string();
        assert!(
            err.contains("none.graph") && err.contains("missing"),
            "{err}"
        );
    }

    #[test]
    fn a_truncated_or_damaged_stream_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let arcs: Vec<(u64, u64)> = (0..2000u64)
            .flat_map(|v| [(v, (v * 7 + 1) % 2000), (v, (v * 13 + 5) % 2000)])
            .filter(|(s, d)| s != d)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let e = edge_file(dir.path(), 2000, &arcs);
        let files = BvGraphFiles::new(&dir.path().join("g")).unwrap();
        let task = Silent.task("write", None, crate::progress::Unit::Records);
        write(&e, &files, task.as_ref()).unwrap();
        let bytes = std::fs::read(&files.graph).unwrap();
        std::fs::write(&files.graph, &bytes[..bytes.len() / 2]).unwrap();
        let err = lists(&files).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("g.graph"), "{err}");
        // Garbage in the middle: an error, never a panic or a wrong count.
        let mut bad = bytes.clone();
        for b in &mut bad[bytes.len() / 3..bytes.len() / 3 + 64] {
            *b = 0xff;
        }
        std::fs::write(&files.graph, &bad).unwrap();
        let result = lists(&files);
        assert!(result.is_err(), "{:?}", result.map(|(i, _)| i));
        // A properties file that is not one.
        std::fs::write(&files.graph, &bytes).unwrap();
        std::fs::write(&files.properties, "nodes=abc\n").unwrap();
        let err = lists(&files).unwrap_err().to_string();
        assert!(err.contains("g.properties"), "{err}");
    }
}
