//! Result pages: the ranked matches grouped as Google showed them in 1998,
//! and each result's title, URL and snippet.
//!
//! * **Near-duplicates.** When a dedup stage published clusters, the matches
//!   of one cluster collapse into the best-ranked of them, which lists the
//!   others as `similar`.
//! * **Host clusters.** The best-ranked match of a host stands for the host;
//!   the host's other matches are listed as its `host_more` ("+N more from
//!   this host"). Hosts come from the doc table (one host's docs are
//!   contiguous there). Only the first `group_window` ranked matches are
//!   grouped (each group costs doc-table lookups); later ones stand alone.
//!   By default ([`HostClustering::Auto`]) matches are grouped only when
//!   the crawled ones among them come from several hosts: on one site (a
//!   documentation package) every result would be a single group.
//! * **Titles.** A page's `<title>`; a page never crawled has none, and shows
//!   the anchor text most links to it use (the paper's §2.2).
//! * **Snippets.** The page is read back from the repository (the doc table
//!   gives its page number, the repository is keyed by page) and run through
//!   the ingest extractor, so the snippet's words are the indexed words. The
//!   snippet is the window of [`SNIPPET_WORDS`] words with the most distinct
//!   query words (then the most occurrences, then the earliest), in the
//!   page's own text (or its words capitalized as written, the
//!   capitalization flag, and joined by spaces when the text was not kept);
//!   the query words are returned as byte ranges ([`Snippet::marks`]), not
//!   markup, so a terminal and a web page each render them their own way.
//!   A page is read only to its [`SNIPPET_HORIZON`]th word when a window
//!   there holds every query word its text holds (the index's plain hits
//!   say which; else to its [`SNIPPET_SECOND_HORIZON`]th on the same
//!   terms, else whole), and the ten results' pages are read in
//!   parallel: a page of megabytes (a source listing) would otherwise cost
//!   more than the whole search.

use std::collections::HashMap;

use serde::Serialize;

use super::eval::{Match, Term};
use super::query::{HostClustering, Query};
use super::{SearchResult, Searcher};
use crate::error::Result;
use crate::ingest::html::flag;
use crate::par::map_in_order;

/// Words in a snippet.
pub const SNIPPET_WORDS: usize = 32;

/// A snippet: text with the query words marked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snippet {
    /// The text (`…` where the page goes on before or after).
    pub text: String,
    /// Byte ranges `[start, end)` of the query words in `text`.
    pub marks: Vec<(usize, usize)>,
}

/// A group of matches shown as one result.
#[derive(Clone, Debug)]
pub struct Group {
    /// The best-ranked match, shown.
    pub lead: Match,
    /// Other matches of its host.
    pub host_more: Vec<u64>,
    /// Its near-duplicates among the matches.
    pub similar: Vec<u64>,
}

/// The ranked matches in groups.
#[derive(Clone, Debug)]
pub struct Grouped {
    /// The groups, best first.
    pub groups: Vec<Group>,
    /// They were grouped by host.
    pub by_host: bool,
}

