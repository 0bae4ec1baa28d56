//! The WARC/ARC reader on arbitrary bytes (plain or gzip, whatever they
//! hold): every event until the end, each record's HTTP response, and a
//! second reader resumed at each resume point must give the same events.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webmill::ingest::limits::RecordGate;
use webmill::ingest::warc::{WarcEvent, WarcOptions, WarcReader};

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("webmill-fuzz-warc-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("input.warc");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let opts = WarcOptions {
        max_record_bytes: 1 << 16,
        keep_block_bytes: 1 << 12,
    };
    let Ok(mut reader) = WarcReader::open(&path, &opts) else {
        return;
    };
    reader.set_gate(1 << 10, RecordGate::new());
    let mut events = Vec::new();
    let mut points = Vec::new();
    while let Ok(Some(ev)) = reader.next_event() {
        if let WarcEvent::Record(rec) = &ev {
            if let Some(Ok(resp)) = rec.http_response(1 << 14) {
                assert!(resp.body.len() <= 1 << 14);
            }
            assert!(rec.block.len() <= 1 << 12);
        }
        points.push(reader.resume_point());
        events.push(ev);
        assert!(events.len() <= data.len() + 2, "more events than bytes");
    }
    // Resuming after event i gives events i+1.. (checked for a few points).
    for (i, p) in points.iter().enumerate().step_by(points.len() / 3 + 1) {
        let Ok(mut r) = WarcReader::open_at(&path, p, &opts) else {
            panic!("cannot resume at {p}");
        };
        let mut rest = Vec::new();
        while let Ok(Some(ev)) = r.next_event() {
            rest.push(ev);
        }
        assert_eq!(rest, events[i + 1..], "resumed at {p}");
    }
});
