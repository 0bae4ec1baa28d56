//! Hits: one occurrence of a word in a document, in Brin & Page's two bytes
//! (*The Anatomy of a Large-Scale Hypertextual Web Search Engine*, §4.2.5 and
//! Figure 3).
//!
//! # Layout
//!
//! A hit is a `u16`; bit 15 is the most significant. Where it is stored as
//! bytes it is little-endian.
//!
//! ```text
//! plain   15 cap | 14..12 font (0..=6)  | 11..0 position (0..=4095)
//! fancy   15 cap | 14..12 = 0b111       | 11..8 type | 7..0 position (0..=255)
//! anchor  15 cap | 14..12 = 0b111       | 11..8 type = 2 | 7..4 hash of the source docID | 3..0 position (0..=15)
//! ```
//!
//! * **cap**: the word's first character, as written, is uppercase (the
//!   extractor's capitalized flag).
//! * **font**: the *relative* font size of a plain hit, `0..=6`; 7 marks a
//!   fancy hit. Relative to the document: the document's most common font size
//!   (its body text) is 1, so a page set entirely in `<small>` reads like any
//!   other page. From the extractor's flags (size 0..=6, 1 = normal, plus a
//!   bold bit): `clamp(size + bold − modal size + 1, 0, 6)` — the paper's hit
//!   has no bold bit, and bold is emphasis like a larger type, so a bold word
//!   counts one size up.
//! * **position**: the word's index in the document's token stream. The paper
//!   says positions above 4095 "are labeled 4096", which twelve bits cannot
//!   hold; here every position ≥ 4095 is stored as 4095 (the largest twelve-bit
//!   value), so 4095 means "4095 or later".
//! * **type** of a fancy hit: [`FancyType`]: 0 URL, 1 title, 2 anchor, 3 meta
//!   (reserved: ingest keeps no meta text yet), 4–15 reserved. Its position is
//!   the word's index in the URL or title, clamped to 255.
//! * **anchor hits** are hits of the document the link *points to* (the paper's
//!   §2.2: pages never crawled become findable by their anchors). Their eight
//!   bits are split: 4 bits of a hash of the docID of the page the anchor is on
//!   ([`source_hash`]: the top 4 bits of `docID · 0x9E3779B97F4A7C15 mod 2⁶⁴`),
//!   then 4 bits of position in the anchor text, clamped to 15.
//!
//! Golden vectors (also in `formats/barrel.md`): `plain(cap, font 1, pos 5)` =
//! `0x9005`; `plain(font 6, pos 9000)` = `0x6fff`; `title(pos 3)` = `0x7103`;
//! `url(cap, pos 2)` = `0xf002`; `anchor(source docID 1, pos 2)` = `0x7292`.

use std::fmt;

/// Largest position of a plain hit; later positions are stored as this.
pub const MAX_PLAIN_POSITION: u32 = 4095;
/// Largest position of a URL, title or meta hit.
pub const MAX_FANCY_POSITION: u32 = 255;
/// Largest position of an anchor hit.
pub const MAX_ANCHOR_POSITION: u32 = 15;
/// The font field value that marks a fancy hit.
pub const FANCY_FONT: u16 = 7;
/// Largest relative font size of a plain hit.
pub const MAX_FONT: u8 = 6;

const CAP_BIT: u16 = 1 << 15;

/// The type of a fancy hit (4 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FancyType {
    /// A word of the document's URL.
    Url,
    /// A word of the document's title.
    Title,
    /// A word of the anchor text of a link to the document.
    Anchor,
    /// A word of a meta tag (reserved: not produced yet).
    Meta,
    /// Types 4 to 15, reserved.
    Reserved(u8),
}

impl FancyType {
    /// The 4-bit code.
    pub fn code(self) -> u8 {
        match self {
            FancyType::Url => 0,
            FancyType::Title => 1,
            FancyType::Anchor => 2,
            FancyType::Meta => 3,
            FancyType::Reserved(c) => c & 0xf,
        }
    }

    /// From a 4-bit code.
    pub const fn from_code(c: u8) -> FancyType {
        match c & 0xf {
            0 => FancyType::Url,
            1 => FancyType::Title,
            2 => FancyType::Anchor,
            3 => FancyType::Meta,
            c => FancyType::Reserved(c),
        }
    }

    /// Name in dumps.
    pub fn name(self) -> &'static str {
        match self {
            FancyType::Url => "url",
            FancyType::Title => "title",
            FancyType::Anchor => "anchor",
            FancyType::Meta => "meta",
            FancyType::Reserved(_) => "reserved",
        }
    }
}

/// One hit in its two-byte encoding.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Hit(pub u16);

