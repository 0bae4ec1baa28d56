//! In-place MSD radix sort with block-wise distribution, for run formation.
//!
//! Sorts a slice by a `u64` key consistent with its order (for records,
//! [`crate::sort::record::Record::key_prefix`]), ties broken by the full
//! order, without a second buffer: the extra memory is a few MiB whatever
//! the input size. Levels, most significant bits first:
//!
//! 1. **Top level, in place, block-wise** (the idea of IPS²Ra/IPS⁴o: Axtmann,
//!    Witt, Ferizovic and Sanders, "Engineering in-place (shared-memory)
//!    sorting algorithms", 2022). One pass finds the bits on which keys
//!    differ (leading bits shared by all keys are skipped, so narrow keys use
//!    all 8 bits of the first digit). The 8 highest differing bits pick one of
//!    256 buckets. *Classification* reads the slice in order into 256 local
//!    buffers of one block (2 KiB) each; a full buffer is written back as a
//!    block at the front of the slice, behind the read position. *Block
//!    permutation* moves whole blocks to the block slots of their bucket
//!    (swap cycles, but with a block per step instead of an element, so the
//!    cache miss that made element-wise American flag sort slow here is paid
//!    once per 128 records). *Cleanup* fixes bucket boundaries that are not
//!    block-aligned from the local buffers and the blocks that ran past their
//!    bucket's end. All of it streams through memory; scratch is 256 blocks
//!    (512 KiB) plus 6 blocks.
//! 2. **Buckets in parallel** on the rayon pool, largest first. A bucket that
//!    fits in `IN_CACHE` (1 MiB: 26k records of 16 bytes; a 6.7M-record
//!    buffer of random keys makes buckets of 26k) is distributed *out of
//!    place* through a per-thread scratch of its size, by as many bits (up to
//!    16) as make buckets of about one element on random keys, copied
//!    back, and finished by one insertion-sort pass over the whole bucket,
//!    which moves records only within their (tiny) sub-bucket; sub-buckets of
//!    more than `INSERTION` records (equal or clustered keys) are sorted
//!    recursively first, so the pass stays linear. A bucket larger than
//!    `IN_CACHE` (skewed keys) is distributed block-wise again.
//! 3. Slices whose keys are all equal on the remaining bits, and short ones,
//!    are sorted by the full order (`sort_unstable_by`).
//!
//! Element types with drop glue, and inputs whose keys are all equal, are
//! sorted by comparison only (`par_sort_unstable_by`). Bitwise moves of
//! elements are sound for types without drop glue; while the slice is being
//! permuted a panic in the key function aborts the process rather than
//! unwinding through a slice holding duplicates.
//!
//! # Figures
//!
//! 2-core VM shared with other benchmarks (load average 3–5), so figures
//! vary by ±20% between runs; old and new alternate in the same rounds.
//!
//! * One 6.7M-record buffer of random `(u64, u32)` (the buffer of a 256 MiB
//!   budget), `cargo run --release --example sort_buffer -- 6700000 7`:
//!   median CPU 0.156 s (wall 0.160) against 0.353 s (0.354) for the
//!   median-split pdqsort used before; another run (5 rounds) 0.155 s against
//!   0.471 s. Single-threaded (`RAYON_NUM_THREADS=1`): 0.151 s, of which the
//!   top level takes ~60 ms (memory-bound: ~9 ns per record) and the
//!   cache-resident level ~85 ms; the old element-wise American flag sort
//!   ([`super::radix`]) took ~0.30 s, its per-element swap cycles waiting on
//!   memory.
//! * Sort bench, 50M pairs, budget 256 MiB (`--case ENGINE:pairs --records
//!   50M`), medians of 3 alternating rounds: webmill 4.81 s wall / 4.75 CPU
//!   s (before: 7.09 / 6.90), extsort 7.14 / 6.78: 1.48× extsort's
//!   throughput. Peak RSS unchanged (234 MB).
//! * Wide records (10M × 100 bytes), where it sorts the (key prefix, index)
//!   pairs: 2.89 s wall / 4.34 CPU s against 3.09 / 5.16 before.

