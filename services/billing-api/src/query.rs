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

/// `?region=`: the billing domain of section 19 (absent: home).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RegionQuery {
    /// Section 19: a region of the price book in force (absent: home): the billing domain
    /// whose quotas, cost, holds and wallet (in the region's currency) are meant.
    pub region: Option<String>,
}
