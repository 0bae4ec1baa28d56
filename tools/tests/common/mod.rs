//! Helpers of the command-line tests: the library tests' helpers
//! (`tests/common`), and runs of the webmill binaries.
#![allow(dead_code)]

#[path = "../../../tests/common/mod.rs"]
mod shared;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
pub use shared::*;
use webmill::container::pagefile::PageFile;
use webmill::ingest::records::{self, PageRec};
use webmill::job::{JobFile, JobView};

/// The `webmill` command.
pub fn webmill() -> Command {
    Command::cargo_bin("webmill").unwrap()
}

/// Runs `webmill ARGS…`, asserts that it succeeded (showing its standard
/// error otherwise) and returns its output.
pub fn webmill_ok<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = webmill().args(args).output().unwrap();
    succeeded(&out);
    out
}

/// Asserts that a run succeeded (showing its standard error otherwise) and
/// returns its standard error.
pub fn succeeded(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

/// Runs `cmd`, asserts that it succeeded (showing `what`, its standard
/// output and error otherwise) and returns its output.
pub fn run_ok(cmd: &mut std::process::Command, what: &str) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `webmill ingest --mem 16M EXTRA… --out JOB INPUT`, whatever its outcome.
pub fn ingest(job: &Path, input: &Path, extra: &[&str]) -> Output {
    webmill()
        .args(["ingest", "--mem", "16M"])
        .args(extra)
        .arg("--out")
        .arg(job)
        .arg(input)
        .output()
        .unwrap()
}

/// The Debian PostgreSQL 15 pages (`None`, the test skipped, when they
/// cannot be had) written by `webmill-warc FLAGS…` to `dir/name`, served at
/// [`PG_BASE`] on a fixed date; returns (the file, the HTML directory).
pub fn pg_archive(dir: &Path, flags: &[&str], name: &str) -> Option<(PathBuf, PathBuf)> {
    let pkg = corpus_dir("postgresql-doc-15")?;
    let html = pkg.join("usr/share/doc/postgresql-doc-15/html");
    let out = dir.join(name);
    Command::cargo_bin("webmill-warc")
        .unwrap()
        .args(["-q", "--date", "2024-02-29T12:00:00Z", "--base", PG_BASE])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&html)
        .assert()
        .success();
    Some((out, html))
}

/// Where [`pg_archive`] serves the PostgreSQL pages.
pub const PG_BASE: &str = "https://www.postgresql.org/docs/15/";

/// Ingests `input` (under `dir`) killed with SIGKILL at random moments
/// until a run ends by itself: `files` of the job equal an uninterrupted
/// run's, byte for byte.
pub fn assert_resumes_to_the_same_bytes(dir: &Path, input: &Path, seed: u64, files: &[&str]) {
    let reference = dir.join("reference");
    assert!(ingest(&reference, input, &["--segment-records", "40"])
        .status
        .success());
    let job = dir.join("killed");
    let mut rng = Rng(seed);
    let kills = kill_until_done(
        || {
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("webmill"));
            c.args([
                "ingest",
                "-q",
                "--mem",
                "16M",
                "--segment-records",
                "40",
                "--out",
            ])
            .arg(&job)
            .arg(input);
            c
        },
        &mut rng,
        150,
        600,
    );
    for f in files {
        assert!(
            std::fs::read(reference.join(f)).unwrap() == std::fs::read(job.join(f)).unwrap(),
            "{f} differs after {kills} kills"
        );
    }
}

/// A document: its URL and its text.
pub type Doc = (String, Vec<u8>);

/// An independent reader of a WARC file (gzip by its name, else plain):
/// each record's header fields (first line `WARC/1.0` left out) and block,
/// by the records' own Content-Length.
pub fn warc_records(path: &Path) -> Vec<(BTreeMap<String, String>, Vec<u8>)> {
    use std::io::Read;
    let mut raw = Vec::new();
    let f = std::fs::File::open(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(f)
            .read_to_end(&mut raw)
            .unwrap();
    } else {
        std::io::BufReader::new(f).read_to_end(&mut raw).unwrap();
    }
    let mut out = Vec::new();
    let mut rest = &raw[..];
    while !rest.is_empty() {
        let head_end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head: BTreeMap<String, String> = std::str::from_utf8(&rest[..head_end])
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let len: usize = head["Content-Length"].parse().unwrap();
        out.push((head, rest[head_end + 4..head_end + 4 + len].to_vec()));
        rest = &rest[head_end + 4 + len + 4..];
    }
    out
}

/// An independent reader of a WET file: its conversion records as
/// (target URI, text).
pub fn read_wet(path: &Path) -> Vec<Doc> {
    warc_records(path)
        .into_iter()
        .filter(|(head, _)| head["WARC-Type"] == "conversion")
        .map(|(head, text)| {
            assert_eq!(head["Content-Type"], "text/plain");
            assert!(head.contains_key("WARC-Refers-To") && head.contains_key("WARC-Date"));
            (head["WARC-Target-URI"].clone(), text)
        })
        .collect()
}

