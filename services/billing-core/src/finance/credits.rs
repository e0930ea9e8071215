//! Credits across periods: billing-semantics.md sections 5, 10 and 12.
//!
//! An invoice's `credit` is `min(balance, subtotal - discount)`. The balance holds the
//! account's credits that apply to the period (it overlaps their `[from, to)`) and the SLA
//! compensation earned so far; what an invoice consumes is drawn first from credits with a
//! `to`, earliest `to` first (ties in price book order), then from SLA compensation, oldest
//! period first, then from credits without a `to` in price book order. What an expiring
//! credit still holds after its `to` is gone (no later period overlaps it).
//!
//! `gpubill rate` rates one period with every credit at its full amount
//! ([`crate::pricing::pricebook::PriceBook::credit_total_for`]); [`CreditPool`] carries balances
//! from one period to the next, in time order ([`crate::pricing::rating::rate_periods`]).

use crate::pricing::invoice::Invoice;
use crate::pricing::period::Period;
use crate::pricing::pricebook::PriceBook;
use rust_decimal::Decimal;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Order {
    /// (to, price book index)
    Expiring(i64, usize),
    /// The start of the period that earned it, then SLA compensation before refunds
    /// (section 17: "within one period compensation by sku, then refunds by subscription
    /// id").
    Compensation(i64, Earned),
    /// Price book index.
    Open(usize),
}

/// What put an amount of the compensation kind on the balance.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Earned {
    /// SLA compensation (section 10), one amount per period (the skus' amounts are drawn as
    /// one: they never expire, so their order changes nothing that is drawn).
    Sla,
    /// A subscription's prorata refund (section 17), by subscription id.
    Refund(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    order: Order,
    from: Option<i64>,
    to: Option<i64>,
    remaining: Decimal,
    /// The credit's price book index (None: SLA compensation).
    credit: Option<usize>,
}

impl Entry {
    fn applies_to(&self, period: &Period) -> bool {
        self.from.is_none_or(|f| f < period.end) && self.to.is_none_or(|t| t > period.start)
    }
}

/// An account's credit balances, kept in drawing order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreditPool {
    entries: Vec<Entry>,
}

impl CreditPool {
    /// The account's credits at their full amounts.
    pub fn for_account(book: &PriceBook, account: &str) -> Self {
        let mut pool = CreditPool::default();
        for c in book.credit_terms.iter().filter(|c| c.account == account) {
            pool.insert(Entry {
                order: match c.to {
                    Some(to) => Order::Expiring(to, c.index),
                    None => Order::Open(c.index),
                },
                from: c.from,
                to: c.to,
                remaining: c.amount,
                credit: Some(c.index),
            });
        }
        pool
    }

    fn insert(&mut self, e: Entry) {
        let at = self.entries.partition_point(|x| x.order <= e.order);
        self.entries.insert(at, e);
    }

    /// SLA compensation earned in the period starting at `period_start`.
    pub fn add_compensation(&mut self, period_start: i64, amount: Decimal) {
        if amount > Decimal::ZERO {
            self.insert(Entry {
                order: Order::Compensation(period_start, Earned::Sla),
                from: None,
                to: None,
                remaining: amount,
                credit: None,
            });
        }
    }

    /// Section 17: the refund of subscription `id` credited in the period starting at
    /// `period_start`, drawn after that period's SLA compensation.
    pub fn add_refund(&mut self, period_start: i64, id: &str, amount: Decimal) {
        if amount > Decimal::ZERO {
            self.insert(Entry {
                order: Order::Compensation(period_start, Earned::Refund(id.to_string())),
                from: None,
                to: None,
                remaining: amount,
                credit: None,
            });
        }
    }

    /// Remaining subscription refunds (credited, not yet consumed).
    pub fn refunds_left(&self) -> Decimal {
        self.entries
            .iter()
            .filter(|e| matches!(e.order, Order::Compensation(_, Earned::Refund(_))))
            .map(|e| e.remaining)
            .sum()
    }

