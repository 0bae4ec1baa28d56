//! Rabin fingerprints: residues of byte strings modulo a fixed irreducible
//! polynomial of degree 64 over GF(2) (Rabin 1981, *Fingerprinting by random
//! polynomials*; Broder 1993, *Some applications of Rabin's fingerprinting method*).
//!
//! # Definition
//!
//! A byte string `m = m_0 m_1 … m_{n-1}` is read as a polynomial `M(x)` over GF(2)
//! whose coefficients are its bits, most significant bit of `m_0` first (highest
//! degree). Its fingerprint is `M(x) mod P(x)`, a polynomial of degree < 64 stored in
//! a `u64` (bit `i` = coefficient of `x^i`). [`Rabin::extend`] appends bytes to a
//! fingerprint: `extend(f, m) = (f · x^(8n) + M) mod P`, so `fingerprint(a ‖ b) =
//! extend(fingerprint(a), b)`, and starting from `1` instead of `0` fingerprints the
//! bit string `1 ‖ m` (which makes leading zero bytes count).
//!
//! The map is GF(2)-linear: for strings of equal length `fp(a ⊕ b) = fp(a) ⊕ fp(b)`.
//! With `P` irreducible, two distinct strings of at most `L` bits collide for at
//! most `L/64` of the irreducible polynomials of degree 64 — about `L / 2^58`
//! of a random choice — which is what makes a fixed, randomly chosen `P` a good
//! 64-bit fingerprint.
//!
//! # The polynomial
//!
//! [`POLY`] is `x^64 + 0x0dcd3be7dbfc3717` (the low 64 coefficients). It was drawn at
//! random and tested: it is the first odd value among the outputs of splitmix64
//! seeded with the ASCII bytes `"WEBMILL"` (`0x5745424d494c4c`) — the 61st output —
//! for which `x^64 + value` passes Rabin's irreducibility test
//! ([`is_irreducible`]). The tests re-derive it, and check the test itself against
//! brute-force factoring and Gauss's count of irreducible polynomials for small
//! degrees.
//!
//! # Speed
//!
//! Table-driven "slicing by 8": eight tables of 256 entries (16 KiB), `T_j[b] =
//! b(x) · x^(64 + 8j) mod P`. Appending 8 bytes costs eight independent lookups;
//! appending fewer uses as many tables as bytes. The tables of [`Rabin::standard`]
//! are computed at compile time. [`ShiftTable`] multiplies a fingerprint by a fixed
//! `x^(8n)` the same way, which is what a rolling window needs to drop its oldest
//! bytes.
//!
//! The fingerprints are not a hash against adversaries (the map is linear and `P` is
//! public); they detect accidental equality, as in the sources.

use crate::error::{Error, Result};

/// The low 64 coefficients of webmill's fingerprint polynomial `P(x) = x^64 + POLY`
/// (irreducible over GF(2); see the module doc for where it comes from).
pub const POLY: u64 = 0x0dcd_3be7_dbfc_3717;

/// Tables for multiplying a residue by `x^(8·bytes)`: `tables[j][b] = b(x) ·
/// x^(8j + 8·bytes) mod P`.
type Tables = [[u64; 256]; 8];

/// `r · x mod P` for a residue `r` (degree < 64).
const fn mul_x(r: u64, poly: u64) -> u64 {
    let carry = r >> 63;
    (r << 1) ^ (poly & carry.wrapping_neg())
}

/// Tables multiplying by `x^(64)`, built at compile time for [`POLY`] or at run time
/// for any other polynomial.
const fn build_tables(poly: u64) -> Tables {
    let mut t = [[0u64; 256]; 8];
    // basis[i] = x^(64 + i) mod P for i in 0..64.
    let mut basis = [0u64; 64];
    let mut r = poly; // x^64 mod P = the low coefficients.
    let mut i = 0;
    while i < 64 {
        basis[i] = r;
        r = mul_x(r, poly);
        i += 1;
    }
    let mut j = 0;
    while j < 8 {
        let mut b = 0;
        while b < 256 {
            let mut acc = 0u64;
            let mut bit = 0;
            while bit < 8 {
                if (b >> bit) & 1 == 1 {
                    acc ^= basis[8 * j + bit];
                }
                bit += 1;
            }
            t[j][b] = acc;
            b += 1;
        }
        j += 1;
    }
    t
}

