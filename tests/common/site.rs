//! A generated site for the index and search tests, and the naive index of
//! it: the token streams inverted in memory.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use super::common::{ingested_job, Rng};
use webmill::container::pagefile::PageFile;
use webmill::docs::DocTable;
use webmill::index::hit::Hit;
use webmill::index::indexer::{fancy_hits, text_hits, Tokens};
use webmill::index::Sources;
use webmill::ingest::records;
use webmill::job::Job;

pub const WORDS: [&str; 12] = [
    "alpha", "Beta", "gamma", "delta", "Rust", "vec", "string", "iter", "map", "fold", "x1", "café",
];

/// A site of `pages` pages with titles, headings, bold and small text, long
/// pages (positions past 4095), links with anchor text between its pages and
/// to pages outside it (never crawled), and pages without a title.
pub fn write_rich_site(dir: &Path, pages: usize, seed: u64) {
    let mut rng = Rng(seed);
    for i in 0..pages {
        let mut html = String::new();
        if i % 5 != 0 {
            html += &format!(
                "<title>{} {} page {i}</title>",
                WORDS[i % 12],
                WORDS[(i / 3) % 12]
            );
        }
        html += &format!("<h{}>{}</h{}>", 1 + i % 3, WORDS[(i * 7) % 12], 1 + i % 3);
        let len = if i % 17 == 3 {
            4200
        } else {
            5 + rng.below(80) as usize
        };
        html += "<p>";
        for k in 0..len {
            let w = WORDS[rng.below(12) as usize];
            match rng.below(10) {
                0 => html += &format!("<b>{w}</b> "),
                1 => html += &format!("<small>{w}</small> "),
                2 => html += &format!("<big>{w}{k}</big> "),
                _ => html += &format!("{w} "),
            }
        }
        html += "</p>";
        for _ in 0..rng.below(6) {
            let t = rng.below(pages as u64);
            let text = format!(
                "{} {}",
                WORDS[rng.below(12) as usize],
                WORDS[rng.below(12) as usize]
            );
            if rng.below(4) == 0 {
                html += &format!(
                    "<a href=\"http://elsewhere.example/{}\">{text} outside</a> ",
                    t % 9
                );
            } else {
                html += &format!("<a href=\"/p{t}.html\">{text}</a> ");
            }
        }
        std::fs::write(dir.join(format!("p{i}.html")), html).unwrap();
    }
}

pub fn site_job(root: &Path, pages: usize, seed: u64) -> Job {
    let site = root.join("site");
    std::fs::create_dir_all(&site).unwrap();
    write_rich_site(&site, pages, seed);
    let input = format!("http://site.example/={}", site.display());
    ingested_job(&root.join("job"), &[input], 32 << 20)
}

pub fn sources(job: &Job) -> Sources {
    Sources {
        text: job.file(webmill::job::JobFile::Text).unwrap(),
        pagedoc: job.file(webmill::job::JobFile::PageDoc).unwrap(),
        docs: job.file(webmill::job::JobFile::Docs).unwrap(),
        anchors: job.file(webmill::job::JobFile::Anchors).unwrap(),
        docs_range: None,
    }
}

/// doc → (plain hits, fancy hits) of one word.
pub type NaiveList = BTreeMap<u32, (Vec<Hit>, Vec<Hit>)>;

/// word → doc → (plain hits, fancy hits).
pub type Naive = BTreeMap<String, NaiveList>;

/// The token streams inverted in memory, read with the ingest readers: page
/// texts of canonical pages, then every doc's URL, title and anchors.
pub fn naive_index(job: &Job) -> Naive {
    let mut index = Naive::new();
    let pagedoc = PageFile::open(
        job.file(webmill::job::JobFile::PageDoc).unwrap(),
        &records::PAGEDOC,
    )
    .unwrap();
    let mut doc_of = BTreeMap::new();
    pagedoc
        .for_each(|page, input| {
            doc_of.insert(page, records::decode_pagedoc(input)?);
            Ok(())
        })
        .unwrap();
    let text = PageFile::open(
        job.file(webmill::job::JobFile::Text).unwrap(),
        &records::TEXT,
    )
    .unwrap();
    text.for_each(|page, input| {
        let (words, flags) = records::decode_text(input)?;
        let (doc, canonical) = doc_of[&page];
        if canonical && !flags.is_empty() {
            let mut hits = Vec::new();
            text_hits(flags, &mut hits);
            for (w, h) in words.split(' ').zip(hits) {
                index
                    .entry(w.to_string())
                    .or_default()
                    .entry(doc as u32)
                    .or_default()
                    .0
                    .push(h);
            }
        }
        Ok(())
    })
    .unwrap();
    let mut anchors: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    PageFile::open(
        job.file(webmill::job::JobFile::Anchors).unwrap(),
        &records::ANCHORS,
    )
    .unwrap()
    .for_each(|target, input| {
        let (src, _, text) = records::decode_anchor(input)?;
        anchors
            .entry(target)
            .or_default()
            .push((src, text.to_string()));
        Ok(())
    })
    .unwrap();
    let docs = DocTable::open(job.file(webmill::job::JobFile::Docs).unwrap()).unwrap();
    let mut t = Tokens::default();
    for d in docs.iter() {
        let (id, d) = d.unwrap();
        let list: Vec<(u64, &str)> = anchors.get(&id).map_or(vec![], |v| {
            v.iter().map(|(s, x)| (*s, x.as_str())).collect()
        });
        fancy_hits(&d.url, &d.title, &list, &mut t);
        for (w, h) in t.words.split(' ').zip(&t.hits) {
            index
                .entry(w.to_string())
                .or_default()
                .entry(id as u32)
                .or_default()
                .1
                .push(*h);
        }
    }
    for docs in index.values_mut() {
        for (plain, fancy) in docs.values_mut() {
            barrel_order(plain, fancy);
        }
    }
    index
}

/// Puts a document's plain and fancy hits of one word in the order a
/// barrel gives them back (formats/barrel.md, "Postings blocks"): plain
/// hits by position and, at equal positions (only those clamped to 4,095
/// can be equal), by class — small (font 0), body (1), bold (2), large
/// (3–6) — each class keeping the order it was given in; fancy hits by
/// type (URL, title, anchor, then meta and reserved types), anchor hits by
/// source hash, position and capitalization (equal ones together), the
/// others keeping the order they were given in.
pub fn barrel_order(plain: &mut [Hit], fancy: &mut [Hit]) {
    plain.sort_by_key(|h| (h.plain_position(), h.font().min(3)));
    fancy.sort_by_key(|h| {
        let ty = (h.0 >> 8 & 0xf).min(3);
        let anchor = ty == 2;
        (ty, anchor.then_some((h.0 >> 4 & 0xf, h.0 & 0xf, h.cap())))
    });
}