/// Ranks `matches` (score, then docID) and groups the first
/// `max(group_window, want)` of them.
pub fn group(s: &Searcher, mut matches: Vec<Match>, q: &Query, want: usize) -> Result<Grouped> {
    matches.sort_by(super::retrieve::best_first);
    let window = q.group_window.max(want).min(matches.len());
    let clusters = s.store().similar().filter(|_| q.collapse_similar);
    let hosts: Vec<u64> = match q.hosts {
        HostClustering::Off => Vec::new(),
        HostClustering::On | HostClustering::Auto => {
            let mut hosts = Vec::with_capacity(window);
            let mut crawled_hosts: Option<(u64, bool)> = None;
            for m in &matches[..window] {
                let d = s.doc(u64::from(m.doc))?;
                if d.crawled {
                    crawled_hosts = match crawled_hosts {
                        None => Some((d.host, false)),
                        Some((h, many)) => Some((h, many || h != d.host)),
                    };
                }
                hosts.push(d.host);
            }
            let several = crawled_hosts.is_some_and(|(_, many)| many);
            if q.hosts == HostClustering::Auto && !several {
                Vec::new()
            } else {
                hosts
            }
        }
    };
    let by_host = !hosts.is_empty();
    let mut groups: Vec<Group> = Vec::with_capacity(matches.len());
    let mut by_cluster: HashMap<u32, usize> = HashMap::new();
    let mut host_group: HashMap<u64, usize> = HashMap::new();
    for (i, m) in matches.into_iter().enumerate() {
        let single = |m: Match| Group {
            lead: m,
            host_more: Vec::new(),
            similar: Vec::new(),
        };
        if i >= window {
            groups.push(single(m));
            continue;
        }
        let cluster = match clusters {
            Some(c) => c.cluster(m.doc)?,
            None => None,
        };
        if let Some(&g) = cluster.and_then(|c| by_cluster.get(&c)) {
            groups[g].similar.push(u64::from(m.doc));
            continue;
        }
        let mut target = None;
        if let Some(&host) = hosts.get(i) {
            match host_group.get(&host) {
                Some(&g) => {
                    groups[g].host_more.push(u64::from(m.doc));
                    target = Some(g);
                }
                None => {
                    host_group.insert(host, groups.len());
                }
            }
        }
        let g = match target {
            Some(g) => g,
            None => {
                groups.push(single(m));
                groups.len() - 1
            }
        };
        if let Some(c) = cluster {
            by_cluster.insert(c, g);
        }
    }
    Ok(Grouped { groups, by_host })
}

/// The results shown for `groups[offset..][..k]` (`result` makes one), in
/// order. With `heavy` (snippets or explanations asked for) they are made
/// in parallel: each reads its page back from the repository and extracts
/// it for the snippet, which for a page of megabytes is most of a query's
/// time. Without, a result is a doc-table lookup (~1k instructions), and
/// handing ten of them to the thread pool cost more than making them: the
/// caller, not a pool thread, waits for a worker to wake and for its
/// answer, ~0.2 ms a query when the other core is idle (the bench's
/// rust-doc one-word queries: p50 0.317 → 0.098 ms on an idle machine).
pub fn results(
    groups: Vec<Group>,
    offset: usize,
    k: usize,
    heavy: bool,
    result: impl Fn(Group) -> Result<SearchResult> + Sync + Send,
) -> Result<Vec<SearchResult>> {
    let shown = groups.into_iter().skip(offset).take(k);
    map_in_order(shown, heavy, result).into_iter().collect()
}

/// The result shown for `g`.
pub fn result(s: &Searcher, terms: &[Term], q: &Query, g: Group) -> Result<SearchResult> {
    let docid = u64::from(g.lead.doc);
    let doc = s.doc(docid)?;
    let mut title = doc.title;
    let mut title_from_anchor = false;
    if !doc.crawled && title.is_empty() {
        if let Some(t) = s.store().anchor_title(docid)? {
            title = t;
            title_from_anchor = true;
        }
    }
    let snippet = if q.snippets {
        let held = || words_in_text(s, terms, &q.words, g.lead.doc);
        s.store()
            .with_extracted(docid, |e| stored_snippet(e, &q.words, s.stemmer(), held))?
            .transpose()?
            .flatten()
    } else {
        None
    };
    let explain = if q.explain {
        super::retrieve::explain(s, terms, q, &g.lead)?
    } else {
        None
    };
    Ok(SearchResult {
        docid,
        url: doc.url,
        title,
        title_from_anchor,
        crawled: doc.crawled,
        score: g.lead.score,
        ir: g.lead.ir,
        pagerank: g.lead.pagerank,
        snippet,
        host_more: g.host_more,
        similar: g.similar,
        complete: g.lead.complete,
        explain,
    })
}

/// Words a question is made of, never marked on their own in a snippet nor
/// counted for its coverage when the query has other words.
pub const QUESTION_STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "an", "and", "any", "are", "as", "at", "be", "been", "being",
    "by", "can", "could", "did", "do", "does", "for", "from", "has", "have", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "there", "these", "they", "this", "those", "to", "was",
    "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "you",
    "your",
];

