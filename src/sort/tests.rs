use super::*;
use proptest::prelude::*;

fn cfg(dir: &Path, budget: u64, fan_in: usize) -> SortConfig {
    let mut c = SortConfig::new(dir.join("s"), budget);
    c.max_fan_in = fan_in;
    c
}

fn collect<T: Record>(s: Sorted<T>) -> Vec<T> {
    s.collect::<Result<Vec<_>>>().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any input, any budget from tiny (hundreds of runs, multi-pass) to large
    /// (in memory): the output equals `sort()`.
    #[test]
    fn sorts_like_std(
        mut input in proptest::collection::vec((0u64..5000, any::<u32>()), 0..6000),
        budget in prop_oneof![Just(8u64 << 10), Just(64 << 10), Just(64 << 20)],
        fan_in in 2usize..6,
        codec in prop_oneof![Just(RunCodec::Raw), Just(RunCodec::Auto(1)), Just(RunCodec::Zstd(-1))],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), budget, fan_in);
        c.codec = codec;
        let got = collect(sort_iter(c, Combine::None, input.clone()).unwrap());
        input.sort();
        prop_assert_eq!(got, input);
    }

    /// One synchronous buffer instead of two overlapping ones, raw runs.
    #[test]
    fn single_buffer_raw_runs_sort_like_std(
        mut input in proptest::collection::vec((0u64..5000, any::<u32>()), 0..6000),
        budget in prop_oneof![Just(8u64 << 10), Just(64 << 10)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), budget, 3);
        c.overlap = false;
        c.codec = RunCodec::Raw;
        let got = collect(sort_iter(c, Combine::None, input.clone()).unwrap());
        input.sort();
        prop_assert_eq!(got, input);
    }

    #[test]
    fn dedup_like_std(
        mut input in proptest::collection::vec(0u64..300, 0..5000),
        budget in prop_oneof![Just(8u64 << 10), Just(64 << 20)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let got = collect(sort_iter(cfg(dir.path(), budget, 3), Combine::Dedup, input.clone()).unwrap());
        input.sort();
        input.dedup();
        prop_assert_eq!(got, input);
    }

    #[test]
    fn sum_combine_like_a_map(
        input in proptest::collection::vec((0u64..200, 0u64..1000), 0..5000),
        budget in prop_oneof![Just(8u64 << 10), Just(64 << 20)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let got = collect(sort_iter(cfg(dir.path(), budget, 2), Combine::sum(), input.clone()).unwrap());
        let mut map = std::collections::BTreeMap::new();
        for (k, v) in input { *map.entry(k).or_insert(0u64) += v; }
        let want: Vec<(u64, u64)> = map.into_iter().collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn variable_length_records(
        mut input in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..3000),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let got = collect(sort_iter(cfg(dir.path(), 8 << 10, 4), Combine::None, input.clone()).unwrap());
        input.sort();
        prop_assert_eq!(got, input);
    }
}

fn input(n: u64) -> Vec<(u64, u32)> {
    (0..n)
        .map(|i| {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
            (x % 100_000, (x >> 40) as u32)
        })
        .collect()
}

type Pairs = Vec<(u64, u32)>;

/// [`input`] and the same records sorted: what a sort of it must give.
fn input_and_sorted(n: u64) -> (Pairs, Pairs) {
    let data = input(n);
    let mut want = data.clone();
    want.sort();
    (data, want)
}

/// Pushes every record of `data`.
fn push_all(s: &mut ExternalSorter<(u64, u32)>, data: &[(u64, u32)]) {
    for r in data {
        s.push(*r).unwrap();
    }
}

/// A sorter dropped mid-input (as a crash would leave it) is resumed: its runs
/// are reused, the replayed prefix is skipped, the output is unchanged.
#[test]
fn resumes_after_interruption() {
    let dir = tempfile::tempdir().unwrap();
    let (data, want) = input_and_sorted(50_000);
    let c = cfg(dir.path(), 64 << 10, 4);
    {
        let mut s = ExternalSorter::new(c.clone(), Combine::None).unwrap();
        push_all(&mut s, &data[..30_000]);
        // dropped: the crash
    }
    let mut s = ExternalSorter::new(c.clone(), Combine::None).unwrap();
    let resume = s.resume_point();
    assert!(resume > 0 && resume <= 30_000, "resume point {resume}");
    assert!(!s.input_complete());
    push_all(&mut s, &data);
    let out = s.finish().unwrap();
    assert!(out.stats().reused_runs > 0);
    assert_eq!(collect(out), want);

    // Finished input: a new sorter knows it need not be fed at all.
    let s = ExternalSorter::<(u64, u32)>::new(c, Combine::None).unwrap();
    assert!(s.input_complete());
    assert_eq!(collect(s.finish().unwrap()), want);
}

/// A run damaged on disk is dropped at recovery and redone.
#[test]
fn corrupt_run_is_redone() {
    let dir = tempfile::tempdir().unwrap();
    let (data, want) = input_and_sorted(20_000);
    let c = cfg(dir.path(), 32 << 10, 4);
    {
        let mut s = ExternalSorter::new(c.clone(), Combine::None).unwrap();
        push_all(&mut s, &data);
    }
    let mut runs: Vec<_> = fs::read_dir(&c.dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wms"))
        .collect();
    runs.sort();
    assert!(runs.len() > 2);
    let victim = &runs[1];
    let mut bytes = fs::read(victim).unwrap();
    let n = bytes.len();
    bytes[n - 30] ^= 0xff;
    fs::write(victim, bytes).unwrap();
    let mut s = ExternalSorter::new(c, Combine::None).unwrap();
    assert!(s.resume_point() < 20_000);
    push_all(&mut s, &data);
    assert_eq!(collect(s.finish().unwrap()), want);
}

/// Sorts [`input`] into runs, flips a bit at the offset `at` picks in the
/// first run, merges under `merge_budget` (default: the sort's budget) and
/// checks the merge fails with an error naming the run. Returns the number of
/// merge segments.
fn merge_fails_naming_the_corrupt_run(
    merge_budget: Option<u64>,
    at: impl Fn(&crate::container::Container) -> usize,
) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let data = input(20_000);
    let c = cfg(dir.path(), 32 << 10, 64);
    let mut s = ExternalSorter::new(c.clone(), Combine::None).unwrap();
    push_all(&mut s, &data);
    s.wait_pending().unwrap();
    if let Some(budget) = merge_budget {
        s.set_merge_budget(budget);
    }
    let victim = s.runs[0].path.clone();
    let at = at(&run::open_run::<(u64, u32)>(&victim).unwrap());
    let mut bytes = fs::read(&victim).unwrap();
    bytes[at] ^= 0x10;
    fs::write(&victim, bytes).unwrap();
    let mut segments = 0;
    let err = s
        .finish()
        .and_then(|sorted| {
            segments = sorted.stats().merge_segments;
            sorted.collect::<Result<Vec<_>>>()
        })
        .unwrap_err();
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.to_string().contains(&name), "{err}");
    segments
}

