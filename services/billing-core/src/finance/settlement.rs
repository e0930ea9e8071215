//! Issue 24.2: paying unpaid invoices from the prepaid wallet after they were issued. Pure:
//! the store loads the account's unpaid invoices and its balance, applies what this answers
//! in the top-up's (or the settle command's) transaction.
//!
//! The rule (see `choices.rs`): the wallet pays the oldest invoice first (by issue date, then
//! number), each as far as the balance goes; an invoice the balance cannot cover entirely is
//! paid in part and the balance stops there (it stays `issued` until the rest is paid).
//! Credit notes are not payable: they were credited to the wallet when issued.

use crate::common::money::round_amount;
use rust_decimal::Decimal;

/// An invoice that still owes money: its id, number, issue time and what it still owes
/// (amount due less its payments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpaid {
    pub id: String,
    pub number: String,
    pub issued_ms: i64,
    pub owed: Decimal,
}

/// What the wallet pays of one invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    pub id: String,
    pub number: String,
    pub amount: Decimal,
}

/// The payments a wallet with `available` makes to `unpaid`: the oldest invoice first (issue
/// time, then number), each as far as the balance goes. Invoices that owe nothing are
/// skipped; nothing is paid from a balance of zero or less. The amounts add up to at most
/// `available` and each is at most what its invoice owes.
pub fn oldest_first(available: Decimal, unpaid: &[Unpaid]) -> Vec<Settled> {
    let mut order: Vec<&Unpaid> = unpaid.iter().filter(|u| u.owed > Decimal::ZERO).collect();
    order.sort_by(|a, b| (a.issued_ms, &a.number).cmp(&(b.issued_ms, &b.number)));
    let mut left = available;
    let mut out = Vec::new();
    for u in order {
        if left <= Decimal::ZERO {
            break;
        }
        let amount = left.min(u.owed);
        left -= amount;
        out.push(Settled {
            id: u.id.clone(),
            number: u.number.clone(),
            amount,
        });
    }
    assert!(
        out.iter().map(|s| s.amount).sum::<Decimal>() <= available.max(Decimal::ZERO),
        "settlements exceed the wallet"
    );
    out
}

/// The refund floor (issue 24): an admin wallet movement of `signed` (a top-up positive, a
/// refund negative) on a wallet holding `balance` may be made only when the balance after it
/// is not below zero, so a refund never takes the wallet below zero (refunding exactly the
/// balance is fine). The store refuses the movement otherwise (`InsufficientBalance`). Used by
/// billing-store `wallet.rs`.
pub fn movement_allowed(balance: Decimal, signed: Decimal) -> bool {
    balance + signed >= Decimal::ZERO
}

/// What an invoice still owes: its amount due less the payments made to it.
pub fn owed(amount_due: Decimal, paid: Decimal) -> Decimal {
    amount_due - paid
}

/// Whether a payment of `amount` to an invoice owing `owed` pays it in full (it becomes
/// `paid`).
pub fn pays_in_full(amount: Decimal, owed: Decimal) -> bool {
    amount >= owed
}

/// At issue, the wallet pays what it can of the new invoice: `min(balance, amount_due)`,
/// nothing from an empty or negative wallet or for an invoice owing nothing (a credit note's
/// invoice). The rest is outstanding.
pub fn paid_at_issue(balance: Decimal, amount_due: Decimal) -> Decimal {
    if amount_due <= Decimal::ZERO {
        return Decimal::ZERO;
    }
    balance.min(amount_due).max(Decimal::ZERO)
}

/// A wallet's running totals (issue 24): its balance (the sum of its movements) and what the
/// account's issued invoices still owe (amount due less payments). The store keeps them in
/// `wallets` for authorization to read; these functions say how each event moves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WalletTotals {
    pub balance: Decimal,
    pub outstanding: Decimal,
}

impl WalletTotals {
    /// After a wallet movement of `signed` (a top-up or credit note +, a refund or a
    /// settlement -, a correction either sign): the balance moves, what is owed does not.
    pub fn after_movement(self, signed: Decimal) -> WalletTotals {
        WalletTotals {
            balance: self.balance + signed,
            outstanding: self.outstanding,
        }
    }

