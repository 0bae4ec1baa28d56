//! Stemming, an index parameter: the words of every page, URL, title and
//! anchor are reduced to their Snowball stems before they get wordIDs
//! (`--stem english`), and a query's words the same way, so `vacuuming`
//! finds `vacuum`. Positions are unchanged, so phrases still match, and
//! stopwords stay indexed. The stemmer is the `rust-stemmers` crate's
//! (Snowball's English, the "Porter2" algorithm); the lexicon records which
//! one made it (header parameter `"stem"`, absent for none).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the index reduces words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stem {
    /// Words as the tokenizer cut them.
    #[default]
    None,
    /// Snowball's English stemmer.
    English,
}

impl Stem {
    /// Every choice.
    pub const ALL: [Stem; 2] = [Stem::None, Stem::English];

    /// Its name (the flag's value, the lexicon's parameter).
    pub fn name(self) -> &'static str {
        match self {
            Stem::None => "none",
            Stem::English => "english",
        }
    }

    /// The stemmer of a name.
    pub fn parse(name: &str) -> Result<Stem> {
        Stem::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| Error::usage(format!("--stem must be none or english, got {name:?}")))
    }

    /// A stemmer, `None` for [`Stem::None`].
    pub fn stemmer(self) -> Option<Stemmer> {
        match self {
            Stem::None => None,
            Stem::English => Some(Stemmer(rust_stemmers::Stemmer::create(
                rust_stemmers::Algorithm::English,
            ))),
        }
    }
}

/// A Snowball stemmer (`Send + Sync`: one serves every thread).
pub struct Stemmer(rust_stemmers::Stemmer);

impl Stemmer {
    /// The stem of one word.
    pub fn word<'a>(&self, w: &'a str) -> Cow<'a, str> {
        self.0.stem(w)
    }

    /// The stems of space-separated `words`, space-separated, into `out`
    /// (cleared first).
    pub fn words(&self, words: &str, out: &mut String) {
        out.clear();
        for (i, w) in words.split(' ').enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&self.0.stem(w));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_families_share_a_stem() {
        let s = Stem::English.stemmer().unwrap();
        for family in [
            ["vacuum", "vacuuming", "vacuumed"],
            ["backup", "backups", "backup"],
            ["index", "indexes", "indexing"],
            ["connect", "connection", "connections"],
        ] {
            let stems: Vec<String> = family.iter().map(|w| s.word(w).into_owned()).collect();
            assert!(
                stems.iter().all(|x| x == &stems[0]),
                "{family:?}: {stems:?}"
            );
        }
        let mut out = String::from("junk");
        s.words("running dogs ran", &mut out);
        assert_eq!(out, "run dog ran");
        assert!(Stem::None.stemmer().is_none());
        assert_eq!(Stem::parse("english").unwrap(), Stem::English);
        assert!(Stem::parse("klingon").is_err());
    }
}
