//! The one decimal grammar gpubill accepts wherever a number is written as text: event
//! quantities, price book numbers, quotas and authorizations.
//!
//! `rust_decimal`'s own parser is looser than the schemas: it takes `"1_000"`, and past ~28
//! significant digits it rounds silently, so `"0.1000000000000000000000000000001"` and `"0.1"`
//! would read as one number (a redelivery that differs would then be a duplicate instead of a
//! conflict). gpubill reads exactly this grammar instead:
//!
//! ```text
//! ws* ("+" | "-")? ( digit+ ( "." digit+ )? | "." digit+ ) ws*
//! ```
//!
//! with at most [`MAX_SCALE`] digits after the point once trailing zeros are dropped (they do
//! not change the value) and at most [`MAX_INTEGER_DIGITS`] significant digits before it. No
//! exponent, no underscores. A `-` sign is read (the callers' range checks then say what is
//! allowed: `quantity -1 is outside (0, 10000]`). The value is exact and keeps the scale it
//! was written with (`"0.70"` stays `0.70`: lines show multipliers as written).

use rust_decimal::Decimal;
use std::fmt;

/// Most digits after the decimal point (trailing zeros aside). 15 keeps every accepted value
/// exact in a `Decimal` (28 digits) alongside [`MAX_INTEGER_DIGITS`].
pub const MAX_SCALE: u32 = 15;

/// Most significant digits before the decimal point (leading zeros aside).
pub const MAX_INTEGER_DIGITS: usize = 13;

/// Why a text is not a decimal of the grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecimalError {
    /// Not the grammar at all (`"1e3"`, `"1_000"`, `"lots"`, `""`, `"5."`).
    Syntax,
    /// More than [`MAX_SCALE`] digits after the point.
    TooPrecise { scale: usize },
    /// More than [`MAX_INTEGER_DIGITS`] digits before the point.
    TooLarge,
    /// More than the money's minor digits (see [`parse_money`]).
    NotMoney { scale: u32 },
}

impl fmt::Display for DecimalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecimalError::Syntax => f.write_str(
                "is not a decimal number (plain digits with an optional fraction, such as \"0.25\"; no exponent, no underscores)",
            ),
            DecimalError::TooPrecise { scale } => write!(
                f,
                "has {scale} digits after the decimal point, more than the {MAX_SCALE} gpubill keeps exactly"
            ),
            DecimalError::TooLarge => write!(
                f,
                "has more than {MAX_INTEGER_DIGITS} digits before the decimal point"
            ),
            DecimalError::NotMoney { scale } => write!(
                f,
                "has {scale} decimals; money amounts have at most {} (the currency's minor unit)",
                crate::common::money::MINOR_DIGITS
            ),
        }
    }
}

impl std::error::Error for DecimalError {}

/// Parses `text` with the grammar above. Never panics, allocates nothing.
pub fn parse(text: &str) -> Result<Decimal, DecimalError> {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let (negative, t) = match t.as_bytes().first() {
        Some(b'+') => (false, &t[1..]),
        Some(b'-') => (true, &t[1..]),
        _ => (false, t),
    };
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (t, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| f.is_empty() || !digits(f)) {
        return Err(DecimalError::Syntax);
    }
    if int.is_empty() && frac.is_none() {
        return Err(DecimalError::Syntax);
    }
    let int = int.trim_start_matches('0');
    let written = frac.unwrap_or("");
    let significant = written.trim_end_matches('0');
    if int.len() > MAX_INTEGER_DIGITS {
        return Err(DecimalError::TooLarge);
    }
    if significant.len() > MAX_SCALE as usize {
        return Err(DecimalError::TooPrecise {
            scale: significant.len(),
        });
    }
    // The scale as written while the digits fit a Decimal's 28, else without trailing zeros
    // (at most 13 + 15 = 28 digits: the mantissa fits in 96 bits, < 7.9e28).
    let frac = if int.len() + written.len() <= 28 {
        written
    } else {
        significant
    };
    let mut mantissa: i128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa * 10 + i128::from(b - b'0');
    }
    if negative {
        mantissa = -mantissa;
    }
    Decimal::try_from_i128_with_scale(mantissa, frac.len() as u32)
        .map_err(|_| DecimalError::TooLarge)
}