use std::cmp::Ordering;
use std::mem::{needs_drop, size_of, MaybeUninit};
use std::ptr;

use rayon::prelude::*;

/// Bits of the key distributed per level.
const BITS: u32 = 8;
/// Buckets per level.
const K: usize = 1 << BITS;
/// Bytes per block of the block-wise distribution (small under test, so
/// that short inputs meet every case of the block permutation).
const BLOCK_BYTES: usize = if cfg!(test) { 64 } else { 2048 };
/// Slices of more bytes than this are distributed in place, block-wise;
/// smaller (cache-resident) ones out of place through a scratch.
const IN_CACHE: usize = if cfg!(test) { 4096 } else { 1 << 20 };
/// Buckets at most this long are finished with a comparison sort.
pub const SMALL: usize = 64;
/// Elements sampled to guess the top level's digit.
const SAMPLE: usize = 1024;
/// Buckets at most this long are finished with insertion sort.
const INSERTION: usize = 16;
/// Most bits distributed per cache-resident level.
const MAX_BITS: u32 = 16;
/// Inputs at most this long are sorted with `sort_unstable_by` directly.
const TINY: usize = if cfg!(test) { 64 } else { 1 << 12 };

/// Sorts `v` by `cmp`, a total order in which the key is significant first:
/// `key(a) < key(b)` must imply `cmp(a, b) == Less`; elements with equal keys
/// are ordered by `cmp` alone. Not stable (like `sort_unstable_by`), and
/// deterministic. Falls back on a comparison sort for element types with drop
/// glue, and for inputs whose keys are all equal.
pub fn sort_by_key_prefix<E, KF, C>(v: &mut [E], key: &KF, cmp: &C)
where
    E: Send + Sync,
    KF: Fn(&E) -> u64 + Sync,
    C: Fn(&E, &E) -> Ordering + Sync,
{
    if needs_drop::<E>() || size_of::<E>() == 0 || v.len() <= TINY {
        v.par_sort_unstable_by(cmp);
        return;
    }
    // The digit is taken from a sample's highest differing bits; the
    // classification pass computes the keys' true differing bits on the way,
    // and in the rare case where the sample missed a higher one the
    // distribution is done again (it was a valid permutation, just not by
    // the leading digit). This saves a pass over the whole slice.
    let first = key(&v[0]);
    let step = (v.len() / SAMPLE).max(1);
    let sample = v
        .iter()
        .step_by(step)
        .fold(0u64, |acc, e| acc | (key(e) ^ first));
    let mut shift = (64 - sample.leading_zeros()).saturating_sub(BITS);
    let (mut ends, diff) = block_distribute(v, key, shift, first);
    if diff == 0 {
        v.par_sort_unstable_by(cmp);
        return;
    }
    if diff >> shift >= K as u64 {
        shift = (64 - diff.leading_zeros()).saturating_sub(BITS);
        ends = block_distribute(v, key, shift, first).0;
    }
    let mut buckets: Vec<&mut [E]> = Vec::with_capacity(K);
    let mut rest = v;
    let mut start = 0;
    for &end in &ends {
        let (b, r) = rest.split_at_mut(end - start);
        if b.len() > 1 {
            buckets.push(b);
        }
        rest = r;
        start = end;
    }
    // Largest first, so that a skewed bucket does not start last.
    buckets.sort_unstable_by_key(|b| std::cmp::Reverse(b.len()));
    buckets
        .into_par_iter()
        .for_each_init(Scratch::new, |scratch, b| {
            sort_rec(b, key, cmp, shift, scratch)
        });
}

