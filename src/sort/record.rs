//! What the external sort can sort: records with a total order, a compact
//! byte encoding, and a *bounded key* that stands for a record in a sort
//! run's block index.
//!
//! # Bounded keys
//!
//! A run's index gives each block a key, and the merge keeps every block's
//! key in memory and cuts the key space at some of them
//! ([`crate::sort::merge`]). The whole first record would do, but a record may
//! be arbitrarily long (a page's shingle set, an anchor list, a 100 KB URL):
//! the index would hold megabytes per block, and the container caps a key at
//! 64 KiB. So the key is the record's *bounded key* `t(x)`, written by
//! [`Record::encode_bounded`] with a budget of [`MAX_BLOCK_KEY`] bytes:
//!
//! * integers and fixed-size byte arrays are encoded whole and spend nothing;
//! * a byte string is cut to the budget left: with `b` bytes left, a string
//!   of `len` bytes writes its first `min(len, b)` bytes (as a byte string:
//!   varint length, bytes) and spends them. It *saturates* when `len ≥ b`,
//!   i.e. when it was cut **or its length reached the cut**;
//! * a tuple encodes its fields in order; once a field saturated, every later
//!   field is written as its type's least value ([`Record::least`]: 0, the
//!   empty string, zero bytes), and the tuple saturates.
//!
//! The key is the encoding of a valid record, so it decodes with
//! [`Record::decode`]; records with no byte string (or with strings shorter
//! than the budget) are their own key, byte for byte. The byte strings of a
//! key hold at most [`MAX_BLOCK_KEY`] bytes together.
//!
//! Example: with a budget of 4, the `(u64, bytes, u64)` record
//! `(7, "abcdef", 9)` has the key `(7, "abcd", 0)`; `(7, "abcd", 9)` too (its
//! string reached the cut); `(7, "abc", 9)` is its own key.
//!
//! # Why the merge may use bounded keys
//!
//! Order is lexicographic: tuples field by field, byte strings byte by byte
//! with a proper prefix first. `t` is
//!
//! 1. *deflationary*, `t(x) ≤ x`: each field's cut is a prefix of it, so ≤ it;
//!    at the first field where `t(x)` and `x` differ, `t(x)` is smaller;
//!    where they agree up to a saturated field, the rest of `t(x)` is least;
//! 2. *idempotent*, `t(t(z)) = t(z)`: a cut string is no longer than the cut,
//!    so it is not cut again, and it saturates again exactly when it
//!    saturated first (one that saturated kept exactly the `b` bytes left,
//!    so it saturates again; one that did not is unchanged); the least values
//!    after it stay least;
//! 3. *monotone*, `x ≤ x' ⇒ t(x) ≤ t(x')`. Induction over fields; for one byte
//!    string, a common prefix stays a common prefix and a first difference
//!    before the cut stays one. For a tuple, let `a`, `a'` be the first
//!    fields. If `a = a'`, they spend the same budget and saturate alike, and
//!    the rest follows by induction. If `a < a'`, then `t(a) ≤ t(a')`; if
//!    `t(a) < t(a')` we are done, and if `t(a) = t(a')` though `a ≠ a'`, the
//!    field is a string cut to the same `b` bytes, so *both* have length `≥ b`
//!    and both saturate: the rest of both keys is least, and the keys are
//!    equal. (With saturation on `len > b` only, `a` of exactly `b` bytes
//!    would keep its later fields while `a'` lost them, and the keys could
//!    invert.)
//!
//! Hence, for any record `x` and any bounded key `y = t(z)`:
//! `x ≥ y ⇒ t(x) ≥ t(y) = y`, that is, **`t(x) < y ⇒ x < y`**; and by 1,
//! `t(x) ≥ y ⇒ x ≥ y`. The merge compares records with keys and keys with
//! keys, so these two facts make its block search and segment
//! ends exact (see [`crate::sort::merge`]).

