//! Section 18 as a report: an invoice's allocation rows grouped by account or by tag value,
//! and an invoice rated without an allocation (a payer alone, no `allocation_tag`) as its one
//! cell, so that every payer's cost reads the same way (`GET /v1/allocation`). Grouping only
//! adds: the groups add up to the invoice exactly as the cells do.

use crate::pricing::invoice::{AllocatedLine, AllocationRow, Invoice};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// What the rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    /// One row per (account, tag value): the cells as the invoice has them.
    Cell,
    /// One row per account, its tag `""`.
    Account,
    /// One row per tag value, its account `""`.
    Tag,
}

impl GroupBy {
    pub fn parse(text: &str) -> Option<GroupBy> {
        match text {
            "cell" => Some(GroupBy::Cell),
            "account" => Some(GroupBy::Account),
            "tag" => Some(GroupBy::Tag),
            _ => None,
        }
    }
}

/// `invoice` as its one cell: its account, tag `""`, its non-zero lines and its totals.
pub fn whole(invoice: &Invoice) -> AllocationRow {
    AllocationRow {
        account: invoice.account.clone(),
        tag: String::new(),
        lines: invoice
            .lines
            .iter()
            .filter(|l| !l.amount.is_zero())
            .map(|l| AllocatedLine::part_of(l, l.amount))
            .collect(),
        subtotal: invoice.subtotal,
        discount: invoice.discount,
        credit: invoice.credit,
        tax: invoice.tax,
        total: invoice.total,
    }
}

/// `rows` grouped `by` (sorted by the group's key): amounts add up, lines with the same
/// identifying fields merge (in the order first met).
pub fn group(rows: &[AllocationRow], by: GroupBy) -> Vec<AllocationRow> {
    if by == GroupBy::Cell {
        return rows.to_vec();
    }
    let mut out: BTreeMap<(String, String), AllocationRow> = BTreeMap::new();
    for r in rows {
        let key = match by {
            GroupBy::Account => (r.account.clone(), String::new()),
            _ => (String::new(), r.tag.clone()),
        };
        let g = out.entry(key.clone()).or_insert_with(|| AllocationRow {
            account: key.0,
            tag: key.1,
            lines: Vec::new(),
            subtotal: Decimal::ZERO,
            discount: Decimal::ZERO,
            credit: Decimal::ZERO,
            tax: Decimal::ZERO,
            total: Decimal::ZERO,
        });
        for line in &r.lines {
            let same = |l: &&mut AllocatedLine| {
                AllocatedLine {
                    amount: line.amount,
                    ..(**l).clone()
                } == *line
            };
            match g.lines.iter_mut().find(same) {
                Some(l) => l.amount += line.amount,
                None => g.lines.push(line.clone()),
            }
        }
        g.subtotal += r.subtotal;
        g.discount += r.discount;
        g.credit += r.credit;
        g.tax += r.tax;
        g.total += r.total;
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::invoice::Component;

    fn row(account: &str, tag: &str, amount: &str, total: &str) -> AllocationRow {
        let a: Decimal = amount.parse().unwrap();
        AllocationRow {
            account: account.into(),
            tag: tag.into(),
            lines: vec![AllocatedLine {
                component: Component::OnDemand,
                sku: Some("gpu.o".into()),
                dest: None,
                tier: 1,
                multiplier: None,
                price: Some("30.00".parse().unwrap()),
                package: None,
                subscription: None,
                charge: None,
                amount: a,
            }],
            subtotal: a,
            discount: Decimal::ZERO,
            credit: Decimal::ZERO,
            tax: total.parse::<Decimal>().unwrap() - a,
            total: total.parse().unwrap(),
        }
    }

    /// Worked: cells ml/p-x 10.00 (10.60), ml/p-y 5.00 (5.30), web/p-x 2.50 (2.65). By
    /// account: ml 15.00 (15.90), web 2.50 (2.65); by tag: p-x 12.50 (13.25), p-y 5.00
    /// (5.30). Both add up to 18.55, the cells' sum; lines of one identity merge.
    #[test]
    fn groups_add_up_to_the_cells() {
        let cells = [
            row("ml", "p-x", "10.00", "10.60"),
            row("ml", "p-y", "5.00", "5.30"),
            row("web", "p-x", "2.50", "2.65"),
        ];
        let by_account = group(&cells, GroupBy::Account);
        let got: Vec<(String, String, usize)> = by_account
            .iter()
            .map(|r| (r.account.clone(), r.total.to_string(), r.lines.len()))
            .collect();
        assert_eq!(
            got,
            [
                ("ml".into(), "15.90".into(), 1),
                ("web".into(), "2.65".into(), 1)
            ]
        );
        assert_eq!(by_account[0].lines[0].amount.to_string(), "15.00");
        let by_tag = group(&cells, GroupBy::Tag);
        let got: Vec<(String, String)> = by_tag
            .iter()
            .map(|r| (r.tag.clone(), r.total.to_string()))
            .collect();
        assert_eq!(
            got,
            [
                ("p-x".into(), "13.25".into()),
                ("p-y".into(), "5.30".into())
            ]
        );
        for g in [&by_account, &by_tag] {
            let sum: Decimal = g.iter().map(|r| r.total).sum();
            assert_eq!(sum.to_string(), "18.55");
        }
        assert_eq!(group(&cells, GroupBy::Cell), cells.to_vec());
    }
}
