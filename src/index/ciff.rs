//! CIFF, the Common Index File Format (Lin et al., *Supporting Interoperability
//! Between Open-Source Search Engines with the Common Index File Format*,
//! SIGIR 2020): the index exported for Anserini, PISA, Terrier and the like,
//! and a strict reader for it.
//!
//! # Format
//!
//! A sequence of protobuf messages (proto3, `io.osirrc.ciff`), each prefixed
//! with its length as a varint (Java's `writeDelimitedTo`): one `Header`,
//! then `num_postings_lists` `PostingsList`s, then `num_docs` `DocRecord`s.
//!
//! ```text
//! Header       1 version int32 = 1   2 num_postings_lists   3 num_docs
//!              4 total_postings_lists   5 total_docs   6 total_terms_in_collection int64
//!              7 average_doclength double   8 description string
//! PostingsList 1 term string   2 df int64   3 cf int64   4 postings (repeated Posting)
//! Posting      1 docid int32 (the gap from the previous posting's docid; the first is absolute)
//!              2 tf int32
//! DocRecord    1 docid int32   2 collection_docid string   3 doclength int32
//! ```
//!
//! Fields with the value 0 (or empty) are left out, as protobuf writers do;
//! readers take a missing field as 0.
//!
//! # What is exported
//!
//! Every word of the lexicon, in byte order, with its full doclist: docID
//! gaps and, as the term frequency, the number of hits of the word in the
//! document — its page words and the words of its URL, title and the anchor
//! texts of links to it (the index's one "field"). `df` is the document
//! count, `cf` the hit count. One `DocRecord` per docID of the doc table, in
//! docID order (docid = position), with the URL as `collection_docid` and
//! `doclength` = Σ tf of its postings (0 for a document with no words).
//!
//! # Out of core
//!
//! Postings lists stream from the barrels in lexicon order, each written
//! from a buffer, or, past [`BUFFERED_POSTINGS`] documents, in two passes over
//! its doclist (the first only sizes the message), so memory does not grow
//! with a word's document frequency. The document lengths are summed by the
//! external sort (`(docID, tf)` pairs, equal docIDs folded) under the
//! caller's budget and merged with the doc table at the end.
//!
//! The protobuf encoding is written by hand (a varint, a tag, a length):
//! four small messages do not justify a code generator and a build script,
//! and the reader must be strict in ways a generated one is not (known
//! fields only, each wire type as declared, counts and sums checked).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;

use crate::docs::DocTable;
use crate::error::{Error, IoContext, Result};
use crate::index::{Barrel, Lexicon};
use crate::job::{JobFile, JobView};
use crate::sort::{Combine, ExternalSorter, SortConfig};
use crate::varint;

/// The header's description: what the terms, tf and doclength are.
pub const DESCRIPTION: &str = "webmill: a Brin & Page index; terms are the extractor's lowercased words; tf = hits of the word in the doc (page text, URL, title, anchor texts of links to it); doclength = sum of tf";

/// Postings lists longer than this are written in two passes, not buffered.
pub const BUFFERED_POSTINGS: u32 = 1 << 20;

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CiffSummary {
    /// Postings lists (terms).
    pub terms: u64,
    /// Postings.
    pub postings: u64,
    /// Documents.
    pub docs: u64,
    /// Σ doclength.
    pub total_terms: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// The CIFF header.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// Format version (1).
    pub version: i32,
    /// Postings lists that follow.
    pub num_postings_lists: i32,
    /// Doc records that follow them.
    pub num_docs: i32,
    /// Vocabulary size of the collection.
    pub total_postings_lists: i32,
    /// Documents in the collection.
    pub total_docs: i32,
    /// Σ document lengths.
    pub total_terms_in_collection: i64,
    /// Average document length.
    pub average_doclength: f64,
    /// Free text.
    pub description: String,
}

/// A postings list, docids absolute (decoded from the gaps).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostingsList {
    /// The term.
    pub term: Vec<u8>,
    /// Document frequency.
    pub df: i64,
    /// Collection frequency.
    pub cf: i64,
    /// (docid, tf), docids increasing.
    pub postings: Vec<(i32, i32)>,
}

/// A document record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocRecord {
    /// Docid.
    pub docid: i32,
    /// The collection's name for it.
    pub collection_docid: String,
    /// Its length.
    pub doclength: i32,
}

// ---- encoding -------------------------------------------------------------

const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;

fn put_tag(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint::put(out, field << 3 | wire);
}