/// Words of a page a snippet looks in first: when they hold a window with
/// every query word, the rest of the page is not read (a page of megabytes
/// costs what its beginning costs). As many as a hit's 12-bit position
/// reaches, so the snippet's horizon is the phrase matcher's.
pub const SNIPPET_HORIZON: usize = 4096;

/// Words read next when the first [`SNIPPET_HORIZON`] hold no window with
/// every query word, before the whole page is: a word found only past the
/// index's positions is most often still in a page's first tens of
/// thousands of words, and a source listing runs to a million. Reading the
/// beginning again costs at most a fifteenth of the page over reading it
/// whole at once.
pub const SNIPPET_SECOND_HORIZON: usize = SNIPPET_HORIZON * 16;

/// Per query word of `words`, whether document `doc`'s visible text holds
/// it: whether the index has a plain hit of it there (`terms` are the
/// query's; a word without a term is in no document).
fn words_in_text(s: &Searcher, terms: &[Term], words: &[String], doc: u32) -> Result<Vec<bool>> {
    let mut hits = Vec::new();
    words
        .iter()
        .map(|w| {
            let Some(t) = terms.iter().find(|t| t.word == *w) else {
                return Ok(false);
            };
            super::eval::hits_in(s, t, doc, &mut hits)?;
            Ok(hits.iter().any(|h| h.fancy_type().is_none()))
        })
        .collect()
}

/// The snippet of a stored page ([`page_snippet`]): from the page's first
/// [`SNIPPET_HORIZON`] words when a window there holds every query word the
/// page's text holds, else from its first [`SNIPPET_SECOND_HORIZON`] words
/// when a window there does, else from the whole page. `None` when it is
/// not HTML.
///
/// Which query words the text holds is `held`'s answer (one flag a word,
/// from the index's hits), asked only when the first horizon lacks some
/// query word: a page found by its title, URL or anchors alone (a source
/// listing by "source", which only its title says) would otherwise be read
/// whole, megabytes, to look for a word its text does not have.
pub fn stored_snippet(
    e: &mut crate::docstore::Extracting<'_>,
    words: &[String],
    stemmer: Option<&crate::index::stem::Stemmer>,
    held: impl FnOnce() -> Result<Vec<bool>>,
) -> Result<Option<Snippet>> {
    // What a window must hold: every query word, then, once the first
    // horizon lacked one, every query word the text holds (`held`, asked
    // once).
    let mut needed = vec![true; words.len()];
    let mut held = Some(held);
    for horizon in [Some(SNIPPET_HORIZON), Some(SNIPPET_SECOND_HORIZON), None] {
        let Some(page) = e.read(horizon) else {
            return Ok(None);
        };
        let w = Window::of(page, words, stemmer);
        if horizon.is_none() || !page.words_cut || w.covers(&needed) {
            return Ok(Some(w.render()));
        }
        if let Some(ask) = held.take() {
            needed = ask()?;
            if w.covers(&needed) {
                return Ok(Some(w.render()));
            }
        }
    }
    Ok(None)
}

/// The snippet of an extracted page for the query `words`: the window of
/// [`SNIPPET_WORDS`] words with the most distinct query words (a question's
/// stopwords counting only when it has nothing else), then the most
/// occurrences, then the earliest; shown in the page's own text (case,
/// punctuation) when the extractor kept it, else as the indexed words.
/// With the index's `stemmer`, `words` are stems and a page word matches
/// when its stem does.
pub fn page_snippet(
    page: &crate::ingest::html::Page,
    words: &[String],
    stemmer: Option<&crate::index::stem::Stemmer>,
) -> Snippet {
    Window::of(page, words, stemmer).render()
}

/// A page's best snippet window for a query, before it is shown: worked
/// out once a page read, whatever query words it is then asked to hold
/// ([`Self::covers`]).
struct Window<'p, 'w> {
    /// The page, and its words.
    page: &'p crate::ingest::html::Page,
    page_words: Vec<&'p str>,
    /// Per page word, the query word it is ([`query_words_in`]).
    which: Vec<Option<usize>>,
    /// The window: its first word, its length, and how many distinct
    /// marked query words it holds ([`best_window`]).
    best: usize,
    len: usize,
    covered: usize,
    /// The query's words, and those of them that are marked
    /// ([`marked_words`]).
    words: &'w [String],
    marked: Vec<&'w str>,
}