/// A sortable record.
///
/// `Ord` must be a total order in which equal records are indistinguishable
/// (encode to the same bytes); that is what makes the sort's output
/// deterministic whatever the thread count, budget or run boundaries.
pub trait Record: Ord + Send + Sync + Sized + 'static {
    /// `true` if records own heap memory (counted through [`Record::heap_bytes`]).
    const HAS_HEAP: bool = false;
    /// `true` if run formation should sort (key prefix, index) pairs rather than
    /// the records themselves (for wide or indirect records).
    const PREFIX_SORT: bool = false;
    /// `true` if [`Record::key_prefix`] is informative (not constant), so that
    /// run formation may radix-sort records on it
    /// ([`crate::sort::block_radix`]); a constant prefix is still sorted
    /// correctly, only slower.
    const KEY_PREFIX: bool = false;
    /// A `u64` consistent with the order: `a < b` implies
    /// `a.key_prefix() <= b.key_prefix()`. Used when [`Record::PREFIX_SORT`]
    /// or [`Record::KEY_PREFIX`].
    fn key_prefix(&self) -> u64 {
        0
    }
    /// Bytes of every record's encoding, if they are all the same length: lets
    /// a merge find a key in a block by binary search.
    const WIDTH: Option<usize> = None;
    /// A stable name of the record type, stored in run files and used by `dump`.
    fn type_name() -> String;
    /// Heap bytes owned by this record, for the memory budget.
    fn heap_bytes(&self) -> usize {
        0
    }
    /// Appends the record's encoding.
    fn encode(&self, out: &mut Vec<u8>);
    /// Decodes one record from the front of `input`, advancing it; `None` if the
    /// bytes are not a valid record.
    fn decode(input: &mut &[u8]) -> Option<Self>;
    /// Bytes of the record's encoding ([`Record::encode`]). The default
    /// encodes the record to count them; variable-width records should say it
    /// directly.
    fn encoded_len(&self) -> usize {
        Self::WIDTH.unwrap_or_else(|| {
            let mut out = Vec::new();
            self.encode(&mut out);
            out.len()
        })
    }
    /// Appends the encoding of the record's bounded key (see the [module
    /// docs](self)), spending `budget` on byte strings; returns `true` if the
    /// key saturated (a byte string reached the budget), after which a tuple
    /// writes its later fields as [`Record::least`]. Fixed-width records
    /// encode whole and return `false`; a type encoded like a byte string or
    /// a tuple of them uses [`encode_bounded_bytes`] for each. A sequence of
    /// `w`-byte elements ordered like a string over them is cut the same way,
    /// in elements: `min(n, ⌊budget / w⌋)` kept, saturated if
    /// `n ≥ ⌊budget / w⌋`.
    fn encode_bounded(&self, out: &mut Vec<u8>, budget: &mut usize) -> bool;
    /// The least record of the type (0, the empty string, zero bytes).
    fn least() -> Self;
}

/// The budget of a sort run's block key: the byte strings of a block's key
/// ([`encode_block_key`]) hold at most this many bytes together.
pub const MAX_BLOCK_KEY: usize = 256;

/// Appends `record`'s bounded key with a budget of [`MAX_BLOCK_KEY`]: what a
/// sort run's index holds for a block starting with `record`.
pub fn encode_block_key<T: Record>(record: &T, out: &mut Vec<u8>) {
    let mut budget = MAX_BLOCK_KEY;
    record.encode_bounded(out, &mut budget);
}

/// The bounded key of a byte string encoded as `varint length, bytes`: its
/// first `min(len, budget)` bytes, spent from `budget`. Returns `true` (the
/// key saturated) if `len ≥ budget`: cut, or exactly as long as the cut.
pub fn encode_bounded_bytes(bytes: &[u8], out: &mut Vec<u8>, budget: &mut usize) -> bool {
    let saturated = bytes.len() >= *budget;
    let kept = bytes.len().min(*budget);
    crate::varint::put_bytes(out, &bytes[..kept]);
    *budget -= kept;
    saturated
}

/// Bytes of a byte string's encoding (`varint length, bytes`).
#[inline]
pub fn encoded_bytes_len(bytes: &[u8]) -> usize {
    crate::varint::len(bytes.len() as u64) + bytes.len()
}

macro_rules! int_record {
    ($($t:ty),*) => {$(
        impl Record for $t {
            const WIDTH: Option<usize> = Some(std::mem::size_of::<$t>());
            const KEY_PREFIX: bool = true;
            fn type_name() -> String { stringify!($t).to_string() }
            #[inline]
            fn key_prefix(&self) -> u64 { u64::from(*self) }
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()); }
            #[inline]
            fn encode_bounded(&self, out: &mut Vec<u8>, _budget: &mut usize) -> bool {
                self.encode(out);
                false
            }
            fn least() -> Self { 0 }
            #[inline]
            fn decode(input: &mut &[u8]) -> Option<Self> {
                const N: usize = std::mem::size_of::<$t>();
                let (head, tail) = input.split_first_chunk::<N>()?;
                *input = tail;
                Some(<$t>::from_le_bytes(*head))
            }
        }
    )*};
}
int_record!(u32, u64);

