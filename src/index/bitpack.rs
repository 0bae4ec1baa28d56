//! Fixed-width bit packing, the integer codec of the inverted barrels.
//!
//! `n` values of `w` bits each (`0 ≤ w ≤ 32`) take `⌈n·w / 8⌉` bytes: value
//! `i` occupies bits `i·w … i·w + w − 1` of the byte string, least significant
//! bit first (bit `k` of the string is bit `k mod 8` of byte `⌊k / 8⌋`); the
//! unused high bits of the last byte are zero. Width 0 stores nothing (all
//! values are 0). Any value can be read without decoding the others, which is
//! what lets a cursor fetch one document's hits from the middle of a block.
//!
//! That scalar layout serves values read one at a time (hits) and groups of
//! any length. Groups of exactly [`LANES`] values — a full postings block's
//! docID gaps and count columns — use the *lane* layout of the `bitpacking`
//! crate's `BitPacker4x` (as tantivy does), which SIMD instructions unpack
//! four values at a time: value `i` goes to lane `i mod 4` as that lane's
//! value `⌊i / 4⌋`; each lane is a scalar bit string of 32 values (LSB
//! first) cut into 32-bit little-endian words, and the lanes' words are
//! interleaved — word `k` of lane `l` is bytes `16k + 4l .. 16k + 4l + 4`.
//! 128 values of `w` bits take `16·w` bytes.

use bitpacking::{BitPacker, BitPacker4x};

/// Values in a lane-packed group (`BitPacker4x`'s block).
pub const LANES: usize = BitPacker4x::BLOCK_LEN;

/// Bytes taken by [`LANES`] values of `w` bits in the lane layout.
#[inline]
pub fn lanes_len(w: u8) -> usize {
    16 * w as usize
}

/// Appends the [`LANES`] values of `values` packed at width `w` in the lane
/// layout (every value must fit in `w` bits).
pub fn pack_lanes(values: &[u32], w: u8, out: &mut Vec<u8>) {
    debug_assert!(w <= 32 && values.len() == LANES);
    debug_assert!(values.iter().all(|&v| w == 32 || v >> w == 0));
    let start = out.len();
    out.resize(start + lanes_len(w), 0);
    BitPacker4x::new().compress(values, &mut out[start..], w);
}

/// Decodes [`LANES`] values packed at width `w` in the lane layout into
/// `out[..LANES]`. `None` if `bytes` is shorter than [`lanes_len`].
#[inline]
pub fn unpack_lanes(bytes: &[u8], w: u8, out: &mut [u32]) -> Option<()> {
    if w > 32 || bytes.len() < lanes_len(w) || out.len() < LANES {
        return None;
    }
    BitPacker4x::new().decompress(&bytes[..lanes_len(w)], out, w);
    Some(())
}

/// Appends the gaps of [`LANES`] strictly increasing `docs` in the lane
/// layout at width `w`: value 0 is 0, value `i` is `docs[i] − docs[i−1] − 1`
/// (the SIMD prefix sum of [`unpack_lanes_gaps`] rebuilds the docIDs).
pub fn pack_lanes_gaps(docs: &[u32], w: u8, out: &mut Vec<u8>) {
    debug_assert!(w <= 32 && docs.len() == LANES);
    debug_assert!(docs.windows(2).all(|p| p[0] < p[1]));
    let start = out.len();
    out.resize(start + lanes_len(w), 0);
    BitPacker4x::new().compress_strictly_sorted(
        Some(docs[0].wrapping_sub(1)),
        docs,
        &mut out[start..],
        w,
    );
}

