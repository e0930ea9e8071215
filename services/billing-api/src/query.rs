//! Query parameters and CSV text shared by the admin handlers and the finance exports.

use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PeriodQuery {
    /// `YYYY-MM`
    pub period: Option<String>,
    /// `csv` or `jsonl` (exports)
    pub format: Option<String>,
}

/// A text field of a CSV export (RFC 4180: quoted when it holds a comma, quote or line break).
/// Text that a spreadsheet would run as a formula (first character `=`, `+`, `-`, `@`, tab or
/// carriage return: OWASP's CSV injection list) gets a leading `'`, which spreadsheets read as
/// "this is text": account ids may start with `-`, and profile names and skus are free text.
/// Amounts and quantities are written by the engine as numbers and never pass through here, so
/// a negative amount stays a number.
pub(crate) fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}
