//! The prepaid wallet and invoice payments (issue 12).
//!
//! A wallet is an append-only ledger of money movements per account (`wallet_movements`):
//! `topup` (+), `refund` (-), `settlement` (- : an invoice paid from the wallet when it is
//! issued), `credit_note` (+ : a credit note's amount) and `correction` (either sign: what
//! setting the `prepaid_balance` quota does now, instead of overwriting a balance). Every
//! movement has a reference unique in its account, so a top-up or refund sent twice is stored
//! once; the same reference with a different kind or amount is refused. The balance is the
//! sum of the movements; `wallets` keeps it, with what the account's invoices still owe, in
//! the same transactions, for authorization to read in its one statement.
//!
//! Top-ups, refunds and payments are admin commands (recorded for `gpubill replay`);
//! settlements and credit notes are made by the close, which replay repeats. A top-up also
//! settles the account's unpaid invoices, oldest first (issue 24.2, `settle.rs`), unless the
//! store was opened with [`Store::with_topup_settlement`] off.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::conn::store::Store;
use crate::events::commands::Command;
use crate::finance::wallet_rows::{
    AdminMovement, Movement, MovementKind, Payment, PaymentMethod, WalletError, append, cents, dec,
    movement_of, payments_of, set_wallet, wallet_state,
};
use billing_core::settlement::{self, PaymentRefused, WalletTotals};
use rust_decimal::Decimal;
use serde::Serialize;

/// What a top-up or refund did: the movement, whether this call made it (a repeated
/// reference answers the stored one) and the invoices the top-up settled (issue 24.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovementMade {
    pub movement: Movement,
    pub created: bool,
    pub settled: Vec<crate::finance::settle::Settlement>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wallet {
    pub account: String,
    /// The sum of the movements.
    pub balance: Decimal,
    /// What the account's issued invoices still owe (amount due less payments).
    pub outstanding: Decimal,
    pub movements: Vec<Movement>,
}

/// At issue (the close's transaction): the invoice's credit note is credited to the wallet,
/// then what the invoice owes is settled from the wallet as far as its balance goes; the rest
/// is outstanding. Answers what the wallet paid.
pub(crate) async fn settle_issued(
    conn: &mut dyn Conn,
    account: &str,
    (invoice_id, amount_due): (&str, Decimal),
    credit_note: Option<(&str, Decimal)>,
    now_ms: i64,
) -> Result<Decimal> {
    if let Some((id, amount)) = credit_note {
        let reference = format!("credit_note:{id}");
        append(
            conn,
            account,
            (MovementKind::CreditNote, amount, &reference, Some(id)),
            now_ms,
        )
        .await?;
    }
    if amount_due <= Decimal::ZERO {
        return Ok(cents(Decimal::ZERO));
    }
    let (balance, outstanding) = wallet_state(conn, account).await?;
    let (paid, after) = WalletTotals {
        balance,
        outstanding,
    }
    .after_issue(amount_due);
    if paid > Decimal::ZERO {
        let reference = format!("settlement:{invoice_id}");
        append(
            conn,
            account,
            (
                MovementKind::Settlement,
                -paid,
                &reference,
                Some(invoice_id),
            ),
            now_ms,
        )
        .await?;
        crate::conn::db::query(include_str!(
            "../../queries/shared/insert_invoice_payment.sql"
        ))
        .bind(invoice_id)
        .bind(cents(paid).to_string())
        .bind(PaymentMethod::Wallet.as_str())
        .bind("wallet")
        .bind(now_ms)
        .execute(&mut *conn)
        .await?;
    }
    // The settlement movement moved the balance already (`append`): the same as `after`'s.
    let (balance, _) = wallet_state(conn, account).await?;
    set_wallet(conn, account, (balance, after.outstanding), now_ms).await?;
    Ok(cents(paid))
}

/// A movement amount as the API takes it: positive, at most 2 decimals, at most
/// `billing_core::rating::MAX_AMOUNT` (the core's rule, `billing_core::settlement::check_amount`).
pub fn check_amount(what: &str, amount: Decimal) -> std::result::Result<Decimal, WalletError> {
    settlement::check_amount(what, amount).map_err(|e| WalletError::Invalid(e.to_string()))
}

/// A reference: 1 to 128 printable ASCII characters.
fn check_reference(reference: &str) -> std::result::Result<(), WalletError> {
    if reference.is_empty()
        || reference.len() > 128
        || !reference.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
    {
        return Err(WalletError::Invalid(format!(
            "reference {reference:?} is not 1 to 128 printable ASCII characters"
        )));
    }
    if reference.contains(':') {
        // `settlement:`, `credit_note:` and `correction:` references are the engine's own.
        return Err(WalletError::Invalid(format!(
            "reference {reference:?} contains ':', which only the engine's own references use"
        )));
    }
    Ok(())
}