/// Decodes [`LANES`] docIDs from their gaps packed by [`pack_lanes_gaps`],
/// the first being `first`, into `out[..LANES]`. Fails when `bytes` is too
/// short, value 0 is not 0 or the docIDs pass 2³² − 1.
#[inline]
pub fn unpack_lanes_gaps(
    bytes: &[u8],
    w: u8,
    first: u32,
    out: &mut [u32],
) -> Result<(), &'static str> {
    if w > 32 || bytes.len() < lanes_len(w) || out.len() < LANES {
        return Err("docID gaps cut short");
    }
    BitPacker4x::new().decompress_strictly_sorted(
        Some(first.wrapping_sub(1)),
        &bytes[..lanes_len(w)],
        out,
        w,
    );
    let out = &out[..LANES];
    if out[0] != first {
        return Err("first docID gap is not 0");
    }
    // Each step adds gap + 1 ≤ 2^w: below 25 bits the 127 steps add under
    // 2^31, so the sum wraps at most once, and only if it ends below the
    // start; wider, every step is checked.
    let wrapped = if w < 25 {
        out[LANES - 1] < first
    } else {
        out.windows(2).any(|p| p[0] >= p[1])
    };
    if wrapped {
        return Err("docIDs overflow 32 bits");
    }
    Ok(())
}

/// Bits needed for `v` (0 for 0).
#[inline]
pub fn width(v: u32) -> u8 {
    (32 - v.leading_zeros()) as u8
}

/// The width needed for every value of `values`.
#[inline]
pub fn max_width(values: &[u32]) -> u8 {
    width(values.iter().fold(0, |a, &v| a | v))
}

/// Bytes taken by `n` values of `w` bits.
#[inline]
pub fn packed_len(n: usize, w: u8) -> usize {
    (n * w as usize).div_ceil(8)
}

/// Appends `values` packed at width `w` (every value must fit in `w` bits).
/// Four bytes are written at a time, as soon as 32 bits are pending, and
/// nothing is zero-filled first: the byte-at-a-time loop was 3% of the
/// index build's instructions on rust-doc (a block's capitalizations are
/// one bit a hit, eight values a byte store).
pub fn pack(values: &[u32], w: u8, out: &mut Vec<u8>) {
    debug_assert!(w <= 32);
    debug_assert!(values.iter().all(|&v| w == 32 || v >> w == 0));
    if w == 0 {
        return;
    }
    out.reserve(packed_len(values.len(), w));
    // Fewer than 32 bits pending before each value, and a value has at
    // most 32: the sum fits in `acc`.
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &v in values {
        acc |= u64::from(v) << bits;
        bits += u32::from(w);
        if bits >= 32 {
            out.extend_from_slice(&(acc as u32).to_le_bytes());
            acc >>= 32;
            bits -= 32;
        }
    }
    out.extend_from_slice(&acc.to_le_bytes()[..bits.div_ceil(8) as usize]);
}

/// Reads value `i` of values packed at width `w` in `bytes`. The caller
/// guarantees that `bytes` holds at least `i + 1` values.
#[inline]
pub fn get(bytes: &[u8], w: u8, i: usize) -> u32 {
    if w == 0 {
        return 0;
    }
    let bit = i * w as usize;
    let byte = bit / 8;
    let shift = bit % 8;
    let mut word = [0u8; 8];
    // A fixed 8-byte load while one fits (a load, not a `memcpy` call: the
    // hit decoder reads large fonts one by one); the tail zero-filled.
    if let Some(b) = bytes.get(byte..byte + 8) {
        word.copy_from_slice(b);
    } else {
        let avail = bytes.len().saturating_sub(byte).min(8);
        word[..avail].copy_from_slice(&bytes[byte..byte + avail]);
    }
    let v = u64::from_le_bytes(word) >> shift;
    (v & ((1u64 << w) - 1)) as u32
}