/// A run corrupted after recovery is reported with its file name, not merged.
#[test]
fn corrupt_block_during_merge_names_the_file() {
    // Inside the first block's payload.
    merge_fails_naming_the_corrupt_run(None, |_| 200);
}

/// A block corrupted in the middle of a run, reached by a merge cursor moving
/// on from the block before (one segment: the whole merge in one range),
/// stops the merge with an error naming the file.
#[test]
fn corrupt_later_block_during_merge_names_the_file() {
    let segments = merge_fails_naming_the_corrupt_run(Some(64 << 20), |c| {
        let blocks = c.blocks();
        assert!(blocks.len() > 2);
        blocks[blocks.len() / 2].offset as usize + 40
    });
    assert_eq!(segments, 1);
}

/// Same input, different budgets and thread counts: identical output.
#[test]
fn deterministic_across_budgets_and_threads() {
    let data = input(40_000);
    let mut outputs = Vec::new();
    for (budget, threads) in [(16u64 << 10, 1), (256 << 10, 2), (64 << 20, 3)] {
        let dir = tempfile::tempdir().unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let out = pool.install(|| {
            collect(sort_iter(cfg(dir.path(), budget, 3), Combine::Dedup, data.clone()).unwrap())
        });
        outputs.push(out);
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
}

/// A budget at which a sort of tens of thousands of 16-byte records spills a
/// few runs and merges them in many segments.
fn segments_budget() -> u64 {
    // 4 KiB blocks; two 42% buffers of 1 MiB hold 27,525 records each; the
    // merge plans segments of a few thousand records.
    1 << 20
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// A custom combine folds records across runs and across the merge's
    /// segment boundaries (a key's records may straddle one): same result as a
    /// map, same bytes with one buffer or two.
    #[test]
    fn combine_across_runs_and_segments(
        input in proptest::collection::vec((0u64..30_000, 0u64..1000), 60_000..120_000),
        overlap in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cfg(dir.path(), segments_budget(), 64);
        c.overlap = overlap;
        let out = sort_iter(c.clone(), Combine::sum(), input.clone()).unwrap();
        let stats = out.stats().clone();
        let got = collect(out);
        prop_assert!(stats.runs >= 2, "{stats:?}");
        prop_assert!(stats.merge_segments > 1, "{stats:?}");
        let mut map = std::collections::BTreeMap::new();
        for &(k, v) in &input { *map.entry(k).or_insert(0u64) += v; }
        let want: Vec<(u64, u64)> = map.into_iter().collect();
        prop_assert_eq!(&got, &want);
    }

    /// Dedup across runs and segments.
    #[test]
    fn dedup_across_segments(
        mut input in proptest::collection::vec((0u64..15_000, 0u32..4), 60_000..120_000),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let out = sort_iter(cfg(dir.path(), segments_budget(), 64), Combine::Dedup, input.clone()).unwrap();
        prop_assert!(out.stats().merge_segments > 1);
        let got = collect(out);
        input.sort();
        input.dedup();
        prop_assert_eq!(got, input);
    }
}

/// One key repeated far beyond a segment's planned size: its records cannot be
/// split between segments, so one segment streams them all (bounded batches).
#[test]
fn one_key_larger_than_a_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut data: Vec<(u64, u32)> = (0..80_000).map(|i| (7, i % 5)).collect();
    data.extend((0..20_000u32).map(|i| (u64::from(i) * 3, i)));
    let mut want = data.clone();
    want.sort();
    let out = sort_iter(cfg(dir.path(), segments_budget(), 64), Combine::None, data).unwrap();
    assert!(out.stats().runs >= 2);
    assert_eq!(collect(out), want);
}

