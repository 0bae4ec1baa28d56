//! Queries: the query text cut into words by the extractor's own tokenizer
//! ([`crate::ingest::html::tokenize`]), so a query word is spelled exactly
//! as the indexer spelled the page's words (lowercased, split at
//! punctuation, cut at the same length), and the settings of one search.
//!
//! Parsing never fails. An empty or punctuation-only text is a query with no
//! words (the searcher answers "the query has no words"). A query keeps its
//! first [`MAX_QUERY_WORDS`] distinct words — Google's own limit — and counts
//! the others as ignored, which the results report; text past
//! [`MAX_QUERY_BYTES`] is not read.

use super::rank::RankingWeights;
use crate::ingest::html::tokenize;

/// Most distinct words searched; later ones are ignored (and counted). Each
/// word is one more doclist to intersect, and a pasted paragraph is not a
/// query: Google cut queries at 32 words too.
pub const MAX_QUERY_WORDS: usize = 32;

/// Bytes of query text read (the rest is ignored).
pub const MAX_QUERY_BYTES: usize = 1 << 16;

/// The paper's cut-off: matching stops after this many documents.
pub const DEFAULT_CUTOFF: usize = 40_000;

/// Ranked matches grouped into host clusters and near-duplicate groups.
pub const DEFAULT_GROUP_WINDOW: usize = 1000;

/// Whether results are grouped by host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostClustering {
    /// Grouped when the crawled pages among the ranked matches come from more
    /// than one host: on a single site every result would be one group.
    #[default]
    Auto,
    /// Always grouped (the best match of a host stands for it).
    On,
    /// Never grouped.
    Off,
}

/// A parsed query and how to answer it.
#[derive(Clone, Debug)]
pub struct Query {
    /// The query's distinct words in the order they first appear (at most
    /// [`MAX_QUERY_WORDS`]).
    pub words: Vec<String>,
    /// Distinct words past [`MAX_QUERY_WORDS`], not searched.
    pub ignored_words: usize,
    /// Bytes of text past [`MAX_QUERY_BYTES`], not read.
    pub ignored_bytes: usize,
    /// Matching stops after this many matching documents (at least 1).
    pub cutoff: usize,
    /// Ranked matches grouped into host clusters and near-duplicate groups;
    /// later ones stand alone.
    pub group_window: usize,
    /// Group results by host.
    pub hosts: HostClustering,
    /// Collapse near-duplicates (when the job has a dedup stage's clusters).
    pub collapse_similar: bool,
    /// Extract snippets from the repository.
    pub snippets: bool,
    /// Attach each result's [`super::Explain`].
    pub explain: bool,
    /// The ranking weights.
    pub weights: RankingWeights,
    /// Matching stops at this instant, the answer marked partial
    /// ([`super::Results::timed_out`]); `None`: no time limit.
    pub deadline: Option<std::time::Instant>,
}

impl Query {
    /// Parses `text` into a query with the default settings.
    pub fn parse(text: &str) -> Query {
        let mut cut = text.len().min(MAX_QUERY_BYTES);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut words = String::new();
        let mut flags = Vec::new();
        tokenize(&text[..cut], &mut words, &mut flags);
        let mut out: Vec<String> = Vec::new();
        let mut ignored: Vec<&str> = Vec::new();
        for w in words.split_ascii_whitespace() {
            if out.iter().any(|o| o == w) || ignored.contains(&w) {
                continue;
            }
            if out.len() < MAX_QUERY_WORDS {
                out.push(w.to_string());
            } else {
                ignored.push(w);
            }
        }
        Query {
            words: out,
            ignored_words: ignored.len(),
            ignored_bytes: text.len() - cut,
            cutoff: DEFAULT_CUTOFF,
            group_window: DEFAULT_GROUP_WINDOW,
            hosts: HostClustering::default(),
            collapse_similar: true,
            snippets: true,
            explain: false,
            weights: RankingWeights::default(),
            deadline: None,
        }
    }

    /// A query for exactly these words (already tokenized), default settings.
    pub fn words(words: &[&str]) -> Query {
        let mut q = Query::parse("");
        for w in words {
            if !q.words.iter().any(|o| o == w) {
                q.words.push(w.to_string());
            }
        }
        q
    }

    /// The bare ranking: no host clusters, no near-duplicate groups, no
    /// snippets (what the correctness tests and the quality measurements
    /// compare).
    pub fn ranking_only(mut self) -> Query {
        self.hosts = HostClustering::Off;
        self.collapse_similar = false;
        self.snippets = false;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_as_the_indexer_makes_them() {
        let w = |t: &str| Query::parse(t).words;
        assert_eq!(w("Vec::push — Rust"), ["vec", "push", "rust"]);
        assert_eq!(w("don't  CAFÉ café"), ["don", "t", "café"]);
        assert!(w("").is_empty());
        assert!(w(" ,.;: -- !!").is_empty());
        let many: String = (0..1000).map(|i| format!("w{i} w{i} ")).collect();
        let q = Query::parse(&many);
        assert_eq!(q.words.len(), MAX_QUERY_WORDS);
        assert_eq!(q.words[31], "w31");
        assert_eq!(q.ignored_words, 1000 - MAX_QUERY_WORDS);
        assert_eq!(w(&"again ".repeat(600)), ["again"]);
        let long = "é".repeat(40000);
        let q = Query::parse(&long);
        assert_eq!(q.ignored_bytes, 80000 - MAX_QUERY_BYTES);
        assert_eq!(q.words.len(), 1);
        assert_eq!(Query::words(&["a", "b", "a"]).words, ["a", "b"]);
    }
}