/// Sorts `v`, whose keys agree on every bit from `end` up, with `scratch`
/// (grown to at most [`IN_CACHE`] bytes) for out-of-place distribution.
fn sort_rec<E, KF, C>(v: &mut [E], key: &KF, cmp: &C, end: u32, scratch: &mut Scratch<E>)
where
    KF: Fn(&E) -> u64,
    C: Fn(&E, &E) -> Ordering,
{
    if v.len() <= INSERTION {
        insertion_sort(v, key, cmp);
        return;
    }
    if v.len() <= SMALL || end == 0 {
        v.sort_unstable_by(cmp);
        return;
    }
    if std::mem::size_of_val(v) > IN_CACHE {
        // Too large for the cache: distribute in place, block-wise.
        let mask = if end == 64 {
            u64::MAX
        } else {
            (1u64 << end) - 1
        };
        let first = key(&v[0]) & mask;
        let diff = v
            .iter()
            .fold(0u64, |acc, e| acc | ((key(e) & mask) ^ first));
        if diff == 0 {
            v.sort_unstable_by(cmp);
            return;
        }
        let top: u32 = 64 - diff.leading_zeros();
        let shift = top.saturating_sub(BITS);
        let ends = block_distribute(v, key, shift, 0).0;
        let mut start = 0;
        for &end in &ends {
            if end - start > 1 {
                sort_rec(&mut v[start..end], key, cmp, shift, scratch);
            }
            start = end;
        }
        return;
    }
    // Cache-resident: distribute out of place through the scratch by enough
    // bits for buckets of ~1 element on random keys, then finish with one
    // insertion-sort pass over the whole slice (buckets larger than
    // [`INSERTION`] are sorted first), which moves elements only within their
    // bucket.
    let n = v.len();
    let bits = (usize::BITS - n.leading_zeros())
        .clamp(4, MAX_BITS)
        .min(end);
    let shift = end - bits;
    let buckets = 1usize << bits;
    let digit = |e: &E| ((key(e) >> shift) as usize) & (buckets - 1);
    if scratch.counts.len() < buckets {
        scratch.counts.resize(buckets, 0);
    }
    let counts = &mut scratch.counts[..buckets];
    counts.fill(0);
    for e in v.iter() {
        counts[digit(e)] += 1;
    }
    let mut sum = 0u32;
    let mut max = 0u32;
    for c in counts.iter_mut() {
        max = max.max(*c);
        let next = sum + *c;
        *c = sum;
        sum = next;
    }
    if max as usize == n {
        // One bucket holds everything: go on with the next bits.
        return sort_rec(v, key, cmp, shift, scratch);
    }
    if scratch.elems.len() < n {
        scratch.elems = uninit(n);
    }
    let guard = AbortOnUnwind;
    let sp = scratch.elems.as_mut_ptr() as *mut E;
    // SAFETY: each element is copied once to its own position of the
    // scratch (the positions of a bucket are distinct and within `n`), then
    // the whole scratch copied back over `v`. `E` has no drop glue.
    unsafe {
        for e in v.iter() {
            let d = digit(e);
            let p = counts.get_unchecked_mut(d);
            ptr::copy_nonoverlapping(e, sp.add(*p as usize), 1);
            *p += 1;
        }
        ptr::copy_nonoverlapping(sp, v.as_mut_ptr(), n);
    }
    std::mem::forget(guard);
    // `counts[d]` is now the end of bucket d.
    if max as usize > INSERTION {
        let ends: Vec<u32> = scratch.counts[..buckets].to_vec();
        let mut start = 0;
        for end in ends {
            let end = end as usize;
            if end - start > INSERTION {
                sort_rec(&mut v[start..end], key, cmp, shift, scratch);
            }
            start = end;
        }
    }
    insertion_sort(v, key, cmp);
}

/// Sorts `v` by (key, `cmp`) with insertion sort: linear on a slice made of
/// short unsorted runs in key order.
fn insertion_sort<E, KF, C>(v: &mut [E], key: &KF, cmp: &C)
where
    KF: Fn(&E) -> u64,
    C: Fn(&E, &E) -> Ordering,
{
    let less = |a: &E, b: &E| match key(a).cmp(&key(b)) {
        Ordering::Equal => cmp(a, b) == Ordering::Less,
        o => o == Ordering::Less,
    };
    for i in 1..v.len() {
        let mut k = i;
        while k > 0 && less(&v[k], &v[k - 1]) {
            v.swap(k, k - 1);
            k -= 1;
        }
    }
}

