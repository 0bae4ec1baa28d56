//! Fixed-width bit packing, the integer codec of the inverted barrels.
//!
//! `n` values of `w` bits each (`0 ≤ w ≤ 32`) take `⌈n·w / 8⌉` bytes: value
//! `i` occupies bits `i·w … i·w + w − 1` of the byte string, least significant
//! bit first (bit `k` of the string is bit `k mod 8` of byte `⌊k / 8⌋`); the
//! unused high bits of the last byte are zero. Width 0 stores nothing (all
//! values are 0). Any value can be read without decoding the others, which is
//! what lets a cursor fetch one document's hits from the middle of a block.
//!
//! The layout is the simple scalar one (not the SIMD lanes of the `bitpacking`
//! crate) so that a reader in any language is a few lines; the decoder reads
//! eight bytes at a time.

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
pub fn pack(values: &[u32], w: u8, out: &mut Vec<u8>) {
    debug_assert!(w <= 32);
    debug_assert!(values.iter().all(|&v| w == 32 || v >> w == 0));
    if w == 0 {
        return;
    }
    let start = out.len();
    out.resize(start + packed_len(values.len(), w), 0);
    let buf = &mut out[start..];
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    let mut at = 0;
    for &v in values {
        acc |= u64::from(v) << bits;
        bits += u32::from(w);
        while bits >= 8 {
            buf[at] = acc as u8;
            at += 1;
            acc >>= 8;
            bits -= 8;
        }
    }
    if bits > 0 {
        buf[at] = acc as u8;
    }
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
    let avail = bytes.len().saturating_sub(byte).min(8);
    word[..avail].copy_from_slice(&bytes[byte..byte + avail]);
    let v = u64::from_le_bytes(word) >> shift;
    (v & ((1u64 << w) - 1)) as u32
}

/// Decodes `out.len()` values packed at width `w`, starting at value `first`,
/// into `out`. `None` if `bytes` is too short.
pub fn unpack_into(bytes: &[u8], w: u8, first: usize, out: &mut [u32]) -> Option<()> {
    if w == 0 {
        out.fill(0);
        return Some(());
    }
    if packed_len(first + out.len(), w) > bytes.len() {
        return None;
    }
    let mask = (1u64 << w) - 1;
    let mut bit = first * w as usize;
    for o in out.iter_mut() {
        let byte = bit / 8;
        // A full 8-byte load while one fits.
        let v = if byte + 8 <= bytes.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[byte..byte + 8]);
            u64::from_le_bytes(word)
        } else {
            let mut word = [0u8; 8];
            word[..bytes.len() - byte].copy_from_slice(&bytes[byte..]);
            u64::from_le_bytes(word)
        };
        *o = ((v >> (bit % 8)) & mask) as u32;
        bit += w as usize;
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

    proptest! {
        #[test]
        fn roundtrip(values in proptest::collection::vec(any::<u32>(), 0..300), shift in 0u32..32, first in 0usize..300) {
            let values: Vec<u32> = values.into_iter().map(|v| v >> shift).collect();
            let w = max_width(&values);
            let mut out = vec![0xaa];
            pack(&values, w, &mut out);
            prop_assert_eq!(out.len(), 1 + packed_len(values.len(), w));
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
            if w > 0 && !values.is_empty() {
                let mut one_more = vec![0u32; values.len() + 8];
                prop_assert!(unpack_into(bytes, w, 0, &mut one_more).is_none() || packed_len(values.len() + 8, w) <= bytes.len());
            }
        }
    }
}