macro_rules! tuple_record {
    ($($t:ident $i:tt),*) => {
        impl<$($t: Record),*> Record for ($($t,)*) {
            const HAS_HEAP: bool = $($t::HAS_HEAP)||*;
            const PREFIX_SORT: bool = Self::HAS_HEAP || std::mem::size_of::<Self>() > 16;
            const WIDTH: Option<usize> = {
                let mut w = Some(0);
                $(w = add_widths(w, $t::WIDTH);)*
                w
            };
            const KEY_PREFIX: bool = A::KEY_PREFIX;
            #[inline]
            fn key_prefix(&self) -> u64 { self.0.key_prefix() }
            fn type_name() -> String {
                let parts: Vec<String> = vec![$($t::type_name()),*];
                format!("({})", parts.join(","))
            }
            fn heap_bytes(&self) -> usize { 0 $(+ self.$i.heap_bytes())* }
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) { $(self.$i.encode(out);)* }
            #[inline]
            fn decode(input: &mut &[u8]) -> Option<Self> { Some(($($t::decode(input)?,)*)) }
            #[inline]
            fn encoded_len(&self) -> usize { 0 $(+ self.$i.encoded_len())* }
            fn encode_bounded(&self, out: &mut Vec<u8>, budget: &mut usize) -> bool {
                let mut saturated = false;
                $(
                    if saturated {
                        $t::least().encode(out);
                    } else {
                        saturated = self.$i.encode_bounded(out, budget);
                    }
                )*
                saturated
            }
            fn least() -> Self { ($($t::least(),)*) }
        }
    };
}
tuple_record!(A 0, B 1);
tuple_record!(A 0, B 1, C 2);
tuple_record!(A 0, B 1, C 2, D 3);

/// The width of two fields' encodings together, if both are fixed.
const fn add_widths(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    }
}

/// The first 8 bytes, big-endian, zero-padded: consistent with byte order.
#[inline]
fn bytes_prefix(b: &[u8]) -> u64 {
    let mut p = [0u8; 8];
    let n = b.len().min(8);
    p[..n].copy_from_slice(&b[..n]);
    u64::from_be_bytes(p)
}

impl<const N: usize> Record for [u8; N] {
    const PREFIX_SORT: bool = N > 16;
    const WIDTH: Option<usize> = Some(N);
    const KEY_PREFIX: bool = N > 0;
    #[inline]
    fn key_prefix(&self) -> u64 {
        bytes_prefix(self)
    }
    fn type_name() -> String {
        format!("[u8;{N}]")
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    #[inline]
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let (head, tail) = input.split_first_chunk::<N>()?;
        *input = tail;
        Some(*head)
    }
    fn encode_bounded(&self, out: &mut Vec<u8>, _budget: &mut usize) -> bool {
        self.encode(out);
        false
    }
    fn least() -> Self {
        [0; N]
    }
}

impl Record for Vec<u8> {
    const HAS_HEAP: bool = true;
    const PREFIX_SORT: bool = true;
    const KEY_PREFIX: bool = true;
    #[inline]
    fn key_prefix(&self) -> u64 {
        bytes_prefix(self)
    }
    fn type_name() -> String {
        "bytes".to_string()
    }
    fn heap_bytes(&self) -> usize {
        self.capacity()
    }
    fn encode(&self, out: &mut Vec<u8>) {
        crate::varint::put_bytes(out, self);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        crate::varint::get_bytes(input).map(<[u8]>::to_vec)
    }
    #[inline]
    fn encoded_len(&self) -> usize {
        encoded_bytes_len(self)
    }
    fn encode_bounded(&self, out: &mut Vec<u8>, budget: &mut usize) -> bool {
        encode_bounded_bytes(self, out, budget)
    }
    fn least() -> Self {
        Vec::new()
    }
}