    /// The balance available to the period's invoice.
    pub fn available(&self, period: &Period) -> Decimal {
        self.entries
            .iter()
            .filter(|e| e.applies_to(period))
            .map(|e| e.remaining)
            .sum()
    }

    /// Consumes `amount` (at most [`CreditPool::available`]) in drawing order.
    pub fn draw(&mut self, period: &Period, amount: Decimal) {
        let mut left = amount;
        for e in self.entries.iter_mut().filter(|e| e.applies_to(period)) {
            let take = e.remaining.min(left);
            e.remaining -= take;
            left -= take;
        }
        assert!(
            left.is_zero(),
            "credit drawn beyond the balance: {left} left of {amount}"
        );
    }

    /// The pool after an account's issued invoices, in period order: each added the SLA
    /// compensation and the subscription refunds it credited (section 17: a refund not
    /// consumed carries to later periods like compensation) and drew the credit it consumed.
    /// A draw is capped at what the pool holds for its period (an invoice issued under an
    /// earlier price book version may have drawn credits this version no longer has). What
    /// the engine rates a new period with: `rate_account(.., pool.available(period))` then
    /// adds that period's compensation and refunds.
    pub fn after_invoices(
        book: &PriceBook,
        account: &str,
        issued: &[(Period, Contribution)],
    ) -> Self {
        let mut pool = CreditPool::for_account(book, account);
        let mut issued: Vec<&(Period, Contribution)> = issued.iter().collect();
        issued.sort_by_key(|(p, _)| p.start);
        for (period, c) in issued {
            pool.add_compensation(period.start, c.compensation);
            for (id, amount) in &c.refunds {
                pool.add_refund(period.start, id, *amount);
            }
            let take = c.credit.min(pool.available(period)).max(Decimal::ZERO);
            pool.draw(period, take);
        }
        pool
    }

    /// What is left of the credit with price book index `index` (None: no such credit).
    pub fn remaining_of(&self, index: usize) -> Option<Decimal> {
        self.entries
            .iter()
            .find(|e| e.credit == Some(index))
            .map(|e| e.remaining)
    }

    /// Remaining SLA compensation (earned, not yet consumed).
    pub fn compensation_left(&self) -> Decimal {
        self.entries
            .iter()
            .filter(|e| matches!(e.order, Order::Compensation(_, Earned::Sla)))
            .map(|e| e.remaining)
            .sum()
    }
}

/// What an issued invoice did to its account's credit pool: the SLA compensation its lines
/// earned (section 10) and the subscription refunds they credited (section 17), added to the
/// pool, and the credit it consumed (drawn from it).
///
/// Subscription refunds (`Line::refund`) are not counted: the engine does not carry them
/// across closes yet, although [`crate::pricing::rating::rate_periods`] does (see
/// [`crate::choices`]). Counting them here would change what later invoices draw.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Contribution {
    pub compensation: Decimal,
    pub credit: Decimal,
    /// Per subscription id (as the lines give them), the refund credited.
    pub refunds: Vec<(String, Decimal)>,
}

impl Contribution {
    /// An invoice's contribution: the sum of its lines' compensation, its
    /// `subscription_refund` lines' refunds, and its credit.
    pub fn of(invoice: &Invoice) -> Contribution {
        Contribution::from_parts(
            invoice.lines.iter().filter_map(|l| l.compensation),
            invoice
                .lines
                .iter()
                .filter_map(|l| Some((l.subscription.clone()?, l.refund?))),
            invoice.credit,
        )
    }

    /// The same from an invoice's parts as stored: its lines' compensation amounts, its
    /// refunds by subscription id, and its credit (for a caller reading a stored body without
    /// the whole invoice).
    pub fn from_parts(
        compensations: impl IntoIterator<Item = Decimal>,
        refunds: impl IntoIterator<Item = (String, Decimal)>,
        credit: Decimal,
    ) -> Contribution {
        Contribution {
            compensation: compensations.into_iter().sum(),
            credit,
            refunds: refunds.into_iter().collect(),
        }
    }
}