    /// After a payment of `amount` to an issued invoice (external, or from the wallet: its
    /// `settlement` movement moves the balance, [`WalletTotals::after_movement`]): what is
    /// owed falls by the amount.
    pub fn after_payment(self, amount: Decimal) -> WalletTotals {
        WalletTotals {
            balance: self.balance,
            outstanding: self.outstanding - amount,
        }
    }

    /// After an invoice owing `amount_due` is issued: the wallet pays what it can
    /// ([`paid_at_issue`]) and the rest is owed. Answers what the wallet paid and the totals
    /// after both its settlement movement and the payment.
    pub fn after_issue(self, amount_due: Decimal) -> (Decimal, WalletTotals) {
        let paid = paid_at_issue(self.balance, amount_due);
        let owing = WalletTotals {
            balance: self.balance,
            outstanding: self.outstanding + amount_due,
        };
        (paid, owing.after_movement(-paid).after_payment(paid))
    }
}

/// Why an amount given to a wallet command (a top-up, a refund, a payment) is refused. The
/// messages name the field (`what`) and are what the API answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error("{what} must be more than 0, got {amount}")]
    NotPositive { what: String, amount: Decimal },
    #[error(
        "{what} {amount} has more than {} decimals",
        crate::common::money::MINOR_DIGITS
    )]
    TooPrecise { what: String, amount: Decimal },
    #[error(
        "{what} {amount} is over the largest amount {}",
        crate::pricing::rating::MAX_AMOUNT
    )]
    TooLarge { what: String, amount: Decimal },
}

/// A movement or payment amount as the API takes it: more than 0, money (at most the
/// currency's minor digits, [`crate::common::decimal::check_money`]) and at most
/// [`crate::pricing::rating::MAX_AMOUNT`]. Answers it with exactly 2 decimals.
pub fn check_amount(what: &str, amount: Decimal) -> Result<Decimal, AmountError> {
    if amount <= Decimal::ZERO {
        return Err(AmountError::NotPositive {
            what: what.to_string(),
            amount,
        });
    }
    if crate::common::decimal::check_money(amount).is_err() {
        return Err(AmountError::TooPrecise {
            what: what.to_string(),
            amount,
        });
    }
    if amount > crate::pricing::rating::MAX_AMOUNT {
        return Err(AmountError::TooLarge {
            what: what.to_string(),
            amount,
        });
    }
    Ok(round_amount(amount))
}

/// The reference of an invoice's `n`-th wallet payment (`n` from 1): `settlement:{id}` for
/// the first, `settlement:{id}:{n}` after it, so each settlement movement is distinct.
pub fn settlement_reference(invoice: &str, n: usize) -> String {
    match n {
        0 | 1 => format!("settlement:{invoice}"),
        n => format!("settlement:{invoice}:{n}"),
    }
}

/// Why a payment of an invoice is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaymentRefused {
    #[error("the invoice owes nothing")]
    AlreadyPaid,
    #[error("the wallet holds {balance}: nothing to pay with")]
    EmptyWallet { balance: Decimal },
    #[error("a payment of {amount} is more than the {owed} the invoice owes")]
    Overpayment { amount: Decimal, owed: Decimal },
}

/// `POST .../settle`: the wallet pays an invoice owing `owed` as far as `balance` goes.
/// Refused when the invoice owes nothing or the wallet is empty.
pub fn settle_from_wallet(balance: Decimal, owed: Decimal) -> Result<Decimal, PaymentRefused> {
    if owed <= Decimal::ZERO {
        return Err(PaymentRefused::AlreadyPaid);
    }
    if balance <= Decimal::ZERO {
        return Err(PaymentRefused::EmptyWallet { balance });
    }
    Ok(balance.min(owed))
}

