//! Where an index's bytes go: the lexicon's parts and, summed over the
//! barrels, the container's own bytes, the blocks' directories and every
//! field of the postings blocks
//! (`webmill inspect --bytes`, the index bench's breakdown).

use std::fmt::Write as _;
use std::path::Path;

use super::inverted::{Barrel, BarrelBytes};
use super::lexicon::{Lexicon, LexiconBytes};
use super::postings::CLASS_NAMES;
use crate::error::Result;

/// An index directory's bytes, part by part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndexBytes {
    /// The lexicon.
    pub lexicon: LexiconBytes,
    /// The barrels, summed.
    pub barrels: BarrelBytes,
    /// The field lengths file (`fieldlens.wm`; 0 when absent).
    pub fieldlens: u64,
}

impl IndexBytes {
    /// Reads the index in `dir` (a job's `index/`: `lexicon.wm`, the
    /// barrels it names, `fieldlens.wm`), checking every block it reads.
    pub fn of_dir(dir: &Path) -> Result<IndexBytes> {
        let lex = Lexicon::open(dir.join("lexicon.wm"))?;
        let mut out = IndexBytes {
            lexicon: lex.bytes(),
            ..IndexBytes::default()
        };
        for b in 0..lex.barrels() {
            let path = dir.join(format!("full-{b:03}.wm"));
            out.barrels.add(&Barrel::open(&path)?.bytes()?);
        }
        let lens = dir.join("fieldlens.wm");
        if lens.exists() {
            out.fieldlens = std::fs::metadata(&lens)
                .map_err(|e| crate::error::Error::io(&lens, e))?
                .len();
        }
        Ok(out)
    }

    /// The lexicon and the barrels (what the index bench compares with
    /// tantivy's index), without the field lengths.
    pub fn total(&self) -> u64 {
        self.lexicon.file + self.barrels.file
    }

    /// The breakdown as a text table: one line per part with its bytes,
    /// its share of [`Self::total`] and its bits per hit; then the
    /// lexicon's parts.
    pub fn table(&self) -> String {
        let total = self.total().max(1) as f64;
        let f = &self.barrels.postings;
        let hits = (f.plain_hits + f.fancy_hits + f.other_hits).max(1) as f64;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "{:<34} {:>12} {:>7} {:>9}",
            "part", "bytes", "% index", "bits/hit"
        );
        let mut row = |name: &str, v: u64| {
            let _ = writeln!(
                t,
                "{name:<34} {v:>12} {:>6.1}% {:>9.3}",
                100.0 * v as f64 / total,
                v as f64 * 8.0 / hits
            );
        };
        row("container (headers, index, footer)", self.barrels.container);
        row("block directories (with bounds)", self.barrels.directory);
        row("postings block headers", f.header);
        row("docID gaps", f.gaps);
        for (name, &bytes) in CLASS_NAMES.iter().zip(&f.counts) {
            if bytes > 0 {
                row(&format!("counts: {name}"), bytes);
            }
        }
        row("distinct anchor values per doc", f.distinct);
        row("position run shapes", f.run_widths);
        row("positions (low parts)", f.runs);
        row("position exceptions", f.exceptions);
        row("plain-hit capitalization", f.caps);
        row("large hits' fonts", f.large_fonts);
        row("packed URL/title hits, anchor values", f.fancy);
        row("anchor values' repeats", f.repeats);
        row("other hits", f.other);
        row("postings blocks, all fields", f.total());
        row("barrel files", self.barrels.file);
        let l = &self.lexicon;
        row("lexicon: container", l.container);
        row("lexicon: term dictionary (fst)", l.dictionary);
        row("lexicon: barrel table", l.barrel_table);
        row("lexicon: per-word entries", l.entries);
        row("lexicon file", l.file);
        row("index (lexicon + barrels)", self.total());
        let _ = writeln!(
            t,
            "postings blocks {} ({} of 128 documents); postings {}; hits {} plain, {} fancy; {} distinct anchor values",
            f.blocks,
            f.full_blocks,
            f.docs,
            f.plain_hits,
            f.fancy_hits + f.other_hits,
            f.anchor_values
        );
        let _ = writeln!(
            t,
            "words {}; field lengths file {} bytes (not in the index total)",
            l.words, self.fieldlens
        );
        t
    }
}