/// A Rabin fingerprinter: a degree-64 polynomial and its lookup tables.
///
/// Immutable after construction, so one instance can be shared by threads.
#[derive(Clone)]
pub struct Rabin {
    poly: u64,
    tables: Tables,
}

static STANDARD: Rabin = Rabin {
    poly: POLY,
    tables: build_tables(POLY),
};

impl std::fmt::Debug for Rabin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rabin {{ poly: x^64 + {:#018x} }}", self.poly)
    }
}

impl Rabin {
    /// The fingerprinter for [`POLY`], with tables built at compile time.
    pub fn standard() -> &'static Rabin {
        &STANDARD
    }

    /// A fingerprinter for `x^64 + low`, which must be irreducible
    /// ([`Error::Usage`] otherwise).
    pub fn new(low: u64) -> Result<Box<Rabin>> {
        if !is_irreducible(low) {
            return Err(Error::usage(format!(
                "x^64 + {low:#018x} is not irreducible over GF(2): it cannot be a Rabin fingerprint polynomial"
            )));
        }
        Ok(Self::with_any_polynomial(low))
    }

    /// A fingerprinter (residues modulo `x^64 + low`) for any polynomial, irreducible
    /// or not: a CRC-64 polynomial, for instance (`CRC(m)` without init or final xor
    /// is the residue of `m` followed by eight zero bytes). Rabin's collision bound
    /// holds only for irreducible polynomials.
    pub fn with_any_polynomial(low: u64) -> Box<Rabin> {
        Box::new(Rabin {
            poly: low,
            tables: build_tables(low),
        })
    }

    /// The low 64 coefficients of the polynomial (`x^64` is implied).
    pub fn polynomial(&self) -> u64 {
        self.poly
    }

    /// The fingerprint of `bytes`: `M(x) mod P`.
    #[inline]
    pub fn fingerprint(&self, bytes: &[u8]) -> u64 {
        self.extend(0, bytes)
    }

    /// Appends `bytes` to the string whose fingerprint is `fp`: returns
    /// `(fp · x^(8·len) + M(x)) mod P`. `extend(1, m)` fingerprints the bit string
    /// `1 ‖ m`.
    #[inline]
    pub fn extend(&self, fp: u64, bytes: &[u8]) -> u64 {
        let mut s = fp;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            s = u64::from_be_bytes(w) ^ self.times_x64(s);
        }
        let rest = chunks.remainder();
        if rest.is_empty() {
            return s;
        }
        let n = rest.len(); // 1..=7
                            // The big-endian value of the 1–7 bytes, by overlapping reads (two for 4–7
                            // bytes, three for 1–3) rather than a loop whose length mispredicts.
        let m = if n >= 4 {
            let be32 = |b: &[u8]| u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
            (be32(rest) << (8 * (n - 4))) | be32(&rest[n - 4..])
        } else {
            (u64::from(rest[0]) << (8 * (n - 1)))
                | (u64::from(rest[n / 2]) << (8 * (n - 1 - n / 2)))
                | u64::from(rest[n - 1])
        };
        // s · x^(8n) = (s << 8n) + (top 8n bits of s) · x^64; the top bits form a
        // residue whose upper bytes are zero, so the eight-table product serves.
        let high = s >> (64 - 8 * n);
        (s << (8 * n)) ^ m ^ self.times_x64(high)
    }

    /// Appends the 8 big-endian bytes of `word`: `(fp · x^64 + word) mod P`.
    #[inline]
    pub fn extend_u64(&self, fp: u64, word: u64) -> u64 {
        word ^ self.times_x64(fp)
    }

    /// Appends the 4 big-endian bytes of `word`: `(fp · x^32 + word) mod P`.
    #[inline]
    pub fn extend_u32(&self, fp: u64, word: u32) -> u64 {
        let t = &self.tables;
        let high = fp >> 32;
        (fp << 32)
            ^ u64::from(word)
            ^ t[0][(high & 0xff) as usize]
            ^ t[1][((high >> 8) & 0xff) as usize]
            ^ t[2][((high >> 16) & 0xff) as usize]
            ^ t[3][((high >> 24) & 0xff) as usize]
    }

    /// `fp · x^64 mod P`.
    #[inline]
    fn times_x64(&self, s: u64) -> u64 {
        let t = &self.tables;
        t[0][(s & 0xff) as usize]
            ^ t[1][((s >> 8) & 0xff) as usize]
            ^ t[2][((s >> 16) & 0xff) as usize]
            ^ t[3][((s >> 24) & 0xff) as usize]
            ^ t[4][((s >> 32) & 0xff) as usize]
            ^ t[5][((s >> 40) & 0xff) as usize]
            ^ t[6][((s >> 48) & 0xff) as usize]
            ^ t[7][((s >> 56) & 0xff) as usize]
    }

    /// A table multiplying fingerprints by `x^(8·bytes)` modulo this polynomial.
    pub fn shift_table(&self, bytes: u128) -> ShiftTable {
        ShiftTable::new(self.poly, bytes)
    }
}

