//! Words and their flag bytes, and whitespace-collapsed text.
//!
//! [`WordState`] splits visible text into lowercased words of at most
//! [`MAX_WORD_BYTES`] bytes, across text chunks, and takes each word's flag
//! byte when it starts; [`Collapse`] appends text with its whitespace collapsed
//! to a bounded string (the title, anchor text). The `Sink` methods here feed
//! them the visible text with the flags of the open elements. The rules are in
//! the [module docs](super) (`# Words and their flags`).

use super::classes::{class, C_STOP, C_UPPER, C_WORD};
use super::{flag, Sink, MAX_ANCHOR_BYTES, MAX_WORD_BYTES};

/// The word being built, across text chunks.
#[derive(Default)]
pub(super) struct WordState {
    in_word: bool,
    len: usize,
    full: bool,
}

impl WordState {
    fn begin(&mut self, words: &mut String, flags: &mut Vec<u8>, f: u8) {
        if !words.is_empty() {
            words.push(' ');
        }
        flags.push(f);
        self.in_word = true;
        self.len = 0;
        self.full = false;
    }

    /// Feeds visible text `t[from..]`; `base` is the flag byte without
    /// [`flag::CAPITALIZED`]. With `STOP`, stops at the first `<` or `&` and
    /// returns its position; otherwise returns `t.len()`.
    pub(super) fn feed<const STOP: bool>(
        &mut self,
        t: &str,
        from: usize,
        words: &mut String,
        flags: &mut Vec<u8>,
        base: u8,
    ) -> usize {
        let b = t.as_bytes();
        let mut i = from;
        while i < b.len() {
            let c = b[i];
            if c < 0x80 {
                let cls = class(c);
                if cls & C_WORD == 0 {
                    if STOP && cls & C_STOP != 0 {
                        return i;
                    }
                    self.in_word = false;
                    i += 1;
                    continue;
                }
                let start = i;
                let mut upper = 0;
                while i < b.len() {
                    let k = class(b[i]);
                    if k & C_WORD == 0 {
                        break;
                    }
                    upper |= k;
                    i += 1;
                }
                if !self.in_word {
                    let cap = if cls & C_UPPER != 0 {
                        flag::CAPITALIZED
                    } else {
                        0
                    };
                    self.begin(words, flags, base | cap);
                }
                if !self.full {
                    let run = t.get(start..i).unwrap_or_default();
                    let take = run.len().min(MAX_WORD_BYTES - self.len);
                    let at = words.len();
                    words.push_str(run.get(..take).unwrap_or_default());
                    if upper & C_UPPER != 0 {
                        if let Some(w) = words.get_mut(at..) {
                            w.make_ascii_lowercase();
                        }
                    }
                    self.len += take;
                    self.full = take < run.len();
                }
            } else {
                let Some(ch) = t.get(i..).and_then(|r| r.chars().next()) else {
                    return b.len();
                };
                i += ch.len_utf8();
                if !ch.is_alphanumeric() {
                    self.in_word = false;
                    continue;
                }
                if !self.in_word {
                    let cap = if ch.is_uppercase() {
                        flag::CAPITALIZED
                    } else {
                        0
                    };
                    self.begin(words, flags, base | cap);
                }
                if !self.full {
                    let lower = ch.to_lowercase();
                    let need: usize = lower.clone().map(char::len_utf8).sum();
                    if self.len + need > MAX_WORD_BYTES {
                        self.full = true;
                    } else {
                        words.extend(lower);
                        self.len += need;
                    }
                }
            }
        }
        b.len()
    }
}

/// Appends text to a bounded string with whitespace collapsed.
#[derive(Default)]
pub(super) struct Collapse {
    pub(super) pending: bool,
    full: bool,
}

