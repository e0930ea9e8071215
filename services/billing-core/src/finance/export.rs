//! The invoice export as CSV (issue 12: finance reconciles to the cent; issue 14: customer
//! strings come back out to spreadsheets safely), without I/O: what rows an issued invoice or
//! a credit note becomes, and how a text field is written. The API (`GET
//! /v1/admin/exports/invoices?format=csv`, `GET /v1/invoices/{id}.csv`) only sets the headers
//! and writes the bytes; the journal export quotes its text with [`csv_field`] too.

use crate::finance::adjustment::AdjustmentLine;
use crate::pricing::invoice::Invoice;
use rust_decimal::Decimal;
use std::borrow::Cow;

/// The header row of the invoice export (17 fields), with its line break.
pub const INVOICES_CSV_HEADER: &str = "invoice_id,kind,number,status,account,currency,period_start,period_end,component,sku,dest,tier,multiplier,quantity,unit,reference,amount\n";

/// An issued invoice as the export reads it (billing-store's `IssuedInvoice`).
#[derive(Debug, Clone, Copy)]
pub struct CsvInvoice<'a> {
    pub id: &'a str,
    pub number: &'a str,
    /// `issued`, `paid` or `overdue` (on the caller's clock).
    pub status: &'a str,
    pub invoice: &'a Invoice,
    pub adjustments: &'a [AdjustmentLine],
    pub amount_due: Decimal,
    pub paid: Decimal,
}

/// A credit note as the export reads it (billing-store's `CreditNote`).
#[derive(Debug, Clone)]
pub struct CsvCreditNote<'a> {
    pub id: &'a str,
    pub number: &'a str,
    pub status: &'a str,
    pub account: &'a str,
    pub currency: &'a str,
    /// The originals it credits, in order.
    pub references: Vec<CsvReference<'a>>,
    /// The invoice issued with it.
    pub invoice_number: &'a str,
    pub amount: Decimal,
}

/// One original a credit note credits: its invoice's number (None when the account had no
/// invoice for the period), its period label, and the amount credited for it.
#[derive(Debug, Clone, Copy)]
pub struct CsvReference<'a> {
    pub invoice_number: Option<&'a str>,
    pub period: &'a str,
    pub amount: Decimal,
}

/// A text field of a CSV export (RFC 4180: quoted when it holds a comma, quote or line break).
/// Text that a spreadsheet would run as a formula (first character `=`, `+`, `-`, `@`, tab or
/// carriage return: OWASP's CSV injection list) gets a leading `'`, which spreadsheets read as
/// "this is text": account ids may start with `-`, and profile names and skus are free text.
/// Amounts and quantities are written by the engine as numbers and never pass through here, so
/// a negative amount stays a number.
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}

/// An issued invoice's rows of the export, each ending in a line break: one per line, then
/// the totals (`subtotal`, `discount`, `credit`, `tax`, `total`), one per adjustment line
/// (`adjustment:<component>`, `reference` naming the original invoice's number, or its
/// period when none was issued), then `amount_due` and `paid`.
pub fn invoice_csv_rows(i: &CsvInvoice<'_>) -> String {
    let field = csv_field;
    let inv = i.invoice;
    let mut out = String::new();
    let head = [
        i.id,
        "invoice",
        i.number,
        i.status,
        &inv.account,
        &inv.currency,
        &inv.period.start,
        &inv.period.end,
    ]
    .map(field)
    .join(",");
    for l in &inv.lines {
        let unit = serde_json::to_value(l.unit)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        out.push_str(&format!(
            "{head},{},{},{},{},{},{},{},,{}\n",
            l.component.as_str(),
            field(l.sku.as_deref().unwrap_or("")),
            field(l.dest.as_deref().unwrap_or("")),
            l.tier,
            l.multiplier.map(|m| m.to_string()).unwrap_or_default(),
            l.quantity,
            unit,
            l.amount
        ));
    }
    for (name, v) in [
        ("subtotal", inv.subtotal),
        ("discount", inv.discount),
        ("credit", inv.credit),
        ("tax", inv.tax),
        ("total", inv.total),
    ] {
        out.push_str(&format!("{head},{name},,,,,,,,{v}\n"));
    }
    for a in i.adjustments {
        let reference = a.invoice_number.as_deref().unwrap_or(&a.period);
        out.push_str(&format!(
            "{head},{},,,,,,,{},{}\n",
            field(&format!("adjustment:{}", a.component)),
            field(reference),
            a.amount
        ));
    }
    out.push_str(&format!("{head},amount_due,,,,,,,,{}\n", i.amount_due));
    out.push_str(&format!("{head},paid,,,,,,,,{}\n", i.paid));
    out
}

