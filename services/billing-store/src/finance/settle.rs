//! Issue 24.2: the wallet pays invoices already issued. A top-up settles the account's unpaid
//! invoices oldest first as far as the wallet's balance goes (`billing_core::settlement`
//! decides; this module loads and writes in the top-up's transaction), and
//! `POST /v1/admin/invoices/{id}/settle` pays one invoice from the wallet on demand (an admin
//! command, recorded for `gpubill replay`). Each payment is a `settlement` movement of the
//! wallet and a `wallet` payment of the invoice under the same reference; the invoice's
//! status becomes `paid` with the payment that covers what it owes.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::events::commands::Command;
use crate::finance::wallet_rows::{
    Movement, MovementKind, Payment, PaymentMethod, WalletError, append, cents, dec, payments_of,
    set_wallet, wallet_state,
};
use billing_core::settlement::{self, PaymentRefused, Unpaid, WalletTotals, oldest_first};
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::HashMap;

/// One invoice (partly) paid from the wallet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settlement {
    pub invoice: String,
    pub number: crate::finance::documents::DocumentNumber,
    pub amount: Decimal,
}

/// What settling one invoice on demand did: the payment, the wallet's movement and the
/// balance left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettleOutcome {
    pub account: String,
    pub payment: Payment,
    pub movement: Movement,
    pub balance: Decimal,
}

