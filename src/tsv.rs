//! TSV output as the exports use it: one record a line, tab-separated, a header
//! line starting with `#`. Text fields escape `\`, tab, newline and carriage
//! return as `\\`, `\t`, `\n`, `\r`, so every record stays on one line.

use std::borrow::Cow;

/// Escapes a text field.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.contains(['\\', '\t', '\n', '\r']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes() {
        assert_eq!(super::escape("plain"), "plain");
        assert_eq!(super::escape("a\tb\nc\\d\r"), "a\\tb\\nc\\\\d\\r");
    }
}
