//! The decoded-bytes budget of one conversion (`spec/convert.md` "Hostile
//! files"): a GRIB field's header can announce billions of points in a few
//! bytes (a constant field has no data section), and a NetCDF-4 variable
//! never written costs nothing on disk, so every field's or variable's
//! decoded size is charged here before it is decoded.

use std::fmt;

/// A charge the budget could not take.
#[derive(Debug, Clone)]
pub struct BudgetExceeded {
    /// The bytes asked for (`None`: beyond 2^64).
    pub asked: Option<u64>,
    /// The whole budget.
    pub total: u64,
    /// What was left of it.
    pub remaining: u64,
}

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes would be decoded, beyond this conversion's decoded-bytes budget of {} \
             bytes ({} left; the default is {PER_INPUT_BYTE} × the input size + \
             {FIXED_ALLOWANCE} bytes, --max-decoded-bytes changes it)",
            self.asked
                .map_or_else(|| "more than 2^64".into(), |b| b.to_string()),
            self.total,
            self.remaining
        )
    }
}

/// Bytes every conversion may decode whatever its input size.
pub const FIXED_ALLOWANCE: u64 = 256 << 20;
/// Decoded bytes allowed per input byte on top of [`FIXED_ALLOWANCE`].
pub const PER_INPUT_BYTE: u64 = 64;

/// What is left of a conversion's decoded-bytes budget.
#[derive(Debug, Clone)]
pub struct DecodeBudget {
    total: u64,
    remaining: u64,
}

impl DecodeBudget {
    /// A budget of exactly `bytes`.
    pub fn new(bytes: u64) -> Self {
        DecodeBudget {
            total: bytes,
            remaining: bytes,
        }
    }

    /// The default budget for inputs totalling `input_bytes`:
    /// [`FIXED_ALLOWANCE`] + [`PER_INPUT_BYTE`] × `input_bytes`, at most the
    /// library's limit on one message's decoded size.
    pub fn for_input(input_bytes: u64) -> Self {
        let b = input_bytes
            .saturating_mul(PER_INPUT_BYTE)
            .saturating_add(FIXED_ALLOWANCE)
            .min(tgm::Limits::default().max_message_bytes);
        Self::new(b)
    }

    /// Takes `bytes` from the budget, or says why not.
    pub fn charge(&mut self, bytes: Option<u64>) -> Result<(), BudgetExceeded> {
        match bytes {
            Some(b) if b <= self.remaining => {
                self.remaining -= b;
                Ok(())
            }
            asked => Err(BudgetExceeded {
                asked,
                total: self.total,
                remaining: self.remaining,
            }),
        }
    }

    /// Takes `points` float64 values from the budget, or says why not.
    pub fn charge_values(&mut self, points: u64) -> Result<(), BudgetExceeded> {
        self.charge(points.checked_mul(8))
    }

    /// Says why `points` float64 values would not fit what is left, taking
    /// nothing: for a count known before the one that is charged.
    pub fn allows_values(&self, points: u64) -> Result<(), BudgetExceeded> {
        self.clone().charge_values(points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_until_the_budget_is_spent() {
        let mut b = DecodeBudget::new(100);
        b.charge_values(10).unwrap();
        b.charge_values(2).unwrap();
        let e = b.charge_values(1).unwrap_err().to_string();
        assert!(e.contains("8 bytes would be decoded"), "{e}");
        assert!(e.contains("budget of 100 bytes (4 left"), "{e}");
        assert!(b.charge_values(u64::MAX).is_err());
        // Asking takes nothing.
        assert!(b.allows_values(1).is_err());
        let fresh = DecodeBudget::new(16);
        fresh.allows_values(2).unwrap();
        assert!(fresh.allows_values(3).is_err());
        assert_eq!(fresh.remaining, 16);
    }

    #[test]
    fn the_default_grows_with_the_input() {
        let small = DecodeBudget::for_input(179);
        assert_eq!(small.total, FIXED_ALLOWANCE + 179 * PER_INPUT_BYTE);
        // 4.2e9 points of a 179-byte constant field are refused.
        let mut b = small;
        assert!(b.charge_values(4_225_000_000).is_err());
        assert_eq!(
            DecodeBudget::for_input(u64::MAX).total,
            tgm::Limits::default().max_message_bytes
        );
    }
}
