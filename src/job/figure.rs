//! A stage's figures as typed values: what each counts, in which unit, under
//! which name, so that `webmill run`'s display, the job summary, `webmill
//! stats` and the server's statistics page show them alike without reading
//! a map by string keys.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::units::{format_bytes, thousands};

/// A figure's value, with its unit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Amount {
    /// A count of things.
    Count(u64),
    /// A number of bytes.
    Bytes(u64),
    /// Wall-clock seconds.
    Seconds(f64),
    /// Any other number (a ratio, bits per arc).
    Number(f64),
    /// Yes or no.
    Flag(bool),
    /// A word (the stage that made the graph).
    Text(String),
    /// Counts by kind (skips by reason).
    Counts(BTreeMap<String, u64>),
}

impl Amount {
    /// The value for a person: `1,234`, `1.5 MiB (1,572,864 bytes)`, `3.2 s`.
    pub fn show(&self) -> String {
        match self {
            Amount::Count(n) => thousands(*n),
            Amount::Bytes(n) => format!("{} ({} bytes)", format_bytes(*n), thousands(*n)),
            Amount::Seconds(s) => format!("{s:.1} s"),
            Amount::Number(x) => significant(*x),
            Amount::Flag(b) => if *b { "yes" } else { "no" }.into(),
            Amount::Text(s) => s.clone(),
            Amount::Counts(m) if m.is_empty() => "none".into(),
            Amount::Counts(m) => m
                .iter()
                .map(|(k, n)| format!("{} {k}", thousands(*n)))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The value as a count, if it is one (counts and bytes).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Amount::Count(n) | Amount::Bytes(n) => Some(*n),
            _ => None,
        }
    }
}

/// `x` to four significant digits, as a person reads it: `7.721`, `1`
/// (for 0.9999999999999972), `0.01234`, `9.87e-9`; very large or very small
/// magnitudes in scientific notation.
fn significant(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() || a == 0.0 {
        return x.to_string();
    }
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{x:.3e}");
        // 1.500e-9 → 1.5e-9
        return match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        };
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One figure: its machine name (the key of `--json` outputs), its label for
/// people, the group it is shown in, and its value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// Machine name: `pages`, `edges_bytes`, `ingest_seconds`.
    pub key: String,
    /// Label for people: `pages`, `edges.wm`, `ingest time`.
    pub label: String,
    /// The group it is shown under: `Input`, `Pages`, `Link graph`, …
    pub group: &'static str,
    /// Its value.
    pub amount: Amount,
}

impl Figure {
    /// A figure `key` labelled `label` in `group`.
    pub fn new(
        group: &'static str,
        key: impl Into<String>,
        label: impl Into<String>,
        amount: Amount,
    ) -> Figure {
        Figure {
            key: key.into(),
            label: label.into(),
            group,
            amount,
        }
    }
}

/// The groups figures are shown in, in this order (others after them).
pub const GROUPS: [&str; 5] = ["Input", "Pages", "Link graph", "Stages", "Resources"];

/// Figures in the order of their groups ([`GROUPS`], the others after, by
/// name), each key once: a later figure of a key replaces an earlier one (a
/// job's figures are gathered stage by stage; the one the job's files bear
/// out comes last).
pub fn grouped(figures: Vec<Figure>) -> Vec<(&'static str, Vec<Figure>)> {
    let mut kept: Vec<Figure> = Vec::new();
    for f in figures {
        match kept.iter_mut().find(|k| k.key == f.key) {
            Some(k) => *k = f,
            None => kept.push(f),
        }
    }
    let rank = |g: &str| GROUPS.iter().position(|x| *x == g).unwrap_or(GROUPS.len());
    let mut groups: Vec<&'static str> = kept.iter().map(|f| f.group).collect();
    groups.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    groups.dedup();
    groups
        .into_iter()
        .map(|g| (g, kept.iter().filter(|f| f.group == g).cloned().collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_show_four_significant_digits() {
        let show = |x: f64| Amount::Number(x).show();
        assert_eq!(show(7.721086799711469), "7.721");
        assert_eq!(show(0.9999999999999972), "1");
        assert_eq!(show(0.012345678), "0.01235");
        assert_eq!(show(12.5), "12.5");
        assert_eq!(show(-3.0), "-3");
        assert_eq!(show(9.87654e-9), "9.877e-9");
        assert_eq!(show(1.5e-9), "1.5e-9");
        assert_eq!(show(2.0e7), "2e7");
        assert_eq!(show(123456.7), "123457");
        assert_eq!(show(0.0), "0");
        assert_eq!(show(f64::NAN), "NaN");
    }
}
