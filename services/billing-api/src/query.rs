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

impl PeriodQuery {
    /// `period`, required and a `YYYY-MM` month: else a 400 naming what is wrong.
    pub fn required_period(&self) -> Result<String, crate::error::ApiError> {
        let p = self.period.as_ref().ok_or_else(|| {
            crate::error::ApiError::BadRequest("query parameter period=YYYY-MM is required".into())
        })?;
        billing_core::Period::month(p, chrono_tz::Tz::UTC)
            .map_err(|e| crate::error::ApiError::BadRequest(e.to_string()))?;
        Ok(p.clone())
    }
}

/// `?account=`: the account a customer route answers for (issue 27), within the key's scope.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AccountQuery {
    /// A customer key: an account within its scope (the key's account or one below it; absent:
    /// the key's own). One outside the scope is a 404, as an unknown account is.
    pub account: Option<String>,
}

/// `period` (a `YYYY-MM` month, else a 400 naming what is wrong), or the period holding
/// `now_ms` when absent (a 409 before any price book).
pub async fn period_or_current(
    s: &crate::state::AppState,
    period: Option<&str>,
    now_ms: i64,
) -> Result<String, crate::error::ApiError> {
    match period {
        Some(p) => PeriodQuery {
            period: Some(p.to_string()),
            format: None,
        }
        .required_period(),
        None => s
            .store
            .finance()
            .period_label_at(now_ms)
            .await?
            .ok_or_else(|| {
                crate::error::ApiError::Conflict("no price book has been uploaded yet".into())
            }),
    }
}

/// `?region=`: the billing domain of section 19 (absent: home).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RegionQuery {
    /// Section 19: a region of the price book in force (absent: home): the billing domain
    /// whose quotas, cost, holds and wallet (in the region's currency) are meant.
    pub region: Option<String>,
}