/// Issued invoices by period label (`YYYY-MM`) resolved to their periods in `book`'s time
/// zone, as [`CreditPool::after_invoices`] takes them; a label that is not a month is left
/// out.
pub fn resolve_labels<'a>(
    book: &PriceBook,
    issued: impl IntoIterator<Item = (&'a str, Contribution)>,
) -> Vec<(Period, Contribution)> {
    issued
        .into_iter()
        .filter_map(|(label, c)| Some((Period::month(label, book.timezone).ok()?, c)))
        .collect()
}

impl CreditPool {
    /// [`CreditPool::after_invoices`] of invoices given by period label
    /// ([`resolve_labels`]).
    pub fn after_labelled<'a>(
        book: &PriceBook,
        account: &str,
        issued: impl IntoIterator<Item = (&'a str, Contribution)>,
    ) -> Self {
        CreditPool::after_invoices(book, account, &resolve_labels(book, issued))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn expiring_first_then_compensation_then_open_credits() {
        let book = PriceBook::from_toml(
            r#"
currency = "CNY"
[[credits]]
account = "a"
amount = "10.00"
[[credits]]
account = "a"
id = "late"
amount = "5.00"
to = "2027-01-01T00:00:00Z"
[[credits]]
account = "a"
id = "soon"
amount = "3.00"
to = "2026-12-01T00:00:00Z"
"#,
        )
        .unwrap();
        let nov = Period::month("2026-11", chrono_tz::Tz::UTC).unwrap();
        let dec = Period::month("2026-12", chrono_tz::Tz::UTC).unwrap();
        let mut pool = CreditPool::for_account(&book, "a");
        pool.add_compensation(nov.start, d("2.00"));
        assert_eq!(pool.available(&nov), d("20.00"));
        // 9.00: soon 3, late 5, compensation 1.
        pool.draw(&nov, d("9.00"));
        assert_eq!(pool.compensation_left(), d("1.00"));
        // December: "soon" expired (nothing left anyway), open 10 + compensation 1.
        assert_eq!(pool.available(&dec), d("11.00"));
    }
    #[test]
    fn an_invoice_adds_its_lines_compensation_and_draws_its_credit() {
        use crate::pricing::invoice::{Component, Line, Terms};
        use crate::pricing::period::PeriodJson;
        // Two lines earning 1.50 and 0.70 of SLA compensation, and 4.00 of credit drawn:
        // contributes 2.20 and 4.00.
        let mut a = Line::usage(Component::OnDemand, "gpu", 0, d("3600"), d("10.00"));
        a.compensation = Some(d("1.50"));
        let mut b = Line::usage(Component::OnDemand, "gpu", 0, d("3600"), d("5.00"));
        b.compensation = Some(d("0.70"));
        let c = Line::usage(Component::Egress, "net", 0, d("1"), d("1.00"));
        let inv = Invoice::assemble(
            "a",
            "CNY",
            PeriodJson {
                start: "s".into(),
                end: "e".into(),
            },
            vec![a, b, c],
            Terms {
                discount_percent: d("0"),
                credit_balance: d("4.00"),
                tax_rate: d("0"),
            },
        );
        let contribution = Contribution::of(&inv);
        assert_eq!(contribution.compensation, d("2.20"));
        assert_eq!(contribution.credit, d("4.00"));
        // Open credit 10.00: November (a label, resolved in the book's zone) earns 2.20 and
        // draws 4.00: 8.20 left for December; a label that is no month is left out.
        let book = PriceBook::from_toml(
            "currency = \"CNY\"\n[[credits]]\naccount = \"a\"\namount = \"10.00\"\n",
        )
        .unwrap();
        let pool = CreditPool::after_labelled(
            &book,
            "a",
            [
                ("2026-11", contribution.clone()),
                ("nonsense", contribution.clone()),
            ],
        );
        let dec = Period::month("2026-12", chrono_tz::Tz::UTC).unwrap();
        assert_eq!(pool.available(&dec), d("8.20"));
        assert_eq!(resolve_labels(&book, [("2026-11x", contribution)]), vec![]);
    }
}