/// A hit taken apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitFields {
    /// A plain hit: word of the document's visible text.
    Plain {
        /// Capitalized.
        cap: bool,
        /// Relative font size, 0..=6.
        font: u8,
        /// Position, 0..=4095.
        position: u16,
    },
    /// A URL, title or meta hit.
    Fancy {
        /// Capitalized.
        cap: bool,
        /// Its type (not [`FancyType::Anchor`]).
        kind: FancyType,
        /// Position, 0..=255.
        position: u8,
    },
    /// An anchor hit.
    Anchor {
        /// Capitalized.
        cap: bool,
        /// 4-bit hash of the source docID ([`source_hash`]).
        source: u8,
        /// Position in the anchor text, 0..=15.
        position: u8,
    },
}

/// 4-bit hash of the docID of the page an anchor is on (Fibonacci hashing:
/// the top 4 bits of `docID · 0x9E3779B97F4A7C15`, wrapping).
#[inline]
pub fn source_hash(source: u64) -> u8 {
    (source.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as u8
}

/// The relative font size of a plain hit from the extractor's font size
/// (0..=6), bold flag and the document's modal font size:
/// `clamp(size + bold − modal + 1, 0, 6)`.
#[inline]
pub fn relative_font(size: u8, bold: bool, modal: u8) -> u8 {
    (i16::from(size) + i16::from(bold) - i16::from(modal) + 1).clamp(0, i16::from(MAX_FONT)) as u8
}

impl Hit {
    /// A plain hit; `font` is clamped to 6 and `position` to 4095.
    #[inline]
    pub fn plain(cap: bool, font: u8, position: u32) -> Hit {
        let font = u16::from(font.min(MAX_FONT));
        let pos = position.min(MAX_PLAIN_POSITION) as u16;
        Hit(u16::from(cap) << 15 | font << 12 | pos)
    }

    /// A fancy hit of type `kind` (not an anchor: see [`Hit::anchor`]);
    /// `position` is clamped to 255.
    #[inline]
    pub fn fancy(cap: bool, kind: FancyType, position: u32) -> Hit {
        let pos = position.min(MAX_FANCY_POSITION) as u16;
        Hit(u16::from(cap) << 15 | FANCY_FONT << 12 | u16::from(kind.code()) << 8 | pos)
    }

    /// A URL hit.
    #[inline]
    pub fn url(cap: bool, position: u32) -> Hit {
        Hit::fancy(cap, FancyType::Url, position)
    }

    /// A title hit.
    #[inline]
    pub fn title(cap: bool, position: u32) -> Hit {
        Hit::fancy(cap, FancyType::Title, position)
    }

    /// An anchor hit from the page with docID `source`; `position` (in the
    /// anchor text) is clamped to 15.
    #[inline]
    pub fn anchor(cap: bool, source: u64, position: u32) -> Hit {
        let pos = position.min(MAX_ANCHOR_POSITION) as u16;
        Hit(u16::from(cap) << 15
            | FANCY_FONT << 12
            | u16::from(FancyType::Anchor.code()) << 8
            | u16::from(source_hash(source)) << 4
            | pos)
    }

    /// `true` for URL, title, anchor and meta hits.
    #[inline]
    pub fn is_fancy(self) -> bool {
        (self.0 >> 12) & 7 == FANCY_FONT
    }

    /// The capitalization bit.
    #[inline]
    pub fn cap(self) -> bool {
        self.0 & CAP_BIT != 0
    }

    /// The font field: relative size 0..=6, or 7 for fancy hits.
    #[inline]
    pub fn font(self) -> u8 {
        ((self.0 >> 12) & 7) as u8
    }

    /// The type of a fancy hit (`None` for plain hits).
    #[inline]
    pub fn fancy_type(self) -> Option<FancyType> {
        self.is_fancy()
            .then(|| FancyType::from_code(((self.0 >> 8) & 0xf) as u8))
    }

    /// Position of a plain hit (12 bits), for the inverted barrels' delta coding.
    #[inline]
    pub fn plain_position(self) -> u16 {
        self.0 & 0x0fff
    }

    /// `true` for the hits that put a document's hit list in the short
    /// barrels: title and anchor hits (the paper's §4.2.7).
    #[inline]
    pub fn is_title_or_anchor(self) -> bool {
        matches!(
            self.fancy_type(),
            Some(FancyType::Title | FancyType::Anchor)
        )
    }

    /// The hit taken apart.
    pub fn fields(self) -> HitFields {
        let cap = self.cap();
        match self.fancy_type() {
            None => HitFields::Plain {
                cap,
                font: self.font(),
                position: self.plain_position(),
            },
            Some(FancyType::Anchor) => HitFields::Anchor {
                cap,
                source: ((self.0 >> 4) & 0xf) as u8,
                position: (self.0 & 0xf) as u8,
            },
            Some(kind) => HitFields::Fancy {
                cap,
                kind,
                position: (self.0 & 0xff) as u8,
            },
        }
    }
}

/// As in dumps: `p5`, `P5f3` (capitalized, font 3), `title3`, `URL2`,
/// `anchor2#9` (position 2, source hash 9); a capital letter marks the
/// capitalization bit, a plain hit's font is shown when it is not 1.
impl fmt::Display for Hit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let up = |s: &str, cap: bool| {
            if cap {
                s.to_uppercase()
            } else {
                s.to_string()
            }
        };
        match self.fields() {
            HitFields::Plain {
                cap,
                font,
                position,
            } => {
                write!(f, "{}{position}", up("p", cap))?;
                if font != 1 {
                    write!(f, "f{font}")?;
                }
                Ok(())
            }
            HitFields::Fancy {
                cap,
                kind,
                position,
            } => write!(f, "{}{position}", up(kind.name(), cap)),
            HitFields::Anchor {
                cap,
                source,
                position,
            } => write!(f, "{}{position}#{source}", up("anchor", cap)),
        }
    }
}

