//! Query parsing: the query text cut into words by the extractor's own
//! tokenizer ([`crate::ingest::html::tokenize`]), so a query word is spelled
//! exactly as the indexer spelled the page's words (lowercased, split at
//! punctuation, cut at the same length).

use crate::error::{Error, Result};
use crate::ingest::html::tokenize;

/// Most distinct words a query may have. Longer queries are refused with a
/// usage error rather than cut silently: a pasted paragraph is not a query,
/// and every word is one more doclist to intersect.
pub const MAX_QUERY_WORDS: usize = 32;

/// Bytes of query text accepted (longer text is refused before tokenizing).
pub const MAX_QUERY_BYTES: usize = 1 << 16;

/// The query's distinct words in the order they first appear.
pub fn parse(text: &str) -> Result<Vec<String>> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(Error::usage(format!(
            "the query has {} bytes; at most {MAX_QUERY_BYTES} are accepted",
            text.len()
        )));
    }
    let mut words = String::new();
    let mut flags = Vec::new();
    tokenize(text, &mut words, &mut flags);
    let mut out: Vec<String> = Vec::new();
    for w in words.split_ascii_whitespace() {
        if !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    if out.len() > MAX_QUERY_WORDS {
        return Err(Error::usage(format!(
            "the query has {} distinct words; at most {MAX_QUERY_WORDS} are searched",
            out.len()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_as_the_indexer_makes_them() {
        assert_eq!(parse("Vec::push — Rust").unwrap(), ["vec", "push", "rust"]);
        assert_eq!(parse("don't  CAFÉ café").unwrap(), ["don", "t", "café"]);
        assert!(parse("").unwrap().is_empty());
        assert!(parse(" ,.;: -- !!").unwrap().is_empty());
        let many: String = (0..1000).map(|i| format!("w{i} ")).collect();
        let e = parse(&many).unwrap_err().to_string();
        assert!(e.contains("1000 distinct words"), "{e}");
        let same = "again ".repeat(600);
        assert_eq!(parse(&same).unwrap(), ["again"]);
        assert!(parse(&"x ".repeat(40000)).is_err());
    }
}