/// A sort dropped while merging (a crash) left every run on disk and its input
/// complete: the resumed sort needs no input and gives the same output.
#[test]
fn resumes_after_crash_during_merge() {
    let dir = tempfile::tempdir().unwrap();
    let (data, want) = input_and_sorted(70_000);
    let c = cfg(dir.path(), segments_budget(), 64);
    {
        let mut s = ExternalSorter::new(c.clone(), Combine::None).unwrap();
        push_all(&mut s, &data);
        let mut out = s.finish().unwrap();
        assert!(out.stats().runs >= 2 && out.stats().merge_segments > 1);
        // Part of the output consumed, then the crash.
        for _ in 0..1000 {
            out.next_record().unwrap().unwrap();
        }
    }
    let s = ExternalSorter::<(u64, u32)>::new(c, Combine::None).unwrap();
    assert!(s.input_complete());
    let out = s.finish().unwrap();
    assert!(out.stats().reused_runs >= 2);
    assert_eq!(collect(out), want);
}

/// A merge budget far below the data's size still merges everything in one
/// pass when the fan-in allows, with segments of the minimum size.
#[test]
fn small_merge_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (data, want) = input_and_sorted(70_000);
    let c = cfg(dir.path(), segments_budget(), 64);
    let mut s = ExternalSorter::new(c.clone(), Combine::None).unwrap();
    push_all(&mut s, &data);
    s.set_merge_budget(64 << 10);
    let out = s.finish().unwrap();
    assert!(out.stats().merge_segments > 10, "{:?}", out.stats());
    assert_eq!(collect(out), want);
}

