//! The served pages as HTML: one layout (a header with the query box), the
//! home page, result pages, a document's page, the stats page and error
//! pages. Every string from the job or the request is escaped by [`esc`];
//! nothing else is interpolated.

use std::fmt::Write;

use webmill::docs::Doc;
use webmill::search::{Results, SearchResult, Snippet};

use super::data::{DocInfo, Served, LINKS_SHOWN};

/// Escapes text for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encodes a query-string value.
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

const STYLE: &str = "
body{font-family:system-ui,sans-serif;margin:0;color:#202124;line-height:1.4}
header{display:flex;gap:1em;align-items:center;padding:.8em 1.5em;border-bottom:1px solid #ddd;background:#fafafa}
header a.brand{font-weight:700;font-size:1.3em;color:#1a0dab;text-decoration:none}
main{padding:1em 1.5em;max-width:75em}
form.q input[type=search]{width:28em;max-width:70vw;font-size:1em;padding:.35em .6em}
form.q button{font-size:1em;padding:.35em .9em}
.home{text-align:center;margin-top:12vh}
.home form.q input[type=search]{width:36em}
.result{margin:1.3em 0}
.result a.title{font-size:1.15em;color:#1a0dab;text-decoration:none}
.result a.title:hover{text-decoration:underline}
.url{color:#006621;font-size:.9em;word-break:break-all}
.snippet{color:#4d5156}
.snippet b{color:#202124}
.meta{font-size:.85em;color:#70757a}
.meta a{color:#70757a}
.bar{display:inline-block;height:.6em;background:#34a853;vertical-align:middle;margin:0 .3em}
.barbox{display:inline-block;width:6em;background:#e8eaed;vertical-align:middle}
details{font-size:.9em;margin-top:.2em}
.pages a,.pages b{margin:0 .35em}
.note{color:#70757a}
table.fig td{padding:.1em .8em .1em 0}
table.fig td.n{text-align:right;font-variant-numeric:tabular-nums}
pre.text{white-space:pre-wrap;background:#f8f9fa;padding:.8em;border:1px solid #eee}
figure{margin:1.5em 0;display:inline-block;max-width:48%;vertical-align:top}
.stages{display:flex;flex-wrap:wrap;gap:0 2.5em}
.stages h3{margin-bottom:.3em}
figure img{max-width:100%;border:1px solid #eee}
";

/// A whole page: head, the header with the query box (holding `query`),
/// then `body`.
pub fn layout(app: &Served, title: &str, query: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\
         <header><a class=\"brand\" href=\"/\">webmill</a>{form}\
         <a href=\"/stats\">stats of {job}</a></header><main>{body}</main></body></html>\n",
        title = esc(title),
        job = esc(&app.name),
        form = query_form(query),
    )
}

fn query_form(query: &str) -> String {
    format!(
        "<form class=\"q\" action=\"/search\" method=\"get\" role=\"search\">\
         <input type=\"search\" name=\"q\" value=\"{}\" aria-label=\"query\" \
         maxlength=\"{}\"> <button type=\"submit\">Search</button></form>",
        esc(query),
        super::MAX_QUERY_CHARS
    )
}

/// The query language, as the home page explains it.
const QUERY_HELP: &str = "<p class=\"note\">Search with words; <code>\"a phrase\"</code> \
     for words in a row; <code>-word</code> or <code>-\"a phrase\"</code> to leave pages out; \
     <code>backup OR restore</code> (or <code>(point in time) OR pitr</code>) for either; \
     <code>site:example.org</code> for one host and its subdomains.</p>";

/// The home page: the query box and what the job holds.
pub fn home(app: &Served) -> String {
    let mut body = String::from("<div class=\"home\"><h1>webmill</h1>");
    body.push_str(&query_form(""));
    let _ = write!(
        body,
        "<p class=\"note\">{} — {} documents ({} crawled)",
        esc(&app.name),
        thousands(app.doc_count()),
        thousands(app.crawled())
    );
    if let Some(arcs) = app.arcs() {
        let _ = write!(body, ", {} links", thousands(arcs));
    }
    body.push_str("</p>");
    if let Err(why) = &app.searcher {
        let _ = write!(body, "<p class=\"note\">{}</p>", esc(why));
    }
    body.push_str(QUERY_HELP);
    body.push_str("</div>");
    // The home page has its own big box; the header keeps only the links.
    layout(app, &format!("webmill — {}", app.name), "", &body)
}

/// A page of results for `query` (page `page`, 1-based, of `per_page`).
pub fn results(app: &Served, query: &str, page: usize, per_page: usize, r: &Results) -> String {
    let mut body = String::new();
    let groups = r.groups as usize;
    if let Some(why) = &r.empty {
        let _ = write!(
            body,
            "<p class=\"empty\">No results: {}.</p>",
            esc(&why.to_string())
        );
    } else {
        let first = (page - 1) * per_page + 1;
        let _ = write!(
            body,
            "<p class=\"note\" id=\"count\">{} matching documents{}; results {}–{}{}</p>",
            if r.total_estimated {
                crate::cmd::about_within(r.total, r.total_bounds.0, r.total_bounds.1)
            } else {
                thousands(r.total)
            },
            if r.timed_out {
                " (a partial answer: matching stopped at the query time limit)"
            } else if r.cut_off {
                " (stopped at the cut-off)"
            } else {
                ""
            },
            first,
            first + r.results.len().saturating_sub(1),
            if r.host_clusters {
                ", grouped by host"
            } else {
                ""
            },
        );
    }
    if r.ignored_words > 0 {
        let _ = write!(
            body,
            "<p class=\"note\">{} words past the first {} were not searched.</p>",
            r.ignored_words,
            webmill::search::MAX_QUERY_WORDS
        );
    }
    for (i, res) in r.results.iter().enumerate() {
        // Complete matches rank first whatever their scores.
        let after_complete = match i {
            0 => r.complete > 0,
            _ => r.results[i - 1].complete,
        };
        if !res.complete && after_complete {
            let _ = write!(
                body,
                "<p class=\"note partial\">{}</p>",
                esc(crate::cmd::search::PARTIAL_MATCHES)
            );
        }
        result(app, &mut body, res, r.pagerank);
    }
    pagination(&mut body, query, page, per_page, groups);
    layout(app, &format!("{query} — webmill"), query, &body)
}

fn result(app: &Served, body: &mut String, res: &SearchResult, pagerank: bool) {
    let title = if res.title.is_empty() {
        res.url.as_str()
    } else {
        res.title.as_str()
    };
    let _ = write!(
        body,
        "<div class=\"result\"><a class=\"title\" href=\"{url}\">{title}</a>\
         <div class=\"url\">{url_text}</div>",
        url = esc(&res.url),
        url_text = esc(&res.url),
        title = esc(title),
    );
    if let Some(s) = &res.snippet {
        let _ = write!(body, "<div class=\"snippet\">{}</div>", marked(s));
    } else if !res.crawled {
        body.push_str(
            "<div class=\"snippet note\">Not crawled; found by the text of links to it.</div>",
        );
    }
    let _ = write!(body, "<div class=\"meta\">score {:.3}", res.score);
    if let (true, Some(pr)) = (pagerank, res.pagerank) {
        body.push_str(" · PageRank ");
        rank_bar(body, pr, app.doc_count());
    }
    let _ = write!(
        body,
        " · <a class=\"doc\" href=\"/doc/{}\">page info and cached text</a></div>",
        res.docid
    );
    for (what, docs) in [
        ("more from this host", &res.host_more),
        ("similar", &res.similar),
    ] {
        if docs.is_empty() {
            continue;
        }
        let _ = write!(
            body,
            "<details><summary>+{} {what}</summary><ul>",
            docs.len()
        );
        for &d in docs.iter().take(LINKS_SHOWN) {
            let label = app
                .doc(d)
                .map(|doc| {
                    if doc.title.is_empty() {
                        doc.url
                    } else {
                        doc.title
                    }
                })
                .unwrap_or_else(|_| format!("docID {d}"));
            let _ = write!(body, "<li><a href=\"/doc/{d}\">{}</a></li>", esc(&label));
        }
        body.push_str("</ul></details>");
    }
    body.push_str("</div>");
}

/// PageRank as a bar on a log scale: the average page (`1/N`) fills a
/// quarter, each factor of 10 above it another quarter.
fn rank_bar(body: &mut String, pr: f64, n: u64) {
    let rel = pr * n.max(1) as f64;
    let width = (25.0 * (rel.max(1e-12).log10() + 1.0)).clamp(2.0, 100.0);
    let _ = write!(
        body,
        "<span class=\"barbox\" title=\"{pr:.3e} ({rel:.2}× the average page)\">\
         <span class=\"bar\" style=\"width:{width:.0}%\"></span></span>"
    );
}

/// The snippet's text with its marks in `<b>`.
fn marked(s: &Snippet) -> String {
    let mut out = String::new();
    let mut at = 0;
    for &(a, b) in &s.marks {
        let (Some(before), Some(word)) = (s.text.get(at..a), s.text.get(a..b)) else {
            continue;
        };
        out.push_str(&esc(before));
        let _ = write!(out, "<b>{}</b>", esc(word));
        at = b;
    }
    out.push_str(&esc(s.text.get(at..).unwrap_or_default()));
    out
}

fn pagination(body: &mut String, query: &str, page: usize, per_page: usize, groups: usize) {
    let pages = groups.div_ceil(per_page.max(1)).min(super::MAX_PAGE);
    if pages <= 1 {
        return;
    }
    let link = |p: usize, label: &str| {
        format!(
            "<a href=\"/search?q={}&amp;page={p}\">{label}</a>",
            query_value(query)
        )
    };
    body.push_str("<nav class=\"pages\">");
    if page > 1 {
        body.push_str(&link(page - 1, "‹ Previous"));
    }
    let lo = page.saturating_sub(5).max(1);
    let hi = (lo + 9).min(pages);
    for p in lo..=hi {
        if p == page {
            let _ = write!(body, "<b>{p}</b>");
        } else {
            body.push_str(&link(p, &p.to_string()));
        }
    }
    if page < pages {
        body.push_str(&link(page + 1, "Next ›"));
    }
    body.push_str("</nav>");
}

/// A document's page.
pub fn doc(app: &Served, d: &DocInfo) -> String {
    let title = if d.doc.title.is_empty() {
        d.doc.url.clone()
    } else {
        d.doc.title.clone()
    };
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1 id=\"title\">{}</h1><p class=\"url\"><a href=\"{u}\">{u}</a></p><table class=\"fig\">",
        esc(&title),
        u = esc(&d.doc.url)
    );
    let row = |body: &mut String, k: &str, v: String| {
        let _ = write!(body, "<tr><td>{k}</td><td>{v}</td></tr>");
    };
    row(&mut body, "docID", d.docid.to_string());
    row(
        &mut body,
        "crawled",
        if d.doc.crawled {
            format!("yes, {} bytes", thousands(d.doc.bytes))
        } else {
            "no (known from links to it)".into()
        },
    );
    if let Some(pr) = d.rank {
        let mut bar = format!("{pr:.4e} ");
        rank_bar(&mut bar, pr, app.doc_count());
        row(&mut body, "PageRank", bar);
    }
    row(
        &mut body,
        "links in",
        format!(
            "{}{}",
            thousands(d.in_count),
            if d.in_capped { "+" } else { "" }
        ),
    );
    row(&mut body, "links out", thousands(d.out_count));
    body.push_str("</table>");

    let _ = write!(body, "<h2>Links to this page</h2>");
    if d.in_links.is_empty() {
        body.push_str("<p class=\"note\">None in this job.</p>");
    } else {
        body.push_str("<ul class=\"in\">");
        for (src, doc, text) in &d.in_links {
            let _ = write!(
                body,
                "<li><a href=\"/doc/{src}\">{}</a>: “{}”</li>",
                esc(if doc.title.is_empty() {
                    &doc.url
                } else {
                    &doc.title
                }),
                esc(text)
            );
        }
        body.push_str("</ul>");
        more_note(&mut body, d.in_links.len() as u64, d.in_count);
    }
    let _ = write!(body, "<h2>Links from this page</h2>");
    if d.out_links.is_empty() {
        body.push_str("<p class=\"note\">None in this job.</p>");
    } else {
        body.push_str("<ul class=\"out\">");
        for (dst, doc) in &d.out_links {
            doc_item(&mut body, *dst, doc);
        }
        body.push_str("</ul>");
        more_note(&mut body, d.out_links.len() as u64, d.out_count);
    }
    for (alg, docs) in &d.similar {
        let _ = write!(body, "<h2>Near-duplicates ({})</h2>", alg.name());
        if docs.is_empty() {
            body.push_str("<p class=\"note\">None.</p>");
            continue;
        }
        body.push_str("<ul class=\"similar\">");
        for (id, doc) in docs {
            doc_item(&mut body, *id, doc);
        }
        body.push_str("</ul>");
    }
    if let Some(text) = &d.text {
        let _ = write!(
            body,
            "<h2>Cached text</h2><p class=\"note\">The page's words as indexed \
             (<a href=\"/doc/{}/raw\">the stored bytes</a>).</p><pre class=\"text\">{}</pre>",
            d.docid,
            esc(text)
        );
    }
    layout(app, &format!("{title} — webmill"), "", &body)
}

/// A list item linking to document `id`'s page: its title (its URL when
/// untitled), then its URL.
fn doc_item(body: &mut String, id: u64, doc: &Doc) {
    let _ = write!(
        body,
        "<li><a href=\"/doc/{id}\">{}</a> <span class=\"url\">{}</span></li>",
        esc(if doc.title.is_empty() {
            &doc.url
        } else {
            &doc.title
        }),
        esc(&doc.url)
    );
}

fn more_note(body: &mut String, shown: u64, all: u64) {
    if all > shown {
        let _ = write!(
            body,
            "<p class=\"note\">The first {} of {}.</p>",
            thousands(shown),
            thousands(all)
        );
    }
}

/// The stats page: each finished stage's figures, then the plots.
pub fn stats(app: &Served) -> String {
    let mut body = format!("<h1>{}</h1>", esc(&app.name));
    for (name, caption) in app.plots() {
        let _ = write!(
            body,
            "<figure><img src=\"/plot/{n}\" alt=\"{c}\"><figcaption>{c}</figcaption></figure>",
            n = esc(&name),
            c = esc(&caption)
        );
    }
    body.push_str("<h2>Stages</h2><div class=\"stages\">");
    let stages = match app.stages() {
        Ok(s) => s,
        Err(e) => return error(app, 500, &e.to_string()),
    };
    for st in stages {
        let f = &st.record.figures;
        let _ = write!(
            body,
            "<section><h3>{}</h3><p>{}</p><table class=\"fig\">\
             <tr><td>records</td><td class=\"n\">{}</td></tr>\
             <tr><td>output bytes</td><td class=\"n\">{}</td></tr>\
             <tr><td>time</td><td class=\"n\">{:.1} s</td></tr>\
             <tr><td>peak memory</td><td class=\"n\">{}</td></tr>",
            esc(&st.name),
            esc(&st.headline),
            thousands(f.records),
            webmill::resources::format_bytes(f.bytes),
            f.seconds,
            webmill::resources::format_bytes(f.peak_rss),
        );
        for fig in &st.figures {
            let _ = write!(
                body,
                "<tr><td>{}</td><td class=\"n\">{}</td></tr>",
                esc(&fig.label),
                esc(&fig.amount.show())
            );
        }
        body.push_str("</table></section>");
    }
    body.push_str("</div>");
    layout(app, &format!("{} — stats", app.name), "", &body)
}

/// An error page.
pub fn error(app: &Served, status: u16, message: &str) -> String {
    layout(
        app,
        &format!("{status} — webmill"),
        "",
        &format!("<h1>{status}</h1><p class=\"error\">{}</p>", esc(message)),
    )
}

/// `n` with thousands separators.
pub fn thousands(n: u64) -> String {
    crate::cmd::thousands(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(query_value("a b&c/é"), "a+b%26c%2F%C3%A9");
    }

    #[test]
    fn marks_become_bold_and_bad_ranges_are_skipped() {
        let s = Snippet {
            text: "the <vec> push".into(),
            marks: vec![(4, 9), (10, 14), (12, 99)],
        };
        assert_eq!(marked(&s), "the <b>&lt;vec&gt;</b> <b>push</b>");
    }
}