impl<'p, 'w> Window<'p, 'w> {
    /// The best window of `page` for the query `words`.
    fn of(
        page: &'p crate::ingest::html::Page,
        words: &'w [String],
        stemmer: Option<&crate::index::stem::Stemmer>,
    ) -> Self {
        let page_words: Vec<&str> = page.words().collect();
        let which = query_words_in(&page_words, words, stemmer);
        let (best, len, covered) = best_window(&which, words);
        Window {
            page,
            page_words,
            which,
            best,
            len,
            covered,
            words,
            marked: marked_words(words),
        }
    }

    /// Whether the window holds every marked query word that `need` flags
    /// (one flag a place in the query's words).
    fn covers(&self, need: &[bool]) -> bool {
        let words = self.words;
        let mut needed: Vec<&str> = self
            .marked
            .iter()
            .copied()
            .filter(|m| words.iter().zip(need).any(|(w, &n)| n && w == m))
            .collect();
        needed.sort_unstable();
        needed.dedup();
        self.covered >= needed.len()
    }

    /// The window shown: in the page's own text (case, punctuation) when
    /// the extractor kept it, else as the indexed words.
    fn render(&self) -> Snippet {
        let (page, words, best, len) = (self.page, self.words, self.best, self.len);
        let (page_words, which) = (&self.page_words, &self.which);
        if !page.text.is_empty() {
            if let Some(spans) = align(&page.text, &page_words[..best + len]) {
                let spans = &spans[best..];
                let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
                    return Snippet {
                        text: String::new(),
                        marks: Vec::new(),
                    };
                };
                let mut text = String::new();
                if best > 0 {
                    text.push_str("… ");
                }
                let base = text.len();
                text.push_str(&page.text[first.0..last.1]);
                let is_marked = marked_slots(words, &self.marked);
                let marks = spans
                    .iter()
                    .zip(&which[best..best + len])
                    .filter(|(_, q)| q.is_some_and(|q| is_marked[q]))
                    .map(|(sp, _)| (base + sp.0 - first.0, base + sp.1 - first.0))
                    .collect();
                if best + len < page_words.len()
                    || last.1 < page.text.trim_end().len()
                    || page.words_cut
                {
                    text.push_str(" …");
                }
                return Snippet { text, marks };
            }
        }
        render_words(
            page_words,
            which,
            &page.flags,
            &marked_slots(words, &self.marked),
            (best, len),
            page.words_cut,
        )
    }
}

/// Per page word, the query word it is (its first place in `words`), by
/// its stem with the index's `stemmer`.
fn query_words_in(
    page: &[&str],
    words: &[String],
    stemmer: Option<&crate::index::stem::Stemmer>,
) -> Vec<Option<usize>> {
    let find = |w: &str| words.iter().position(|q| q == w);
    match stemmer {
        None => page.iter().map(|w| find(w)).collect(),
        Some(st) => {
            // A page repeats its words (a source listing its identifiers
            // thousands of times): each distinct one is stemmed once.
            let mut seen: HashMap<&str, Option<usize>> = HashMap::new();
            page.iter()
                .map(|&w| *seen.entry(w).or_insert_with(|| find(&st.word(w))))
                .collect()
        }
    }
}

/// Per query word, whether it is among the `marked` ones.
fn marked_slots(words: &[String], marked: &[&str]) -> Vec<bool> {
    words.iter().map(|w| marked.contains(&w.as_str())).collect()
}

/// The query words that are marked: all but a question's stopwords, or
/// all of them when there is nothing else.
fn marked_words(words: &[String]) -> Vec<&str> {
    let content: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| !QUESTION_STOPWORDS.contains(w))
        .collect();
    if content.is_empty() {
        words.iter().map(String::as_str).collect()
    } else {
        content
    }
}