/// Decodes `out.len()` values packed at width `w`, starting at value `first`,
/// into `out`. `None` if `bytes` is too short. Always inlined: the hit
/// decoder calls it per class and run, and on rust-doc's lists of a few
/// hits a call costs more than the values.
#[inline(always)]
pub fn unpack_into(bytes: &[u8], w: u8, first: usize, out: &mut [u32]) -> Option<()> {
    if w == 0 {
        out.fill(0);
        return Some(());
    }
    if packed_len(first + out.len(), w) > bytes.len() {
        return None;
    }
    let mask = (1u64 << w) - 1;
    let w = w as usize;
    let mut bit = first * w;
    // When the last value's 8-byte load fits in `bytes` (a column followed
    // by another, the common case), every value is read with no length
    // test: the hit decoder unpacks every position and capitalization
    // through here, hundreds a page on vtk9-doc. One test, not a division,
    // decides it: rust-doc's hit lists are a few hits each.
    let last_byte = (bit + out.len().saturating_sub(1) * w) / 8;
    if last_byte + 8 <= bytes.len() {
        for o in out.iter_mut() {
            let byte = bit / 8;
            let word: [u8; 8] = bytes[byte..byte + 8].try_into().unwrap_or([0; 8]);
            *o = ((u64::from_le_bytes(word) >> (bit % 8)) & mask) as u32;
            bit += w;
        }
        return Some(());
    }
    for o in out.iter_mut() {
        let byte = bit / 8;
        // A full 8-byte load while one fits.
        let mut word = [0u8; 8];
        if let Some(b) = bytes.get(byte..byte + 8) {
            word.copy_from_slice(b);
        } else {
            word[..bytes.len() - byte].copy_from_slice(&bytes[byte..]);
        }
        *o = ((u64::from_le_bytes(word) >> (bit % 8)) & mask) as u32;
        bit += w;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn golden_bytes() {
        // 3 values of 3 bits: 5 = 101, 3 = 011, 7 = 111 → bits (LSB first)
        // 101 110 111 → byte 0 = 0b11_011_101 = 0xdd, byte 1 = 0b1 = 0x01.
        let mut out = Vec::new();
        pack(&[5, 3, 7], 3, &mut out);
        assert_eq!(out, [0xdd, 0x01]);
        let mut out = Vec::new();
        pack(&[0xffff_ffff, 1], 32, &mut out);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0]);
        let mut out = Vec::new();
        pack(&[0, 0, 0], 0, &mut out);
        assert!(out.is_empty());
        assert_eq!(width(0), 0);
        assert_eq!(width(1), 1);
        assert_eq!(width(4095), 12);
        assert_eq!(width(u32::MAX), 32);
    }

    /// The lane layout as the module documents it, written out value by
    /// value: the reference the `bitpacking` crate is checked against.
    fn lanes_reference(values: &[u32], w: u8) -> Vec<u8> {
        let mut words = vec![0u32; 4 * w as usize];
        for (i, &v) in values.iter().enumerate() {
            let (lane, k) = (i % 4, i / 4);
            for b in 0..w as usize {
                let bit = k * w as usize + b;
                words[4 * (bit / 32) + lane] |= (v >> b & 1) << (bit % 32);
            }
        }
        words.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn lanes_golden() {
        // 0..128 at width 7: lane 0 holds 0, 4, 8, …; its first word is
        // 0 | 4 << 7 | 8 << 14 | 12 << 21 | (16 & 0xf) << 28.
        let values: Vec<u32> = (0..128).collect();
        let mut out = Vec::new();
        pack_lanes(&values, 7, &mut out);
        assert_eq!(out.len(), 112);
        assert_eq!(out[..4], (4u32 << 7 | 8 << 14 | 12 << 21).to_le_bytes());
        assert_eq!(out, lanes_reference(&values, 7));
    }

    proptest! {
        #[test]
        fn lanes_roundtrip(values in proptest::collection::vec(any::<u32>(), LANES), shift in 0u32..33, first in any::<u32>()) {
            let values: Vec<u32> = values.into_iter().map(|v| v.checked_shr(shift).unwrap_or(0)).collect();
            let w = max_width(&values);
            let mut out = vec![0xaa];
            pack_lanes(&values, w, &mut out);
            prop_assert_eq!(&out[1..], &lanes_reference(&values, w)[..]);
            let mut back = vec![0u32; LANES];
            unpack_lanes(&out[1..], w, &mut back).unwrap();
            prop_assert_eq!(&back, &values);
            prop_assert!(w == 0 || unpack_lanes(&out[1..out.len() - 1], w, &mut back).is_none());
            // As gaps of increasing docIDs (when they fit in 32 bits).
            let mut gaps = values.clone();
            gaps[0] = 0;
            let sum: u64 = gaps.iter().map(|&g| u64::from(g) + 1).sum::<u64>() - 1;
            let w = max_width(&gaps);
            let mut out = Vec::new();
            if u64::from(first) + sum <= u64::from(u32::MAX) {
                let mut docs = vec![first; LANES];
                for i in 1..LANES {
                    docs[i] = docs[i - 1] + gaps[i] + 1;
                }
                pack_lanes_gaps(&docs, w, &mut out);
                prop_assert_eq!(&out, &lanes_reference(&gaps, w));
                unpack_lanes_gaps(&out, w, first, &mut back).unwrap();
                prop_assert_eq!(&back, &docs);
            } else {
                pack_lanes(&gaps, w, &mut out);
                prop_assert_eq!(unpack_lanes_gaps(&out, w, first, &mut back), Err("docIDs overflow 32 bits"));
            }
        }
    }

    /// The layout as the module documents it, bit by bit: the reference
    /// [`pack`] is checked against.
    fn scalar_reference(values: &[u32], w: u8) -> Vec<u8> {
        let mut out = vec![0u8; packed_len(values.len(), w)];
        for (i, &v) in values.iter().enumerate() {
            for b in 0..w as usize {
                let bit = i * w as usize + b;
                out[bit / 8] |= ((v >> b & 1) as u8) << (bit % 8);
            }
        }
        out
    }

    proptest! {
        #[test]
        fn roundtrip(values in proptest::collection::vec(any::<u32>(), 0..300), shift in 0u32..32, first in 0usize..300) {
            let values: Vec<u32> = values.into_iter().map(|v| v >> shift).collect();
            let w = max_width(&values);
            let mut out = vec![0xaa];
            pack(&values, w, &mut out);
            prop_assert_eq!(out.len(), 1 + packed_len(values.len(), w));
            prop_assert_eq!(&out[1..], &scalar_reference(&values, w)[..]);
            // Every width the values fit, not only the least.
            for wider in w..=32 {
                let mut o = Vec::new();
                pack(&values, wider, &mut o);
                prop_assert_eq!(o, scalar_reference(&values, wider));
            }
            let bytes = &out[1..];
            let mut back = vec![0u32; values.len()];
            unpack_into(bytes, w, 0, &mut back).unwrap();
            prop_assert_eq!(&back, &values);
            for (i, &v) in values.iter().enumerate() {
                prop_assert_eq!(get(bytes, w, i), v);
            }
            let first = first.min(values.len());
            let mut tail = vec![0u32; values.len() - first];
            unpack_into(bytes, w, first, &mut tail).unwrap();
            prop_assert_eq!(&tail[..], &values[first..]);
            // A middle range, with other bits after the packed values (a
            // column is followed by the next one): the loads that fit read
            // past the range and must mask them off.
            let mut padded = bytes.to_vec();
            padded.extend([0xff; 9]);
            let mid = &values[first..first + (values.len() - first) / 2];
            let mut back = vec![0u32; mid.len()];
            unpack_into(&padded, w, first, &mut back).unwrap();
            prop_assert_eq!(&back[..], mid);
            if w > 0 && !values.is_empty() {
                let mut one_more = vec![0u32; values.len() + 8];
                prop_assert!(unpack_into(bytes, w, 0, &mut one_more).is_none() || packed_len(values.len() + 8, w) <= bytes.len());
            }
        }
    }
}