/// Multiplication of fingerprints by a fixed power `x^(8·bytes) mod P`, by eight
/// table lookups: `shift(fingerprint(m)) = fingerprint(m ‖ 0^bytes)`.
///
/// A rolling window of `w` bytes uses `ShiftTable` for `w` to remove its oldest
/// bytes: `fp(b ‖ new) = extend(fp(a ‖ b), new) ⊕ shift_w(fp(a))` for `|b ‖ new| = w`.
#[derive(Clone)]
pub struct ShiftTable {
    bytes: u128,
    tables: Box<Tables>,
}

impl std::fmt::Debug for ShiftTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShiftTable {{ bytes: {} }}", self.bytes)
    }
}

impl ShiftTable {
    fn new(poly: u64, bytes: u128) -> ShiftTable {
        // x^(8·bytes) mod P by square-and-multiply, then x^(8·bytes + i) for i < 64.
        let base = pow_x(bytes.saturating_mul(8), poly);
        let mut basis = [0u64; 64];
        let mut r = base;
        for b in basis.iter_mut() {
            *b = r;
            r = mul_x(r, poly);
        }
        let mut tables = Box::new([[0u64; 256]; 8]);
        for (j, table) in tables.iter_mut().enumerate() {
            for (b, entry) in table.iter_mut().enumerate() {
                let mut acc = 0;
                for (bit, &v) in basis[8 * j..8 * j + 8].iter().enumerate() {
                    if (b >> bit) & 1 == 1 {
                        acc ^= v;
                    }
                }
                *entry = acc;
            }
        }
        ShiftTable { bytes, tables }
    }

    /// The number of zero bytes this table appends.
    pub fn bytes(&self) -> u128 {
        self.bytes
    }

    /// `fp · x^(8·bytes) mod P`.
    #[inline]
    pub fn shift(&self, s: u64) -> u64 {
        let t = &*self.tables;
        t[0][(s & 0xff) as usize]
            ^ t[1][((s >> 8) & 0xff) as usize]
            ^ t[2][((s >> 16) & 0xff) as usize]
            ^ t[3][((s >> 24) & 0xff) as usize]
            ^ t[4][((s >> 32) & 0xff) as usize]
            ^ t[5][((s >> 40) & 0xff) as usize]
            ^ t[6][((s >> 48) & 0xff) as usize]
            ^ t[7][((s >> 56) & 0xff) as usize]
    }
}

// ---------------------------------------------------------------------------
// Polynomial arithmetic over GF(2) for the irreducibility test (any degree ≤ 64,
// polynomials in u128 with the leading coefficient explicit). Slow and simple: it
// runs once per polynomial.

/// Degree of a non-zero polynomial.
fn degree(a: u128) -> u32 {
    127 - a.leading_zeros()
}

/// `a mod f` (`f` non-zero).
fn poly_mod(mut a: u128, f: u128) -> u128 {
    let df = degree(f);
    while a != 0 && degree(a) >= df {
        a ^= f << (degree(a) - df);
    }
    a
}

