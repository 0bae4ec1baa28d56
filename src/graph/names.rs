//! Edge lists of named nodes (`import-graph --format tsv`) and the order in
//! which named nodes get their docIDs.
//!
//! # Input
//!
//! One arc per line: `src<TAB>dst`, where a name is any non-empty UTF-8 string
//! without a TAB or a line end (URLs typically; spaces are part of the name,
//! nothing is trimmed or normalized: two names that differ in a byte are two
//! nodes). Only the TAB separates; a further TAB and what follows it (a weight,
//! a label) are ignored. Lines end with `\n` or `\r\n`. An empty line, or one
//! starting with `#`, is a comment (so a source name cannot start with `#`).
//! Files are plain or gzip, detected by content. A line with no TAB, with an
//! empty name or with bytes that are not UTF-8 is skipped and reported as
//! `FILE: line N: reason` (a failure under `--strict`), like every text format
//! of `import-graph` (see [`crate::input::lines`]).
//!
//! # Order
//!
//! DocIDs are handed out in the order of a *key* computed from each name
//! ([`NameOrder::key`]), by an external sort, never by a table of all names:
//!
//! - [`NameOrder::Bytes`] (the default): the key is the name itself, so docIDs
//!   follow the names' byte order (which for UTF-8 is also code-point order).
//!   Names sharing a prefix form one docID interval, so all the URLs under
//!   `http://host/` are contiguous: the order LAW's web graphs are numbered in.
//! - [`NameOrder::Host`]: the key is webmill's host-grouping URL key
//!   ([`crate::ingest::url::sort_key`], the order of `webmill ingest`): a
//!   host's pages are contiguous whatever their scheme, hosts are ordered by
//!   reversed labels (SURT style, so `a.example.com` sits next to
//!   `b.example.com`), then pages by path. Names are keyed as given, not
//!   normalized. Names that do not parse as URLs with a host (plain words,
//!   `mailto:` …) come before the URLs (before any whose top-level label
//!   starts with a letter or digit: their keys start with `)`); among
//!   themselves those that do not parse at all are in byte order.
//!
//! Both keys contain the name, so distinct names have distinct keys and a
//! key gives back its name ([`NameOrder::name_of_key`]).
//!
//! # Sort records
//!
//! Keys travel through the external sorts as [`NameKey`] (a node) and
//! [`NamedArc`] (an arc: both keys in one allocation). Each owns exactly one
//! exact-size heap allocation, and reports to the sort's memory budget what
//! the allocator really spends on it ([`allocation_bytes`]), not just the
//! key's length: with names of a few dozen bytes the difference is large.

use std::cmp::Ordering;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::error::Result;
use crate::ingest::url;
use crate::input::{for_each_line, shown, LineVerdict, ReadReport};
use crate::sort::record::{encode_bounded_bytes, encoded_bytes_len};
use crate::sort::Record;
use crate::varint;

/// The order in which named nodes get docIDs (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NameOrder {
    /// Byte order of the names.
    #[default]
    Bytes,
    /// Host-grouped URL order ([`crate::ingest::url::sort_key`]).
    Host,
}

impl NameOrder {
    /// The order's name on the command line and in the job manifest.
    pub fn name(self) -> &'static str {
        match self {
            NameOrder::Bytes => "bytes",
            NameOrder::Host => "host",
        }
    }

    /// Appends the sort key of `name` to `out`.
    pub fn key(self, name: &str, out: &mut Vec<u8>) {
        match self {
            NameOrder::Bytes => out.extend_from_slice(name.as_bytes()),
            NameOrder::Host => url::sort_key(name, out),
        }
    }

    /// The name a key was made from.
    pub fn name_of_key(self, key: &[u8]) -> &[u8] {
        match self {
            NameOrder::Bytes => key,
            NameOrder::Host => url::url_of_key(key),
        }
    }
}

/// What a heap allocation of `len` bytes costs: the allocator's header and
/// rounding included (16-byte granules, 8 bytes of header, at least 32
/// bytes, as glibc's malloc does; other allocators are in the same range).
pub fn allocation_bytes(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        (len + 8).next_multiple_of(16).max(32)
    }
}

