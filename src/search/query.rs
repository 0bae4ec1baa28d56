//! Queries: the query language, and the settings of one search.
//!
//! # The query language
//!
//! | you write            | it means                                            |
//! |----------------------|-----------------------------------------------------|
//! | `vacuum full`        | documents with every word, best first; documents with only some of them follow, weighted by how rare each word is (`--match all`: only documents with every word) |
//! | `"write ahead log"`  | the words as a phrase: consecutive, in this order, in one field (text, title, URL, one anchor) |
//! | `-word`, `-"a b"`    | no document with the word, or the phrase            |
//! | `backup OR restore`  | either; `OR` (capitals) joins the words, phrases or parenthesised groups on its sides: `(point in time) OR pitr` |
//! | `site:HOST`          | documents of that host or its subdomains: `site:example.org` takes `www.example.org` too |
//!
//! Words are cut as pages were, by the extractor's own tokenizer
//! ([`crate::ingest::html::tokenize`]): lowercased, split at punctuation, cut
//! at the same length; a word that splits in several (`std::vec`,
//! `slip-flow`) is a phrase of them. A question in plain words needs no
//! operator at all.
//!
//! Parsing never fails. Whatever does not parse as an operator is read as
//! text: an unclosed quote runs to the end, an unclosed parenthesis closes
//! at the end, a stray `)` or a lone `-` is ignored, an `OR` with nothing on
//! one side is the word `or`, `site:` without a host is ignored (the query
//! notes it). An empty or punctuation-only text is a query with no words
//! (the searcher answers "the query has no words"). A query keeps its first
//! [`MAX_QUERY_WORDS`] distinct words — Google's own limit — and counts the
//! others as ignored, which the results report; text past
//! [`MAX_QUERY_BYTES`] is not read; parentheses deeper than
//! [`MAX_QUERY_DEPTH`] are read as spaces.

use serde::Serialize;

use super::bm25::Bm25Weights;
use super::rank::RankingWeights;
use crate::ingest::html::tokenize;

/// Most distinct words searched; later ones are ignored (and counted). Each
/// word is one more doclist to read, and a pasted paragraph is not a query:
/// Google cut queries at 32 words too.
pub const MAX_QUERY_WORDS: usize = 32;

/// Bytes of query text read (the rest is ignored).
pub const MAX_QUERY_BYTES: usize = 1 << 16;

/// Deepest nesting of parentheses read as groups.
pub const MAX_QUERY_DEPTH: usize = 8;

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

/// Which documents match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Matching {
    /// Documents that satisfy the whole query rank first (a question's
    /// function words optional: [`Query::required`]); documents with only
    /// some of its words (and none it excludes) follow.
    #[default]
    Any,
    /// Only documents that satisfy the whole query (the paper's
    /// conjunctive mode).
    All,
}

/// The ranking function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ranking {
    /// Brin & Page §4.5.1: hit types, count-weights, proximity, PageRank
    /// ([`super::rank`]).
    Paper,
    /// Okapi BM25 over every hit of a word ([`super::bm25`]).
    Bm25,
    /// BM25F: BM25 over weighted fields (title, anchor, URL, large type,
    /// body), plus proximity and PageRank ([`super::bm25`]).
    #[default]
    Bm25f,
}

impl Ranking {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Ranking::Paper => "paper",
            Ranking::Bm25 => "bm25",
            Ranking::Bm25f => "bm25f",
        }
    }
}

/// A node of a parsed query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    /// A word.
    Word(String),
    /// Words that must stand consecutively, in order, in one field.
    Phrase(Vec<String>),
    /// Documents of a host or its subdomains (lowercase, no `www.` added or
    /// removed).
    Site(String),
    /// Every node holds.
    All(Vec<Node>),
    /// At least one node holds.
    Any(Vec<Node>),
    /// The node does not hold.
    Not(Box<Node>),
}