/// A non-negative integer field, left out when 0.
fn put_uint(out: &mut Vec<u8>, field: u64, v: u64) {
    if v != 0 {
        put_tag(out, field, VARINT);
        varint::put(out, v);
    }
}

fn put_len(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    if !bytes.is_empty() {
        put_tag(out, field, LEN);
        varint::put_bytes(out, bytes);
    }
}

fn varint_len(v: u64) -> u64 {
    u64::from(64 - (v | 1).leading_zeros()).div_ceil(7)
}

impl Header {
    fn encode(&self, out: &mut Vec<u8>) {
        put_uint(out, 1, self.version as u64);
        put_uint(out, 2, self.num_postings_lists as u64);
        put_uint(out, 3, self.num_docs as u64);
        put_uint(out, 4, self.total_postings_lists as u64);
        put_uint(out, 5, self.total_docs as u64);
        put_uint(out, 6, self.total_terms_in_collection as u64);
        if self.average_doclength != 0.0 {
            put_tag(out, 7, FIXED64);
            out.extend_from_slice(&self.average_doclength.to_le_bytes());
        }
        put_len(out, 8, self.description.as_bytes());
    }
}

/// The length of a `Posting` submessage's body: its two fields, each left
/// out when zero (proto3).
fn posting_body_len(gap: u32, tf: u32) -> u64 {
    let field = |v: u32| {
        if v > 0 {
            1 + varint_len(u64::from(v))
        } else {
            0
        }
    };
    field(gap) + field(tf)
}

/// One `Posting` submessage (field 4 of a postings list) into `out`.
fn put_posting(out: &mut Vec<u8>, gap: u32, tf: u32) {
    let len = posting_body_len(gap, tf);
    put_tag(out, 4, LEN);
    varint::put(out, len);
    put_uint(out, 1, u64::from(gap));
    put_uint(out, 2, u64::from(tf));
}

fn posting_bytes(gap: u32, tf: u32) -> u64 {
    let len = posting_body_len(gap, tf);
    1 + varint_len(len) + len
}

fn write_delimited(w: &mut dyn Write, msg: &[u8], bytes: &mut u64) -> Result<()> {
    let mut len = Vec::with_capacity(10);
    varint::put(&mut len, msg.len() as u64);
    w.write_all(&len).at("stdout")?;
    w.write_all(msg).at("stdout")?;
    *bytes += (len.len() + msg.len()) as u64;
    Ok(())
}

