//! The memory budget as a type: a stage declares what holds memory at the
//! same time, phase by phase, as named shares of `--mem`; its context builds a
//! [`Budget`] from that declaration, refusing one whose shares alive together
//! exceed the whole, and every sort and buffer of the stage takes its bytes
//! from it by name.
//!
//! The check is on the declaration, not on what the allocator later does:
//! a sort's buffer may grow lazily, but it is declared at its full share in
//! every phase it lives through, so that a stage cannot hold more than its
//! budget even when every buffer fills. A share's name is the sort's (its
//! directory under the stage's `tmp/`) or says what the buffer is for; a
//! merge's budget is a share of its own (`urls merge`).

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// One share of a stage's budget: a named fraction of the whole.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    /// The sort or buffer it is for.
    pub name: &'static str,
    /// Its fraction of the budget, in (0, 1].
    pub fraction: f64,
}

/// `Share { name, fraction }`, shorter.
pub const fn share(name: &'static str, fraction: f64) -> Share {
    Share { name, fraction }
}

/// `Phase { name, shares }`, shorter.
pub const fn phase(name: &'static str, shares: &'static [Share]) -> Phase {
    Phase { name, shares }
}

/// What holds memory at the same time in one phase of a stage. A share that
/// lives through several phases is declared in each, with the same fraction.
#[derive(Clone, Copy, Debug)]
pub struct Phase {
    /// What the stage does then (for messages).
    pub name: &'static str,
    /// The shares alive together.
    pub shares: &'static [Share],
}

/// A stage's budget: `whole` bytes cut into the shares its phases declare,
/// each phase's shares summing to at most the whole.
#[derive(Clone, Debug)]
pub struct Budget {
    stage: String,
    whole: u64,
    shares: BTreeMap<&'static str, f64>,
}

/// Rounding slack when shares such as thirds sum to exactly one.
const SLACK: f64 = 1e-9;

impl Budget {
    /// The budget of `stage`: `whole` bytes cut as `phases` declare. An
    /// error when a phase's shares sum to more than the whole, when a
    /// fraction is not in (0, 1], or when a share is declared twice with
    /// different fractions.
    pub fn new(stage: impl std::fmt::Display, whole: u64, phases: &[Phase]) -> Result<Budget> {
        let stage = stage.to_string();
        let mut shares: BTreeMap<&'static str, f64> = BTreeMap::new();
        for phase in phases {
            let mut sum = 0.0;
            for s in phase.shares {
                if !(s.fraction > 0.0 && s.fraction <= 1.0) {
                    return Err(Error::internal(format!(
                        "stage {stage}: share {:?} of phase {:?} is {} of the budget, not in (0, 1]",
                        s.name, phase.name, s.fraction
                    )));
                }
                if let Some(&f) = shares.get(s.name) {
                    if f != s.fraction {
                        return Err(Error::internal(format!(
                            "stage {stage}: share {:?} is declared as {f} and as {} (phase {:?})",
                            s.name, s.fraction, phase.name
                        )));
                    }
                }
                shares.insert(s.name, s.fraction);
                sum += s.fraction;
            }
            if sum > 1.0 + SLACK {
                let list: Vec<String> = phase
                    .shares
                    .iter()
                    .map(|s| format!("{} {}", s.name, s.fraction))
                    .collect();
                return Err(Error::internal(format!(
                    "stage {stage}: the shares alive together in phase {:?} sum to {sum:.3} of \
                     the budget, more than the whole ({})",
                    phase.name,
                    list.join(", ")
                )));
            }
        }
        Ok(Budget {
            stage,
            whole,
            shares,
        })
    }

    /// The whole budget, in bytes.
    pub fn whole(&self) -> u64 {
        self.whole
    }

    /// The bytes of share `name`; an error if the stage did not declare it.
    pub fn bytes(&self, name: &str) -> Result<u64> {
        let f = self.shares.get(name).ok_or_else(|| {
            Error::internal(format!(
                "stage {} took a share {name:?} of its budget that it did not declare",
                self.stage
            ))
        })?;
        Ok((self.whole as f64 * f) as u64)
    }

    /// Share `name` cut into `ways` equal parts (sorts of several stages run
    /// together, barrels sorted in parallel): the bytes of one.
    pub fn part(&self, name: &str, ways: usize) -> Result<u64> {
        Ok(self.bytes(name)? / ways.max(1) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_alive_together_fit_the_whole() {
        const FIT: &[Phase] = &[
            phase("read", &[share("a", 0.5), share("b", 0.5)]),
            phase(
                "join",
                &[
                    share("b", 0.5),
                    share("c", 1.0 / 3.0),
                    share("d", 1.0 / 6.0),
                ],
            ),
        ];
        let b = Budget::new("test", 1 << 20, FIT).unwrap();
        assert_eq!(b.bytes("a").unwrap(), 512 << 10);
        assert_eq!(b.part("b", 4).unwrap(), 128 << 10);
        let e = b.bytes("e").unwrap_err().to_string();
        assert!(e.contains("\"e\"") && e.contains("did not declare"), "{e}");

        const OVER: &[Phase] = &[phase("join", &[share("a", 0.5), share("b", 0.6)])];
        let e = Budget::new("test", 1 << 20, OVER).unwrap_err().to_string();
        assert!(e.contains("\"join\"") && e.contains("1.100"), "{e}");

        const TWICE: &[Phase] = &[
            phase("one", &[share("a", 0.5)]),
            phase("two", &[share("a", 0.25)]),
        ];
        assert!(Budget::new("test", 1 << 20, TWICE).is_err());
        const ZERO: &[Phase] = &[phase("one", &[share("a", 0.0)])];
        assert!(Budget::new("test", 1 << 20, ZERO).is_err());
    }
}