/// `a · b mod f` for `a, b` already reduced modulo `f` (degree of `f` ≤ 64).
fn mul_mod(a: u128, b: u128, f: u128) -> u128 {
    // Shift-and-add, reducing as we go so nothing exceeds degree 64.
    let mut result = 0u128;
    let mut a = a;
    let mut b = b;
    while b != 0 {
        if b & 1 == 1 {
            result ^= a;
        }
        b >>= 1;
        a = poly_mod(a << 1, f);
    }
    result
}

fn poly_gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let r = poly_mod(a, b);
        a = b;
        b = r;
    }
    a
}

/// `x^e mod (x^64 + poly)` as a residue.
fn pow_x(e: u128, poly: u64) -> u64 {
    let f = (1u128 << 64) | u128::from(poly);
    let mut result = 1u128;
    let mut base = 2u128; // x
    let mut e = e;
    while e > 0 {
        if e & 1 == 1 {
            result = mul_mod(result, base, f);
        }
        base = mul_mod(base, base, f);
        e >>= 1;
    }
    result as u64
}

/// Rabin's irreducibility test for a polynomial `f` of degree `n` (1 ≤ n ≤ 64) given
/// with its leading coefficient: `f` is irreducible iff `x^(2^n) ≡ x (mod f)` and
/// `gcd(x^(2^(n/q)) − x, f) = 1` for every prime `q` dividing `n` (Rabin 1980,
/// *Probabilistic algorithms in finite fields*).
fn is_irreducible_poly(f: u128) -> bool {
    if f < 2 || degree(f) > 64 {
        return false;
    }
    let n = degree(f);
    let x = poly_mod(2, f);
    // x^(2^i) mod f for i = 0..=n, by repeated squaring.
    let mut powers = Vec::with_capacity(n as usize + 1);
    let mut p = x;
    powers.push(p);
    for _ in 0..n {
        p = mul_mod(p, p, f);
        powers.push(p);
    }
    if powers[n as usize] != x {
        return false;
    }
    let mut m = n;
    let mut q = 2;
    while m > 1 {
        if m.is_multiple_of(q) {
            while m.is_multiple_of(q) {
                m /= q;
            }
            if poly_gcd(f, powers[(n / q) as usize] ^ x) != 1 {
                return false;
            }
        }
        q += 1;
    }
    true
}