impl Collapse {
    pub(super) fn push(&mut self, dst: &mut String, cap: usize, text: &str) {
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() && !self.full {
            let c = b[i];
            if c < 0x80 {
                if c <= b' ' || c == 0x7f {
                    self.pending = true;
                    i += 1;
                    continue;
                }
                let start = i;
                while i < b.len() && b[i] > b' ' && b[i] < 0x7f {
                    i += 1;
                }
                self.push_run(dst, cap, text.get(start..i).unwrap_or_default());
            } else {
                let Some(ch) = text.get(i..).and_then(|r| r.chars().next()) else {
                    return;
                };
                i += ch.len_utf8();
                if ch.is_whitespace() || ch.is_control() {
                    self.pending = true;
                } else {
                    let mut buf = [0u8; 4];
                    let enc: &str = ch.encode_utf8(&mut buf);
                    if dst.len() + (self.pending && !dst.is_empty()) as usize + enc.len() > cap {
                        self.full = true;
                        return;
                    }
                    self.push_run(dst, cap, enc);
                }
            }
        }
    }

    /// Appends a run without whitespace (cut at `cap` if ASCII).
    fn push_run(&mut self, dst: &mut String, cap: usize, run: &str) {
        if self.pending && !dst.is_empty() {
            if dst.len() + 1 >= cap {
                self.full = true;
                return;
            }
            dst.push(' ');
        }
        self.pending = false;
        let take = run.len().min(cap.saturating_sub(dst.len()));
        if let Some(part) = run.get(..take) {
            dst.push_str(part);
        }
        if take < run.len() {
            self.full = true;
        }
    }
}

impl Sink {
    /// The flag byte (without [`flag::CAPITALIZED`]) of a word starting here:
    /// the font size of the open heading, `big` and `small` elements, bold,
    /// inside an anchor.
    pub(super) fn flags(&self) -> u8 {
        let base = match self.heading {
            0 => flag::NORMAL_SIZE as i64,
            h => [6, 6, 5, 4, 3, 2, 2][h.min(6) as usize] as i64,
        };
        let size = (base + self.big as i64 - self.small as i64).clamp(0, 6) as u8;
        let mut f = size;
        if self.bold > 0 {
            f |= flag::BOLD;
        }
        if self.anchor.is_some() {
            f |= flag::ANCHOR;
        }
        f
    }

    /// Visible text (already decoded).
    pub(super) fn text(&mut self, t: &str) {
        if !self.visible() {
            return;
        }
        let base = self.flags();
        self.word
            .feed::<false>(t, 0, &mut self.page.words, &mut self.page.flags, base);
        if self.keep_text {
            self.visible_text
                .push(&mut self.page.text, super::MAX_KEPT_TEXT, t);
        }
        if let Some(k) = self.anchor {
            if let Some(link) = self.page.links.get_mut(k) {
                self.anchor_text.push(&mut link.anchor, MAX_ANCHOR_BYTES, t);
            }
        }
    }