/// The first 8 bytes, big-endian, zero-padded: consistent with byte order.
#[inline]
fn bytes_prefix(b: &[u8]) -> u64 {
    let mut p = [0u8; 8];
    let n = b.len().min(8);
    p[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(p)
}

/// A node's sort key as a sort record, in byte order. Encoded like a
/// `Vec<u8>` record (varint length, bytes).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NameKey(pub Box<[u8]>);

impl Record for NameKey {
    const HAS_HEAP: bool = true;
    const PREFIX_SORT: bool = true;
    #[inline]
    fn key_prefix(&self) -> u64 {
        bytes_prefix(&self.0)
    }
    fn type_name() -> String {
        "name".to_string()
    }
    fn heap_bytes(&self) -> usize {
        allocation_bytes(self.0.len())
    }
    fn encode(&self, out: &mut Vec<u8>) {
        varint::put_bytes(out, &self.0);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        varint::get_bytes(input).map(|b| NameKey(b.into()))
    }
    fn encoded_len(&self) -> usize {
        encoded_bytes_len(&self.0)
    }
    fn encode_bounded(&self, out: &mut Vec<u8>, budget: &mut usize) -> bool {
        encode_bounded_bytes(&self.0, out, budget)
    }
    fn least() -> Self {
        NameKey(Box::default())
    }
}

/// An arc between named nodes as a sort record: the source key and the
/// destination key in one allocation, ordered by (source, destination).
/// Encoded like a `(Vec<u8>, Vec<u8>)` record.
#[derive(Clone, Debug)]
pub struct NamedArc {
    keys: Box<[u8]>,
    split: u32,
}

impl NamedArc {
    /// The arc `src → dst` (keys). `None` if the source key is longer than 4 GiB.
    pub fn new(src: &[u8], dst: &[u8]) -> Option<NamedArc> {
        let split = u32::try_from(src.len()).ok()?;
        let mut keys = Vec::with_capacity(src.len() + dst.len());
        keys.extend_from_slice(src);
        keys.extend_from_slice(dst);
        Some(NamedArc {
            keys: keys.into_boxed_slice(),
            split,
        })
    }

    /// The source key.
    #[inline]
    pub fn src(&self) -> &[u8] {
        &self.keys[..self.split as usize]
    }

    /// The destination key.
    #[inline]
    pub fn dst(&self) -> &[u8] {
        &self.keys[self.split as usize..]
    }
}

impl PartialEq for NamedArc {
    fn eq(&self, other: &Self) -> bool {
        self.split == other.split && self.keys == other.keys
    }
}

impl Eq for NamedArc {}

impl Ord for NamedArc {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        self.src()
            .cmp(other.src())
            .then_with(|| self.dst().cmp(other.dst()))
    }
}

impl PartialOrd for NamedArc {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Record for NamedArc {
    const HAS_HEAP: bool = true;
    const PREFIX_SORT: bool = true;
    #[inline]
    fn key_prefix(&self) -> u64 {
        bytes_prefix(self.src())
    }
    fn type_name() -> String {
        "named-arc".to_string()
    }
    fn heap_bytes(&self) -> usize {
        allocation_bytes(self.keys.len())
    }
    fn encode(&self, out: &mut Vec<u8>) {
        varint::put_bytes(out, self.src());
        varint::put_bytes(out, self.dst());
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let src = varint::get_bytes(input)?;
        let dst = varint::get_bytes(input)?;
        NamedArc::new(src, dst)
    }
    fn encoded_len(&self) -> usize {
        encoded_bytes_len(self.src()) + encoded_bytes_len(self.dst())
    }
    /// As a `(Vec<u8>, Vec<u8>)` record: the source cut first; the
    /// destination empty if the source saturated.
    fn encode_bounded(&self, out: &mut Vec<u8>, budget: &mut usize) -> bool {
        if encode_bounded_bytes(self.src(), out, budget) {
            varint::put_bytes(out, b"");
            return true;
        }
        encode_bounded_bytes(self.dst(), out, budget)
    }
    fn least() -> Self {
        NamedArc {
            keys: Box::default(),
            split: 0,
        }
    }
}

/// A small, fixed-size memory of recently seen names and their keys
/// (direct-mapped by hash). A name repeated on nearby lines is keyed once and
/// pushed into the node sort once rather than every time: web graphs link
/// mostly within a site, so most destinations were seen a few lines before.
/// A name is reported as seen only if it really was (slots hold whole names),
/// so nothing is lost; what is skipped depends on the input alone, so a
/// resumed import pushes exactly the same records. At most
/// [`RecentNames::SLOTS`] names of at most [`RecentNames::MAX_NAME`] bytes
/// are held.
pub struct RecentNames {
    order: NameOrder,
    slots: Vec<Option<Remembered>>,
}

/// A name and its key.
type Remembered = (Box<str>, Box<[u8]>);

impl RecentNames {
    /// Number of slots.
    pub const SLOTS: usize = 1 << 12;
    /// Longest name remembered.
    pub const MAX_NAME: usize = 256;

