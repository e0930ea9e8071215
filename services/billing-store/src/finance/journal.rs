//! The accounting export of a closed period (issue 12, `GET /v1/admin/exports/journal`):
//! the store gathers the period's documents, `billing_core::journal` posts them.

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::finance::close_error::CloseError;
use crate::finance::wallet_rows::{MovementKind, PaymentMethod};
use billing_core::journal::{
    Entry, Head, Recognized, credit_note_entries, invoice_entries, movement_entries,
    payment_entries, recognition_entries, recognitions,
};
use billing_core::timestamp::format_secs;
use rust_decimal::Decimal;

/// Stored money of `table.amount`: one that does not parse is an error naming it.
fn dec(s: &str, table: &str) -> Result<Decimal> {
    crate::conn::error::stored(s.parse().ok(), table, "amount", s)
}

impl FinanceHandle<'_> {
    /// The journal of the closed period `label`: its invoices and credit notes, the payments
    /// of its invoices, the admin's wallet movements in the period, and the deferred revenue
    /// recognized in it (packages by their `package_usage` lines, subscription cycles by
    /// their seconds in the period).
    pub async fn journal(&self, label: &str) -> Result<Vec<Entry>, CloseError> {
        let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
        let closed = self.closed_periods(&mut conn).await?;
        let Some(c) = closed.into_iter().find(|c| c.period.label == label) else {
            return Err(CloseError::NotClosed(label.to_string()));
        };
        let (book, period) = (c.book, c.period);
        let mut out = Vec::new();
        let invoices = self.invoices(None, Some(label)).await?;
        // What the period recognizes: the core's rule (`billing_core::journal::recognitions`).
        let recognized = recognitions(
            &book,
            &period,
            &invoices.iter().map(|i| &i.invoice).collect::<Vec<_>>(),
        );
        invoice_documents(&mut out, &invoices, &recognized, label);
        let close_date = invoices
            .first()
            .map(|i| i.issued_at.clone())
            .unwrap_or_default();
        subscription_recognition(&mut out, &recognized, label, &close_date);
        for n in self.credit_notes(None, Some(label)).await? {
            let head = Head {
                document: &n.id,
                reference: n.number.as_str(),
                date: &n.issued_at,
                customer: &n.account,
            };
            out.extend(credit_note_entries(&head, n.amount));
        }
        self.payments_and_movements(&mut conn, &mut out, label, &period)
            .await?;
        Ok(out)
    }

    /// The payments of the period's invoices, and the admin's wallet movements in it.
    async fn payments_and_movements(
        &self,
        conn: &mut dyn crate::conn::db::Conn,
        out: &mut Vec<Entry>,
        label: &str,
        period: &billing_core::Period,
    ) -> Result<()> {
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_period_payments.sql"
        ))
        .bind(label)
        .fetch_all(&mut *conn)
        .await?
        {
            let document = format!("payment:{}", r.get::<i64, _>("seq"));
            let (number, customer, method): (String, String, String) =
                (r.get("number"), r.get("account"), r.get("method"));
            let method = crate::conn::error::stored(
                PaymentMethod::parse(&method),
                "invoice_payments",
                "method",
                &method,
            )?;
            let date = format_secs(r.get::<i64, _>("at_ms").div_euclid(1000));
            let head = Head {
                document: &document,
                reference: &number,
                date: &date,
                customer: &customer,
            };
            out.extend(payment_entries(
                &head,
                method.as_str(),
                dec(&r.get::<String, _>("amount"), "invoice_payments")?,
            ));
        }
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_admin_movements.sql"
        ))
        .bind(period.start.saturating_mul(1000))
        .bind(period.end.saturating_mul(1000))
        .fetch_all(&mut *conn)
        .await?
        {
            let document = format!("movement:{}", r.get::<i64, _>("seq"));
            let (customer, kind, reference): (String, String, String) =
                (r.get("account"), r.get("kind"), r.get("reference"));
            let kind = crate::conn::error::stored(
                MovementKind::parse(&kind),
                "wallet_movements",
                "kind",
                &kind,
            )?;
            let date = format_secs(r.get::<i64, _>("at_ms").div_euclid(1000));
            let head = Head {
                document: &document,
                reference: &reference,
                date: &date,
                customer: &customer,
            };
            out.extend(movement_entries(
                &head,
                kind.as_str(),
                dec(&r.get::<String, _>("amount"), "wallet_movements")?,
            ));
        }
        Ok(())
    }
}

/// Each invoice's entries, and the packages its `package_usage` lines used.
fn invoice_documents(
    out: &mut Vec<Entry>,
    invoices: &[crate::finance::documents::IssuedInvoice],
    recognized: &[Recognized],
    label: &str,
) {
    for (n, i) in invoices.iter().enumerate() {
        let date = &i.issued_at;
        let head = Head {
            document: &i.id,
            reference: i.number.as_str(),
            date,
            customer: &i.invoice.account,
        };
        out.extend(invoice_entries(&head, &i.invoice, &i.adjustments));
        // Packages used in the period: their share of the price.
        for r in recognized.iter().filter(|r| r.invoice == Some(n)) {
            recognize(out, r, label, date);
        }
    }
}

/// Subscription cycles: the share of each billed cycle's seconds inside the period.
fn subscription_recognition(
    out: &mut Vec<Entry>,
    recognized: &[Recognized],
    label: &str,
    close_date: &str,
) {
    for r in recognized.iter().filter(|r| r.invoice.is_none()) {
        recognize(out, r, label, close_date);
    }
}

/// One term's recognition entries.
fn recognize(out: &mut Vec<Entry>, r: &Recognized, label: &str, date: &str) {
    let document = r.document(label);
    let head = Head {
        document: &document,
        reference: &r.id,
        date,
        customer: &r.account,
    };
    out.extend(recognition_entries(&head, r.component, r.amount));
}