    /// One visible character (a decoded character reference).
    pub(super) fn text_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.text(c.encode_utf8(&mut buf));
    }

    /// A tag that separates words (and anchor text).
    pub(super) fn word_break(&mut self) {
        self.word.in_word = false;
        self.anchor_text.pending = true;
        self.visible_text.pending = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::html::tests::{check_invariants, page, words};
    use crate::ingest::html::tokenize;
    use proptest::prelude::*;

    #[test]
    fn inline_tags_do_not_break_words_block_tags_do() {
        let p = page("x<sup>2</sup> a<br>b c<div>d</div>e <span>sp</span>an w<wbr>br");
        assert_eq!(words(&p), ["x2", "a", "b", "c", "d", "e", "span", "wbr"]);
    }

    #[test]
    fn font_sizes_nest_and_clamp() {
        let p = page(
            "<h1>A <big>B</big> <small>C</small></h1> D <small>E <small>F</small></small> \
             <big><big><big><big><big><big>G</big></big></big></big></big></big> \
             <h2>H</h2><h3>I</h3><h4>J</h4><h5>K</h5><h6>L</h6>M",
        );
        let sizes: Vec<u8> = p.flags.iter().map(|&f| flag::size(f)).collect();
        assert_eq!(
            words(&p),
            ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"]
        );
        assert_eq!(sizes, [6, 6, 5, 1, 0, 0, 6, 5, 4, 3, 2, 2, 1]);
    }

    #[test]
    fn heading_start_closes_open_heading() {
        let p = page("<h1>a<h3>b</h3>c");
        let sizes: Vec<u8> = p.flags.iter().map(|&f| flag::size(f)).collect();
        assert_eq!(sizes, [6, 4, 1]);
    }

    #[test]
    fn bold_and_capitalization() {
        let p = page(
            "<b>Bold</b> plain <strong>Strong <b>both</b></strong> <B>x</b> <i><b>m</i>n</b>o",
        );
        let bold: Vec<bool> = p.flags.iter().map(|&f| f & flag::BOLD != 0).collect();
        let cap: Vec<bool> = p
            .flags
            .iter()
            .map(|&f| f & flag::CAPITALIZED != 0)
            .collect();
        assert_eq!(words(&p), ["bold", "plain", "strong", "both", "x", "mno"]);
        assert_eq!(bold, [true, false, true, true, true, true]);
        assert_eq!(cap, [true, false, true, false, false, false]);
        // Misnested: </b> closes the b even though i is open inside it.
        let p = page("<b><i>x</b>y</i>");
        let bold: Vec<bool> = p.flags.iter().map(|&f| f & flag::BOLD != 0).collect();
        assert_eq!(words(&p), ["xy"]);
        assert_eq!(bold, [true]);
        let p = page("<b><p>x</b> y");
        assert_eq!(p.flags[1] & flag::BOLD, 0);
    }

    #[test]
    fn unicode_words() {
        let p = page("<p>ÉCOLE Straße İstanbul ΣΟΦΙΑ 東京タワー ١٢٣ naïve—dash</p>");
        assert_eq!(
            words(&p),
            [
                "école",
                "straße",
                "i̇stanbul",
                "σοφια",
                "東京タワー",
                "١٢٣",
                "naïve",
                "dash"
            ]
        );
        assert_eq!(p.flags[0] & flag::CAPITALIZED, flag::CAPITALIZED);
        assert_eq!(p.flags[4] & flag::CAPITALIZED, 0);
    }

    #[test]
    fn long_words_are_cut() {
        let long = "A".repeat(100);
        let p = page(&format!("{long} b"));
        assert_eq!(words(&p), ["a".repeat(64).as_str(), "b"]);
        // Non-ASCII cut at a character boundary: 'é' is 2 bytes.
        let p = page(&format!("{} c", "é".repeat(40)));
        assert_eq!(words(&p)[0], "é".repeat(32));
        let p = page(&format!("{}{} d", "a".repeat(63), "é".repeat(3)));
        assert_eq!(words(&p)[0], "a".repeat(63));
        assert_eq!(words(&p)[1], "d");
        check_invariants(&p);
    }

    #[test]
    fn tokenize_helper() {
        let (mut w, mut f) = (String::new(), Vec::new());
        tokenize("Rust's  <b>Vec</b>", &mut w, &mut f);
        assert_eq!(w, "rust s b vec b");
        assert_eq!(f[0], flag::NORMAL_SIZE | flag::CAPITALIZED);
        tokenize("more", &mut w, &mut f);
        assert_eq!(w, "rust s b vec b more");
        assert_eq!(f.len(), 6);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn words_of_plain_text_match_a_simple_split(text in "[a-zA-Z0-9éß東 ,.;:!?'_-]{0,200}") {
            let p = page(&text);
            let expect: Vec<String> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| w.to_lowercase().chars().fold(String::new(), |mut s, c| {
                    if s.len() + c.len_utf8() <= MAX_WORD_BYTES { s.push(c) }
                    s
                }))
                .collect();
            prop_assert_eq!(words(&p), expect);
            let caps: Vec<bool> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| w.chars().next().is_some_and(char::is_uppercase))
                .collect();
            let got: Vec<bool> = p.flags.iter().map(|&f| f & flag::CAPITALIZED != 0).collect();
            prop_assert_eq!(got, caps);
        }
    }
}
