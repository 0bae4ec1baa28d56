//! Figures written for people: byte counts (`1.5 GiB`) and counts with
//! thousands separators (`1,234,567`). A leaf, so that error messages
//! ([`crate::error`]), the resource figures ([`crate::resources`]) and the
//! stages' headlines use the same without importing each other.

/// Formats a byte count for people: `1.5 GiB`.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Formats a count with thousands separators: `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An estimated count as it is shown: two significant digits, with
/// thousands separators (`12,345` → `12,000`).
pub fn about(n: u64) -> String {
    let mut scale = 1u64;
    while n / scale >= 100 {
        scale *= 10;
    }
    let rounded = (n + scale / 2) / scale * scale;
    thousands(rounded)
}

/// An estimated count `n` known to lie in `least..=most`, as it is shown:
/// "about N (L–M)", N with two significant digits unless that rounding
/// leaves the bounds ("about 1,187 (1,150–1,190)").
pub fn about_within(n: u64, least: u64, most: u64) -> String {
    let mut scale = 1u64;
    while n / scale >= 100 {
        scale *= 10;
    }
    let rounded = (n + scale / 2) / scale * scale;
    let shown = if (least..=most).contains(&rounded) {
        rounded
    } else {
        n
    };
    if least == most {
        return thousands(least);
    }
    format!(
        "about {} ({}–{})",
        thousands(shown),
        thousands(least),
        thousands(most)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_within_keeps_the_bounds() {
        assert_eq!(about_within(1187, 1100, 1300), "about 1,200 (1,100–1,300)");
        assert_eq!(about_within(1187, 1150, 1190), "about 1,187 (1,150–1,190)");
        assert_eq!(about_within(5, 5, 5), "5");
    }

    #[test]
    fn about_keeps_two_digits() {
        assert_eq!(about(0), "0");
        assert_eq!(about(7), "7");
        assert_eq!(about(99), "99");
        assert_eq!(about(12_345), "12,000");
        assert_eq!(about(12_500), "13,000");
        assert_eq!(about(995), "1,000");
    }

    #[test]
    fn counts_and_sizes() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
    }
}