/// [`parse`] for a money amount: at most the currency's 2 minor digits (trailing zeros
/// aside), so `"0.005"` is refused rather than rounded into more than was granted.
pub fn parse_money(text: &str) -> Result<Decimal, DecimalError> {
    let d = parse(text)?;
    check_money(d)?;
    Ok(d)
}

/// Whether an already-read amount has at most the currency's minor digits.
pub fn check_money(d: Decimal) -> Result<(), DecimalError> {
    let scale = d.normalize().scale();
    if scale > crate::common::money::MINOR_DIGITS {
        return Err(DecimalError::NotMoney { scale });
    }
    Ok(())
}

/// Serde helpers for API bodies: a decimal string of the grammar or a JSON integer (a JSON
/// float may already have lost precision and is refused).
pub mod serde_strict {
    use super::parse;
    use rust_decimal::Decimal;
    use serde::Deserialize;
    use serde::de::{Deserializer, Error};
    use std::collections::BTreeMap;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Int(u64),
        Other(serde_json::Value),
    }

    fn read<E: Error>(raw: Raw) -> Result<Decimal, E> {
        match raw {
            Raw::Text(s) => parse(&s).map_err(|e| E::custom(format!("{s:?} {e}"))),
            Raw::Int(n) => Ok(Decimal::from(n)),
            Raw::Other(v) => Err(E::custom(format!(
                "{v} is not a decimal string such as \"0.25\" (floats are inexact)"
            ))),
        }
    }

    /// For `Decimal` fields.
    pub fn one<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        read(Raw::deserialize(d)?)
    }

    /// For `Option<Decimal>` fields (with `#[serde(default)]`).
    pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
        match Option::<Raw>::deserialize(d)? {
            None => Ok(None),
            Some(r) => read(r).map(Some),
        }
    }

    /// For `BTreeMap<String, Decimal>` fields (with `#[serde(default)]`).
    pub fn map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, Decimal>, D::Error> {
        BTreeMap::<String, Raw>::deserialize(d)?
            .into_iter()
            .map(|(k, v)| read(v).map(|d| (k, d)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> String {
        parse(s)
            .unwrap_or_else(|e| panic!("{s:?}: {e}"))
            .to_string()
    }

    #[test]
    fn the_grammar_of_the_schema() {
        assert_eq!(ok("1"), "1");
        assert_eq!(ok(" 0.25 "), "0.25");
        assert_eq!(ok("+7.50"), "7.50");
        assert_eq!(ok("0.70"), "0.70");
        assert_eq!(ok("-1"), "-1");
        assert_eq!(ok(".5"), "0.5");
        assert_eq!(ok("0007"), "7");
        assert_eq!(ok("0"), "0");
        for bad in [
            "", " ", "+", ".", "5.", "1e3", "1E3", "1_000", "0x10", "1.2.3", "١", "NaN", "inf",
            "--1", "+-1", "- 1",
        ] {
            assert_eq!(parse(bad), Err(DecimalError::Syntax), "{bad:?}");
        }
    }

    #[test]
    fn precision_is_exact_or_refused() {
        // 15 decimals kept exactly; 16 refused; trailing zeros do not count.
        assert_eq!(ok("0.000000000000001"), "0.000000000000001");
        assert_eq!(
            parse("0.0000000000000001"),
            Err(DecimalError::TooPrecise { scale: 16 })
        );
        assert_eq!(
            parse("0.1000000000000000000000000000001"),
            Err(DecimalError::TooPrecise { scale: 31 })
        );
        assert_eq!(ok("0.1000000000000000000000000000000"), "0.1");
        assert_eq!(
            ok("9999999999999.999999999999999"),
            "9999999999999.999999999999999"
        );
        assert_eq!(parse("10000000000000"), Err(DecimalError::TooLarge));
        assert_eq!(ok("00000000000000000001"), "1");
    }

    #[test]
    fn money_has_two_decimals_at_most() {
        assert_eq!(parse_money("500.00").unwrap().to_string(), "500.00");
        assert_eq!(parse_money("0.010").unwrap().to_string(), "0.010");
        assert_eq!(parse_money("12").unwrap().to_string(), "12");
        assert_eq!(
            parse_money("0.005"),
            Err(DecimalError::NotMoney { scale: 3 })
        );
    }
}