/// Writes the index of `job` as CIFF to `out`, summing document lengths
/// with an external sort in `tmp` under `budget` bytes.
pub fn export(job: &JobView, out: &mut dyn Write, tmp: &Path, budget: u64) -> Result<CiffSummary> {
    let shards = crate::index::shards::default_dir(job.dir());
    if !job.has(JobFile::Lexicon) && shards.join(crate::index::shards::MANIFEST).exists() {
        return Err(Error::usage_at(
            &shards,
            "the job's index is split into shards; CIFF is one index's postings: \
             run `webmill index JOB` to build the single index, then export it",
        ));
    }
    let lexicon = Lexicon::open(job.file(JobFile::Lexicon)?)?;
    let docs = DocTable::open(job.file(JobFile::Docs)?)?;
    let n_docs = docs.len();
    if n_docs > i32::MAX as u64 || u64::from(lexicon.words()) > i32::MAX as u64 {
        return Err(Error::usage(format!(
            "{n_docs} docs and {} words: CIFF holds 32-bit signed docids and counts",
            lexicon.words()
        )));
    }
    let total_terms = lexicon.container().meta()["hits"]
        .as_u64()
        .ok_or_else(|| lexicon.container().meta_error("no \"hits\" count"))?;
    let header = Header {
        version: 1,
        num_postings_lists: lexicon.words() as i32,
        num_docs: n_docs as i32,
        total_postings_lists: lexicon.words() as i32,
        total_docs: n_docs as i32,
        total_terms_in_collection: total_terms as i64,
        average_doclength: if n_docs == 0 {
            0.0
        } else {
            total_terms as f64 / n_docs as f64
        },
        description: DESCRIPTION.to_string(),
    };
    let mut s = CiffSummary {
        docs: n_docs,
        ..CiffSummary::default()
    };
    let mut msg = Vec::new();
    header.encode(&mut msg);
    write_delimited(out, &msg, &mut s.bytes)?;

    let mut lengths = ExternalSorter::new(
        SortConfig::new(tmp.join("ciff-doclengths"), budget.max(1 << 20))
            .label("ciff: document lengths"),
        Combine::custom(
            "sum-doclength",
            |acc: &mut (u32, u64), next: &(u32, u64)| {
                if acc.0 == next.0 {
                    acc.1 += next.1;
                    true
                } else {
                    false
                }
            },
        ),
    )?;
    let mut barrels: HashMap<usize, Barrel> = HashMap::new();
    let mut last_term: Option<Vec<u8>> = None;
    lexicon.for_each_word(|word, id| {
        let b = lexicon.barrel_of(id);
        let barrel = match barrels.entry(b) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Barrel::open(job.file(JobFile::FullBarrel(b as u16))?)?)
            }
        };
        let barrel = &*barrel;
        let info = lexicon.entry(id)?;
        if last_term.as_deref().is_some_and(|t| t >= word.as_bytes()) {
            return Err(Error::corrupt(
                lexicon.container().path(),
                "block 0",
                0,
                format!("term dictionary out of order at {word:?}"),
            ));
        }
        last_term = Some(word.as_bytes().to_vec());
        msg.clear();
        put_len(&mut msg, 1, word.as_bytes());
        put_uint(&mut msg, 2, u64::from(info.docs));
        put_uint(&mut msg, 3, info.hits);
        let mut cf = 0u64;
        let mut df = 0u32;
        if info.docs <= BUFFERED_POSTINGS {
            let mut c = barrel.doclist(id, info.full, info.docs)?;
            let mut prev = None;
            while let Some(d) = c.next()? {
                let (np, nf) = c.hit_counts()?;
                let tf = np + nf;
                put_posting(&mut msg, d - prev.map_or(0, |p: u32| p), tf);
                prev = Some(d);
                cf += u64::from(tf);
                df += 1;
                lengths.push((d, u64::from(tf)))?;
            }
            check_counts(&lexicon, word, info.docs, info.hits, df, cf)?;
            write_delimited(out, &msg, &mut s.bytes)?;
        } else {
            // Size the message first, then stream it.
            let mut c = barrel.doclist(id, info.full, info.docs)?;
            let mut len = msg.len() as u64;
            let mut prev = None;
            while let Some(d) = c.next()? {
                let (np, nf) = c.hit_counts()?;
                len += posting_bytes(d - prev.map_or(0, |p: u32| p), np + nf);
                prev = Some(d);
            }
            let mut head = Vec::new();
            varint::put(&mut head, len);
            out.write_all(&head).at("stdout")?;
            out.write_all(&msg).at("stdout")?;
            s.bytes += (head.len() + msg.len()) as u64;
            let mut c = barrel.doclist(id, info.full, info.docs)?;
            let mut prev = None;
            let mut chunk = Vec::with_capacity(1 << 16);
            while let Some(d) = c.next()? {
                let (np, nf) = c.hit_counts()?;
                let tf = np + nf;
                put_posting(&mut chunk, d - prev.map_or(0, |p: u32| p), tf);
                prev = Some(d);
                cf += u64::from(tf);
                df += 1;
                lengths.push((d, u64::from(tf)))?;
                if chunk.len() >= 1 << 16 {
                    out.write_all(&chunk).at("stdout")?;
                    s.bytes += chunk.len() as u64;
                    chunk.clear();
                }
            }
            out.write_all(&chunk).at("stdout")?;
            s.bytes += chunk.len() as u64;
            check_counts(&lexicon, word, info.docs, info.hits, df, cf)?;
        }
        s.terms += 1;
        s.postings += u64::from(df);
        Ok(())
    })?;
    drop(barrels);

    let mut sorted = lengths.finish()?;
    let mut next = sorted.next_record()?;
    for doc in docs.iter() {
        let (id, d) = doc?;
        let mut len = 0u64;
        while let Some((dd, l)) = next {
            if u64::from(dd) > id {
                break;
            }
            if u64::from(dd) == id {
                len = l;
            }
            next = sorted.next_record()?;
        }
        s.total_terms += len;
        msg.clear();
        put_uint(&mut msg, 1, id);
        put_len(&mut msg, 2, d.url.as_bytes());
        put_uint(&mut msg, 3, len.min(i32::MAX as u64));
        write_delimited(out, &msg, &mut s.bytes)?;
    }
    drop(sorted);
    crate::sort::remove_sort_dir(&tmp.join("ciff-doclengths"))?;
    if s.total_terms != total_terms {
        return Err(Error::internal(format!(
            "document lengths add up to {}, the lexicon counts {total_terms} hits",
            s.total_terms
        )));
    }
    Ok(s)
}

