//! Query parameters shared by the admin handlers and the finance exports. (The CSV text
//! field, `csv_field`, is the core's: `billing_core::export::csv_field`.)

use serde::Deserialize;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PeriodQuery {
    /// `YYYY-MM`
    pub period: Option<String>,
    /// `csv` or `jsonl` (exports)
    pub format: Option<String>,
}
