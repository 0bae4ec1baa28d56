//! What one record may cost: per-record limits derived from the ingest
//! stage's declared `big record` share of its budget, and the gate that lets
//! one big record at a time through.
//!
//! The web sends pages with a million links, gzip bombs that inflate to
//! gigabytes, records of hundreds of megabytes. Ingest's memory must stay
//! within the budget whatever one record holds, so every piece of per-record
//! work is bounded by [`RecordLimits`], computed from the stage's budget alone
//! (never from the thread count, so that the outputs do not depend on it):
//!
//! | what | limit | beyond it |
//! |---|---|---|
//! | a WARC record's block (or a directory file) read into memory | [`RecordLimits::record_bytes`] = the `big record` share / 8 (`--mem` / 16), between 256 KiB and 1 GiB | the rest is read and dropped; the page is kept, cut (`block-cut`) |
//! | a decoded body (`Content-Encoding: gzip`/`deflate`) | `record_bytes` | decoding stops; the page is kept, cut (`body-cut`) |
//! | links of one page | [`RecordLimits::links`] = `record_bytes` / 64 | the page is kept with its first `links` links (`links-cut`) |
//! | a record's whole block | `--max-record-bytes` (default 64 MiB) | the record is skipped (`too-large`), its bytes never buffered |
//!
//! Every cut is reported with file, offset, what was cut and why, in the
//! stage's skip report (see [`crate::input::report`]). Words need no limit
//! of their own: a page's words and flags take at most twice its decoded text.
//!
//! # Why 1/16 of the budget
//!
//! A record's working set is a small multiple of its size: the block, the
//! decoded body, the text decoded to UTF-8 (up to 3× for a legacy charset),
//! words and flags (≤ 1.5×), the link list (≤ 200 bytes a link, so ≤ 3× at
//! 64 bytes of HTML a link), and the page's payloads (text, repository,
//! links: ≤ 3.5×). Measured on the hostile inputs (`webmill-hostile`): about
//! 8× the record for a page of dense links, less for text. The ingest stage
//! declares a `big record` share of half its budget (see `SHARES` in
//! [`super`]); the per-record limit is that share's eighth, so one big record
//! at a time ([`RecordGate`]) stays within it, and the ordinary batches of
//! the other units (the `batches` share, see `batch_limit` in [`super`]) take
//! the rest. The limit is one of ingest's recorded parameters: a different
//! `--mem` changes it, and with it the outputs of pages over it.
//!
//! # The gate
//!
//! Records up to [`RecordLimits::gate_bytes`] go through the units' batches
//! as usual. A bigger one (its block, or its decoded body) first takes the
//! process-wide [`RecordGate`]: at most one big record is in memory at a
//! time, whatever the thread count. A unit holding the gate finishes its
//! batch and the big record on its own thread (no parallel iterator, so a
//! waiting unit can never be stolen into its stack) and releases it; a unit
//! never waits for the gate while it holds a permit, so the gate cannot
//! deadlock.

use std::sync::{Arc, Condvar, Mutex};

/// A record's working set, in multiples of its block (see the module docs):
/// the per-record limit is the `big record` share over this.
pub const WORKING_SET: u64 = 8;
/// Smallest per-record limit, whatever the budget.
const MIN_RECORD_BYTES: u64 = 256 << 10;
/// Largest per-record limit, whatever the budget.
const MAX_RECORD_BYTES: u64 = 1 << 30;
/// Bytes of the record limit per link kept.
const BYTES_PER_LINK: u64 = 64;

/// The per-record limits of one ingest (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordLimits {
    /// Largest part of a record read into memory, and largest decoded body.
    pub record_bytes: u64,
    /// Most links kept from one page.
    pub links: usize,
    /// Records larger than this (block or decoded body) take the gate. Only
    /// scheduling depends on it, never the outputs.
    pub gate_bytes: u64,
}

impl RecordLimits {
    /// The limits when one big record may take `big_record` bytes (the
    /// stage's `big record` share) and `threads` units read at once.
    pub fn from_share(big_record: u64, threads: usize) -> RecordLimits {
        let block = big_record / WORKING_SET;
        let record_bytes = block.clamp(MIN_RECORD_BYTES, MAX_RECORD_BYTES);
        let threads = threads.max(1) as u64;
        RecordLimits {
            record_bytes,
            links: (record_bytes / BYTES_PER_LINK) as usize,
            gate_bytes: (block / threads).clamp(64 << 10, record_bytes),
        }
    }
}

/// Lets one big record at a time through (see the module docs).
#[derive(Debug, Default)]
pub struct RecordGate {
    busy: Mutex<bool>,
    free: Condvar,
}

impl RecordGate {
    /// A new, open gate.
    pub fn new() -> Arc<RecordGate> {
        Arc::new(RecordGate::default())
    }

    /// Waits until no other big record is in memory, then holds the gate
    /// until the permit (and all its clones) is dropped.
    pub fn enter(self: &Arc<RecordGate>) -> Permit {
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        while *busy {
            busy = self.free.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy = true;
        Permit {
            _held: Arc::new(Held(Arc::clone(self))),
        }
    }
}

#[derive(Debug)]
struct Held(Arc<RecordGate>);

impl Drop for Held {
    fn drop(&mut self) {
        let mut busy = self.0.busy.lock().unwrap_or_else(|e| e.into_inner());
        *busy = false;
        self.0.free.notify_one();
    }
}

/// The right to hold one big record in memory; the gate opens again when the
/// last clone is dropped.
#[derive(Clone, Debug)]
pub struct Permit {
    _held: Arc<Held>,
}

impl PartialEq for Permit {
    /// Permits carry no data: any two are equal (so records compare by content).
    fn eq(&self, _: &Permit) -> bool {
        true
    }
}

impl Eq for Permit {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_the_share_not_the_threads() {
        let a = RecordLimits::from_share(32 << 20, 1);
        let b = RecordLimits::from_share(32 << 20, 16);
        assert_eq!(a.record_bytes, 4 << 20);
        assert_eq!((a.record_bytes, a.links), (b.record_bytes, b.links));
        assert!(b.gate_bytes < a.gate_bytes);
        assert_eq!(
            RecordLimits::from_share(512 << 10, 2).record_bytes,
            256 << 10
        );
        assert_eq!(RecordLimits::from_share(1 << 39, 2).record_bytes, 1 << 30);
    }

    #[test]
    fn one_permit_at_a_time() {
        let gate = RecordGate::new();
        let p = gate.enter();
        let q = p.clone();
        let g2 = Arc::clone(&gate);
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let _p = g2.enter();
            tx.send(()).unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(rx.try_recv().is_err(), "entered while held");
        drop(p);
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(rx.try_recv().is_err(), "a clone still holds it");
        drop(q);
        rx.recv().unwrap();
        t.join().unwrap();
    }
}