/// Many runs over a small fan-in are merged in rounds, each rewriting a
/// record at most once: with `R` runs and fan-in `F`, intermediate passes
/// write at most `(⌈log_F R⌉ − 1) × N` records (merging every pass into the
/// front run rewrote about `R / (2F)` times as much), and the output is
/// still `slice::sort`'s.
#[test]
fn multi_pass_merges_rewrite_each_record_once_a_round() {
    let dir = tempfile::tempdir().unwrap();
    let (data, want) = input_and_sorted(60_000);
    for fan_in in [2, 3, 5] {
        let c = cfg(&dir.path().join(fan_in.to_string()), 16 << 10, fan_in);
        let mut s = ExternalSorter::new(c, Combine::None).unwrap();
        push_all(&mut s, &data);
        // A merge budget large enough that `fan_in` is the fan-in.
        s.set_merge_budget(1 << 30);
        let out = s.finish().unwrap();
        let stats = out.stats().clone();
        let runs = stats.runs as f64;
        assert!(runs > 4.0 * fan_in as f64, "{stats:?}");
        let rounds = (runs.ln() / (fan_in as f64).ln()).ceil() as u64 - 1;
        assert!(stats.merge_passes > 0, "{stats:?}");
        assert!(
            stats.merged_records <= rounds * data.len() as u64,
            "fan-in {fan_in}, {rounds} rounds: {stats:?}"
        );
        assert_eq!(collect(out), want);
    }
}

/// A record with a byte string of any length (a shingle set, an anchor
/// list) and a field after it, which block keys minimise after a cut.
type Long = (u64, Vec<u8>, u32);

/// Deterministic records of every length class: short strings over a small
/// alphabet, strings sharing a 300-byte prefix (so different records share a
/// block key), strings within a few bytes of [`record::MAX_BLOCK_KEY`], and
/// one in a hundred up to 200 KB long; one in ten repeats an earlier record.
fn long_records(n: usize, seed: u64) -> Vec<Long> {
    let mut state = seed;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let bases: Vec<Vec<u8>> = (0..3)
        .map(|b| (0..300).map(|i| b'a' + ((i * 7 + b) % 3) as u8).collect())
        .collect();
    let mut out: Vec<Long> = Vec::with_capacity(n);
    while out.len() < n {
        let r = next();
        if r % 10 == 0 && !out.is_empty() {
            let again = out[(r >> 8) as usize % out.len()].clone();
            out.push(again);
            continue;
        }
        let key = (r >> 4) % 4;
        let base = &bases[(r >> 8) as usize % 3];
        let tail = |len: u64, next: &mut dyn FnMut() -> u64| -> Vec<u8> {
            (0..len).map(|_| b'a' + (next() % 3) as u8).collect()
        };
        let bytes = match (r >> 16) % 100 {
            0 => {
                let mut v = base.clone();
                let len = next() % 200_000;
                v.extend((0..len).map(|i| (i.wrapping_mul(r) >> 7) as u8));
                v
            }
            1..=60 => tail(next() % 40, &mut next),
            61..=85 => {
                let mut v = base.clone();
                v.extend(tail(next() % 20, &mut next));
                v
            }
            _ => {
                let len = record::MAX_BLOCK_KEY - 2 + (next() % 5) as usize;
                let mut v = base[..len.min(300)].to_vec();
                v.extend(tail(len.saturating_sub(300) as u64, &mut next));
                if next() % 2 == 0 {
                    v.push(b'z');
                }
                v
            }
        };
        out.push((key, bytes, (r >> 24) as u32 % 3));
    }
    out
}

/// A budget under which [`long_records`] spill dozens of runs of 4 KiB
/// blocks (a long record fills a buffer alone), merged three at a time.
const LONG_BUDGET: u64 = 256 << 10;