impl fmt::Debug for Hit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hit({:#06x} {self})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The bit layout, written out by hand (the same vectors are in
    /// `formats/barrel.md`).
    #[test]
    fn golden_vectors() {
        assert_eq!(Hit::plain(false, 0, 0).0, 0x0000);
        assert_eq!(Hit::plain(true, 1, 5).0, 0x9005);
        assert_eq!(Hit::plain(false, 1, 5).0, 0x1005);
        assert_eq!(Hit::plain(false, 6, 4095).0, 0x6fff);
        assert_eq!(Hit::plain(false, 6, 9000).0, 0x6fff, "positions clamp");
        assert_eq!(Hit::plain(true, 9, 1).0, 0xe001, "fonts clamp to 6");
        assert_eq!(Hit::title(false, 3).0, 0x7103);
        assert_eq!(Hit::title(true, 300).0, 0xf1ff);
        assert_eq!(Hit::url(true, 2).0, 0xf002);
        assert_eq!(Hit::fancy(false, FancyType::Meta, 1).0, 0x7301);
        assert_eq!(source_hash(1), 0x9);
        assert_eq!(source_hash(0), 0x0);
        assert_eq!(source_hash(2), 0x3); // 0x3C6E_F372_FE94_F82A
        assert_eq!(Hit::anchor(false, 1, 2).0, 0x7292);
        assert_eq!(Hit::anchor(true, 2, 40).0, 0xf23f);
        assert_eq!(Hit(0x9005).to_string(), "P5");
        assert_eq!(Hit(0x6fff).to_string(), "p4095f6");
        assert_eq!(Hit(0x7103).to_string(), "title3");
        assert_eq!(Hit(0xf002).to_string(), "URL2");
        assert_eq!(Hit(0x7292).to_string(), "anchor2#9");
    }

    #[test]
    fn relative_fonts() {
        assert_eq!(relative_font(1, false, 1), 1);
        assert_eq!(relative_font(6, false, 1), 6);
        assert_eq!(relative_font(6, true, 1), 6);
        assert_eq!(relative_font(1, true, 1), 2);
        assert_eq!(relative_font(0, false, 0), 1, "all-small page");
        assert_eq!(relative_font(0, false, 2), 0);
    }

    proptest! {
        #[test]
        fn fields_roundtrip(cap: bool, font in 0u8..=6, pos in 0u32..5000, kind in 0u8..16, src: u64) {
            let h = Hit::plain(cap, font, pos);
            prop_assert!(!h.is_fancy());
            prop_assert_eq!(h.fields(), HitFields::Plain { cap, font, position: pos.min(4095) as u16 });
            let t = FancyType::from_code(kind);
            if t != FancyType::Anchor {
                let h = Hit::fancy(cap, t, pos);
                prop_assert!(h.is_fancy());
                prop_assert_eq!(h.fields(), HitFields::Fancy { cap, kind: t, position: pos.min(255) as u8 });
                prop_assert_eq!(h.is_title_or_anchor(), t == FancyType::Title);
            }
            let h = Hit::anchor(cap, src, pos);
            prop_assert_eq!(h.fields(), HitFields::Anchor { cap, source: source_hash(src), position: pos.min(15) as u8 });
            prop_assert!(h.is_title_or_anchor());
        }
    }
}