fn check_counts(lex: &Lexicon, word: &str, docs: u32, hits: u64, df: u32, cf: u64) -> Result<()> {
    if df != docs || cf != hits {
        return Err(Error::corrupt(
            lex.container().path(),
            "entries",
            0,
            format!("word {word:?}: the lexicon says {docs} docs and {hits} hits, its doclist has {df} and {cf}"),
        ));
    }
    Ok(())
}

// ---- strict reading --------------------------------------------------------

/// Reads a CIFF stream strictly: only the fields the format defines, each
/// with its declared wire type, no bytes left over inside a message.
pub struct CiffReader<R: Read> {
    r: R,
    buf: Vec<u8>,
    offset: u64,
}

fn bad(offset: u64, detail: impl Into<String>) -> Error {
    Error::corrupt("CIFF input", "message", offset, detail)
}

/// One field of a message: (field number, value).
enum Field<'a> {
    Varint(u64, u64),
    Fixed64(u64, [u8; 8]),
    Len(u64, &'a [u8]),
}

fn next_field<'a>(input: &mut &'a [u8], at: u64) -> Result<Field<'a>> {
    let tag = varint::get(input).ok_or_else(|| bad(at, "truncated tag"))?;
    let (field, wire) = (tag >> 3, tag & 7);
    match wire {
        VARINT => Ok(Field::Varint(
            field,
            varint::get(input)
                .ok_or_else(|| bad(at, format!("field {field}: truncated varint")))?,
        )),
        FIXED64 => {
            let (v, rest) = input
                .split_first_chunk::<8>()
                .ok_or_else(|| bad(at, format!("field {field}: truncated fixed64")))?;
            *input = rest;
            Ok(Field::Fixed64(field, *v))
        }
        LEN => Ok(Field::Len(
            field,
            varint::get_bytes(input)
                .ok_or_else(|| bad(at, format!("field {field}: truncated bytes")))?,
        )),
        w => Err(bad(
            at,
            format!("field {field}: wire type {w} is not used by CIFF"),
        )),
    }
}

/// An int32 field: protobuf sign-extends negative values to 64 bits.
fn int32(v: u64, field: u64, at: u64) -> Result<i32> {
    i32::try_from(v as i64).map_err(|_| bad(at, format!("field {field}: {v} is not an int32")))
}

/// Calls `f` on each field of the message `input`; a field `f` does not
/// take (returns `false`) is an error.
fn each_field<'a>(
    mut input: &'a [u8],
    at: u64,
    what: &str,
    mut f: impl FnMut(Field<'a>) -> Result<bool>,
) -> Result<()> {
    while !input.is_empty() {
        let field = next_field(&mut input, at)?;
        let number = match field {
            Field::Varint(n, _) | Field::Fixed64(n, _) | Field::Len(n, _) => n,
        };
        if !f(field)? {
            return Err(bad(
                at,
                format!("{what}: field {number} with an unexpected wire type or number"),
            ));
        }
    }
    Ok(())
}

fn utf8(b: &[u8], what: &str, at: u64) -> Result<String> {
    String::from_utf8(b.to_vec()).map_err(|_| bad(at, format!("{what} is not UTF-8")))
}

impl<R: Read> CiffReader<R> {
    /// A reader over `r`.
    pub fn new(r: R) -> CiffReader<R> {
        CiffReader {
            r,
            buf: Vec::new(),
            offset: 0,
        }
    }

    /// Reads the next length-delimited message into the buffer; `false` at a
    /// clean end of input.
    fn message(&mut self) -> Result<bool> {
        let mut len = 0u64;
        let mut shift = 0;
        loop {
            let mut b = [0u8];
            match self.r.read(&mut b).at("CIFF input")? {
                0 if shift == 0 => return Ok(false),
                0 => return Err(bad(self.offset, "input ends inside a length")),
                _ => {}
            }
            self.offset += 1;
            if shift >= 64 {
                return Err(bad(self.offset, "length varint too long"));
            }
            len |= u64::from(b[0] & 0x7f) << shift;
            shift += 7;
            if b[0] & 0x80 == 0 {
                break;
            }
        }
        if len > 1 << 34 {
            return Err(bad(self.offset, format!("a message of {len} bytes")));
        }
        self.buf.resize(len as usize, 0);
        self.r.read_exact(&mut self.buf).map_err(|_| {
            bad(
                self.offset,
                format!("input ends inside a {len}-byte message"),
            )
        })?;
        self.offset += len;
        Ok(true)
    }