/// A credit note's rows of the export, each ending in a line break: one per original it
/// credits (`credits`, `reference` its invoice's number or period), then its `amount`
/// (`reference` the invoice issued with it).
pub fn credit_note_csv_rows(n: &CsvCreditNote<'_>) -> String {
    let field = csv_field;
    let mut out = String::new();
    let head = [
        n.id,
        "credit_note",
        n.number,
        n.status,
        n.account,
        n.currency,
        "",
        "",
    ]
    .map(field)
    .join(",");
    for r in &n.references {
        let reference = r.invoice_number.unwrap_or(r.period);
        out.push_str(&format!(
            "{head},credits,,,,,,,{},{}\n",
            field(reference),
            r.amount
        ));
    }
    out.push_str(&format!(
        "{head},amount,,,,,,,{},{}\n",
        field(n.invoice_number),
        n.amount
    ));
    out
}

/// Invoices and credit notes as CSV (issue 12): [`INVOICES_CSV_HEADER`], then each invoice's
/// rows ([`invoice_csv_rows`]), then each credit note's ([`credit_note_csv_rows`]).
pub fn invoices_csv(invoices: &[CsvInvoice<'_>], notes: &[CsvCreditNote<'_>]) -> String {
    let mut out = String::from(INVOICES_CSV_HEADER);
    for i in invoices {
        out.push_str(&invoice_csv_rows(i));
    }
    for n in notes {
        out.push_str(&credit_note_csv_rows(n));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::invoice::{Component, Line, Terms};
    use crate::pricing::period::PeriodJson;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn text_fields_are_quoted_and_formulas_defused() {
        assert_eq!(csv_field("acme"), "acme");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=SUM(A1)"), "'=SUM(A1)");
        assert_eq!(csv_field("-acct"), "'-acct");
        assert_eq!(csv_field("=a,b"), "\"'=a,b\"");
        assert_eq!(csv_field(""), "");
    }

    #[test]
    fn an_invoice_and_its_credit_note_as_rows() {
        // One on-demand line: 1 h (3600 unit-seconds) of gpu for 10.00; no discount, credit or
        // tax, so the totals are 10.00 / 0.00 / 0.00 / 0.00 / 10.00. An adjustment of -1.50
        // against INV-1 leaves 8.50 due, nothing paid. The credit note credits 2.00 of
        // 2026-01 (no invoice was issued for it: the period is the reference).
        let invoice = Invoice::assemble(
            "acme",
            "CNY",
            PeriodJson {
                start: "2026-02-01T00:00:00Z".into(),
                end: "2026-03-01T00:00:00Z".into(),
            },
            vec![Line::usage(
                Component::OnDemand,
                "gpu",
                0,
                d("3600"),
                d("10.00"),
            )],
            Terms::default(),
        );
        let adjustments = [AdjustmentLine {
            period: "2026-01".into(),
            invoice_id: Some("inv_1".into()),
            invoice_number: Some("INV-1".into()),
            component: "on_demand".into(),
            amount: d("-1.50"),
        }];
        let inv = CsvInvoice {
            id: "inv_2",
            number: "INV-2",
            status: "issued",
            invoice: &invoice,
            adjustments: &adjustments,
            amount_due: d("8.50"),
            paid: d("0.00"),
        };
        let note = CsvCreditNote {
            id: "cn_1",
            number: "CN-1",
            status: "credited",
            account: "acme",
            currency: "CNY",
            references: vec![CsvReference {
                invoice_number: None,
                period: "2026-01",
                amount: d("2.00"),
            }],
            invoice_number: "INV-2",
            amount: d("2.00"),
        };
        let head = "inv_2,invoice,INV-2,issued,acme,CNY,2026-02-01T00:00:00Z,2026-03-01T00:00:00Z";
        let note_head = "cn_1,credit_note,CN-1,credited,acme,CNY,,";
        let expected = [
            INVOICES_CSV_HEADER.trim_end(),
            &format!("{head},on_demand,gpu,,0,,3600,unit_seconds,,10.00"),
            &format!("{head},subtotal,,,,,,,,10.00"),
            &format!("{head},discount,,,,,,,,0.00"),
            &format!("{head},credit,,,,,,,,0.00"),
            &format!("{head},tax,,,,,,,,0.00"),
            &format!("{head},total,,,,,,,,10.00"),
            &format!("{head},adjustment:on_demand,,,,,,,INV-1,-1.50"),
            &format!("{head},amount_due,,,,,,,,8.50"),
            &format!("{head},paid,,,,,,,,0.00"),
            &format!("{note_head},credits,,,,,,,2026-01,2.00"),
            &format!("{note_head},amount,,,,,,,INV-2,2.00"),
        ]
        .map(|r| format!("{r}\n"))
        .concat();
        assert_eq!(invoices_csv(&[inv], &[note]), expected);
    }
}