/// Whether `x^64 + low` is irreducible over GF(2) (Rabin's test; microseconds).
pub fn is_irreducible(low: u64) -> bool {
    is_irreducible_poly((1u128 << 64) | u128::from(low))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Independent reference: the residue of `bytes` (after the bit string `prefix`
    /// of `prefix_bits` bits) modulo `x^64 + poly`, by schoolbook long division one
    /// bit at a time.
    fn slow_residue(prefix: u64, prefix_bits: u32, bytes: &[u8], poly: u64) -> u64 {
        let mut bits: Vec<bool> = (0..prefix_bits)
            .rev()
            .map(|i| (prefix >> i) & 1 == 1)
            .collect();
        for &b in bytes {
            for i in (0..8).rev() {
                bits.push((b >> i) & 1 == 1);
            }
        }
        // Register of 65 bits: shift a bit in, subtract P when the x^64 term is set.
        let mut r: u128 = 0;
        let f = (1u128 << 64) | u128::from(poly);
        for bit in bits {
            r = (r << 1) | u128::from(bit);
            if r >> 64 == 1 {
                r ^= f;
            }
        }
        r as u64
    }

    fn splitmix64(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn poly_is_irreducible_and_derived_as_documented() {
        assert!(is_irreducible(POLY));
        let mut state = u64::from_be_bytes(*b"\0WEBMILL");
        let mut index = 0;
        let found = loop {
            let v = splitmix64(&mut state) | 1;
            if is_irreducible(v) {
                break v;
            }
            index += 1;
        };
        assert_eq!(found, POLY);
        assert_eq!(index, 60, "the 61st output");
    }

    /// Brute force: `f` is irreducible iff no polynomial of degree 1..=deg/2 divides it.
    fn irreducible_by_trial_division(f: u128) -> bool {
        let n = degree(f);
        if n == 0 {
            return false;
        }
        for d in 1..=n / 2 {
            for low in 0..(1u128 << d) {
                if poly_mod(f, (1u128 << d) | low) == 0 {
                    return false;
                }
            }
        }
        true
    }

    /// Gauss: the number of irreducible polynomials of degree n over GF(2) is
    /// (1/n) Σ_{d|n} μ(d) 2^(n/d).
    fn gauss_count(n: u32) -> u64 {
        fn mobius(mut d: u32) -> i64 {
            let mut result = 1;
            let mut p = 2;
            while d > 1 {
                if d.is_multiple_of(p) {
                    d /= p;
                    if d.is_multiple_of(p) {
                        return 0;
                    }
                    result = -result;
                }
                p += 1;
            }
            result
        }
        let sum: i64 = (1..=n)
            .filter(|d| n.is_multiple_of(*d))
            .map(|d| mobius(d) * (1i64 << (n / d)))
            .sum();
        (sum / i64::from(n)) as u64
    }

    #[test]
    fn irreducibility_test_agrees_with_trial_division_and_gauss() {
        for n in 1..=11u32 {
            let mut count = 0;
            for low in 0..(1u128 << n) {
                let f = (1u128 << n) | low;
                let fast = is_irreducible_poly(f);
                assert_eq!(fast, irreducible_by_trial_division(f), "f = {f:#x}");
                count += u64::from(fast);
            }
            assert_eq!(count, gauss_count(n), "degree {n}");
        }
        // Degree 64: 2^64 / 64 irreducibles, the count Gauss gives.
        assert_eq!(gauss_count(16), 4080);
    }

    #[test]
    fn reducible_degree_64_polynomials_are_rejected() {
        // x^64 + 1 = (x + 1)^64; x^64 (divisible by x); x^64 + x^63 + … (even weight
        // → divisible by x + 1).
        assert!(!is_irreducible(1));
        assert!(!is_irreducible(0));
        assert!(!is_irreducible(0b11));
        // Products of two irreducibles of degree 32 and of degrees 31 and 33.
        let f32a = (1u128 << 32) | 0b1000_1101; // x^32+x^7+x^3+x^2+1, primitive
        assert!(is_irreducible_poly(f32a));
        let mut g = 0u128;
        for low in 1u128.. {
            let cand = (1u128 << 32) | low;
            if cand != f32a && is_irreducible_poly(cand) {
                g = cand;
                break;
            }
        }
        let product = clmul(f32a, g);
        assert_eq!(degree(product), 64);
        assert!(!is_irreducible(product as u64));
        // The square of an irreducible: only even-degree terms.
        let square = clmul(f32a, f32a);
        assert!(!is_irreducible(square as u64));
        // A known primitive (hence irreducible) pentanomial: x^64 + x^4 + x^3 + x + 1.
        assert!(is_irreducible(0b11011));
    }

    fn clmul(a: u128, b: u128) -> u128 {
        let mut r = 0;
        for i in 0..64 {
            if (b >> i) & 1 == 1 {
                r ^= a << i;
            }
        }
        r
    }

    #[test]
    fn golden_vectors() {
        let rabin = Rabin::standard();
        let cases: &[&[u8]] = &[
            b"",
            b"a",
            b"abcdefg",
            b"abcdefgh",
            b"abcdefghi",
            b"the quick brown fox jumps over the lazy dog",
            &[0xff; 20],
        ];
        for &case in cases {
            assert_eq!(
                rabin.fingerprint(case),
                slow_residue(0, 0, case, POLY),
                "{case:?}"
            );
            assert_eq!(rabin.extend(1, case), slow_residue(1, 1, case, POLY));
        }
        // Pinned values (computed by an independent Python long division): a change of polynomial or of
        // bit order breaks them, on purpose.
        assert_eq!(rabin.fingerprint(b""), 0);
        assert_eq!(rabin.fingerprint(b"a"), 0x61);
        assert_eq!(rabin.fingerprint(b"abcdefgh"), 0x6162_6364_6566_6768);
        assert_eq!(rabin.fingerprint(b"abcdefghi"), PINNED_ABCDEFGHI);
        assert_eq!(
            rabin.fingerprint(b"the quick brown fox jumps over the lazy dog"),
            PINNED_FOX
        );
    }

    const PINNED_ABCDEFGHI: u64 = 0xbedd_ad40_8ae8_1670;
    const PINNED_FOX: u64 = 0x068d_3e50_dd39_4431;

    #[test]
    fn crc64_ecma_182_check_value() {
        // CRC-64/ECMA-182 (poly 0x42f0e1eba9ea3693, init 0, no reflection, no final
        // xor) has check value 0x6c40df5f0b497347 for "123456789" in the CRC
        // catalogue; that CRC is the residue of the message followed by 64 zero bits.
        let crc = Rabin::with_any_polynomial(0x42f0_e1eb_a9ea_3693);
        assert_eq!(
            crc.fingerprint(b"123456789\0\0\0\0\0\0\0\0"),
            0x6c40_df5f_0b49_7347
        );
        let shifted = crc.shift_table(8).shift(crc.fingerprint(b"123456789"));
        assert_eq!(shifted, 0x6c40_df5f_0b49_7347);
    }

    #[test]
    fn new_rejects_reducible_polynomials() {
        assert!(Rabin::new(1).is_err());
        assert_eq!(Rabin::new(POLY).unwrap().polynomial(), POLY);
    }

    proptest! {
        #[test]
        fn fast_equals_slow(bytes in proptest::collection::vec(any::<u8>(), 0..80), start in any::<u64>()) {
            let rabin = Rabin::standard();
            prop_assert_eq!(rabin.fingerprint(&bytes), slow_residue(0, 0, &bytes, POLY));
            prop_assert_eq!(rabin.extend(start, &bytes), slow_residue(start, 64, &bytes, POLY));
        }

        #[test]
        fn other_polynomials_fast_equals_slow(bytes in proptest::collection::vec(any::<u8>(), 0..40), poly in any::<u64>()) {
            let rabin = Rabin::with_any_polynomial(poly);
            prop_assert_eq!(rabin.fingerprint(&bytes), slow_residue(0, 0, &bytes, poly));
        }

        #[test]
        fn concatenation(a in proptest::collection::vec(any::<u8>(), 0..40), b in proptest::collection::vec(any::<u8>(), 0..40)) {
            let rabin = Rabin::standard();
            let mut ab = a.clone();
            ab.extend_from_slice(&b);
            prop_assert_eq!(rabin.extend(rabin.fingerprint(&a), &b), rabin.fingerprint(&ab));
        }

        #[test]
        fn linearity(pairs in proptest::collection::vec(any::<(u8, u8)>(), 0..64)) {
            let rabin = Rabin::standard();
            let a: Vec<u8> = pairs.iter().map(|p| p.0).collect();
            let b: Vec<u8> = pairs.iter().map(|p| p.1).collect();
            let x: Vec<u8> = pairs.iter().map(|p| p.0 ^ p.1).collect();
            prop_assert_eq!(rabin.fingerprint(&x), rabin.fingerprint(&a) ^ rabin.fingerprint(&b));
        }

        #[test]
        fn shift_appends_zero_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..30), n in 0usize..100) {
            let rabin = Rabin::standard();
            let mut padded = bytes.clone();
            padded.resize(bytes.len() + n, 0);
            prop_assert_eq!(rabin.shift_table(n as u128).shift(rabin.fingerprint(&bytes)), rabin.fingerprint(&padded));
        }

        #[test]
        fn extend_u64_is_eight_bytes(start in any::<u64>(), w in any::<u64>()) {
            let rabin = Rabin::standard();
            prop_assert_eq!(rabin.extend_u64(start, w), rabin.extend(start, &w.to_be_bytes()));
        }

        #[test]
        fn extend_u32_is_four_bytes(start in any::<u64>(), w in any::<u32>()) {
            let rabin = Rabin::standard();
            prop_assert_eq!(rabin.extend_u32(start, w), rabin.extend(start, &w.to_be_bytes()));
        }
    }
}