    /// An empty memory for keys in `order`.
    pub fn new(order: NameOrder) -> RecentNames {
        RecentNames {
            order,
            slots: vec![None; Self::SLOTS],
        }
    }

    /// Sets `key` to the key of `name`; returns `true` if `name` was
    /// remembered, else remembers it (if short enough) and returns `false`.
    #[inline]
    pub fn key(&mut self, name: &str, key: &mut Vec<u8>) -> bool {
        key.clear();
        let slot = &mut self.slots
            [xxhash_rust::xxh3::xxh3_64(name.as_bytes()) as usize & (Self::SLOTS - 1)];
        if let Some((seen, seen_key)) = slot {
            if **seen == *name {
                key.extend_from_slice(seen_key);
                return true;
            }
        }
        self.order.key(name, key);
        if name.len() <= Self::MAX_NAME {
            *slot = Some((name.into(), key.as_slice().into()));
        }
        false
    }
}

/// Splits a line into its source and destination names, or says why it is not
/// an arc (`Err(LineVerdict::Ignored)` for comments and empty lines).
pub fn parse_named_arc(text: &[u8]) -> std::result::Result<(&str, &str), LineVerdict> {
    if text.is_empty() || text[0] == b'#' {
        return Err(LineVerdict::Ignored);
    }
    let bad = |what: &str| LineVerdict::Bad(format!("{what}, found {:?}", shown(text)));
    let Some(tab) = text.iter().position(|&b| b == b'\t') else {
        return Err(bad("expected `source<TAB>destination`, no TAB"));
    };
    let src = &text[..tab];
    let rest = &text[tab + 1..];
    let dst = match rest.iter().position(|&b| b == b'\t') {
        Some(end) => &rest[..end],
        None => rest,
    };
    if src.is_empty() {
        return Err(bad("empty source name"));
    }
    if dst.is_empty() {
        return Err(bad("empty destination name"));
    }
    fn utf8<'a>(
        name: &'a [u8],
        which: &str,
        offset: usize,
        text: &[u8],
    ) -> std::result::Result<&'a str, LineVerdict> {
        std::str::from_utf8(name).map_err(|e| {
            LineVerdict::Bad(format!(
                "{which} name is not UTF-8 (byte {} of the line), found {:?}",
                offset + e.valid_up_to() + 1,
                shown(text)
            ))
        })
    }
    Ok((
        utf8(src, "source", 0, text)?,
        utf8(dst, "destination", tab + 1, text)?,
    ))
}