/// The byte spans in `text` of `words` (its tokens, in order): each word
/// is the next run of `text` whose characters lowercase to it. `None` when
/// a word is not found within a short distance (text cut at its cap, or a
/// word the tokenizer shortened).
fn align(text: &str, words: &[&str]) -> Option<Vec<(usize, usize)>> {
    const SLACK: usize = 64;
    let mut spans = Vec::with_capacity(words.len());
    let mut at = 0;
    for w in words {
        let mut found = None;
        for (skipped, (i, _)) in text[at..].char_indices().enumerate() {
            if skipped > SLACK {
                break;
            }
            let start = at + i;
            let mut want = w.chars();
            let mut end = start;
            let mut ok = true;
            let mut pending: Vec<char> = Vec::new();
            for c in text[start..].chars() {
                pending.clear();
                pending.extend(c.to_lowercase());
                let mut matched = true;
                for lc in &pending {
                    if want.next() != Some(*lc) {
                        matched = false;
                        break;
                    }
                }
                if !matched {
                    ok = false;
                    break;
                }
                end += c.len_utf8();
                if want.as_str().is_empty() {
                    break;
                }
            }
            if ok && want.as_str().is_empty() && end > start {
                found = Some((start, end));
                break;
            }
        }
        let (s, e) = found?;
        spans.push((s, e));
        at = e;
    }
    Some(spans)
}

/// The best window of `page` for `words`: (first word, length, distinct
/// query words it holds that count).
fn best_window(which: &[Option<usize>], words: &[String]) -> (usize, usize, usize) {
    let n = which.len();
    let content = marked_words(words);
    let counts_for = |q: usize| content.contains(&words[q].as_str());
    let len = SNIPPET_WORDS.min(n);
    let mut counts = vec![0usize; words.len()];
    let (mut distinct, mut total) = (0usize, 0usize);
    let add =
        |k: usize, d: i32, counts: &mut Vec<usize>, distinct: &mut usize, total: &mut usize| {
            if let Some(q) = which[k] {
                if !counts_for(q) {
                    return;
                }
                if d > 0 {
                    counts[q] += 1;
                    *total += 1;
                    if counts[q] == 1 {
                        *distinct += 1;
                    }
                } else {
                    counts[q] -= 1;
                    *total -= 1;
                    if counts[q] == 0 {
                        *distinct -= 1;
                    }
                }
            }
        };
    for k in 0..len {
        add(k, 1, &mut counts, &mut distinct, &mut total);
    }
    let (mut best, mut best_key) = (0, (distinct, total));
    for start in 1..=n.saturating_sub(len) {
        add(start - 1, -1, &mut counts, &mut distinct, &mut total);
        add(start + len - 1, 1, &mut counts, &mut distinct, &mut total);
        if (distinct, total) > best_key {
            best = start;
            best_key = (distinct, total);
        }
    }
    (best, len, best_key.0)
}

/// A snippet of the indexed words (capitalized as written, joined by
/// spaces), for a page whose text was not kept; `cut` when the page goes on
/// past `page`.
fn render_words(
    page: &[&str],
    which: &[Option<usize>],
    flags: &[u8],
    is_marked: &[bool],
    (best, len): (usize, usize),
    cut: bool,
) -> Snippet {
    let n = page.len();
    let mut text = String::new();
    let mut marks = Vec::new();
    if best > 0 {
        text.push_str("… ");
    }
    for (k, w) in page.iter().enumerate().skip(best).take(len) {
        if k > best {
            text.push(' ');
        }
        let at = text.len();
        if flags.get(k).is_some_and(|f| f & flag::CAPITALIZED != 0) {
            let mut cs = w.chars();
            if let Some(c) = cs.next() {
                text.extend(c.to_uppercase());
                text.push_str(cs.as_str());
            }
        } else {
            text.push_str(w);
        }
        if which
            .get(k)
            .copied()
            .flatten()
            .is_some_and(|q| is_marked[q])
        {
            marks.push((at, text.len()));
        }
    }
    if best + len < n || cut {
        text.push_str(" …");
    }
    Snippet { text, marks }
}

