//! What the external sort can sort: records with a total order and a compact
//! byte encoding.

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
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