/// Every run left in `dir`: each block's key is the bounded key of its first
/// record, so it is at most 8 + 2 + [`record::MAX_BLOCK_KEY`] + 4 bytes; a block
/// holds more than one record only if they fit in `block_bytes`.
fn check_run_keys(dir: &Path, block_bytes: u64) -> usize {
    let mut blocks = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "wms") {
            continue;
        }
        let c = run::open_run::<Long>(&path).unwrap();
        let (mut scratch, mut raw) = (Vec::new(), Vec::new());
        for (i, b) in c.blocks().iter().enumerate() {
            assert!(
                b.key.len() <= 8 + 2 + record::MAX_BLOCK_KEY + 4,
                "{}",
                b.key.len()
            );
            c.read_block_into(i, &mut scratch, &mut raw).unwrap();
            let first = Long::decode(&mut raw.as_slice()).unwrap();
            let mut key = Vec::new();
            record::encode_block_key(&first, &mut key);
            assert_eq!(key, b.key, "block {i} of {}", path.display());
            assert!(b.records == 1 || b.raw <= block_bytes, "{} bytes", b.raw);
            blocks += 1;
        }
    }
    blocks
}

/// Records up to 200 KB long, many sharing a block key, under a tiny budget
/// (dozens of runs, several blocks per run, multi-pass merges, merges cut
/// into segments), with 1 to 3 threads, kept whole or deduplicated: the
/// output equals `slice::sort`, and no run's block key exceeds the bound.
#[test]
fn long_records_sort_like_std() {
    let data = long_records(3000, 1);
    let mut want = data.clone();
    want.sort();
    let mut want_dedup = want.clone();
    want_dedup.dedup();
    for threads in 1..=3 {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for dedup in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let c = cfg(dir.path(), LONG_BUDGET, 3);
            let block_bytes = c.block_bytes() as u64;
            let combine = if dedup { Combine::Dedup } else { Combine::None };
            let out = pool.install(|| sort_iter(c.clone(), combine, data.clone()).unwrap());
            let stats = out.stats().clone();
            assert!(stats.runs >= 20 && stats.merge_passes >= 2, "{stats:?}");
            assert!(stats.merge_segments > 1, "{stats:?}");
            assert!(
                check_run_keys(&c.dir, block_bytes) > 3 * 3,
                "too few blocks"
            );
            let got = pool.install(|| collect(out));
            assert!(&got == if dedup { &want_dedup } else { &want });
        }
    }
}

/// The environment variable naming the sort directory of
/// [`long_records_crash_child`].
const CHILD_DIR: &str = "WEBMILL_TEST_SORT_DIR";

#[test]
#[ignore = "run by long_records_resume_after_a_crash in a child process"]
fn long_records_crash_child() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        let c = cfg(Path::new(&dir), LONG_BUDGET, 3);
        let out = sort_iter(c, Combine::Dedup, long_records(3000, 2)).unwrap();
        collect(out);
    }
}

/// A sort of long records aborted after writing a run, or after a merge pass
/// (a failpoint, in a child process), is resumed: it reuses the runs and
/// gives `slice::sort`'s output.
#[test]
fn long_records_resume_after_a_crash() {
    let data = long_records(3000, 2);
    let mut want = data.clone();
    want.sort();
    want.dedup();
    for point in ["sort.run_written:7", "sort.merge_written:2"] {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "sort::tests::long_records_crash_child",
                "--ignored",
                "--nocapture",
            ])
            .env(CHILD_DIR, dir.path())
            .env("WEBMILL_FAILPOINT", point)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "failpoint {point} was never reached");
        let c = cfg(dir.path(), LONG_BUDGET, 3);
        let mut s = ExternalSorter::new(c, Combine::Dedup).unwrap();
        assert!(s.resume_point() > 0, "{point}: nothing to resume");
        for r in &data {
            s.push(r.clone()).unwrap();
        }
        let out = s.finish().unwrap();
        assert!(out.stats().reused_runs > 0, "{point}: {:?}", out.stats());
        assert!(collect(out) == want, "{point}: output differs");
    }
}