impl Node {
    /// Calls `f(word, negated)` for every word of the node (phrases' words
    /// included), in query order.
    pub fn visit_words<'a>(&'a self, negated: bool, f: &mut impl FnMut(&'a str, bool)) {
        match self {
            Node::Word(w) => f(w, negated),
            Node::Phrase(ws) => ws.iter().for_each(|w| f(w, negated)),
            Node::Site(_) => {}
            Node::All(ns) | Node::Any(ns) => ns.iter().for_each(|n| n.visit_words(negated, f)),
            Node::Not(n) => n.visit_words(!negated, f),
        }
    }

    /// The node with every word `w` replaced by `f(w)`.
    pub fn map_words(&self, f: &impl Fn(&str) -> String) -> Node {
        match self {
            Node::Word(w) => Node::Word(f(w)),
            Node::Phrase(ws) => Node::Phrase(ws.iter().map(|w| f(w)).collect()),
            Node::Site(h) => Node::Site(h.clone()),
            Node::All(ns) => Node::All(ns.iter().map(|n| n.map_words(f)).collect()),
            Node::Any(ns) => Node::Any(ns.iter().map(|n| n.map_words(f)).collect()),
            Node::Not(n) => Node::Not(Box::new(n.map_words(f))),
        }
    }

    /// Calls `f(host)` for every `site:` of the node.
    pub fn visit_sites<'a>(&'a self, f: &mut impl FnMut(&'a str)) {
        match self {
            Node::Site(h) => f(h),
            Node::All(ns) | Node::Any(ns) => ns.iter().for_each(|n| n.visit_sites(f)),
            Node::Not(n) => n.visit_sites(f),
            Node::Word(_) | Node::Phrase(_) => {}
        }
    }

    /// The node as query text (what [`Query::parse`] reads back as it).
    pub fn text(&self) -> String {
        match self {
            Node::Word(w) => w.clone(),
            Node::Phrase(ws) => format!("\"{}\"", ws.join(" ")),
            Node::Site(h) => format!("site:{h}"),
            Node::All(ns) => {
                let t: Vec<String> = ns.iter().map(Node::text).collect();
                format!("({})", t.join(" "))
            }
            Node::Any(ns) => {
                let t: Vec<String> = ns.iter().map(Node::text).collect();
                format!("({})", t.join(" OR "))
            }
            // `--a` reads as `-a`: a negated negation keeps its brackets.
            Node::Not(n) if matches!(**n, Node::Not(_)) => format!("-({})", n.text()),
            Node::Not(n) => format!("-{}", n.text()),
        }
    }
}

/// A parsed query and how to answer it.
#[derive(Clone, Debug)]
pub struct Query {
    /// What the query asks: an [`Node::All`] of its items.
    pub expr: Node,
    /// The query's distinct words that are not excluded, in the order they
    /// first appear (the words ranked and marked in snippets).
    pub words: Vec<String>,
    /// Distinct words past [`MAX_QUERY_WORDS`], not searched.
    pub ignored_words: usize,
    /// Bytes of text past [`MAX_QUERY_BYTES`], not read.
    pub ignored_bytes: usize,
    /// What the parser read otherwise than written (a `site:` without a
    /// host, …), for the user.
    pub notes: Vec<String>,
    /// Which documents match.
    pub matching: Matching,
    /// The ranking function.
    pub ranking: Ranking,
    /// The paper's conjunctive evaluation stops after this many matching
    /// documents, ranked retrieval after scoring this many (a safety valve:
    /// with pruning real queries stay far below it); at least 1.
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
    /// The paper ranking's weights.
    pub weights: RankingWeights,
    /// BM25's and BM25F's parameters.
    pub bm25: Bm25Weights,
    /// Matching stops at this instant, the answer marked partial
    /// ([`super::Results::timed_out`]); `None`: no time limit.
    pub deadline: Option<std::time::Instant>,
    /// Dynamic pruning of BM25 and BM25F ([`super::retrieve`]): the same
    /// results, fewer documents read. Off: every candidate is scored.
    pub prune: bool,
    /// The dedicated evaluation of the common case (one plain word, pruned;
    /// [`super::retrieve`]): the generic evaluation's results, work and
    /// totals, at a fraction of its cost per candidate. Off: the generic
    /// evaluation, which tests compare it with.
    pub fast_path: bool,
}

