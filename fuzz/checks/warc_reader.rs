//! The WARC/ARC reader on arbitrary bytes (plain or gzip, whatever they
//! hold): every event until the end, each record's HTTP response, and a
//! second reader resumed at each resume point must give the same events.

use webmill::ingest::limits::RecordGate;
use webmill::ingest::warc::{WarcEvent, WarcOptions, WarcReader};

/// The check: panics on a violated property, returns on anything else.
pub fn check(data: &[u8]) {
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
    while let Ok(Some(mut ev)) = reader.next_event() {
        if let WarcEvent::Record(rec) = &mut ev {
            // Kept events must not hold the gate: the next big record would
            // wait for it forever. (The resumed reader has no gate at all.)
            rec.permit = None;
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
        if rest != events[i + 1..] {
            let brief = |evs: &[WarcEvent]| -> Vec<String> {
                evs.iter()
                    .map(|e| match e {
                        WarcEvent::Record(r) => format!(
                            "record {:?} {:?} block {} length {} headers {}",
                            r.pos,
                            r.kind,
                            r.block.len(),
                            r.length,
                            r.headers.len()
                        ),
                        WarcEvent::Skip { at, skip } => format!("skip {at:?}: {skip}"),
                    })
                    .collect()
            };
            panic!(
                "resumed at {p}: got {:#?}, expected {:#?}",
                brief(&rest),
                brief(&events[i + 1..])
            );
        }
    }
}