/// The PostgreSQL pages' texts, as `webmill-warc --wet` writes them (in
/// `dir`), in order.
pub fn pg_texts(dir: &Path) -> Option<Vec<Doc>> {
    let (wet, _) = pg_archive(dir, &["--wet"], "pg-texts.warc.wet.gz")?;
    Some(read_wet(&wet))
}

/// Every page of a job of text pages (no title, no links): URL → (words of its token stream, repository body).
pub fn text_pages(job: &Path) -> BTreeMap<String, (String, Vec<u8>)> {
    let view = JobView::open(job).unwrap();
    let mut urls = Vec::new();
    PageFile::open(view.file(JobFile::Pages).unwrap(), &records::PAGES)
        .unwrap()
        .for_each(|_, input| {
            let p = PageRec::decode(input)?;
            assert_eq!((p.status, p.title.as_str()), (0, ""));
            urls.push(p.url);
            Ok(())
        })
        .unwrap();
    let mut words = vec![String::new(); urls.len()];
    PageFile::open(view.file(JobFile::Text).unwrap(), &records::TEXT)
        .unwrap()
        .for_each(|page, input| {
            let (w, _) = records::decode_text(input)?;
            words[page as usize] = w.to_string();
            Ok(())
        })
        .unwrap();
    let mut bodies = vec![Vec::new(); urls.len()];
    PageFile::open(view.file(JobFile::Repository).unwrap(), &records::REPO)
        .unwrap()
        .for_each(|page, input| {
            let (ct, body) = records::decode_repo(input)?;
            assert_eq!(ct, "text/plain");
            bodies[page as usize] = body.to_vec();
            Ok(())
        })
        .unwrap();
    let links = PageFile::open(view.file(JobFile::Links).unwrap(), &records::LINKS).unwrap();
    assert_eq!(links.records(), 0, "WET pages have no links");
    urls.into_iter()
        .zip(words.into_iter().zip(bodies))
        .collect()
}

/// The files a job of text pages is compared by after a resumed ingest.
pub const TEXT_JOB_FILES: &[&str] = &[
    "pages.wm",
    "text.wm",
    "repository.wm",
    "links.wm",
    "docs.wm",
];

/// The mixed inputs the Spark tests give both paths: three real WARC
/// files of `data`, then `extra` (a broken one, say), then a site of
/// `pages` HTML pages written with `seed` and 12 near-duplicate pages, both
/// written under `dir`.
pub fn mixed_inputs(
    dir: &Path,
    data: &Path,
    extra: &[&Path],
    pages: usize,
    seed: u64,
) -> Vec<String> {
    let site = dir.join("site");
    write_site(&site, pages, seed);
    let near = dir.join("near");
    write_near_duplicates(&near, 12);
    let mut inputs: Vec<String> = ["iana.warc.gz", "dupes.warc.gz", "example.warc.gz"]
        .iter()
        .map(|f| data.join("warc").join(f).display().to_string())
        .chain(extra.iter().map(|p| p.display().to_string()))
        .collect();
    inputs.push(format!("http://site.example/={}", site.display()));
    inputs.push(format!("http://near.example/={}", near.display()));
    inputs
}

/// Writes `n` HTML pages of about 300 words into `dir` that are near
/// duplicates of each other: every third one the same text exactly (groups
/// of equal keys larger than a small `--max-group`), the others with one or
/// two words changed. For the near-duplicate stages' tests.
pub fn write_near_duplicates(dir: &Path, n: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let words: Vec<String> = (0..300)
        .map(|i| format!("w{}", (i * 7919 + 13) % 1009))
        .collect();
    for i in 0..n {
        let mut w = words.clone();
        if i % 3 != 0 {
            w[(i * 37) % 300] = format!("changed{i}");
            if i % 3 == 2 {
                w[(i * 101) % 300] = format!("altered{i}");
            }
        }
        let html = format!(
            "<html><head><title>near duplicate {i}</title></head><body><p>{}</p></body></html>",
            w.join(" ")
        );
        std::fs::write(dir.join(format!("p{i:03}.html")), html).unwrap();
    }
}

/// Why python3 cannot read Parquet with pyarrow here, if it cannot (the
/// exchange tables' tests then skip, saying so).
pub fn missing_pyarrow() -> Option<String> {
    match Command::new("python3")
        .args(["-c", "import pyarrow.parquet"])
        .output()
    {
        Ok(o) if o.status.success() => None,
        _ => Some("python3 cannot import pyarrow (pip install pyarrow)".into()),
    }
}
