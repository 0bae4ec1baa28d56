//! LEB128 variable-length integers and zig-zag signed mapping.
//!
//! Used for gaps in edge lists and lengths inside blocks: small numbers take one
//! byte, a `u64` takes at most ten. Decoding never panics: a truncated or
//! over-long varint is reported as `None`.

/// Appends `v` as an unsigned LEB128 varint.
#[inline]
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes [`put`] writes for `v`: one per started 7 bits (at least one).
#[inline]
pub fn len(v: u64) -> usize {
    (u64::BITS - (v | 1).leading_zeros()).div_ceil(7) as usize
}

/// Reads an unsigned LEB128 varint from the front of `input`, advancing it.
///
/// Returns `None` if the input ends inside the varint or the value does not fit
/// in 64 bits.
///
/// A one-byte varint (most of the forward barrels' word deltas and hit
/// counts) is read inline; longer ones by a call: the loop whole was not
/// inlined, and its call on every varint was 1.7% of the index build's
/// instructions on rust-doc.
#[inline]
pub fn get(input: &mut &[u8]) -> Option<u64> {
    match input.split_first() {
        Some((&byte, rest)) if byte < 0x80 => {
            *input = rest;
            Some(u64::from(byte))
        }
        _ => get_long(input),
    }
}

/// [`get`] of a varint of more than one byte (or of none).
#[inline(never)]
fn get_long(input: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0u32;
    for (i, &byte) in input.iter().enumerate() {
        if shift == 63 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            *input = &input[i + 1..];
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
    None
}

/// Maps a signed value onto an unsigned one so that small magnitudes stay small.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends a length-prefixed byte string.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Reads a length-prefixed byte string written by [`put_bytes`].
pub fn get_bytes<'a>(input: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(get(input)?).ok()?;
    if len > input.len() {
        return None;
    }
    let (head, tail) = input.split_at(len);
    *input = tail;
    Some(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(values in proptest::collection::vec(any::<u64>(), 0..200)) {
            let mut buf = Vec::new();
            for &v in &values { put(&mut buf, v); }
            let mut input = &buf[..];
            for &v in &values { prop_assert_eq!(get(&mut input), Some(v)); }
            prop_assert!(input.is_empty());
        }

        #[test]
        fn zigzag_roundtrip(v in any::<i64>()) {
            prop_assert_eq!(unzigzag(zigzag(v)), v);
        }

        #[test]
        fn truncated_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut input = &bytes[..];
            while get(&mut input).is_some() {}
        }
    }

    #[test]
    fn edges_of_the_encoding() {
        let mut buf = Vec::new();
        put(&mut buf, u64::MAX);
        assert_eq!(buf.len(), 10);
        assert_eq!(get(&mut &buf[..]), Some(u64::MAX));
        // An eleventh continuation byte is rejected, not wrapped.
        let bad = [0xffu8; 11];
        assert_eq!(get(&mut &bad[..]), None);
        // 2^64 does not fit.
        let mut over = vec![0xffu8; 9];
        over.push(0x02);
        assert_eq!(get(&mut &over[..]), None);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}