impl Query {
    /// Parses `text` in the query language, default settings.
    pub fn parse(full: &str) -> Query {
        let text = cut(full);
        let mut p = Parser {
            s: text,
            at: 0,
            words: Vec::new(),
            ignored: Vec::new(),
            notes: Vec::new(),
        };
        let items = p.sequence(0);
        let mut q = Query::of(Node::All(items));
        q.ignored_words = p.ignored.len();
        q.ignored_bytes = full.len() - text.len();
        q.notes = p.notes;
        q
    }

    /// A query of the words of `text`, every operator read as text (what the
    /// title-query measurement searches).
    pub fn plain(text: &str) -> Query {
        let cut_text = cut(text);
        let mut words = String::new();
        tokenize(cut_text, &mut words, &mut Vec::new());
        let mut distinct: Vec<&str> = Vec::new();
        let mut ignored: Vec<&str> = Vec::new();
        for w in words.split_ascii_whitespace() {
            if distinct.contains(&w) || ignored.contains(&w) {
                continue;
            }
            if distinct.len() < MAX_QUERY_WORDS {
                distinct.push(w);
            } else {
                ignored.push(w);
            }
        }
        let mut q = Query::words(&distinct);
        q.ignored_words = ignored.len();
        q.ignored_bytes = text.len() - cut_text.len();
        q
    }

    /// A query for exactly these words (already tokenized), default settings.
    pub fn words(words: &[&str]) -> Query {
        Query::of(Node::All(
            words.iter().map(|w| Node::Word(w.to_string())).collect(),
        ))
    }

    fn of(expr: Node) -> Query {
        let mut words: Vec<String> = Vec::new();
        expr.visit_words(false, &mut |w, negated| {
            if !negated && !words.iter().any(|o| o == w) {
                words.push(w.to_string());
            }
        });
        Query {
            expr,
            words,
            ignored_words: 0,
            ignored_bytes: 0,
            notes: Vec::new(),
            matching: Matching::default(),
            ranking: Ranking::default(),
            cutoff: DEFAULT_CUTOFF,
            group_window: DEFAULT_GROUP_WINDOW,
            hosts: HostClustering::default(),
            collapse_similar: true,
            snippets: true,
            explain: false,
            weights: RankingWeights::default(),
            bm25: Bm25Weights::default(),
            deadline: None,
            prune: true,
            fast_path: true,
        }
    }

    /// The query with every word `w` replaced by `f(w)` (a stemmer's), its
    /// settings kept; words that become equal count once.
    pub fn map_words(&self, f: impl Fn(&str) -> String) -> Query {
        let expr = self.expr.map_words(&f);
        let mut words: Vec<String> = Vec::new();
        expr.visit_words(false, &mut |w, negated| {
            if !negated && !words.iter().any(|o| o == w) {
                words.push(w.to_string());
            }
        });
        Query {
            expr,
            words,
            notes: self.notes.clone(),
            weights: self.weights.clone(),
            bm25: self.bm25.clone(),
            ..*self
        }
    }