/// Checks of [`Record::encode_bounded`] implementations, for the tests of
/// record types defined elsewhere.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use proptest::prelude::*;

    /// `t(x)` with a budget of `budget` string bytes, decoded, and the length
    /// of its encoding.
    pub fn bounded<T: Record>(x: &T, budget: usize) -> (T, usize) {
        let mut key = Vec::new();
        let mut left = budget;
        x.encode_bounded(&mut key, &mut left);
        let mut input = key.as_slice();
        let t = T::decode(&mut input).expect("a bounded key decodes");
        assert!(input.is_empty(), "bytes left after a bounded key");
        (t, key.len())
    }

    /// The facts the merge relies on, over every pair of `xs`: `t(x) ≤ x`,
    /// `t` idempotent and monotone, and `t(x) < y ⇒ x < y` for every key
    /// `y`; and a key's encoding is at most `overhead + budget` bytes (the
    /// fixed fields and varint lengths) and at most the record's.
    pub fn check_bounded_keys<T: Record + Clone + std::fmt::Debug>(
        xs: &[T],
        budget: usize,
        overhead: usize,
    ) -> std::result::Result<(), TestCaseError> {
        let keys: Vec<T> = xs
            .iter()
            .map(|x| {
                let (t, len) = bounded(x, budget);
                assert!(len <= overhead + budget && len <= x.encoded_len());
                t
            })
            .collect();
        for (x, tx) in xs.iter().zip(&keys) {
            prop_assert!(tx <= x, "t({x:?}) = {tx:?} > x");
            prop_assert_eq!(&bounded(tx, budget).0, tx, "t not idempotent on {:?}", x);
            for (z, y) in xs.iter().zip(&keys) {
                if tx < y {
                    prop_assert!(x < y, "t({x:?}) = {tx:?} < t({z:?}) = {y:?} but x ≥ it");
                }
                if x <= z {
                    prop_assert!(tx <= y, "t not monotone: {x:?} ≤ {z:?}, {tx:?} > {y:?}");
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use testing::{bounded, check_bounded_keys};

    fn roundtrip<T: Record + Clone + std::fmt::Debug>(values: &[T]) {
        let mut buf = Vec::new();
        for v in values {
            let before = buf.len();
            v.encode(&mut buf);
            if let Some(width) = T::WIDTH {
                assert_eq!(
                    buf.len() - before,
                    width,
                    "{} is not {width} bytes",
                    T::type_name()
                );
            }
        }
        let mut input = &buf[..];
        for v in values {
            assert_eq!(T::decode(&mut input).as_ref(), Some(v));
        }
        assert!(input.is_empty());
        assert!(T::decode(&mut input).is_none() || values.is_empty());
    }

    proptest! {
        #[test]
        fn codecs_roundtrip(
            a in proptest::collection::vec(any::<(u64, u32)>(), 0..50),
            b in proptest::collection::vec(any::<(u64, u64, u64)>(), 0..50),
            c in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..50),
            d in proptest::collection::vec(any::<[u8; 12]>(), 0..50),
            e in proptest::collection::vec(any::<(u64, Vec<u8>)>(), 0..20),
        ) {
            roundtrip(&a);
            roundtrip(&b);
            roundtrip(&c);
            roundtrip(&d);
            roundtrip(&e);
        }
    }

    proptest! {
        #[test]
        fn prefixes_follow_the_order(a in any::<(u64, Vec<u8>)>(), b in any::<(u64, Vec<u8>)>(),
                                     c in proptest::collection::vec(any::<u8>(), 0..12),
                                     d in proptest::collection::vec(any::<u8>(), 0..12)) {
            if a < b { prop_assert!(a.key_prefix() <= b.key_prefix()); }
            if c < d { prop_assert!(c.key_prefix() <= d.key_prefix()); }
        }
    }

    /// Byte strings over a small alphabet with lengths around `budget`, so
    /// that common prefixes, cuts and strings exactly as long as the cut are
    /// frequent.
    fn short_bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(0u8..3, 0..10)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn bounded_keys_keep_the_order(
            budget in 0usize..8,
            a in proptest::collection::vec((0u64..3, short_bytes()), 1..24),
            b in proptest::collection::vec((short_bytes(), 0u64..3), 1..24),
            c in proptest::collection::vec((0u64..2, 0u64..3, short_bytes()), 1..24),
            d in proptest::collection::vec(short_bytes(), 1..24),
            e in proptest::collection::vec((short_bytes(), short_bytes()), 1..24),
            f in proptest::collection::vec((short_bytes(), 0u32..3, short_bytes()), 1..24),
        ) {
            check_bounded_keys(&a, budget, 8 + 1)?;
            check_bounded_keys(&b, budget, 8 + 1)?;
            check_bounded_keys(&c, budget, 16 + 1)?;
            check_bounded_keys(&d, budget, 1)?;
            check_bounded_keys(&e, budget, 2)?;
            check_bounded_keys(&f, budget, 4 + 2)?;
        }
    }

    /// Strings of about [`MAX_BLOCK_KEY`] bytes sharing long prefixes: block
    /// keys as runs write them ([`encode_block_key`]).
    fn around_the_cut() -> impl Strategy<Value = Vec<u8>> {
        (MAX_BLOCK_KEY - 3..MAX_BLOCK_KEY + 3, 0u8..2, 0u8..2).prop_map(|(len, at, last)| {
            let mut v = vec![b'a'; len];
            // A difference just before the cut, or none.
            v[MAX_BLOCK_KEY - 4] += at;
            if let Some(l) = v.last_mut() {
                *l += last;
            }
            v
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn block_keys_around_the_cut(
            a in proptest::collection::vec((0u64..2, around_the_cut()), 1..16),
            b in proptest::collection::vec((around_the_cut(), 0u64..3), 1..16),
            c in proptest::collection::vec((0u64..2, 0u64..2, around_the_cut()), 1..16),
            d in proptest::collection::vec(around_the_cut(), 1..16),
        ) {
            check_bounded_keys(&a, MAX_BLOCK_KEY, 8 + 2)?;
            check_bounded_keys(&b, MAX_BLOCK_KEY, 8 + 2)?;
            check_bounded_keys(&c, MAX_BLOCK_KEY, 16 + 2)?;
            check_bounded_keys(&d, MAX_BLOCK_KEY, 2)?;
            for x in &a {
                let mut key = Vec::new();
                encode_block_key(x, &mut key);
                prop_assert_eq!(key.len(), 8 + 2 + x.1.len().min(MAX_BLOCK_KEY));
            }
        }

        #[test]
        fn encoded_len_is_the_encoding_length(
            a in any::<(u64, Vec<u8>)>(),
            b in proptest::collection::vec(any::<u8>(), 0..40_000),
            c in any::<(Vec<u8>, u32, [u8; 5])>(),
        ) {
            let len = |r: &dyn Fn(&mut Vec<u8>)| { let mut v = Vec::new(); r(&mut v); v.len() };
            prop_assert_eq!(a.encoded_len(), len(&|v| a.encode(v)));
            prop_assert_eq!(b.encoded_len(), len(&|v| b.encode(v)));
            prop_assert_eq!(c.encoded_len(), len(&|v| c.encode(v)));
        }
    }

    /// The example of the module docs; fixed-width records are their own key.
    #[test]
    fn bounded_key_examples() {
        let key = |x: &(u64, Vec<u8>, u64)| bounded(x, 4).0;
        assert_eq!(key(&(7, b"abcdef".to_vec(), 9)), (7, b"abcd".to_vec(), 0));
        assert_eq!(key(&(7, b"abcd".to_vec(), 9)), (7, b"abcd".to_vec(), 0));
        assert_eq!(key(&(7, b"abc".to_vec(), 9)), (7, b"abc".to_vec(), 9));
        let wide = (u64::MAX, 5u32, [7u8; 100]);
        let (mut plain, mut keyed) = (Vec::new(), Vec::new());
        wide.encode(&mut plain);
        encode_block_key(&wide, &mut keyed);
        assert_eq!(plain, keyed);
        assert_eq!(<(u64, Vec<u8>, [u8; 2])>::least(), (0, Vec::new(), [0, 0]));
    }

    #[test]
    fn type_names() {
        assert_eq!(<(u64, u32)>::type_name(), "(u64,u32)");
        assert_eq!(<[u8; 100]>::type_name(), "[u8;100]");
        const { assert!(<(u64, Vec<u8>)>::HAS_HEAP) };
        assert_eq!(<(u64, u32)>::WIDTH, Some(12));
        assert_eq!(<(u64, u32, [u8; 5])>::WIDTH, Some(17));
        assert_eq!(<(u64, Vec<u8>)>::WIDTH, None);
    }
}