    /// Reads the next message, which must be there (a `what`): its offset.
    fn expect(&mut self, what: &str) -> Result<u64> {
        let at = self.offset;
        if !self.message()? {
            return Err(bad(at, format!("input ends before {what}")));
        }
        Ok(at)
    }

    /// The header.
    pub fn header(&mut self) -> Result<Header> {
        let at = self.expect("the header")?;
        let mut h = Header::default();
        each_field(&self.buf, at, "header", |field| {
            match field {
                Field::Varint(1, v) => h.version = int32(v, 1, at)?,
                Field::Varint(2, v) => h.num_postings_lists = int32(v, 2, at)?,
                Field::Varint(3, v) => h.num_docs = int32(v, 3, at)?,
                Field::Varint(4, v) => h.total_postings_lists = int32(v, 4, at)?,
                Field::Varint(5, v) => h.total_docs = int32(v, 5, at)?,
                Field::Varint(6, v) => h.total_terms_in_collection = v as i64,
                Field::Fixed64(7, v) => h.average_doclength = f64::from_le_bytes(v),
                Field::Len(8, b) => h.description = utf8(b, "description", at)?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(h)
    }

    /// The next postings list.
    pub fn postings_list(&mut self) -> Result<PostingsList> {
        let at = self.expect("the last postings list")?;
        let mut p = PostingsList::default();
        let mut doc: i64 = 0;
        each_field(&self.buf, at, "postings list", |field| {
            match field {
                Field::Len(1, b) => p.term = b.to_vec(),
                Field::Varint(2, v) => p.df = v as i64,
                Field::Varint(3, v) => p.cf = v as i64,
                Field::Len(4, m) => {
                    // Gaps after the first must be positive: `check`'s business.
                    let (mut gap, mut tf) = (0i32, 0i32);
                    each_field(m, at, "posting", |field| {
                        match field {
                            Field::Varint(1, v) => gap = int32(v, 1, at)?,
                            Field::Varint(2, v) => tf = int32(v, 2, at)?,
                            _ => return Ok(false),
                        }
                        Ok(true)
                    })?;
                    doc += i64::from(gap);
                    let d = i32::try_from(doc)
                        .map_err(|_| bad(at, format!("docid {doc} overflows an int32")))?;
                    p.postings.push((d, tf));
                }
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(p)
    }

    /// The next doc record.
    pub fn doc_record(&mut self) -> Result<DocRecord> {
        let at = self.expect("the last doc record")?;
        let mut d = DocRecord::default();
        each_field(&self.buf, at, "doc record", |field| {
            match field {
                Field::Varint(1, v) => d.docid = int32(v, 1, at)?,
                Field::Len(2, b) => d.collection_docid = utf8(b, "collection_docid", at)?,
                Field::Varint(3, v) => d.doclength = int32(v, 3, at)?,
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        Ok(d)
    }

    /// `true` if no byte is left.
    pub fn at_end(&mut self) -> Result<bool> {
        Ok(!self.message()?)
    }
}

/// What a checked CIFF stream held.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CiffCheck {
    /// Its header.
    pub header: Header,
    /// Postings.
    pub postings: u64,
    /// Σ tf over all postings.
    pub tf_sum: u64,
    /// Σ doclength.
    pub doclength_sum: u64,
}

/// Reads a whole CIFF stream and checks it: counts as the header says, terms
/// strictly increasing in byte order, per list `df` = its postings and `cf`
/// = Σ tf, docids increasing (gaps positive after the first) and below
/// `num_docs`, tf ≥ 1, doc records with docid = position, and nothing after
/// them. Calls `f` on each postings list.
pub fn check<R: Read>(r: R, mut f: impl FnMut(&PostingsList)) -> Result<CiffCheck> {
    let mut rd = CiffReader::new(r);
    let header = rd.header()?;
    if header.version != 1 {
        return Err(bad(0, format!("version {}", header.version)));
    }
    let mut c = CiffCheck::default();
    let mut last: Option<Vec<u8>> = None;
    for i in 0..header.num_postings_lists {
        let at = rd.offset;
        let p = rd.postings_list()?;
        let ctx = |d: String| {
            bad(
                at,
                format!(
                    "postings list {i} ({:?}): {d}",
                    String::from_utf8_lossy(&p.term)
                ),
            )
        };
        if last.as_ref().is_some_and(|l| *l >= p.term) {
            return Err(ctx("terms are not in strictly increasing byte order".into()));
        }
        if p.df != p.postings.len() as i64 {
            return Err(ctx(format!(
                "df {} but {} postings",
                p.df,
                p.postings.len()
            )));
        }
        let cf: i64 = p.postings.iter().map(|&(_, tf)| i64::from(tf)).sum();
        if p.cf != cf {
            return Err(ctx(format!("cf {} but the tfs add up to {cf}", p.cf)));
        }
        for (k, w) in p.postings.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(ctx(format!("posting {}: gap not positive", k + 1)));
            }
        }
        if let Some(&(d, _)) = p
            .postings
            .iter()
            .find(|&&(d, _)| d < 0 || d >= header.num_docs)
        {
            return Err(ctx(format!("docid {d} outside 0..{}", header.num_docs)));
        }
        if let Some(k) = p.postings.iter().position(|&(_, tf)| tf < 1) {
            return Err(ctx(format!("posting {k}: tf {}", p.postings[k].1)));
        }
        c.postings += p.postings.len() as u64;
        c.tf_sum += cf as u64;
        f(&p);
        last = Some(p.term);
    }
    for i in 0..header.num_docs {
        let at = rd.offset;
        let d = rd.doc_record()?;
        if d.docid != i {
            return Err(bad(at, format!("doc record {i} has docid {}", d.docid)));
        }
        if d.doclength < 0 {
            return Err(bad(at, format!("doc record {i}: length {}", d.doclength)));
        }
        c.doclength_sum += d.doclength as u64;
    }
    let at = rd.offset;
    if !rd.at_end()? {
        return Err(bad(at, "bytes after the last doc record"));
    }
    c.header = header;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_through_the_strict_reader() {
        let h = Header {
            version: 1,
            num_postings_lists: 2,
            num_docs: 3,
            total_postings_lists: 2,
            total_docs: 3,
            total_terms_in_collection: 6,
            average_doclength: 2.0,
            description: "test".into(),
        };
        let mut out = Vec::new();
        let mut bytes = 0;
        let mut msg = Vec::new();
        h.encode(&mut msg);
        write_delimited(&mut out, &msg, &mut bytes).unwrap();
        for (term, posts) in [("a", vec![(0u32, 2u32), (2, 1)]), ("b", vec![(1, 3)])] {
            msg.clear();
            put_len(&mut msg, 1, term.as_bytes());
            put_uint(&mut msg, 2, posts.len() as u64);
            put_uint(&mut msg, 3, posts.iter().map(|p| u64::from(p.1)).sum());
            let mut prev = 0;
            let mut sized = msg.len() as u64;
            for &(d, tf) in &posts {
                put_posting(&mut msg, d - prev, tf);
                sized += posting_bytes(d - prev, tf);
                prev = d;
            }
            assert_eq!(sized, msg.len() as u64);
            write_delimited(&mut out, &msg, &mut bytes).unwrap();
        }
        for (d, len) in [(0u64, 2u64), (1, 3), (2, 1)] {
            msg.clear();
            put_uint(&mut msg, 1, d);
            put_len(&mut msg, 2, format!("doc{d}").as_bytes());
            put_uint(&mut msg, 3, len);
            write_delimited(&mut out, &msg, &mut bytes).unwrap();
        }
        assert_eq!(bytes, out.len() as u64);
        let mut lists = Vec::new();
        let c = check(&out[..], |p| lists.push(p.clone())).unwrap();
        assert_eq!(c.header, h);
        assert_eq!((c.postings, c.tf_sum, c.doclength_sum), (3, 6, 6));
        assert_eq!(lists[0].postings, vec![(0, 2), (2, 1)]);
        // Every cut of the stream is an error, never a panic.
        for cut in 0..out.len() {
            assert!(check(&out[..cut], |_| {}).is_err(), "cut at {cut}");
        }
        // A trailing byte is refused.
        let mut more = out.clone();
        more.push(0);
        assert!(check(&more[..], |_| {}).is_err());
    }

    #[test]
    fn varint_lengths() {
        for v in [
            0u64,
            1,
            127,
            128,
            16383,
            16384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut b = Vec::new();
            varint::put(&mut b, v);
            assert_eq!(varint_len(v), b.len() as u64, "{v}");
        }
    }
}