/// `POST .../payments`: an external payment of `requested` (all it owes when `None`) to an
/// invoice owing `owed`. Refused when it owes nothing or the payment is more than it owes.
pub fn external_payment(
    requested: Option<Decimal>,
    owed: Decimal,
) -> Result<Decimal, PaymentRefused> {
    if owed <= Decimal::ZERO {
        return Err(PaymentRefused::AlreadyPaid);
    }
    let amount = round_amount(requested.unwrap_or(owed));
    if amount > owed {
        return Err(PaymentRefused::Overpayment {
            amount,
            owed: round_amount(owed),
        });
    }
    Ok(amount)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wallet_of_50_pays_a_new_invoice_of_80_in_part_and_nothing_when_empty() {
        // Issue 24: at issue the wallet pays min(balance, due): 50.00 of 80.00, 30.00
        // outstanding; a wallet at -5.00 pays nothing; an invoice owing 0 takes nothing.
        assert_eq!(paid_at_issue(d("50.00"), d("80.00")), d("50.00"));
        assert_eq!(paid_at_issue(d("90.00"), d("80.00")), d("80.00"));
        assert_eq!(paid_at_issue(d("-5.00"), d("80.00")), Decimal::ZERO);
        assert_eq!(paid_at_issue(d("90.00"), d("0.00")), Decimal::ZERO);
    }

    #[test]
    fn settling_from_the_wallet_pays_as_far_as_the_balance_goes() {
        // 11.66 owed: a wallet of 5.00 pays 5.00; of 90.00 pays 11.66 (in full).
        assert_eq!(settle_from_wallet(d("5.00"), d("11.66")), Ok(d("5.00")));
        assert_eq!(settle_from_wallet(d("90.00"), d("11.66")), Ok(d("11.66")));
        assert!(pays_in_full(d("11.66"), d("11.66")));
        assert!(!pays_in_full(d("5.00"), d("11.66")));
        assert_eq!(
            settle_from_wallet(d("0.00"), d("11.66")),
            Err(PaymentRefused::EmptyWallet { balance: d("0.00") })
        );
        assert_eq!(
            settle_from_wallet(d("9.00"), owed(d("11.66"), d("11.66"))),
            Err(PaymentRefused::AlreadyPaid)
        );
    }

    #[test]
    fn an_external_payment_may_not_exceed_what_is_owed() {
        // 17.81 due, 10.00 paid: 7.81 owed. No amount pays 7.81; 7.82 is an overpayment.
        let o = owed(d("17.81"), d("10.00"));
        assert_eq!(o, d("7.81"));
        assert_eq!(external_payment(None, o), Ok(d("7.81")));
        assert_eq!(external_payment(Some(d("2.5")), o), Ok(d("2.50")));
        assert_eq!(
            external_payment(Some(d("7.82")), o),
            Err(PaymentRefused::Overpayment {
                amount: d("7.82"),
                owed: d("7.81")
            })
        );
        assert_eq!(
            external_payment(None, d("0.00")),
            Err(PaymentRefused::AlreadyPaid)
        );
    }

    #[test]
    fn wallet_payments_of_one_invoice_have_distinct_references() {
        assert_eq!(settlement_reference("inv-1", 1), "settlement:inv-1");
        assert_eq!(settlement_reference("inv-1", 2), "settlement:inv-1:2");
    }

    #[test]
    fn a_refund_never_takes_the_wallet_below_zero() {
        // A wallet of 50.00: refunding 30.00 leaves 20.00, refunding 50.00 leaves 0.00 (both
        // fine); refunding 50.01 would leave -0.01 (refused). A top-up of 10.00 is fine.
        assert!(movement_allowed(d("50.00"), d("-30.00")));
        assert!(movement_allowed(d("50.00"), d("-50.00")));
        assert!(!movement_allowed(d("50.00"), d("-50.01")));
        assert!(movement_allowed(d("50.00"), d("10.00")));
        assert!(!movement_allowed(d("0.00"), d("-0.01")));
    }

    #[test]
    fn wallet_totals_move_with_issue_payments_and_movements() {
        // A wallet of 50.00 with 10.00 owed: an invoice of 80.00 is issued, the wallet pays
        // 50.00 of it: balance 0.00, 40.00 owed. A top-up of 30.00: balance 30.00. An
        // external payment of 15.00: 25.00 owed. A refund of 5.00: balance 25.00.
        let t = WalletTotals {
            balance: d("50.00"),
            outstanding: d("10.00"),
        };
        let (paid, t) = t.after_issue(d("80.00"));
        assert_eq!(paid, d("50.00"));
        assert_eq!((t.balance, t.outstanding), (d("0.00"), d("40.00")));
        let t = t.after_movement(d("30.00"));
        assert_eq!((t.balance, t.outstanding), (d("30.00"), d("40.00")));
        let t = t.after_payment(d("15.00"));
        assert_eq!((t.balance, t.outstanding), (d("30.00"), d("25.00")));
        let t = t.after_movement(d("-5.00"));
        assert_eq!((t.balance, t.outstanding), (d("25.00"), d("25.00")));
        // An invoice owing nothing takes nothing and owes nothing more.
        let (paid, after) = t.after_issue(d("0.00"));
        assert_eq!((paid, after), (Decimal::ZERO, t));
    }

    #[test]
    fn an_amount_is_positive_money_up_to_the_largest() {
        assert_eq!(check_amount("amount", d("2.5")), Ok(d("2.50")));
        assert_eq!(
            check_amount("amount", d("2.500")).map(|a| a.to_string()),
            Ok("2.50".into())
        );
        let err = |a: &str| check_amount("amount", d(a)).unwrap_err().to_string();
        assert_eq!(err("0"), "amount must be more than 0, got 0");
        assert_eq!(err("-1.00"), "amount must be more than 0, got -1.00");
        assert_eq!(err("0.005"), "amount 0.005 has more than 2 decimals");
        let over = crate::pricing::rating::MAX_AMOUNT + Decimal::ONE;
        assert_eq!(
            check_amount("amount", over).unwrap_err().to_string(),
            format!(
                "amount {over} is over the largest amount {}",
                crate::pricing::rating::MAX_AMOUNT
            )
        );
    }

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn unpaid(id: &str, number: &str, issued_ms: i64, owed: &str) -> Unpaid {
        Unpaid {
            id: id.into(),
            number: number.into(),
            issued_ms,
            owed: d(owed),
        }
    }

    fn paid(s: &[Settled]) -> Vec<(&str, Decimal)> {
        s.iter().map(|s| (s.id.as_str(), s.amount)).collect()
    }

    #[test]
    fn a_top_up_of_90_pays_an_invoice_owing_11_66_in_full() {
        // The issue's case: 90.00 in the wallet, 11.66 owed: paid, 78.34 left.
        let s = oldest_first(d("90.00"), &[unpaid("nov", "INV-2026-000001", 10, "11.66")]);
        assert_eq!(paid(&s), vec![("nov", d("11.66"))]);
        assert_eq!(d("90.00") - s[0].amount, d("78.34"));
    }

    #[test]
    fn the_oldest_invoice_is_paid_first_and_the_next_in_part() {
        // 50.00 against 30.00 (October) and 40.00 (November), listed newest first.
        let s = oldest_first(
            d("50.00"),
            &[
                unpaid("nov", "INV-2026-000002", 2_000, "40.00"),
                unpaid("oct", "INV-2026-000001", 1_000, "30.00"),
            ],
        );
        assert_eq!(paid(&s), vec![("oct", d("30.00")), ("nov", d("20.00"))]);
    }

    #[test]
    fn a_top_up_covering_only_the_first_invoice_leaves_the_second_unpaid() {
        let s = oldest_first(
            d("30.00"),
            &[
                unpaid("oct", "INV-2026-000001", 1_000, "30.00"),
                unpaid("nov", "INV-2026-000002", 2_000, "40.00"),
            ],
        );
        assert_eq!(paid(&s), vec![("oct", d("30.00"))]);
    }

    #[test]
    fn invoices_issued_together_go_by_number() {
        let s = oldest_first(
            d("5.00"),
            &[
                unpaid("b", "INV-2026-000008", 1_000, "4.00"),
                unpaid("a", "INV-2026-000007", 1_000, "4.00"),
            ],
        );
        assert_eq!(paid(&s), vec![("a", d("4.00")), ("b", d("1.00"))]);
    }

    #[test]
    fn nothing_is_paid_from_an_empty_or_negative_wallet_or_to_invoices_owing_nothing() {
        let u = [
            unpaid("zero", "INV-2026-000001", 1, "0.00"),
            unpaid("x", "INV-2026-000002", 2, "3.00"),
        ];
        assert!(oldest_first(d("0.00"), &u).is_empty());
        assert!(oldest_first(d("-1.00"), &u).is_empty());
        assert_eq!(paid(&oldest_first(d("1.00"), &u)), vec![("x", d("1.00"))]);
    }
}