    /// What a document must satisfy to be a *complete* match, ranked before
    /// the others: under [`Matching::All`] the whole query; under
    /// [`Matching::Any`] the query without its top-level words that
    /// `stopword` says are a question's function words ("how", "do", "i",
    /// "a", "of", "my" — [`super::present::QUESTION_STOPWORDS`]) when it has
    /// another item with a word. Such words still score where present; they
    /// only stop deciding which documents come first: in "how do I make a
    /// backup of my database" the pages with make, backup and database lead,
    /// not the two pages that happen to hold all nine words.
    pub fn required(&self, stopword: impl Fn(&str) -> bool) -> std::borrow::Cow<'_, Node> {
        use std::borrow::Cow;
        let Node::All(items) = &self.expr else {
            return Cow::Borrowed(&self.expr);
        };
        if self.matching == Matching::All {
            return Cow::Borrowed(&self.expr);
        }
        let optional = |n: &Node| matches!(n, Node::Word(w) if stopword(w));
        let has_word = |n: &Node| {
            let mut scored = false;
            n.visit_words(false, &mut |_, negated| scored |= !negated);
            scored
        };
        if !items.iter().any(&optional) || !items.iter().any(|n| !optional(n) && has_word(n)) {
            return Cow::Borrowed(&self.expr);
        }
        Cow::Owned(Node::All(
            items.iter().filter(|n| !optional(n)).cloned().collect(),
        ))
    }

    /// Whether the query is the paper's: plain words, all of them required,
    /// ranked by §4.5.1 (answered by Figure 4's conjunctive evaluation).
    pub fn is_paper_conjunction(&self) -> bool {
        self.matching == Matching::All
            && self.ranking == Ranking::Paper
            && matches!(&self.expr, Node::All(ns) if ns.iter().all(|n| matches!(n, Node::Word(_))))
    }

    /// Whether making a result is more than a doc-table lookup: its page
    /// read back for a snippet, or its score explained. Such results are
    /// made in parallel ([`super::present::results`]).
    pub fn heavy(&self) -> bool {
        self.snippets || self.explain
    }

    /// The bare ranking: no host clusters, no near-duplicate groups, no
    /// snippets (what the correctness tests and the quality measurements
    /// compare), and so no window of matches to group beyond the results
    /// asked for (pruning keeps only those).
    pub fn ranking_only(mut self) -> Query {
        self.hosts = HostClustering::Off;
        self.collapse_similar = false;
        self.snippets = false;
        self.group_window = 0;
        self
    }
}

/// `text` cut at [`MAX_QUERY_BYTES`] (at a character boundary).
fn cut(text: &str) -> &str {
    let mut cut = text.len().min(MAX_QUERY_BYTES);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

/// A recursive-descent reader of the query language that never fails.
struct Parser<'a> {
    s: &'a str,
    at: usize,
    /// Distinct words kept.
    words: Vec<String>,
    /// Distinct words past the limit.
    ignored: Vec<String>,
    notes: Vec<String>,
}