/// Marks invoice `id` paid (its payments cover what it owes).
pub(crate) async fn mark_paid(conn: &mut dyn Conn, id: &str) -> Result<()> {
    crate::conn::db::query(include_str!(
        "../../queries/shared/update_invoice_status.sql"
    ))
    .bind(id)
    .bind(billing_core::invoice::InvoiceStatus::Paid.as_str())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The account's invoices that still owe something, with what they owe.
async fn unpaid(conn: &mut dyn Conn, account: &str) -> Result<Vec<Unpaid>> {
    let mut paid: HashMap<String, Decimal> = HashMap::new();
    for r in crate::conn::db::query(include_str!(
        "../../queries/shared/select_invoice_payments.sql"
    ))
    .bind(account)
    .bind("")
    .bind("")
    .fetch_all(&mut *conn)
    .await?
    {
        *paid.entry(r.get("invoice_id")).or_default() += dec(
            &r.get::<String, _>("amount"),
            ("invoice_payments", "amount"),
        )?;
    }
    let mut out = Vec::new();
    for r in crate::conn::db::query(include_str!(
        "../../queries/shared/select_account_invoices_owing.sql"
    ))
    .bind(account)
    .fetch_all(&mut *conn)
    .await?
    {
        let id: String = r.get("id");
        let due = dec(
            &r.get::<String, _>("amount_due"),
            ("invoices", "amount_due"),
        )?;
        let owed = settlement::owed(due, paid.get(&id).copied().unwrap_or_default());
        if owed > Decimal::ZERO {
            out.push(Unpaid {
                id,
                number: r.get("number"),
                issued_ms: r.get("issued_at_ms"),
                owed,
            });
        }
    }
    Ok(out)
}

/// Pays `amount` of invoice `id` (of `account`, owing `owed`) from the wallet: a `settlement`
/// movement and a `wallet` payment under one reference (`settlement:{id}` for its first
/// wallet payment, `settlement:{id}:{n}` for its n-th), what the account owes less the
/// amount, and the invoice `paid` when the amount covers what it owed.
async fn pay_from_wallet(
    conn: &mut dyn Conn,
    account: &str,
    (id, owed): (&str, Decimal),
    amount: Decimal,
    now_ms: i64,
) -> Result<(Payment, Movement)> {
    assert!(
        amount > Decimal::ZERO && amount <= owed,
        "a wallet payment of {amount} for {id} owing {owed}"
    );
    let before = payments_of(conn, id)
        .await?
        .iter()
        .filter(|p| p.method == PaymentMethod::Wallet)
        .count();
    let reference = settlement::settlement_reference(id, before + 1);
    let (movement, inserted) = append(
        conn,
        account,
        (MovementKind::Settlement, -amount, &reference, Some(id)),
        now_ms,
    )
    .await?;
    if !inserted {
        return Err(StoreError::Corrupt(format!(
            "wallet movement {reference:?} of {account:?} exists already without its payment"
        )));
    }
    crate::conn::db::query(include_str!(
        "../../queries/shared/insert_invoice_payment.sql"
    ))
    .bind(id)
    .bind(cents(amount).to_string())
    .bind(PaymentMethod::Wallet.as_str())
    .bind(&reference)
    .bind(now_ms)
    .execute(&mut *conn)
    .await?;
    let (balance, outstanding) = wallet_state(conn, account).await?;
    let after = WalletTotals {
        balance,
        outstanding,
    }
    .after_payment(amount);
    set_wallet(conn, account, (after.balance, after.outstanding), now_ms).await?;
    if settlement::pays_in_full(amount, owed) {
        mark_paid(conn, id).await?;
    }
    let payment = payments_of(conn, id)
        .await?
        .into_iter()
        .find(|p| p.reference == reference)
        .ok_or_else(|| StoreError::Corrupt(format!("payment {reference:?} not stored")))?;
    Ok((payment, movement))
}

/// After a top-up (its transaction): the account's unpaid invoices paid from the wallet,
/// oldest first, as far as its balance goes.
pub(crate) async fn settle_oldest_first(
    conn: &mut dyn Conn,
    account: &str,
    now_ms: i64,
) -> Result<Vec<Settlement>> {
    let (balance, _) = wallet_state(conn, account).await?;
    let unpaid = unpaid(conn, account).await?;
    let mut out = Vec::new();
    for s in oldest_first(balance, &unpaid) {
        let owed = unpaid
            .iter()
            .find(|u| u.id == s.id)
            .map(|u| u.owed)
            .unwrap_or_default();
        pay_from_wallet(conn, account, (&s.id, owed), s.amount, now_ms).await?;
        out.push(Settlement {
            invoice: s.id,
            number: crate::finance::documents::DocumentNumber::new(s.number),
            amount: cents(s.amount),
        });
    }
    Ok(out)
}

impl FinanceHandle<'_> {
    /// Pays invoice `id` from its account's wallet, as far as the balance goes (`POST
    /// /v1/admin/invoices/{id}/settle`). Refused for an unknown invoice, a credit note, an
    /// invoice paid already and an empty wallet.
    pub async fn settle_invoice(
        &self,
        id: &str,
        now_ms: i64,
    ) -> Result<SettleOutcome, WalletError> {
        let _w = self.writer.lock().await;
        let mut tx = self.begin_write().await?;
        match self.settle_in(&mut tx, id, now_ms).await {
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

    async fn settle_in(
        &self,
        tx: &mut crate::conn::db::Tx,
        id: &str,
        now_ms: i64,
    ) -> Result<SettleOutcome, WalletError> {
        let Some(row) = crate::conn::db::query(include_str!(
            "../../queries/shared/select_invoice_payable.sql"
        ))
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?
        else {
            let note = crate::conn::db::query(include_str!(
                "../../queries/shared/select_credit_note_exists.sql"
            ))
            .bind(id)
            .fetch_optional(&mut **tx)
            .await?;
            return Err(match note {
                Some(_) => WalletError::NotPayable(id.to_string()),
                None => WalletError::UnknownInvoice(id.to_string()),
            });
        };
        let account: String = row.get("account");
        let due = dec(
            &row.get::<String, _>("amount_due"),
            ("invoices", "amount_due"),
        )?;
        let paid: Decimal = payments_of(&mut **tx, id)
            .await?
            .iter()
            .map(|p| p.amount)
            .sum();
        let owed = settlement::owed(due, paid);
        let (balance, _) = wallet_state(&mut **tx, &account).await?;
        let amount = settlement::settle_from_wallet(balance, owed).map_err(|e| match e {
            PaymentRefused::EmptyWallet { balance } => WalletError::EmptyWallet {
                id: id.to_string(),
                account: account.clone(),
                balance: cents(balance),
            },
            PaymentRefused::AlreadyPaid | PaymentRefused::Overpayment { .. } => {
                WalletError::AlreadyPaid(id.to_string())
            }
        })?;
        let (payment, movement) =
            pay_from_wallet(&mut **tx, &account, (id, owed), amount, now_ms).await?;
        self.record_command(
            &mut **tx,
            &Command::SettleInvoice {
                invoice: id.to_string(),
                at_ms: now_ms,
            },
            now_ms,
        )
        .await?;
        let (balance, _) = wallet_state(&mut **tx, &account).await?;
        Ok(SettleOutcome {
            account,
            payment,
            movement,
            balance: cents(balance),
        })
    }
}
