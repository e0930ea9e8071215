//! [`CloseError`]: why a period could not be closed or a closed period re-rated.

use crate::conn::error::StoreError;
use billing_core::rating::Unpriced;

#[derive(Debug, thiserror::Error)]
pub enum CloseError {
    #[error("no price book version applies to period {0}")]
    NoPriceBook(String),
    #[error(
        "period {period} has not ended yet (it ends at {ends}): an invoice issued now could never change"
    )]
    NotEnded { period: String, ends: String },
    #[error("period {period} has unpriced usage: {}", describe(.unpriced))]
    Unpriced {
        period: String,
        unpriced: Vec<Unpriced>,
    },
    #[error("period {0} is not closed")]
    NotClosed(String),
    #[error("{0}")]
    Rating(#[from] billing_core::rating::RatingError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for CloseError {
    fn from(e: sqlx::Error) -> Self {
        CloseError::Store(StoreError::Db(e))
    }
}

fn describe(u: &[Unpriced]) -> String {
    u.iter()
        .take(10)
        .map(|u| {
            let what = u
                .sku
                .as_deref()
                .map(|s| format!("sku {s:?}"))
                .or(u.dest.as_ref().map(|d| format!("egress to {d:?}")))
                .unwrap_or_default();
            format!(
                "account {:?} {what} ({} {:?}: {})",
                u.account, u.quantity, u.unit, u.why
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl CloseError {
    /// A billing domain's rating error (section 19, `billing_core::domain`): a rating error as
    /// any; a month its account's or region's timezone cannot place, or a region the book
    /// lacks where the caller had checked it, as a fault of the stored state.
    pub(crate) fn of_month(period: &str, e: billing_core::rating::RateMonthError) -> CloseError {
        use billing_core::rating::RateMonthError;
        match e {
            RateMonthError::Rating(e) => CloseError::Rating(e),
            RateMonthError::Period(e) => {
                CloseError::Store(StoreError::Corrupt(format!("period {period}: {e}")))
            }
            RateMonthError::UnknownRegion(r) => CloseError::Store(StoreError::Corrupt(format!(
                "region {r:?} not in the price book"
            ))),
        }
    }
}