/// The snippet of a page's words (with their flag bytes) for the query
/// `words`, in the indexed words (no page text).
pub fn snippet(page: &[&str], flags: &[u8], words: &[String]) -> Snippet {
    let which = query_words_in(page, words, None);
    let (best, len, _) = best_window(&which, words);
    let is_marked = marked_slots(words, &marked_words(words));
    render_words(page, &which, flags, &is_marked, (best, len), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_window_has_the_most_query_words() {
        let page: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let mut page: Vec<&str> = page.iter().map(String::as_str).collect();
        page[60] = "rust";
        page[62] = "vec";
        page[10] = "vec";
        let mut flags = vec![0u8; 100];
        flags[60] = flag::CAPITALIZED;
        let s = snippet(&page, &flags, &["rust".into(), "vec".into()]);
        assert!(
            s.text.starts_with("… ") && s.text.ends_with(" …"),
            "{}",
            s.text
        );
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["Rust", "vec"]);
        // Short page: the whole page, no ellipsis.
        let s = snippet(&["a", "rust"], &[0, 0], &["rust".into()]);
        assert_eq!(s.text, "a rust");
        assert_eq!(s.marks, vec![(2, 6)]);
        let s = snippet(&[], &[], &["rust".into()]);
        assert_eq!(s.text, "");
    }

    /// A page of `n` filler words with `at[i].1` in place of word `at[i].0`.
    fn long_page(n: usize, at: &[(usize, &str)]) -> String {
        let mut w: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
        for &(k, word) in at {
            w[k] = word.to_string();
        }
        // Words in elements of their own, as real pages have them (reading
        // stops at a tag).
        format!("<p><span>{}</span>.</p>", w.join("</span> <span>"))
    }

    fn snippet_of(html: &str, words: &[&str]) -> (Snippet, Snippet) {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let mut x = crate::ingest::html::Extractor::new();
        x.set_keep_text(true);
        x.set_max_words(None);
        let page = x.extract(html.as_bytes(), None).unwrap().clone();
        let whole = page_snippet(&page, &words, None);
        // What the index says: whether the page's words hold the word.
        let held: Vec<bool> = words.iter().map(|w| page.words().any(|p| p == w)).collect();
        let stored = stored_snippet(
            &mut crate::docstore::Extracting::new(&mut x, html.as_bytes(), None),
            &words,
            None,
            || Ok(held),
        )
        .unwrap()
        .expect("html");
        (stored, whole)
    }

    #[test]
    fn a_long_pages_snippet_is_read_past_the_horizon_only_when_needed() {
        let n = SNIPPET_HORIZON * 3;
        let late = SNIPPET_HORIZON * 2;
        let html = long_page(
            n,
            &[
                (100, "Alpha"),
                (103, "beta"),
                (late, "alpha"),
                (late + 1, "beta"),
                (late + 2, "alpha"),
                (late + 5, "gamma"),
            ],
        );
        // Both words within the horizon: that window, though a later one
        // holds more of them, and an ellipsis for the page not read.
        let (s, whole) = snippet_of(&html, &["alpha", "beta"]);
        assert!(
            s.text.starts_with("… w") && s.text.ends_with(" …"),
            "{}",
            s.text
        );
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["Alpha", "beta"]);
        assert!(
            whole.text.contains(&format!("w{}", late - 1)),
            "{}",
            whole.text
        );
        // A word only past the horizon: the whole page is read, and the
        // snippet is the one the whole page gives.
        for q in [
            &["gamma"][..],
            &["alpha", "gamma"],
            &["beta", "gamma", "delta"],
        ] {
            let (s, whole) = snippet_of(&html, q);
            assert_eq!(s, whole, "{q:?}");
            assert!(s.text.contains("gamma"), "{q:?}: {}", s.text);
        }
        // A page shorter than the horizon is read once, whole.
        let short = long_page(200, &[(50, "gamma")]);
        let (s, whole) = snippet_of(&short, &["gamma", "delta"]);
        assert_eq!(s, whole);
    }

    #[test]
    fn a_word_past_the_first_horizon_is_looked_for_in_the_second_first() {
        let n = SNIPPET_SECOND_HORIZON * 2;
        let (mid, late) = (SNIPPET_SECOND_HORIZON / 2, SNIPPET_SECOND_HORIZON + 100);
        let html = long_page(
            n,
            &[
                (mid, "alpha"),
                (mid + 2, "gamma"),
                (late, "alpha"),
                (late + 1, "gamma"),
                (late + 2, "alpha"),
                (late + 3, "gamma"),
                (late + 20, "delta"),
            ],
        );
        // Both words before the second horizon: that window, though a later
        // one holds more of them.
        let (s, whole) = snippet_of(&html, &["alpha", "gamma"]);
        assert!(s.text.contains(&format!("w{}", mid + 1)), "{}", s.text);
        assert!(
            whole.text.contains(&format!("w{}", late - 1)),
            "{}",
            whole.text
        );
        // A word only past it: the whole page's snippet.
        for q in [&["delta"][..], &["alpha", "delta"]] {
            let (s, whole) = snippet_of(&html, q);
            assert_eq!(s, whole, "{q:?}");
        }
        // A word the page does not have is not looked for: the window
        // before the second horizon with the others.
        let (s, whole) = snippet_of(&html, &["gamma", "epsilon"]);
        assert!(s.text.contains(&format!("w{}", mid + 1)), "{}", s.text);
        assert!(
            whole.text.contains(&format!("w{}", late - 1)),
            "{}",
            whole.text
        );
    }

    #[test]
    fn a_word_the_text_lacks_is_not_looked_for_past_the_first_horizon() {
        let n = SNIPPET_HORIZON * 3;
        let late = SNIPPET_HORIZON * 2;
        let html = long_page(n, &[(100, "alpha"), (late, "alpha"), (late + 2, "alpha")]);
        // "source" is not in the text (a source listing's title says it):
        // the first horizon's window with the other words, though a later
        // one holds more of them.
        let (s, whole) = snippet_of(&html, &["source", "alpha"]);
        assert!(s.text.ends_with("w99 alpha …"), "{}", s.text);
        assert!(s.text.ends_with(" …"), "{}", s.text);
        assert!(
            whole.text.contains(&format!("w{}", late + 1)),
            "{}",
            whole.text
        );
        // None of the query words: the page's beginning, as reading it
        // whole gives.
        for q in [&["source"][..], &["source", "code"]] {
            let (s, whole) = snippet_of(&html, q);
            assert_eq!(s, whole, "{q:?}");
            assert!(s.text.starts_with("w0 w1"), "{}", s.text);
        }
    }

    #[test]
    fn snippets_show_the_pages_own_text() {
        let mut x = crate::ingest::html::Extractor::new();
        x.set_keep_text(true);
        let body =
            b"<p>Intro.</p><p>How do I make a <b>Backup</b> of my database? Use pg_dump; it's \
                     that simple &amp; safe.</p>";
        let page = x.extract(body, None).unwrap().clone();
        let words: Vec<String> = [
            "how", "do", "i", "make", "a", "backup", "of", "my", "database",
        ]
        .map(String::from)
        .to_vec();
        let s = page_snippet(&page, &words, None);
        assert!(
            s.text
                .contains("Backup of my database? Use pg_dump; it's that simple & safe"),
            "{}",
            s.text
        );
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        // The question's stopwords are not marked on their own.
        assert_eq!(marked, ["make", "Backup", "database"]);
        // A query of stopwords only marks them.
        let s = page_snippet(&page, &["of".to_string()], None);
        let marked: Vec<&str> = s.marks.iter().map(|&(a, b)| &s.text[a..b]).collect();
        assert_eq!(marked, ["of"]);
        // Without the kept text: the indexed words.
        let mut x = crate::ingest::html::Extractor::new();
        let plain = x.extract(body, None).unwrap().clone();
        let s = page_snippet(&plain, &words, None);
        assert!(
            s.text.contains("Backup of my database Use pg dump"),
            "{}",
            s.text
        );
    }
}
