//! The decoded-bytes budget of one conversion (`spec/convert.md` "Hostile
//! files"): a GRIB field's header can announce billions of points in a few
//! bytes (a constant field has no data section), so every field's decoded
//! size is charged here before ecCodes decodes it.

use super::GribError;

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

    /// Takes `points` float64 values from the budget, or says why not.
    pub fn charge_values(&mut self, points: u64) -> Result<(), GribError> {
        let bytes = points.checked_mul(8);
        match bytes {
            Some(b) if b <= self.remaining => {
                self.remaining -= b;
                Ok(())
            }
            _ => Err(GribError::Invalid(format!(
                "{points} points would decode to {} bytes, beyond this conversion's \
                 decoded-bytes budget of {} bytes ({} left; the default is \
                 {PER_INPUT_BYTE} × the input size + {FIXED_ALLOWANCE} bytes)",
                bytes.map_or_else(|| "more than 2^64".into(), |b| b.to_string()),
                self.total,
                self.remaining
            ))),
        }
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
        assert!(e.contains("budget of 100 bytes (4 left"), "{e}");
        assert!(b.charge_values(u64::MAX).is_err());
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
