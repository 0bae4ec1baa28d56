//! Character references: numeric (decimal and hex, `;` optional, with the
//! WHATWG fixes) and named (HTML 4's, `&apos;`, the HTML 5 names of ASCII
//! punctuation, the legacy names without `;`). The rules are in the [module
//! docs](super) (`# Character references`).

/// Named references: (name, usable without `;` (legacy), character). Sorted by
/// name bytes for binary search. HTML 4's 252, `apos`, the HTML 5 names of
/// ASCII characters, and the uppercase legacy aliases.
#[rustfmt::skip]
const ENTITIES: &[(&[u8], bool, char)] = &[
    (b"AElig", true, '\u{c6}'), (b"AMP", true, '\u{26}'), (b"Aacute", true, '\u{c1}'),
    (b"Acirc", true, '\u{c2}'), (b"Agrave", true, '\u{c0}'), (b"Alpha", false, '\u{391}'),
    (b"Aring", true, '\u{c5}'), (b"Atilde", true, '\u{c3}'), (b"Auml", true, '\u{c4}'),
    (b"Beta", false, '\u{392}'), (b"COPY", true, '\u{a9}'), (b"Ccedil", true, '\u{c7}'),
    (b"Chi", false, '\u{3a7}'), (b"Dagger", false, '\u{2021}'), (b"Delta", false, '\u{394}'),
    (b"DiacriticalGrave", false, '\u{60}'), (b"ETH", true, '\u{d0}'), (b"Eacute", true, '\u{c9}'),
    (b"Ecirc", true, '\u{ca}'), (b"Egrave", true, '\u{c8}'), (b"Epsilon", false, '\u{395}'),
    (b"Eta", false, '\u{397}'), (b"Euml", true, '\u{cb}'), (b"GT", true, '\u{3e}'),
    (b"Gamma", false, '\u{393}'), (b"Hat", false, '\u{5e}'), (b"Iacute", true, '\u{cd}'),
    (b"Icirc", true, '\u{ce}'), (b"Igrave", true, '\u{cc}'), (b"Iota", false, '\u{399}'),
    (b"Iuml", true, '\u{cf}'), (b"Kappa", false, '\u{39a}'), (b"LT", true, '\u{3c}'),
    (b"Lambda", false, '\u{39b}'), (b"Mu", false, '\u{39c}'), (b"NewLine", false, '\u{a}'),
    (b"Ntilde", true, '\u{d1}'), (b"Nu", false, '\u{39d}'), (b"OElig", false, '\u{152}'),
    (b"Oacute", true, '\u{d3}'), (b"Ocirc", true, '\u{d4}'), (b"Ograve", true, '\u{d2}'),
    (b"Omega", false, '\u{3a9}'), (b"Omicron", false, '\u{39f}'), (b"Oslash", true, '\u{d8}'),
    (b"Otilde", true, '\u{d5}'), (b"Ouml", true, '\u{d6}'), (b"Phi", false, '\u{3a6}'),
    (b"Pi", false, '\u{3a0}'), (b"Prime", false, '\u{2033}'), (b"Psi", false, '\u{3a8}'),
    (b"QUOT", true, '\u{22}'), (b"REG", true, '\u{ae}'), (b"Rho", false, '\u{3a1}'),
    (b"Scaron", false, '\u{160}'), (b"Sigma", false, '\u{3a3}'), (b"THORN", true, '\u{de}'),
    (b"Tab", false, '\u{9}'), (b"Tau", false, '\u{3a4}'), (b"Theta", false, '\u{398}'),
    (b"Uacute", true, '\u{da}'), (b"Ucirc", true, '\u{db}'), (b"Ugrave", true, '\u{d9}'),
    (b"UnderBar", false, '\u{5f}'), (b"Upsilon", false, '\u{3a5}'), (b"Uuml", true, '\u{dc}'),
    (b"VerticalLine", false, '\u{7c}'), (b"Xi", false, '\u{39e}'), (b"Yacute", true, '\u{dd}'),
    (b"Yuml", false, '\u{178}'), (b"Zeta", false, '\u{396}'), (b"aacute", true, '\u{e1}'),
    (b"acirc", true, '\u{e2}'), (b"acute", true, '\u{b4}'), (b"aelig", true, '\u{e6}'),
    (b"agrave", true, '\u{e0}'), (b"alefsym", false, '\u{2135}'), (b"alpha", false, '\u{3b1}'),
    (b"amp", true, '\u{26}'), (b"and", false, '\u{2227}'), (b"ang", false, '\u{2220}'),
    (b"apos", false, '\u{27}'), (b"aring", true, '\u{e5}'), (b"ast", false, '\u{2a}'),
    (b"asymp", false, '\u{2248}'), (b"atilde", true, '\u{e3}'), (b"auml", true, '\u{e4}'),
    (b"bdquo", false, '\u{201e}'), (b"beta", false, '\u{3b2}'), (b"brvbar", true, '\u{a6}'),
    (b"bsol", false, '\u{5c}'), (b"bull", false, '\u{2022}'), (b"cap", false, '\u{2229}'),
    (b"ccedil", true, '\u{e7}'), (b"cedil", true, '\u{b8}'), (b"cent", true, '\u{a2}'),
    (b"chi", false, '\u{3c7}'), (b"circ", false, '\u{2c6}'), (b"clubs", false, '\u{2663}'),
    (b"colon", false, '\u{3a}'), (b"comma", false, '\u{2c}'), (b"commat", false, '\u{40}'),
    (b"cong", false, '\u{2245}'), (b"copy", true, '\u{a9}'), (b"crarr", false, '\u{21b5}'),
    (b"cup", false, '\u{222a}'), (b"curren", true, '\u{a4}'), (b"dArr", false, '\u{21d3}'),
    (b"dagger", false, '\u{2020}'), (b"darr", false, '\u{2193}'), (b"deg", true, '\u{b0}'),
    (b"delta", false, '\u{3b4}'), (b"diams", false, '\u{2666}'), (b"divide", true, '\u{f7}'),
    (b"dollar", false, '\u{24}'), (b"eacute", true, '\u{e9}'), (b"ecirc", true, '\u{ea}'),
    (b"egrave", true, '\u{e8}'), (b"empty", false, '\u{2205}'), (b"emsp", false, '\u{2003}'),
    (b"ensp", false, '\u{2002}'), (b"epsilon", false, '\u{3b5}'), (b"equals", false, '\u{3d}'),
    (b"equiv", false, '\u{2261}'), (b"eta", false, '\u{3b7}'), (b"eth", true, '\u{f0}'),
    (b"euml", true, '\u{eb}'), (b"euro", false, '\u{20ac}'), (b"excl", false, '\u{21}'),
    (b"exist", false, '\u{2203}'), (b"fnof", false, '\u{192}'), (b"forall", false, '\u{2200}'),
    (b"frac12", true, '\u{bd}'), (b"frac14", true, '\u{bc}'), (b"frac34", true, '\u{be}'),
    (b"frasl", false, '\u{2044}'), (b"gamma", false, '\u{3b3}'), (b"ge", false, '\u{2265}'),
    (b"grave", false, '\u{60}'), (b"gt", true, '\u{3e}'), (b"hArr", false, '\u{21d4}'),
    (b"harr", false, '\u{2194}'), (b"hearts", false, '\u{2665}'), (b"hellip", false, '\u{2026}'),
    (b"iacute", true, '\u{ed}'), (b"icirc", true, '\u{ee}'), (b"iexcl", true, '\u{a1}'),
    (b"igrave", true, '\u{ec}'), (b"image", false, '\u{2111}'), (b"infin", false, '\u{221e}'),
    (b"int", false, '\u{222b}'), (b"iota", false, '\u{3b9}'), (b"iquest", true, '\u{bf}'),
    (b"isin", false, '\u{2208}'), (b"iuml", true, '\u{ef}'), (b"kappa", false, '\u{3ba}'),
    (b"lArr", false, '\u{21d0}'), (b"lambda", false, '\u{3bb}'), (b"lang", false, '\u{2329}'),
    (b"laquo", true, '\u{ab}'), (b"larr", false, '\u{2190}'), (b"lbrace", false, '\u{7b}'),
    (b"lbrack", false, '\u{5b}'), (b"lceil", false, '\u{2308}'), (b"lcub", false, '\u{7b}'),
    (b"ldquo", false, '\u{201c}'), (b"le", false, '\u{2264}'), (b"lfloor", false, '\u{230a}'),
    (b"lowast", false, '\u{2217}'), (b"lowbar", false, '\u{5f}'), (b"loz", false, '\u{25ca}'),
    (b"lpar", false, '\u{28}'), (b"lrm", false, '\u{200e}'), (b"lsaquo", false, '\u{2039}'),
    (b"lsqb", false, '\u{5b}'), (b"lsquo", false, '\u{2018}'), (b"lt", true, '\u{3c}'),
    (b"macr", true, '\u{af}'), (b"mdash", false, '\u{2014}'), (b"micro", true, '\u{b5}'),
    (b"midast", false, '\u{2a}'), (b"middot", true, '\u{b7}'), (b"minus", false, '\u{2212}'),
    (b"mu", false, '\u{3bc}'), (b"nabla", false, '\u{2207}'), (b"nbsp", true, '\u{a0}'),
    (b"ndash", false, '\u{2013}'), (b"ne", false, '\u{2260}'), (b"ni", false, '\u{220b}'),
    (b"not", true, '\u{ac}'), (b"notin", false, '\u{2209}'), (b"nsub", false, '\u{2284}'),
    (b"ntilde", true, '\u{f1}'), (b"nu", false, '\u{3bd}'), (b"num", false, '\u{23}'),
    (b"oacute", true, '\u{f3}'), (b"ocirc", true, '\u{f4}'), (b"oelig", false, '\u{153}'),
    (b"ograve", true, '\u{f2}'), (b"oline", false, '\u{203e}'), (b"omega", false, '\u{3c9}'),
    (b"omicron", false, '\u{3bf}'), (b"oplus", false, '\u{2295}'), (b"or", false, '\u{2228}'),
    (b"ordf", true, '\u{aa}'), (b"ordm", true, '\u{ba}'), (b"oslash", true, '\u{f8}'),
    (b"otilde", true, '\u{f5}'), (b"otimes", false, '\u{2297}'), (b"ouml", true, '\u{f6}'),
    (b"para", true, '\u{b6}'), (b"part", false, '\u{2202}'), (b"percnt", false, '\u{25}'),
    (b"period", false, '\u{2e}'), (b"permil", false, '\u{2030}'), (b"perp", false, '\u{22a5}'),
    (b"phi", false, '\u{3c6}'), (b"pi", false, '\u{3c0}'), (b"piv", false, '\u{3d6}'),
    (b"plus", false, '\u{2b}'), (b"plusmn", true, '\u{b1}'), (b"pound", true, '\u{a3}'),
    (b"prime", false, '\u{2032}'), (b"prod", false, '\u{220f}'), (b"prop", false, '\u{221d}'),
    (b"psi", false, '\u{3c8}'), (b"quest", false, '\u{3f}'), (b"quot", true, '\u{22}'),
    (b"rArr", false, '\u{21d2}'), (b"radic", false, '\u{221a}'), (b"rang", false, '\u{232a}'),
    (b"raquo", true, '\u{bb}'), (b"rarr", false, '\u{2192}'), (b"rbrace", false, '\u{7d}'),
    (b"rbrack", false, '\u{5d}'), (b"rceil", false, '\u{2309}'), (b"rcub", false, '\u{7d}'),
    (b"rdquo", false, '\u{201d}'), (b"real", false, '\u{211c}'), (b"reg", true, '\u{ae}'),
    (b"rfloor", false, '\u{230b}'), (b"rho", false, '\u{3c1}'), (b"rlm", false, '\u{200f}'),
    (b"rpar", false, '\u{29}'), (b"rsaquo", false, '\u{203a}'), (b"rsqb", false, '\u{5d}'),
    (b"rsquo", false, '\u{2019}'), (b"sbquo", false, '\u{201a}'), (b"scaron", false, '\u{161}'),
    (b"sdot", false, '\u{22c5}'), (b"sect", true, '\u{a7}'), (b"semi", false, '\u{3b}'),
    (b"shy", true, '\u{ad}'), (b"sigma", false, '\u{3c3}'), (b"sigmaf", false, '\u{3c2}'),
    (b"sim", false, '\u{223c}'), (b"sol", false, '\u{2f}'), (b"spades", false, '\u{2660}'),
    (b"sub", false, '\u{2282}'), (b"sube", false, '\u{2286}'), (b"sum", false, '\u{2211}'),
    (b"sup", false, '\u{2283}'), (b"sup1", true, '\u{b9}'), (b"sup2", true, '\u{b2}'),
    (b"sup3", true, '\u{b3}'), (b"supe", false, '\u{2287}'), (b"szlig", true, '\u{df}'),
    (b"tau", false, '\u{3c4}'), (b"there4", false, '\u{2234}'), (b"theta", false, '\u{3b8}'),
    (b"thetasym", false, '\u{3d1}'), (b"thinsp", false, '\u{2009}'), (b"thorn", true, '\u{fe}'),
    (b"tilde", false, '\u{2dc}'), (b"times", true, '\u{d7}'), (b"trade", false, '\u{2122}'),
    (b"uArr", false, '\u{21d1}'), (b"uacute", true, '\u{fa}'), (b"uarr", false, '\u{2191}'),
    (b"ucirc", true, '\u{fb}'), (b"ugrave", true, '\u{f9}'), (b"uml", true, '\u{a8}'),
    (b"upsih", false, '\u{3d2}'), (b"upsilon", false, '\u{3c5}'), (b"uuml", true, '\u{fc}'),
    (b"verbar", false, '\u{7c}'), (b"vert", false, '\u{7c}'), (b"weierp", false, '\u{2118}'),
    (b"xi", false, '\u{3be}'), (b"yacute", true, '\u{fd}'), (b"yen", true, '\u{a5}'),
    (b"yuml", true, '\u{ff}'), (b"zeta", false, '\u{3b6}'), (b"zwj", false, '\u{200d}'),
    (b"zwnj", false, '\u{200c}'),
];