impl FinanceHandle<'_> {
    /// A top-up or refund of `amount` (positive) with the admin's `reference`: idempotent by
    /// reference (the same call again answers the stored movement, `false`); a refund never
    /// takes the balance below zero. A new top-up then settles the account's unpaid invoices
    /// from the wallet, oldest first (issue 24.2), unless [`Store::with_topup_settlement`]
    /// turned that off.
    pub async fn wallet_movement(
        &self,
        account: &str,
        kind: AdminMovement,
        amount: Decimal,
        reference: &str,
        now_ms: i64,
    ) -> Result<MovementMade, WalletError> {
        let settle = kind == AdminMovement::Topup && self.topup_settlement;
        self.wallet_movement_settling(account, (kind, amount, reference), settle, now_ms)
            .await
    }

    /// [`Store::wallet_movement`] in its transaction: the stored movement of a repeated
    /// reference (`false`, nothing settled), or the new one with its settlements and command.
    async fn movement_in(
        &self,
        tx: &mut crate::conn::db::Tx,
        account: &str,
        (kind, name, signed, amount): (AdminMovement, MovementKind, Decimal, Decimal),
        (reference, settle): (&str, bool),
        now_ms: i64,
    ) -> Result<MovementMade, WalletError> {
        if let Some(row) = crate::conn::db::query(include_str!(
            "../../queries/shared/select_wallet_movement.sql"
        ))
        .bind(account)
        .bind(reference)
        .fetch_optional(&mut **tx)
        .await?
        {
            let stored = movement_of(&row)?;
            if stored.kind == name && stored.amount == cents(signed) {
                return Ok(MovementMade {
                    movement: stored,
                    created: false,
                    settled: Vec::new(),
                });
            }
            return Err(WalletError::ReferenceConflict {
                reference: reference.to_string(),
                kind: stored.kind.to_string(),
                amount: stored.amount,
            });
        }
        let (balance, _) = wallet_state(tx, account).await?;
        // A refund never takes the wallet below zero: the core's rule
        // (`billing_core::settlement::movement_allowed`).
        if !billing_core::settlement::movement_allowed(balance, signed) {
            return Err(WalletError::InsufficientBalance {
                amount,
                balance: cents(balance),
            });
        }
        let (movement, created) =
            append(tx, account, (name, signed, reference, None), now_ms).await?;
        let settled = if settle {
            crate::finance::settle::settle_oldest_first(tx, account, now_ms).await?
        } else {
            Vec::new()
        };
        self.failpoints.hit("wallet.after_movement")?;
        self.record_command(
            tx,
            &Command::WalletMovement {
                account: account.to_string(),
                kind,
                amount,
                reference: reference.to_string(),
                settle,
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        // Issue 28: a top-up resolves a low balance and clears arrears at once.
        self.notify_account_now(&mut **tx, account, now_ms).await?;
        Ok(MovementMade {
            movement,
            created,
            settled,
        })
    }

    /// The account's wallet: balance, outstanding and every movement.
    pub async fn wallet(&self, account: &str) -> Result<Wallet> {
        let mut conn = self.pool.acquire().await?;
        let (balance, outstanding) = wallet_state(&mut conn, account).await?;
        let movements = crate::conn::db::query(include_str!(
            "../../queries/shared/select_wallet_movements.sql"
        ))
        .bind(account)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(movement_of)
        .collect::<Result<Vec<_>>>()?;
        Ok(Wallet {
            account: account.to_string(),
            balance: cents(balance),
            outstanding: cents(outstanding),
            movements,
        })
    }

    /// Records a payment of invoice `id` made outside the wallet: `amount` (None: all it still
    /// owes) with the admin's `reference` (idempotent like top-ups). Refused for an invoice
    /// paid already and for more than it still owes.
    pub async fn pay_invoice(
        &self,
        id: &str,
        amount: Option<Decimal>,
        reference: &str,
        now_ms: i64,
    ) -> Result<(Payment, bool), WalletError> {
        check_reference(reference)?;
        if let Some(a) = amount {
            check_amount("amount", a)?;
        }
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        let Some(owner) = crate::conn::db::query(include_str!(
            "../../queries/shared/select_invoice_owner.sql"
        ))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
        else {
            tx.rollback().await?;
            return Err(WalletError::UnknownInvoice(id.to_string()));
        };
        let account: String = owner.get("account");
        let due = dec(
            &owner.get::<String, _>("amount_due"),
            ("invoices", "amount_due"),
        )?;
        let payments = payments_of(&mut tx, id).await?;
        if let Some(p) = payments.iter().find(|p| p.reference == reference) {
            tx.rollback().await?;
            if amount.is_none_or(|a| cents(a) == p.amount) {
                return Ok((p.clone(), false));
            }
            return Err(WalletError::ReferenceConflict {
                reference: reference.to_string(),
                kind: "payment".into(),
                amount: p.amount,
            });
        }
        let owed = settlement::owed(due, payments.iter().map(|p| p.amount).sum::<Decimal>());
        let amount = match settlement::external_payment(amount, owed) {
            Ok(amount) => amount,
            Err(e) => {
                tx.rollback().await?;
                return Err(match e {
                    PaymentRefused::Overpayment { amount, owed } => WalletError::Overpayment {
                        id: id.to_string(),
                        amount,
                        owed,
                    },
                    PaymentRefused::AlreadyPaid | PaymentRefused::EmptyWallet { .. } => {
                        WalletError::AlreadyPaid(id.to_string())
                    }
                });
            }
        };
        crate::conn::db::query(include_str!(
            "../../queries/shared/insert_invoice_payment.sql"
        ))
        .bind(id)
        .bind(amount.to_string())
        .bind(PaymentMethod::External.as_str())
        .bind(reference)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        let (balance, outstanding) = wallet_state(&mut tx, &account).await?;
        let after = WalletTotals {
            balance,
            outstanding,
        }
        .after_payment(amount);
        set_wallet(
            &mut tx,
            &account,
            (after.balance, after.outstanding),
            now_ms,
        )
        .await?;
        if settlement::pays_in_full(amount, owed) {
            crate::finance::settle::mark_paid(&mut tx, id).await?;
        }
        self.record_command(
            &mut tx,
            &Command::InvoicePayment {
                invoice: id.to_string(),
                amount: Some(amount),
                reference: reference.to_string(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        // Issue 28: paying an overdue invoice clears arrears.
        self.notify_account_now(&mut tx, &account, now_ms).await?;
        let made = payments_of(&mut tx, id)
            .await?
            .into_iter()
            .find(|p| p.reference == reference)
            .ok_or_else(|| StoreError::Corrupt(format!("payment {reference:?} not stored")))?;
        tx.commit().await?;
        Ok((made, true))
    }

    /// Invoice `id`'s payments in order.
    pub async fn payments(&self, id: &str) -> Result<Vec<Payment>> {
        let mut conn = self.pool.acquire().await?;
        payments_of(&mut conn, id).await
    }
}

impl Store {
    /// Setting the `prepaid_balance` quota (in `set_quotas`' transaction): a `correction`
    /// movement that brings the wallet's balance to `target`, when it is not there already.
    pub(crate) async fn correct_balance(
        &self,
        conn: &mut dyn Conn,
        account: &str,
        target: Decimal,
        now_ms: i64,
    ) -> Result<()> {
        let (balance, _) = wallet_state(conn, account).await?;
        let delta = target - balance;
        if !delta.is_zero() {
            let reference = format!("correction:{now_ms}");
            append(
                conn,
                account,
                (MovementKind::Correction, delta, &reference, None),
                now_ms,
            )
            .await?;
        }
        Ok(())
    }

    /// [`Store::wallet_movement`] settling (`settle`) or not, as the command recorded it
    /// (replay repeats what the original engine did, whatever this one's setting).
    pub(crate) async fn wallet_movement_settling(
        &self,
        account: &str,
        (kind, amount, reference): (AdminMovement, Decimal, &str),
        settle: bool,
        now_ms: i64,
    ) -> Result<MovementMade, WalletError> {
        let amount = check_amount("amount", amount)?;
        check_reference(reference)?;
        // A region's wallet (`account@region`, section 19) is its account's.
        let owner = billing_core::domain::Domain::parse(account).account;
        if !self.admin().account_exists(owner).await? {
            return Err(WalletError::UnknownAccount(account.to_string()));
        }
        let (name, signed) = match kind {
            AdminMovement::Topup => (MovementKind::Topup, amount),
            AdminMovement::Refund => (MovementKind::Refund, -amount),
        };
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        // Rolled back here on any refusal or failure, not whenever the dropped transaction's
        // connection gets to it: a retry must not find the write lock still held (SQLite).
        match self
            .finance()
            .movement_in(
                &mut tx,
                account,
                (kind, name, signed, amount),
                (reference, settle),
                now_ms,
            )
            .await
        {
            Ok(made) => {
                tx.commit().await?;
                Ok(made)
            }
            Err(e) => {
                tx.rollback().await?;
                Err(e)
            }
        }
    }
}