/// Reads the arcs of named edge lists `paths` in order, calling
/// `arc(src, dst)` for each. `bytes_read` is advanced as input bytes are
/// consumed.
pub fn read_named_arcs(
    paths: &[PathBuf],
    strict: bool,
    bytes_read: Arc<AtomicU64>,
    mut arc: impl FnMut(&str, &str) -> Result<()>,
) -> Result<ReadReport> {
    for_each_line(paths, strict, bytes_read, |_, text| {
        match parse_named_arc(text) {
            Ok((s, d)) => {
                arc(s, d)?;
                Ok(LineVerdict::Used)
            }
            Err(verdict) => Ok(verdict),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn lines_names_and_bad_lines() {
        assert_eq!(
            parse_named_arc(b"a b\tc\td"),
            Ok(("a b", "c")),
            "spaces belong to names, a third field is ignored"
        );
        assert_eq!(parse_named_arc(b" x\t y "), Ok((" x", " y ")));
        assert_eq!(parse_named_arc(b"# c\td"), Err(LineVerdict::Ignored));
        assert_eq!(parse_named_arc(b""), Err(LineVerdict::Ignored));
        assert_eq!(parse_named_arc("é\t日本".as_bytes()), Ok(("é", "日本")));
        for bad in [&b"no tab"[..], b"\tx", b"x\t", b"x\t\ty", b"ok\t\xffbad"] {
            assert!(
                matches!(parse_named_arc(bad), Err(LineVerdict::Bad(_))),
                "{bad:?}"
            );
        }
        let Err(LineVerdict::Bad(why)) = parse_named_arc(b"ok\tab\xff") else {
            panic!()
        };
        assert!(
            why.contains("destination") && why.contains("byte 6"),
            "{why}"
        );
    }

    #[test]
    fn reads_plain_and_gzip_with_reports() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.tsv");
        std::fs::write(&plain, b"# names\nx y\tz\r\nno tab here\n\nz\tx y\n").unwrap();
        let gz = dir.path().join("b");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all("http://a/\thttp://b/ c\n\u{1F600}\t\u{1F600}\n".as_bytes())
            .unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let mut arcs = Vec::new();
        let report = read_named_arcs(
            &[plain.clone(), gz],
            false,
            Arc::new(AtomicU64::new(0)),
            |s, d| {
                arcs.push((s.to_string(), d.to_string()));
                Ok(())
            },
        )
        .unwrap();
        let want = [
            ("x y", "z"),
            ("z", "x y"),
            ("http://a/", "http://b/ c"),
            ("\u{1F600}", "\u{1F600}"),
        ];
        assert_eq!(
            arcs,
            want.map(|(s, d)| (s.to_string(), d.to_string())).to_vec()
        );
        assert_eq!((report.arcs, report.skipped, report.lines), (4, 1, 7));
        assert!(report.first_skips[0].to_string().contains("a.tsv: line 3"));
        let err = read_named_arcs(&[plain], true, Arc::new(AtomicU64::new(0)), |_, _| Ok(()))
            .unwrap_err();
        assert!(err.to_string().contains("a.tsv: line 3"), "{err}");
    }

    fn roundtrip<T: Record + std::fmt::Debug>(values: &[T]) {
        let mut buf = Vec::new();
        for v in values {
            v.encode(&mut buf);
        }
        let mut input = &buf[..];
        for v in values {
            assert_eq!(T::decode(&mut input).as_ref(), Some(v));
        }
        assert!(input.is_empty());
    }

    proptest::proptest! {
        /// The records encode like the `Vec<u8>` tuples they stand for, decode
        /// back, and order like them, with consistent key prefixes.
        #[test]
        fn records_encode_and_order_like_byte_tuples(
            a in proptest::collection::vec((proptest::collection::vec(0u8..4, 0..12), proptest::collection::vec(0u8..4, 0..12)), 1..20),
        ) {
            let arcs: Vec<NamedArc> = a.iter().map(|(s, d)| NamedArc::new(s, d).unwrap()).collect();
            let keys: Vec<NameKey> = a.iter().map(|(s, _)| NameKey(s.clone().into())).collect();
            roundtrip(&arcs);
            roundtrip(&keys);
            let mut buf = Vec::new();
            let mut want = Vec::new();
            for (arc, (s, d)) in arcs.iter().zip(&a) {
                arc.encode(&mut buf);
                (s.clone(), d.clone()).encode(&mut want);
            }
            proptest::prop_assert_eq!(buf, want);
            // Their bounded keys, encoded lengths and least records too.
            for budget in 0..10 {
                for ((arc, key), (s, d)) in arcs.iter().zip(&keys).zip(&a) {
                    let bounded = |r: &dyn Fn(&mut Vec<u8>, &mut usize) -> bool| {
                        let (mut out, mut left) = (Vec::new(), budget);
                        let saturated = r(&mut out, &mut left);
                        (out, left, saturated)
                    };
                    let pair = (s.clone(), d.clone());
                    proptest::prop_assert_eq!(
                        bounded(&|o, b| arc.encode_bounded(o, b)),
                        bounded(&|o, b| pair.encode_bounded(o, b))
                    );
                    proptest::prop_assert_eq!(
                        bounded(&|o, b| key.encode_bounded(o, b)),
                        bounded(&|o, b| s.encode_bounded(o, b))
                    );
                    proptest::prop_assert_eq!(arc.encoded_len(), pair.encoded_len());
                    proptest::prop_assert_eq!(key.encoded_len(), s.encoded_len());
                }
            }
            proptest::prop_assert!(NamedArc::least() == NamedArc::new(b"", b"").unwrap());
            proptest::prop_assert_eq!(NameKey::least(), NameKey(Box::default()));
            for (x, (xs, xd)) in arcs.iter().zip(&a) {
                for (y, (ys, yd)) in arcs.iter().zip(&a) {
                    proptest::prop_assert_eq!(x.cmp(y), (xs, xd).cmp(&(ys, yd)));
                    if x < y {
                        proptest::prop_assert!(x.key_prefix() <= y.key_prefix());
                    }
                }
            }
        }
    }

    #[test]
    fn recent_names_key_and_remember() {
        for order in [NameOrder::Bytes, NameOrder::Host] {
            let mut recent = RecentNames::new(order);
            let mut key = Vec::new();
            let long = "x".repeat(RecentNames::MAX_NAME + 1);
            let names: Vec<String> = (0..10_000)
                .map(|i| format!("http://h{}.example/{}", i % 7, i % 5000))
                .chain([long.clone(), long])
                .collect();
            let mut seen = std::collections::HashSet::new();
            for name in &names {
                let hit = recent.key(name, &mut key);
                let mut want = Vec::new();
                order.key(name, &mut want);
                assert_eq!(key, want);
                // A hit only for a name seen before; long names are never remembered.
                assert!(!hit || seen.contains(name));
                assert!(!(hit && name.len() > RecentNames::MAX_NAME));
                seen.insert(name.clone());
            }
        }
    }

    #[test]
    fn allocation_costs() {
        assert_eq!(allocation_bytes(0), 0);
        assert_eq!(allocation_bytes(1), 32);
        assert_eq!(allocation_bytes(24), 32);
        assert_eq!(allocation_bytes(25), 48);
    }

    #[test]
    fn keys_give_back_names_and_group_hosts() {
        let names = [
            "http://www.example.com/b",
            "https://example.com/a",
            "http://b.example.com/",
            "word with spaces",
            "mailto:x@y",
            "http://zz.org/",
            "http://Example.com/A",
        ];
        for order in [NameOrder::Bytes, NameOrder::Host] {
            let mut keys: Vec<Vec<u8>> = names
                .iter()
                .map(|n| {
                    let mut k = Vec::new();
                    order.key(n, &mut k);
                    assert_eq!(order.name_of_key(&k), n.as_bytes());
                    k
                })
                .collect();
            keys.sort();
            let sorted: Vec<&[u8]> = keys.iter().map(|k| order.name_of_key(k)).collect();
            if order == NameOrder::Bytes {
                let mut want: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
                want.sort();
                assert_eq!(sorted, want);
            } else {
                // Non-URLs first, then com,example's hosts together, then org.
                let want = [
                    "word with spaces",
                    "mailto:x@y",
                    "http://Example.com/A",
                    "https://example.com/a",
                    "http://b.example.com/",
                    "http://www.example.com/b",
                    "http://zz.org/",
                ];
                assert_eq!(sorted, want.map(str::as_bytes).to_vec());
            }
        }
    }
}
