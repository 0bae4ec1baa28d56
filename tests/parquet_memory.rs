//! Parquet ingest holds a bounded batch, never a row group: a set whose one
//! row group holds 24 MB of text is read through ingest's reader while a
//! counting allocator records the most bytes alive at once. The bound is
//! what a batch of 64 rows and a column page take, far below the row group
//! (reading it whole would take at least its 24 MB).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use webmill::ingest::limits::{RecordGate, RecordLimits};
use webmill::ingest::source::parquet::ParquetFile;
use webmill::ingest::source::{Counts, InputKind, Item, Next, ReadContext, Reader};
use webmill::ingest::DocFields;
use webmill::job::Settings;

/// The system allocator, counting the bytes alive and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are
// updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                grew(new - l.size());
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn a_row_group_larger_than_the_budget_is_read_a_batch_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parquet");
    let rows = 12_000usize;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
    ]));
    {
        // One row group, uncompressed: 24 MB of distinct text.
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(rows))
            .build();
        let file = std::fs::File::create(&path).unwrap();
        let mut w = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props)).unwrap();
        for chunk in 0..rows / 1000 {
            let ids: Vec<String> = (0..1000)
                .map(|i| format!("d{}", chunk * 1000 + i))
                .collect();
            let texts: Vec<String> = (0..1000)
                .map(|i| {
                    let n = chunk * 1000 + i;
                    (0..400).map(|k| format!("w{n}x{k} ")).collect::<String>()[..2000].to_string()
                })
                .collect();
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
        let meta = w.close().unwrap();
        assert_eq!(meta.num_row_groups(), 1);
    }
    assert!(std::fs::metadata(&path).unwrap().len() > 24_000_000);
    let settings = Settings::new(8 << 20);
    let cx = ReadContext {
        max_record_bytes: 64 << 20,
        settings: &settings,
        limits: RecordLimits::from_share(4 << 20, 1),
        gate: RecordGate::new(),
        batch_bytes: 0,
    };
    let unit = ParquetFile::new(&path, &DocFields::default()).unwrap();
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let mut reader = unit.open(None, &cx).unwrap();
    let mut counts = Counts::default();
    let mut pages = 0;
    loop {
        match reader.next(&mut counts).unwrap() {
            Next::End => break,
            Next::Item(Item::Page(p)) => {
                pages += 1;
                drop(p);
            }
            _ => {}
        }
    }
    drop(reader);
    let peak = PEAK.load(Relaxed) - base;
    assert_eq!(pages, rows);
    eprintln!("peak bytes alive above the start while reading: {peak}");
    assert!(
        peak < 8 << 20,
        "reading held {peak} bytes at once: more than a batch (the row group is 24 MB)"
    );
}