/// Aborts the process if dropped: armed while a slice is being permuted
/// through bitwise copies, so that a panic in `digit` cannot expose the
/// slice in a state where some element is duplicated and another lost.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        std::process::abort();
    }
}

/// Scratch memory of one thread for the cache-resident levels.
struct Scratch<E> {
    elems: Vec<MaybeUninit<E>>,
    counts: Vec<u32>,
}

impl<E> Scratch<E> {
    fn new() -> Scratch<E> {
        Scratch {
            elems: Vec::new(),
            counts: Vec::new(),
        }
    }
}

/// Uninitialized scratch for `n` elements.
fn uninit<E>(n: usize) -> Vec<MaybeUninit<E>> {
    let mut s = Vec::with_capacity(n);
    // SAFETY: MaybeUninit needs no initialization.
    unsafe { s.set_len(n) };
    s
}

/// Permutes `v` in place so that elements are grouped by the digit
/// `(key >> shift) % K` in increasing order; returns each bucket's end and
/// the OR of `key ^ first` over all elements. Block-wise (see the module
/// docs): memory is read and written in blocks of [`BLOCK_BYTES`], with
/// `K` blocks of local buffers as scratch. `E` must have no drop glue.
fn block_distribute<E, KF: Fn(&E) -> u64>(
    v: &mut [E],
    key: &KF,
    shift: u32,
    first: u64,
) -> ([usize; K], u64) {
    let digit = |e: &E| ((key(e) >> shift) as usize) & (K - 1);
    let mut diff = 0u64;
    assert!(!needs_drop::<E>() && size_of::<E>() > 0);
    let n = v.len();
    let b = (BLOCK_BYTES / size_of::<E>()).max(1);
    let base = v.as_mut_ptr();
    let mut bufs = uninit::<E>(K * b);
    let bp = bufs.as_mut_ptr() as *mut E;
    let mut len = [0usize; K];
    let mut counts = [0usize; K];
    let mut t1 = uninit::<E>(b);
    let mut t2 = uninit::<E>(b);
    let mut ovf = uninit::<E>(b);
    let mut tmp = uninit::<E>(3 * b);
    let guard = AbortOnUnwind;
    // SAFETY: every element of `v` is bitwise moved exactly once into a local
    // buffer, from there into a block of `v` or straight to its final place,
    // and blocks are moved whole; at the end every position of `v` holds
    // exactly one of the original elements (see the comments per phase).
    // `E` has no drop glue, so the stale copies left behind need no care.
    unsafe {
        // Phase 1: classify into the local buffers; a full buffer is written
        // back as a block at `written`, which never passes the read position
        // (the block's elements were all read already).
        let mut written = 0usize;
        for i in 0..n {
            let x = ptr::read(base.add(i));
            let k = key(&x);
            diff |= k ^ first;
            let d = ((k >> shift) as usize) & (K - 1);
            debug_assert!(d < K);
            counts[d] += 1;
            let l = len[d];
            ptr::write(bp.add(d * b + l), x);
            if l + 1 == b {
                ptr::copy_nonoverlapping(bp.add(d * b), base.add(written), b);
                written += b;
                len[d] = 0;
            } else {
                len[d] = l + 1;
            }
        }
        let filled = written / b;
        // Bucket k spans [start[k], start[k+1]) and owns the block slots
        // [ceil(start[k]/b), ceil(start[k+1]/b)): enough for its full blocks.
        let mut start = [0usize; K + 1];
        for k in 0..K {
            start[k + 1] = start[k] + counts[k];
        }
        let first_slot = |k: usize| start[k].div_ceil(b);
        // Phase 2: permute the blocks. Slots [w[k], rend[k]) of bucket k hold
        // blocks not yet looked at; slots below w[k] hold its own blocks;
        // slots from max(w[k], rend[k]) on are empty. The slot that would
        // straddle the end of `v` (if n % b != 0) lives in `ovf`.
        let mut w = [0usize; K];
        let mut rend = [0usize; K];
        for k in 0..K {
            w[k] = first_slot(k);
            rend[k] = first_slot(k + 1).min(first_slot(k).max(filled));
        }
        let special = if !n.is_multiple_of(b) {
            n / b
        } else {
            usize::MAX
        };
        let mut ovf_owner = usize::MAX;
        let block_digit = |i: usize| digit(&*base.add(i * b));
        let (mut carry, mut spare) = (t1.as_mut_ptr() as *mut E, t2.as_mut_ptr() as *mut E);
        for k in 0..K {
            loop {
                while w[k] < rend[k] && block_digit(w[k]) == k {
                    w[k] += 1;
                }
                if w[k] >= rend[k] {
                    break;
                }
                rend[k] -= 1;
                ptr::copy_nonoverlapping(base.add(rend[k] * b), carry, b);
                loop {
                    let d = digit(&*carry);
                    while w[d] < rend[d] && block_digit(w[d]) == d {
                        w[d] += 1;
                    }
                    if w[d] < rend[d] {
                        let slot = base.add(w[d] * b);
                        ptr::copy_nonoverlapping(slot, spare, b);
                        ptr::copy_nonoverlapping(carry, slot, b);
                        std::mem::swap(&mut carry, &mut spare);
                        w[d] += 1;
                    } else {
                        let dst = if w[d] == special {
                            ovf_owner = d;
                            ovf.as_mut_ptr() as *mut E
                        } else {
                            base.add(w[d] * b)
                        };
                        ptr::copy_nonoverlapping(carry, dst, b);
                        w[d] += 1;
                        break;
                    }
                }
            }
        }
        // Phase 3, left to right: bucket k's blocks sit at [a, hi); the part
        // past its end `e` (in the heads of the next buckets), the block in
        // `ovf` and its local buffer fill the positions of [s, e) not covered
        // by blocks. Earlier buckets have already taken their overflow out
        // of bucket k's head.
        let tp = tmp.as_mut_ptr() as *mut E;
        for k in 0..K {
            let (s, e) = (start[k], start[k + 1]);
            if s == e {
                continue;
            }
            let a = first_slot(k) * b;
            let mut hi = a + (counts[k] - len[k]) / b * b;
            let mut m = 0;
            if ovf_owner == k {
                ptr::copy_nonoverlapping(ovf.as_ptr() as *const E, tp, b);
                m += b;
                hi -= b;
            }
            // Blocks placed past `e` (none if the bucket has no full block,
            // when `a` may lie past `e`).
            let over = e.max(a);
            if hi > over {
                ptr::copy_nonoverlapping(base.add(over), tp.add(m), hi - over);
                m += hi - over;
            }
            ptr::copy_nonoverlapping(bp.add(k * b), tp.add(m), len[k]);
            m += len[k];
            let c_lo = a.min(e);
            let c_hi = hi.min(e).max(c_lo);
            debug_assert_eq!(m, (c_lo - s) + (e - c_hi));
            ptr::copy_nonoverlapping(tp, base.add(s), c_lo - s);
            ptr::copy_nonoverlapping(tp.add(c_lo - s), base.add(c_hi), e - c_hi);
        }
        std::mem::forget(guard);
        let mut ends = [0usize; K];
        ends.copy_from_slice(&start[1..]);
        (ends, diff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check<T: Ord + Clone + Send + Sync + std::fmt::Debug>(
        v: &[T],
        key: impl Fn(&T) -> u64 + Sync,
    ) {
        let mut want = v.to_vec();
        want.sort();
        let mut got = v.to_vec();
        sort_by_key_prefix(&mut got, &key, &|a: &T, b: &T| a.cmp(b));
        assert_eq!(got, want);
    }

    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Random keys, narrow keys (shared leading bits), many ties (broken
        /// by the full order), a constant key, keys coarser than the order,
        /// sorted and reversed input, sizes around the thresholds: always
        /// `slice::sort`'s output.
        #[test]
        fn sorts_like_std(
            wide in proptest::collection::vec(any::<(u64, u32)>(), 0..3000),
            narrow in proptest::collection::vec((0u64..1_000_000, any::<u32>()), 0..3000),
            ties in proptest::collection::vec((0u64..4, 0u32..1000), 0..3000),
            bytes in proptest::collection::vec(any::<[u8; 3]>(), 0..3000),
            shift in 0u32..64,
            cut in 0usize..3000,
        ) {
            check(&wide, |r| r.0);
            check(&narrow, |r| r.0);
            check(&ties, |r| r.0);
            check(&wide, |_| 0);
            check(&wide, |r| r.0 >> shift);
            check(&narrow, |r| (r.0 << 24) >> shift.min(40));
            check(&bytes, |b| u64::from_be_bytes([b[0], b[1], b[2], 0, 0, 0, 0, 0]));
            check(&bytes, |b| u64::from(b[0]));
            let mut sorted = narrow.clone();
            sorted.sort();
            check(&sorted, |r| r.0);
            sorted.reverse();
            check(&sorted, |r| r.0);
            // A few distinct keys far apart, with a big bucket of small ones.
            let skewed: Vec<(u64, u32)> = wide
                .iter()
                .enumerate()
                .map(|(i, r)| (if i < cut { r.0 >> 40 } else { r.0 }, r.1))
                .collect();
            check(&skewed, |r| r.0);
        }
    }

    /// Elements of odd sizes, and drop glue (sorted by the fallback).
    #[test]
    fn other_element_types() {
        let mut next = xorshift(0x5555_0123_4567_89ab);
        let odd: Vec<[u8; 5]> = (0..20_000)
            .map(|_| next().to_le_bytes()[..5].try_into().unwrap())
            .collect();
        check(&odd, |b| {
            u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], 0, 0, 0])
        });
        let big: Vec<[u64; 9]> = (0..5000)
            .map(|_| [next() % 100, next(), 0, 0, 0, 0, 0, 0, 1])
            .collect();
        check(&big, |b| b[0]);
        let heap: Vec<(u64, String)> = (0..5000).map(|i| (next() % 50, format!("{i}"))).collect();
        check(&heap, |r| r.0);
    }

    #[test]
    fn block_distribution_sizes() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        // Blocks of 4 (u64, u32) under test: sizes around multiples of it.
        for n in [
            0usize, 1, 2, 3, 4, 5, 7, 8, 9, 255, 256, 257, 1023, 1024, 1025, 5000, 70_001,
        ] {
            for range in [1u64, 2, 3, 7, 100, 256] {
                let v: Vec<(u64, u32)> = (0..n).map(|i| (next() % range, i as u32)).collect();
                let mut got = v.clone();
                let (ends, diff) = block_distribute(&mut got, &|e: &(u64, u32)| e.0, 0, 0);
                assert_eq!(diff, v.iter().fold(0, |a, e| a | e.0));
                let mut start = 0;
                for (d, &end) in ends.iter().enumerate() {
                    assert!(
                        got[start..end].iter().all(|e| e.0 as usize == d),
                        "n {n} range {range} d {d} {:?}",
                        &got[start..end]
                    );
                    start = end;
                }
                assert_eq!(start, n);
                got.sort();
                let mut want = v;
                want.sort();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn large_inputs() {
        let mut next = xorshift(0x1234_5678_9abc_def0);
        let random: Vec<(u64, u32)> = (0..600_000).map(|i| (next(), i)).collect();
        check(&random, |r| r.0);
        let skewed: Vec<(u64, u32)> = (0..300_000)
            .map(|i| (next() % 1000 * (1 << 40), i))
            .collect();
        check(&skewed, |r| r.0);
        let sorted: Vec<(u64, u32)> = (0..200_000).map(|i| (i as u64, 0)).collect();
        check(&sorted, |r| r.0);
        let reversed: Vec<(u64, u32)> = (0..200_000).rev().map(|i| (i as u64, 7)).collect();
        check(&reversed, |r| r.0);
        check(&random, |_| 0);
        // One key far above the others, missed by the top level's sample:
        // the distribution is redone on the right bits.
        let mut outlier: Vec<(u64, u32)> = (0..100_000).map(|i| (next() >> 44, i)).collect();
        outlier[12_345].0 = u64::MAX - 5;
        check(&outlier, |r| r.0);
        check(&random, |r| r.0 >> 60);
    }
}