/// Longest name in [`ENTITIES`] and longest legacy one.
const MAX_ENTITY_NAME: usize = 16;
const MAX_LEGACY_NAME: usize = 6;

/// windows-1252 for numeric references 0x80..=0x9F (0 where it keeps the value).
const C1_REMAP: [u16; 32] = [
    0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039,
    0x0152, 0, 0x017d, 0, 0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc,
    0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

fn lookup_entity(name: &[u8]) -> Option<(bool, char)> {
    match name {
        b"amp" => return Some((true, '&')),
        b"lt" => return Some((true, '<')),
        b"gt" => return Some((true, '>')),
        b"quot" => return Some((true, '"')),
        b"nbsp" => return Some((true, '\u{a0}')),
        _ => {}
    }
    ENTITIES
        .binary_search_by(|e| e.0.cmp(name))
        .ok()
        .map(|k| (ENTITIES[k].1, ENTITIES[k].2))
}

/// Reads a character reference at `s[i] == b'&'`. Returns the character and
/// the position after the reference, or `None` if the `&` is literal.
pub(super) fn char_ref(s: &[u8], i: usize, in_attr: bool) -> Option<(char, usize)> {
    let mut j = i + 1;
    if s.get(j) == Some(&b'#') {
        j += 1;
        let hex = matches!(s.get(j), Some(b'x' | b'X'));
        if hex {
            j += 1;
        }
        let start = j;
        let mut v: u32 = 0;
        while let Some(&c) = s.get(j) {
            let d = if hex {
                match (c as char).to_digit(16) {
                    Some(d) => d,
                    None => break,
                }
            } else if c.is_ascii_digit() {
                (c - b'0') as u32
            } else {
                break;
            };
            v = v
                .saturating_mul(if hex { 16 } else { 10 })
                .saturating_add(d)
                .min(0x11_0000);
            j += 1;
        }
        if j == start {
            return None;
        }
        if s.get(j) == Some(&b';') {
            j += 1;
        }
        let c = match v {
            0 => '\u{fffd}',
            0x80..=0x9f => match C1_REMAP[(v - 0x80) as usize] {
                0 => char::from_u32(v).unwrap_or('\u{fffd}'),
                m => char::from_u32(m as u32).unwrap_or('\u{fffd}'),
            },
            _ => char::from_u32(v).unwrap_or('\u{fffd}'),
        };
        return Some((c, j));
    }
    let start = j;
    while j < s.len() && j - start <= MAX_ENTITY_NAME && s[j].is_ascii_alphanumeric() {
        j += 1;
    }
    let name = &s[start..j];
    if name.is_empty() {
        return None;
    }
    if s.get(j) == Some(&b';') {
        if let Some((_, c)) = lookup_entity(name) {
            return Some((c, j + 1));
        }
    }
    // Legacy names without ';', longest prefix first.
    for len in (2..=name.len().min(MAX_LEGACY_NAME)).rev() {
        if let Some((true, c)) = lookup_entity(&name[..len]) {
            let after = s.get(start + len).copied();
            if after == Some(b';') {
                return Some((c, start + len + 1));
            }
            if in_attr && after.is_some_and(|a| a == b'=' || a.is_ascii_alphanumeric()) {
                return None;
            }
            return Some((c, start + len));
        }
    }
    None
}

/// Appends `raw` to `out` with character references decoded.
pub(super) fn decode_refs(raw: &str, out: &mut String, in_attr: bool) {
    let b = raw.as_bytes();
    let mut i = 0;
    let mut lit = 0;
    while let Some(p) = b.get(i..).and_then(|r| r.iter().position(|&c| c == b'&')) {
        i += p;
        match char_ref(b, i, in_attr) {
            Some((c, next)) => {
                out.push_str(raw.get(lit..i).unwrap_or_default());
                out.push(c);
                i = next;
                lit = next;
            }
            None => i += 1,
        }
    }
    out.push_str(raw.get(lit..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::html::tests::{page, words};

    #[test]
    fn character_references() {
        let p = page(
            "caf&eacute; &lt;tag&gt; a&amp;b &copy 2024 &notit; &#65;&#x42;&#X43 &#x80; &#0; &#xD800; \
             &#99999999999; &unknown; &; &# &#x; AT&T &AMP; x&nbsp;y &VerticalLine;",
        );
        assert_eq!(
            words(&p),
            ["café", "tag", "a", "b", "2024", "it", "abc", "unknown", "x", "at", "t", "x", "y"]
        );
        let p = page("<title>&#x80;&#x81;&#0;&#xD800;&#99999999999;&VerticalLine;&amp</title>");
        // U+0081 is a control character: whitespace in titles.
        assert_eq!(p.title, "\u{20ac} \u{fffd}\u{fffd}\u{fffd}|&");
        let p = page("<title>&copy; &copy &euro; &#8364; &hellip;&apos;&colon;</title>");
        assert_eq!(p.title, "© © € € …':");
    }

    #[test]
    fn entity_table_is_sorted_and_consistent() {
        assert!(ENTITIES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(ENTITIES.iter().all(|e| e.0.len() <= MAX_ENTITY_NAME));
        assert!(ENTITIES
            .iter()
            .filter(|e| e.1)
            .all(|e| e.0.len() <= MAX_LEGACY_NAME));
        assert_eq!(ENTITIES.iter().filter(|e| e.1).count(), 106);
        for (name, _, c) in ENTITIES {
            assert_eq!(lookup_entity(name).map(|x| x.1), Some(*c));
        }
    }
}
