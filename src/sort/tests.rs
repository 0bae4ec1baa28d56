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

fn sum_combine() -> Combine<(u64, u64)> {
    Combine::custom("sum", |acc: &mut (u64, u64), next: &(u64, u64)| {
        if acc.0 == next.0 {
            acc.1 += next.1;
            true
        } else {
            false
        }
    })
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
        let got = collect(sort_iter(cfg(dir.path(), budget, 2), sum_combine(), input.clone()).unwrap());
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

/// A run corrupted after recovery is reported with its file name, not merged.
#[test]
fn corrupt_block_during_merge_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = input(20_000);
    let c = cfg(dir.path(), 32 << 10, 64);
    let mut s = ExternalSorter::new(c.clone(), Combine::None).unwrap();
    push_all(&mut s, &data);
    s.wait_pending().unwrap();
    let victim = s.runs[0].path.clone();
    let mut bytes = fs::read(&victim).unwrap();
    bytes[200] ^= 0x10; // inside the first block's payload
    fs::write(&victim, bytes).unwrap();
    let err = s
        .finish()
        .and_then(|sorted| sorted.collect::<Result<Vec<_>>>())
        .unwrap_err();
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.to_string().contains(&name), "{err}");
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
        let out = sort_iter(c.clone(), sum_combine(), input.clone()).unwrap();
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