/// An item of a sequence before `OR`s are folded.
enum Element {
    Node(Node),
    Or,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.s[self.at..].chars().next()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.at += c.len_utf8();
        }
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    /// Items up to the end, or (inside parentheses, `depth > 0`) a `)`.
    fn sequence(&mut self, depth: usize) -> Vec<Node> {
        let mut elements = Vec::new();
        loop {
            self.skip_space();
            let Some(c) = self.peek() else { break };
            if c == ')' {
                self.bump();
                if depth > 0 {
                    break;
                }
                continue;
            }
            let negated = c == '-';
            if negated {
                self.bump();
                if self.peek().is_none_or(char::is_whitespace) {
                    continue;
                }
            }
            match self.atom(depth, negated) {
                Some(Element::Or) => elements.push(Element::Or),
                Some(Element::Node(n)) if negated => {
                    elements.push(Element::Node(Node::Not(Box::new(n))))
                }
                Some(e) => elements.push(e),
                None => {}
            }
        }
        fold_or(elements)
    }

    /// One word, phrase, group or `site:`; `None` when it has no words.
    fn atom(&mut self, depth: usize, negated: bool) -> Option<Element> {
        match self.peek()? {
            '"' => {
                self.bump();
                let start = self.at;
                let end = self.s[start..]
                    .find('"')
                    .map_or(self.s.len(), |i| start + i);
                self.at = (end + 1).min(self.s.len());
                self.words_node(&self.s[start..end]).map(Element::Node)
            }
            '(' if depth < MAX_QUERY_DEPTH => {
                self.bump();
                let mut items = self.sequence(depth + 1);
                match items.len() {
                    0 => None,
                    1 => items.pop().map(Element::Node),
                    _ => Some(Element::Node(Node::All(items))),
                }
            }
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| !c.is_whitespace() && !matches!(c, '"' | '(' | ')'))
                {
                    self.bump();
                }
                if self.at == start {
                    // A '(' too deep: read as a space.
                    self.bump();
                    return None;
                }
                let chunk = &self.s[start..self.at];
                if chunk == "OR" && !negated {
                    return Some(Element::Or);
                }
                if chunk
                    .get(..5)
                    .is_some_and(|p| p.eq_ignore_ascii_case("site:"))
                {
                    return match site_host(&chunk[5..]) {
                        Some(h) => Some(Element::Node(Node::Site(h))),
                        None => {
                            self.notes
                                .push(format!("ignored {chunk:?}: site: needs a host"));
                            None
                        }
                    };
                }
                self.words_node(chunk).map(Element::Node)
            }
        }
    }

    /// The words of `text`: one word, a phrase of several, `None` for none.
    fn words_node(&mut self, text: &str) -> Option<Node> {
        let mut words = String::new();
        tokenize(text, &mut words, &mut Vec::new());
        let mut kept: Vec<String> = Vec::new();
        for w in words.split_ascii_whitespace() {
            if self.words.iter().any(|o| o == w) {
                kept.push(w.to_string());
            } else if self.words.len() < MAX_QUERY_WORDS {
                self.words.push(w.to_string());
                kept.push(w.to_string());
            } else if !self.ignored.iter().any(|o| o == w) {
                self.ignored.push(w.to_string());
            }
        }
        match kept.len() {
            0 => None,
            1 => kept.pop().map(Node::Word),
            _ => Some(Node::Phrase(kept)),
        }
    }
}

/// Folds `a OR b` into [`Node::Any`]; an `OR` with nothing on one side is
/// the word `or`.
fn fold_or(elements: Vec<Element>) -> Vec<Node> {
    let or = || Node::Word("or".to_string());
    let mut out: Vec<Node> = Vec::new();
    let mut pending = false;
    for e in elements {
        match e {
            Element::Or if pending => out.push(or()),
            Element::Or if out.is_empty() => out.push(or()),
            Element::Or => pending = true,
            Element::Node(n) if pending => {
                pending = false;
                let left = out.pop().unwrap_or_else(or);
                out.push(match left {
                    Node::Any(mut ns) => {
                        ns.push(n);
                        Node::Any(ns)
                    }
                    l => Node::Any(vec![l, n]),
                });
            }
            Element::Node(n) => out.push(n),
        }
    }
    if pending {
        out.push(or());
    }
    out
}

