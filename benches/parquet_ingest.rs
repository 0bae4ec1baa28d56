//! Benchmark: Parquet ingest memory on a large document set.
//!
//! Writes a Parquet document set of `--gb` GB of text (default 1; columns
//! `id` and `text`, zstd, row groups of `--row-group-mb` MB of text, default
//! 256: each row group far larger than the `--mem` budget) to `--work DIR`
//! (default `target/bench-parquet`), then runs the release `webmill ingest
//! --mem M` on it (`--mem`, default 64M) as a child process under
//! `/usr/bin/time -v`, and prints the text MB/s of the whole command and of
//! the ingest stage, the command's maximum RSS and the ingest and resolve
//! stages' peak RSS (from `JOB/job.json`). The set and the job are deleted at
//! the end (`--keep` keeps them).
//!
//! The texts are words drawn from a fixed vocabulary by a seeded generator
//! (xorshift), so that runs are comparable; about 2 KB a document.
//!
//! ```text
//! cargo build --release -p webmill-cli
//! cargo bench --bench parquet_ingest -- --gb 1 --mem 64M
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

/// Rows handed to the writer at a time.
const BATCH: usize = 4096;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The release `webmill` next to this bench (`target/release/deps/X` →
/// `target/release/webmill`), or `--webmill PATH`.
fn webmill_binary() -> PathBuf {
    arg("--webmill").map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().expect("exe");
        exe.parent()
            .and_then(Path::parent)
            .map(|d| d.join("webmill"))
            .expect("target dir")
    })
}

/// Writes `bytes` of text as a Parquet set at `path`, row groups of
/// `group_bytes` of text; returns (documents, text bytes).
fn write_set(path: &Path, bytes: u64, group_bytes: u64) -> (u64, u64) {
    let words: Vec<String> = (0..20_000u32)
        .map(|i| {
            let mut w = String::new();
            let mut x = i.wrapping_mul(2_654_435_761).wrapping_add(12345);
            for _ in 0..(3 + i % 8) {
                w.push((b'a' + (x % 26) as u8) as char);
                x = x.rotate_left(5) ^ 0x9e37_79b9;
            }
            w
        })
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
    ]));
    let doc_bytes = 2_000u64;
    let rows_per_group = (group_bytes / doc_bytes).max(1) as usize;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props)).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let (mut docs, mut written) = (0u64, 0u64);
    while written < bytes {
        let mut ids = Vec::with_capacity(BATCH);
        let mut texts = Vec::with_capacity(BATCH);
        for _ in 0..BATCH {
            let mut t = String::with_capacity(doc_bytes as usize + 16);
            while (t.len() as u64) < doc_bytes {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                t.push_str(&words[(state % words.len() as u64) as usize]);
                t.push(' ');
            }
            written += t.len() as u64;
            ids.push(format!("doc-{docs}"));
            texts.push(t);
            docs += 1;
        }
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(StringArray::from(ids)),
                Arc::new(StringArray::from(texts)),
            ],
        )
        .unwrap();
        w.write(&batch).unwrap();
    }
    w.close().unwrap();
    (docs, written)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let gb: f64 = arg("--gb").map_or(1.0, |v| v.parse().expect("--gb"));
    let group_mb: u64 = arg("--row-group-mb").map_or(256, |v| v.parse().expect("--row-group-mb"));
    let mem = arg("--mem").unwrap_or_else(|| "64M".into());
    let work = arg("--work")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-parquet"));
    let webmill = webmill_binary();
    if !webmill.is_file() {
        eprintln!(
            "SKIPPED: {} missing (cargo build --release -p webmill-cli)",
            webmill.display()
        );
        return;
    }
    std::fs::create_dir_all(&work).unwrap();
    let set = work.join("set.parquet");
    let job = work.join("job");
    let _ = std::fs::remove_dir_all(&job);
    let t = Instant::now();
    let (docs, text) = write_set(&set, (gb * 1e9) as u64, group_mb << 20);
    let file_bytes = std::fs::metadata(&set).unwrap().len();
    println!(
        "wrote {} documents, {:.0} MB of text ({:.0} MB on disk, row groups of {group_mb} MB of text) in {:.1} s",
        docs,
        text as f64 / 1e6,
        file_bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let mut cmd = if Path::new("/usr/bin/time").exists() {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-v").arg(&webmill);
        c
    } else {
        Command::new(&webmill)
    };
    cmd.args(["-q", "--mem", &mem, "ingest", "--out"])
        .arg(&job)
        .arg(&set);
    let t = Instant::now();
    let out = cmd.output().unwrap();
    let wall = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ingest failed:\n{err}");
    let max_rss = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|k| k * 1024.0);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(job.join("job.json")).unwrap()).unwrap();
    let stage = |name: &str| &manifest["stages"][name]["published"]["figures"];
    let ingest_s = stage("ingest")["seconds"].as_f64().unwrap_or(f64::NAN);
    let mb = text as f64 / 1e6;
    println!(
        "ingest --mem {mem}: {:.1} s ({:.1} MB/s of text), the ingest stage {:.1} s ({:.1} MB/s); peak RSS: command {}, ingest stage {}, resolve stage {}",
        wall,
        mb / wall,
        ingest_s,
        mb / ingest_s,
        max_rss.map_or("?".into(), |b| format!("{:.1} MB", b / 1e6)),
        stage("ingest")["peak_rss"]
            .as_f64()
            .map_or("?".into(), |b| format!("{:.1} MB", b / 1e6)),
        stage("resolve")["peak_rss"]
            .as_f64()
            .map_or("?".into(), |b| format!("{:.1} MB", b / 1e6)),
    );
    println!(
        "pages: {}",
        stage("ingest")["extra"]["pages"].as_u64().unwrap_or(0)
    );
    if !std::env::args().any(|a| a == "--keep") {
        std::fs::remove_file(&set).unwrap();
        std::fs::remove_dir_all(&job).unwrap();
    }
}
