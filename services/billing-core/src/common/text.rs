//! Names people read (issue 24.6): a buyer's name on a fapiao, an sku or an egress
//! destination in a price book and on invoice lines, a currency. One rule for all of them,
//! [`check_name`]:
//!
//! - not empty;
//! - no control character (`Cc`: NUL, a line break, a tab, DEL, C1 controls): a line break in
//!   a name breaks printed invoices and CSV exports, a NUL breaks C strings and PDFs;
//! - not made only of invisible characters: white space, zero-width and joiner characters,
//!   the bidirectional controls (U+202A..U+202E, U+2066..U+2069), the byte order mark,
//!   variation selectors, fillers. A name of U+202E and U+200B "is not blank" to `trim()` yet
//!   prints as nothing. Such characters *inside* a visible name are left alone (scripts need
//!   joiners).

use std::fmt;

/// Why a name is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    Empty,
    /// Made only of invisible characters (white space included).
    Invisible,
    /// A control character, at a character position (from 0).
    Control {
        code: u32,
        at: usize,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("is empty"),
            NameError::Invisible => f.write_str(
                "is blank: made only of white space or invisible characters (zero-width, bidirectional controls)",
            ),
            NameError::Control { code, at } => {
                write!(f, "holds a control character (U+{code:04X}) at character {at}")
            }
        }
    }
}

impl std::error::Error for NameError {}

/// Whether `c` prints as nothing: white space, format characters that have no glyph of
/// their own (zero-width, joiners, bidirectional controls, BOM, soft hyphen), variation
/// selectors, tag characters and the Hangul fillers.
pub fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFF8}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// Checks a name with the rules of the module header.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some((at, c)) = name.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(NameError::Control {
            code: u32::from(c),
            at,
        });
    }
    if name.chars().all(is_invisible) {
        return Err(NameError::Invisible);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_refuse_controls_and_invisible_only_text() {
        for ok in [
            "acme",
            "北京某某科技有限公司",
            "gpu.h100-80g",
            "a b",
            "USD",
            "x\u{200D}y",
        ] {
            assert_eq!(check_name(ok), Ok(()), "{ok:?}");
        }
        assert_eq!(check_name(""), Err(NameError::Empty));
        for blank in [
            " ",
            "\u{202E}\u{200B}",
            "\u{3000}",
            "\u{FEFF}",
            "\u{2066}\u{2069}",
        ] {
            assert_eq!(check_name(blank), Err(NameError::Invisible), "{blank:?}");
        }
        assert_eq!(
            check_name("US\u{0}D"),
            Err(NameError::Control { code: 0, at: 2 })
        );
        assert_eq!(
            check_name("gpu\n"),
            Err(NameError::Control { code: 10, at: 3 })
        );
        assert!(matches!(
            check_name("a\u{85}"),
            Err(NameError::Control { code: 0x85, .. })
        ));
    }
}