/// The host of a `site:` operand: lowercased, without a scheme, path, port
/// or trailing dot; `None` when nothing is left.
fn site_host(operand: &str) -> Option<String> {
    let s = operand.split_once("://").map_or(operand, |(_, r)| r);
    let s = s.split(['/', '?', '#']).next().unwrap_or("");
    let s = s.rsplit_once('@').map_or(s, |(_, h)| h);
    let s = s.split(':').next().unwrap_or("");
    let s = s.trim_matches('.').to_lowercase();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Node {
        Node::Word(s.to_string())
    }

    fn p(s: &[&str]) -> Node {
        Node::Phrase(s.iter().map(|x| x.to_string()).collect())
    }

    fn items(text: &str) -> Vec<Node> {
        match Query::parse(text).expr {
            Node::All(ns) => ns,
            n => panic!("not an All: {n:?}"),
        }
    }

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
        let q = Query::plain(&long);
        assert_eq!(q.ignored_bytes, 80000 - MAX_QUERY_BYTES);
        assert_eq!(Query::words(&["a", "b", "a"]).words, ["a", "b"]);
    }

    #[test]
    fn operators() {
        assert_eq!(items("vacuum full"), [w("vacuum"), w("full")]);
        assert_eq!(
            items("\"Write Ahead log\" wal"),
            [p(&["write", "ahead", "log"]), w("wal")]
        );
        assert_eq!(
            items("vacuum -full -\"a b\""),
            [
                w("vacuum"),
                Node::Not(Box::new(w("full"))),
                Node::Not(Box::new(p(&["a", "b"])))
            ]
        );
        assert_eq!(
            items("backup OR restore OR dump db"),
            [
                Node::Any(vec![w("backup"), w("restore"), w("dump")]),
                w("db")
            ]
        );
        assert_eq!(
            items("(point in time) OR pitr"),
            [Node::Any(vec![
                Node::All(vec![w("point"), w("in"), w("time")]),
                w("pitr")
            ])]
        );
        assert_eq!(
            items("site:Docs.Example.org. vec site:https://www.a.com:8080/x"),
            [
                Node::Site("docs.example.org".into()),
                w("vec"),
                Node::Site("www.a.com".into())
            ]
        );
        // A word the tokenizer splits is a phrase.
        assert_eq!(
            items("std::vec slip-flow"),
            [p(&["std", "vec"]), p(&["slip", "flow"])]
        );
        // Excluded words are not ranked.
        assert_eq!(Query::parse("a -b \"c a\"").words, ["a", "c"]);
        // `or` in lowercase is a word.
        assert_eq!(items("a or b"), [w("a"), w("or"), w("b")]);
    }

    #[test]
    fn malformed_operators_get_an_answer() {
        assert_eq!(items("\"unclosed phrase"), [p(&["unclosed", "phrase"])]);
        assert_eq!(items("\"unclosed"), [w("unclosed")]);
        assert!(items("-").is_empty());
        assert!(items(" - - ").is_empty());
        assert_eq!(items("OR OR"), [w("or"), w("or")]);
        assert_eq!(Query::parse("OR OR").words, ["or"]);
        assert_eq!(items("a OR"), [w("a"), w("or")]);
        assert_eq!(items("OR a"), [w("or"), w("a")]);
        let q = Query::parse("site: vec");
        assert_eq!(items("site: vec"), [w("vec")]);
        assert_eq!(q.notes.len(), 1);
        assert!(items("site:").is_empty());
        assert_eq!(items("a ) b"), [w("a"), w("b")]);
        assert_eq!(items("(a (b"), [Node::All(vec![w("a"), w("b")])]);
        assert!(items("()").is_empty());
        assert!(items("\"\"").is_empty());
        assert_eq!(items("-OR"), [Node::Not(Box::new(w("or")))]);
        let deep = "(".repeat(10_000) + "x" + &")".repeat(10_000);
        assert_eq!(Query::parse(&deep).words, ["x"]);
    }

    #[test]
    fn plain_reads_operators_as_text() {
        let q = Query::plain("Vec in std::vec - Rust OR \"x\"");
        assert_eq!(q.words, ["vec", "in", "std", "rust", "or", "x"]);
        assert!(matches!(&q.expr, Node::All(ns) if ns.iter().all(|n| matches!(n, Node::Word(_)))));
    }

    proptest::proptest! {
        /// Any text parses, and what it parsed to reads back as itself.
        #[test]
        fn any_text_parses(text in "[a-zé:\\- \"()OR]{0,40}|\\PC{0,40}") {
            let q = Query::parse(&text);
            let Node::All(items) = &q.expr else { panic!() };
            let back: Vec<String> = items.iter().map(Node::text).collect();
            proptest::prop_assert_eq!(&Query::parse(&back.join(" ")).expr, &q.expr);
        }
    }

    #[test]
    fn node_text_reads_back() {
        for t in ["a \"b c\" -d (e OR f) site:x.org", "-(a b) OR c", "-(-a("] {
            let q = Query::parse(t);
            let Node::All(items) = &q.expr else {
                panic!("{t}")
            };
            let text: Vec<String> = items.iter().map(Node::text).collect();
            assert_eq!(Query::parse(&text.join(" ")).expr, q.expr, "{t}");
        }
    }
}
