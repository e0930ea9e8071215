//! Fuzzing the CSV export (issue 14), a door where customer-chosen strings (account ids,
//! skus, dests, lease-derived names) come back out to finance's spreadsheets: whatever the
//! strings hold (commas, quotes, newlines, formulas, any Unicode), every row of
//! `handlers::csv` parses back (RFC 4180) into exactly the header's fields, the fields read
//! back are the strings that went in (with a leading `'` when they would start a formula:
//! `billing_core::export::csv_field`), and no text field starts a formula. `GPUBILL_FUZZ_SECONDS` sets the run (default 1 s),
//! `GPUBILL_FUZZ_SEED` replays one.

#[cfg(test)]
mod tests {
    use crate::handlers::csv;
    use billing_core::adjustment::AdjustmentLine;
    use billing_core::invoice::{Component, Invoice, InvoiceStatus, Line, Terms};
    use billing_core::period::PeriodJson;
    use billing_store::{CreditNote, IssuedInvoice};
    use rust_decimal::Decimal;
    use std::time::{Duration, Instant};

    /// RFC 4180: records of fields, quoted fields may hold commas, quotes ("") and newlines.
    fn parse(text: &str) -> Vec<Vec<String>> {
        let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
        let mut chars = text.chars().peekable();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (true, '"') => quoted = false,
                (true, c) => field.push(c),
                (false, '"') if field.is_empty() => quoted = true,
                (false, ',') => row.push(std::mem::take(&mut field)),
                (false, '\n') => {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                (false, c) => field.push(c),
            }
        }
        assert!(!quoted, "an unterminated quoted field");
        assert!(
            field.is_empty() && row.is_empty(),
            "the last record has no newline"
        );
        rows
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    const PIECES: &[&str] = &[
        ",", "\"", "\"\"", "\n", "\r", "\r\n", "=SUM(A1)", "a", "Z", "账户", "é", " ", "\t", "'",
        ";", "\u{feff}", "🙂", "-", "0", "\\",
    ];

    fn text(rng: &mut Rng) -> String {
        let n = rng.next() % 8;
        (0..n)
            .map(|_| PIECES[(rng.next() % PIECES.len() as u64) as usize])
            .collect()
    }

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn documents(rng: &mut Rng) -> (Vec<IssuedInvoice>, Vec<CreditNote>, Vec<String>) {
        let (account, sku, dest) = (text(rng), text(rng), text(rng));
        let mut egress = Line::usage(Component::Egress, "x", 0, d("2"), d("1.00"));
        egress.sku = None;
        egress.dest = Some(dest.clone());
        let invoice = Invoice::assemble(
            &account,
            &text(rng),
            PeriodJson {
                start: text(rng),
                end: text(rng),
            },
            vec![
                Line::usage(Component::OnDemand, &sku, 0, d("3600"), d("10.00")),
                egress,
            ],
            Terms::default(),
        );
        let number = text(rng);
        let issued = IssuedInvoice {
            kind: billing_store::DocumentKind::Invoice,
            id: text(rng),
            number: number.clone().into(),
            // A status is one of the closed list now (issue 25), not any text.
            status: InvoiceStatus::ALL[(rng.next() % InvoiceStatus::ALL.len() as u64) as usize],
            issued_at: text(rng),
            pricebook_version: 1,
            invoice,
            adjustments: vec![AdjustmentLine {
                period: text(rng),
                invoice_id: Some(text(rng)),
                invoice_number: Some(text(rng)),
                component: text(rng),
                amount: d("-1.50"),
            }],
            amount_due: d("9.50"),
            paid: d("0.00"),
            credit_note: None,
            issued_at_ms: 0,
        };
        let note = CreditNote {
            kind: billing_store::DocumentKind::CreditNote,
            id: text(rng),
            number: text(rng).into(),
            account: account.clone(),
            region: None,
            currency: text(rng),
            period: text(rng),
            issued_at: text(rng),
            invoice_id: text(rng),
            invoice_number: number.into(),
            references: vec![],
            amount: d("1.00"),
            status: billing_store::CreditNoteStatus::Credited,
        };
        (vec![issued], vec![note], vec![account, sku, dest])
    }

    #[test]
    fn every_csv_row_parses_back_into_the_header_fields_with_the_strings_that_went_in() {
        let seconds: u64 = std::env::var("GPUBILL_FUZZ_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let seed: u64 = std::env::var("GPUBILL_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x0c5f_0000_0001);
        let mut rng = Rng(seed | 1);
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut runs = 0u64;
        while runs < 100 || Instant::now() < deadline {
            let (invoices, notes, strings) = documents(&mut rng);
            let out = csv(&invoices, &notes);
            let rows = parse(&out);
            let width = rows[0].len();
            assert_eq!(width, 17, "{out}");
            for r in &rows {
                assert_eq!(
                    r.len(),
                    width,
                    "GPUBILL_FUZZ_SEED={seed}, run {runs}: {out:?}"
                );
            }
            let strings: Vec<String> = strings
                .iter()
                .map(|s| {
                    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                        format!("'{s}")
                    } else {
                        s.clone()
                    }
                })
                .collect();
            let [account, sku, dest] = &strings[..] else {
                unreachable!()
            };
            // No text field starts a formula (the numeric columns may be negative numbers).
            for r in &rows[1..] {
                for (i, f) in r.iter().enumerate() {
                    let numeric = [11, 12, 13, 16].contains(&i);
                    assert!(
                        numeric || !f.starts_with(['=', '+', '-', '@', '\t', '\r']),
                        "column {i} of {r:?} starts a formula"
                    );
                }
            }
            // Invoice rows: account in column 5, sku 10, dest 11 (1-based).
            assert!(rows[1..].iter().all(|r| r[4] == *account), "{out:?}");
            assert!(
                rows.iter().any(|r| r[9] == *sku && r[8] == "on_demand"),
                "{out:?}"
            );
            assert!(
                rows.iter().any(|r| r[10] == *dest && r[8] == "egress"),
                "{out:?}"
            );
            runs += 1;
        }
    }
}
