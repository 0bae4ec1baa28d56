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
//!   query words (then the most occurrences, then the earliest), its words
//!   capitalized as written (the capitalization flag) and joined by spaces;
//!   the query words are returned as byte ranges ([`Snippet::marks`]), not
//!   markup, so a terminal and a web page each render them their own way.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use super::eval::{hits_of, Match, Term};
use super::query::{HostClustering, Query};
use super::rank::Scorer;
use super::{SearchResult, Searcher};
use crate::container::pagefile::PageFile;
use crate::dedup::files::for_each_cluster_member;
use crate::error::Result;
use crate::ingest::html::{flag, Extractor};
use crate::ingest::records;
use crate::ingest::warc::charset_param;

/// Words in a snippet.
pub const SNIPPET_WORDS: usize = 32;
/// Anchor texts looked at for the title of a page never crawled.
const ANCHOR_TITLES: usize = 64;

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
    matches.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
    let window = q.group_window.max(want).min(matches.len());
    let clusters = s.clusters.as_ref().filter(|_| q.collapse_similar);
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
    let mut groups: Vec<Group> = Vec::new();
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
        let cluster = clusters.and_then(|(_, map)| map.get(&m.doc).copied());
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

/// The result shown for `g`.
pub fn result(s: &Searcher, terms: &[Term], q: &Query, g: Group) -> Result<SearchResult> {
    let docid = u64::from(g.lead.doc);
    let doc = s.doc(docid)?;
    let mut title = doc.title.clone();
    let mut title_from_anchor = false;
    if !doc.crawled && title.is_empty() {
        if let Some(f) = &s.anchors {
            if let Some(t) = anchor_title(f, docid)? {
                title = t;
                title_from_anchor = true;
            }
        }
    }
    let snippet = match (&s.repository, doc.page) {
        (Some(repo), Some(page)) if q.snippets => page_snippet(repo, page, &q.words)?,
        _ => None,
    };
    let explain = if q.explain {
        hits_of(s, terms, g.lead.doc)?.map(|hits| {
            let mut scorer = Scorer::new();
            scorer.load(hits.iter().map(Vec::as_slice));
            let names: Vec<String> = terms.iter().map(|t| t.word.clone()).collect();
            scorer.explain(&names, &q.weights, g.lead.pagerank, s.doc_count())
        })
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
        explain,
    })
}

/// The doc → cluster map of a cluster file, or `None` when it has more than
/// `max` members.
pub fn load_clusters(path: &Path, max: u64) -> Result<Option<HashMap<u32, u32>>> {
    let f = PageFile::open(path, &crate::dedup::files::CLUSTERS)?;
    if f.records() > max {
        return Ok(None);
    }
    let mut map = HashMap::with_capacity(f.records() as usize);
    for_each_cluster_member(path, |c, d, _| {
        if let (Ok(c), Ok(d)) = (u32::try_from(c), u32::try_from(d)) {
            map.insert(d, c);
        }
        Ok(())
    })?;
    Ok(Some(map))
}

/// The anchor text most of the first [`ANCHOR_TITLES`] links to `doc` use
/// (ties: the first seen).
pub fn anchor_title(anchors: &PageFile, doc: u64) -> Result<Option<String>> {
    let mut texts: Vec<(String, usize)> = Vec::new();
    let mut seen = 0;
    let mut buf = (Vec::new(), Vec::new());
    anchors.visit_key(doc, &mut buf, |target, input| {
        let (_, _, text) = records::decode_anchor(input)?;
        if target == doc && seen < ANCHOR_TITLES {
            seen += 1;
            let text = text.trim();
            if !text.is_empty() {
                match texts.iter_mut().find(|(t, _)| t == text) {
                    Some((_, n)) => *n += 1,
                    None => texts.push((text.to_string(), 1)),
                }
            }
        }
        Ok(seen < ANCHOR_TITLES)
    })?;
    // The most used; among equals the first seen.
    let best = texts
        .iter()
        .enumerate()
        .max_by_key(|(k, (_, n))| (*n, std::cmp::Reverse(*k)))
        .map(|(_, (t, _))| t.clone());
    Ok(best)
}

/// The snippet of repository page `page` for `words`; `None` when the page
/// is not in the repository or not HTML.
pub fn page_snippet(repo: &PageFile, page: u64, words: &[String]) -> Result<Option<Snippet>> {
    let Some(i) = repo.find_block(page) else {
        return Ok(None);
    };
    let mut buf = (Vec::new(), Vec::new());
    let mut out = None;
    let mut extractor = Extractor::new();
    repo.visit_block(i, &mut buf, |p, input| {
        let (content_type, body) = records::decode_repo(input)?;
        if p == page {
            if let Ok(pg) = extractor.extract(body, charset_param(content_type)) {
                let page_words: Vec<&str> = pg.words().collect();
                out = Some(snippet(&page_words, &pg.flags, words));
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// The snippet of a page's words (with their flag bytes) for the query `words`.
pub fn snippet(page: &[&str], flags: &[u8], words: &[String]) -> Snippet {
    let n = page.len();
    let which: Vec<Option<usize>> = page
        .iter()
        .map(|w| words.iter().position(|q| q == w))
        .collect();
    let len = SNIPPET_WORDS.min(n);
    let mut counts = vec![0usize; words.len()];
    let (mut distinct, mut total) = (0usize, 0usize);
    let add =
        |k: usize, d: i32, counts: &mut Vec<usize>, distinct: &mut usize, total: &mut usize| {
            if let Some(q) = which[k] {
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
    let mut text = String::new();
    let mut marks = Vec::new();
    if best > 0 {
        text.push_str("… ");
    }
    for k in best..best + len {
        if k > best {
            text.push(' ');
        }
        let at = text.len();
        let w = page[k];
        if flags.get(k).is_some_and(|f| f & flag::CAPITALIZED != 0) {
            let mut cs = w.chars();
            if let Some(c) = cs.next() {
                text.extend(c.to_uppercase());
                text.push_str(cs.as_str());
            }
        } else {
            text.push_str(w);
        }
        if which[k].is_some() {
            marks.push((at, text.len()));
        }
    }
    if best + len < n {
        text.push_str(" …");
    }
    Snippet { text, marks }
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
}
