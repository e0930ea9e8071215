//! What issued invoices did to their accounts' credits (section 12): the credit each consumed
//! and the SLA compensation and refunds it carried, read from the stored invoices, for the
//! ratings of later periods (provisional costs, closes, quotas, verify).

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::sql::Val;
use billing_core::credits::{Contribution, CreditPool};
use billing_core::period::Period;
use billing_core::pricebook::PriceBook;
use rust_decimal::Decimal;
use std::collections::HashMap;

/// What an issued invoice did to its account's credits: its period label and its
/// contribution (the SLA compensation it earned and the credit it consumed, the core's rule:
/// [`Contribution`]).
pub(crate) type IssuedCredit = (String, Contribution);

/// Issued invoices as the core's credit pool takes them by label.
pub(crate) fn labelled(issued: &[IssuedCredit]) -> impl Iterator<Item = (&str, Contribution)> {
    issued.iter().map(|(label, c)| (label.as_str(), c.clone()))
}

/// The issued invoices of the accounts `filter` selects (bound to `param`), per account.
pub(crate) async fn issued_credits(
    conn: &mut dyn Conn,
    filter: &str,
    param: &Val,
) -> Result<HashMap<String, Vec<IssuedCredit>>> {
    // Rows come by (account, period, rank): a period's last row is what it effectively says.
    let mut latest: Vec<(String, IssuedCredit)> = Vec::new();
    for r in crate::conn::db::query(
        &include_str!("../../queries/shared/select_issued_credits.sql").replace("{filter}", filter),
    )
    .bind(param.clone())
    .fetch_all(&mut *conn)
    .await?
    {
        let body: serde_json::Value = serde_json::from_str(&r.get::<String, _>("body"))
            .map_err(|e| StoreError::Corrupt(format!("invoice body: {e}")))?;
        // The lines' compensation amounts, read from the stored body (a thin adapter: the
        // rule that sums them with the credit is the core's `Contribution`).
        let mut compensations = Vec::new();
        let mut refunds = Vec::new();
        for line in body["lines"].as_array().into_iter().flatten() {
            if let Some(text) = line["compensation"].as_str() {
                compensations.push(crate::conn::error::stored(
                    text.parse::<Decimal>().ok(),
                    "invoices/adjustments",
                    "body.lines[].compensation",
                    text,
                )?);
            }
            if let (Some(id), Some(text)) = (line["subscription"].as_str(), line["refund"].as_str())
            {
                let refund = crate::conn::error::stored(
                    text.parse::<Decimal>().ok(),
                    "invoices/adjustments",
                    "body.lines[].refund",
                    text,
                )?;
                refunds.push((id.to_string(), refund));
            }
        }
        let credit: String = r.get("credit");
        let credit = crate::conn::error::stored(
            credit.parse::<Decimal>().ok(),
            "invoices/adjustments",
            "credit",
            &credit,
        )?;
        let (account, period): (String, String) = (r.get("account"), r.get("period"));
        if latest
            .last()
            .is_some_and(|(a, (p, _))| *a == account && *p == period)
        {
            latest.pop();
        }
        let contribution = Contribution::from_parts(compensations, refunds, credit);
        latest.push((account, (period, contribution)));
    }
    let mut out: HashMap<String, Vec<IssuedCredit>> = HashMap::new();
    for (account, credit) in latest {
        out.entry(account).or_default().push(credit);
    }
    Ok(out)
}

/// The credit balance `account` has for `period` after its issued invoices (section 12's
/// drawing order, expiring credits and SLA compensation carried over; see
/// [`CreditPool::after_invoices`]).
pub(crate) fn credit_balance(
    book: &PriceBook,
    account: &str,
    issued: &[IssuedCredit],
    period: &Period,
) -> Decimal {
    CreditPool::after_labelled(book, account, labelled(issued)).available(period)
}
