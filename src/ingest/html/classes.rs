//! Byte classes of the HTML tokenizer (bit sets over the 256 byte values),
//! shared by the tokenizer, the word splitter and the charset sniffer.

pub(super) fn is_space(b: u8) -> bool {
    CLASS[b as usize] & C_SPACE != 0
}

/// Byte classes of the tokenizer (bit sets).
const C_SPACE: u8 = 1;
/// Ends a tag name: space, `/`, `>`.
pub(super) const C_NAME_END: u8 = 2;
/// Ends an attribute name: space, `/`, `>`, `=`.
pub(super) const C_ATTR_END: u8 = 4;
/// Ends an unquoted attribute value: space, `>`.
pub(super) const C_VALUE_END: u8 = 8;
/// ASCII lowercase letter or digit.
const C_LOWER: u8 = 16;
/// ASCII uppercase letter.
pub(super) const C_UPPER: u8 = 32;
/// Stops text in the data state: `<`, `&`.
pub(super) const C_STOP: u8 = 64;
pub(super) const C_WORD: u8 = C_LOWER | C_UPPER;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let mut c = 0;
        if matches!(b, b'\t' | b'\n' | 0x0c | b'\r' | b' ') {
            c |= C_SPACE | C_NAME_END | C_ATTR_END | C_VALUE_END;
        }
        if b == b'/' {
            c |= C_NAME_END | C_ATTR_END;
        }
        if b == b'>' {
            c |= C_NAME_END | C_ATTR_END | C_VALUE_END;
        }
        if b == b'=' {
            c |= C_ATTR_END;
        }
        if b == b'<' || b == b'&' {
            c |= C_STOP;
        }
        if b.is_ascii_lowercase() || b.is_ascii_digit() {
            c |= C_LOWER;
        }
        if b.is_ascii_uppercase() {
            c |= C_UPPER;
        }
        t[i] = c;
        i += 1;
    }
    t
};

pub(super) fn class(b: u8) -> u8 {
    CLASS[b as usize]
}
