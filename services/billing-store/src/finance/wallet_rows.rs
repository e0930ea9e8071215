//! The wallet's rows and primitives, shared by the wallet, its settlements and the admin
//! commands: movements, payments, the wallet error, and reading and appending the rows.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use billing_core::timestamp::format_secs;
use rust_decimal::Decimal;
use serde::Serialize;

/// What kinds of movement the admin makes (the close makes the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdminMovement {
    Topup,
    Refund,
}

crate::conn::words::stored_words! {
    /// What a wallet movement is, as stored in `wallet_movements.kind`. Signed amounts: a
    /// top-up and a credit note positive, a refund and a settlement negative, a correction
    /// either.
    pub enum MovementKind {
        /// Money the admin added.
        Topup = "topup",
        /// Money the admin paid back.
        Refund = "refund",
        /// An invoice paid from the wallet.
        Settlement = "settlement",
        /// A credit note credited at its issue.
        CreditNote = "credit_note",
        /// Setting the `prepaid_balance` quota brought the balance to it.
        Correction = "correction",
    }
}

impl From<AdminMovement> for MovementKind {
    fn from(kind: AdminMovement) -> MovementKind {
        match kind {
            AdminMovement::Topup => MovementKind::Topup,
            AdminMovement::Refund => MovementKind::Refund,
        }
    }
}

crate::conn::words::stored_words! {
    /// How an invoice was paid, as stored in `invoice_payments.method`.
    pub enum PaymentMethod {
        /// From the prepaid wallet (at issue, on a top-up, or settled on demand).
        Wallet = "wallet",
        /// Recorded by the admin.
        External = "external",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Movement {
    pub seq: i64,
    pub kind: MovementKind,
    /// Signed: what the movement did to the balance.
    pub amount: Decimal,
    pub reference: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Payment {
    pub seq: i64,
    pub amount: Decimal,
    /// `wallet` (settled at issue) or `external` (recorded by the admin).
    pub method: PaymentMethod,
    pub reference: String,
    pub at: String,
}

#[derive(Debug, thiserror::Error)]
pub enum WalletError {
    #[error("no account {0:?}")]
    UnknownAccount(String),
    #[error("no invoice {0:?}")]
    UnknownInvoice(String),
    #[error("{0}")]
    Invalid(String),
    #[error(
        "reference {reference:?} was used already for a {kind} of {amount}: another movement or payment cannot reuse it"
    )]
    ReferenceConflict {
        reference: String,
        kind: String,
        amount: Decimal,
    },
    #[error("a refund of {amount} is more than the wallet balance of {balance}")]
    InsufficientBalance { amount: Decimal, balance: Decimal },
    #[error("invoice {0} is paid already")]
    AlreadyPaid(String),
    #[error(
        "the wallet of account {account:?} has nothing to pay invoice {id} with (balance {balance})"
    )]
    EmptyWallet {
        id: String,
        account: String,
        balance: Decimal,
    },
    #[error("{0} is a credit note, which is credited to the wallet, not paid")]
    NotPayable(String),
    #[error("a payment of {amount} is more than invoice {id} still owes ({owed})")]
    Overpayment {
        id: String,
        amount: Decimal,
        owed: Decimal,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for WalletError {
    fn from(e: sqlx::Error) -> Self {
        WalletError::Store(StoreError::Db(e))
    }
}

/// Stored money: an amount that does not parse is [`StoreError::Corrupt`] naming `table`,
/// `column` and the value, never a default.
pub(crate) fn dec(s: &str, (table, column): (&str, &str)) -> Result<Decimal> {
    crate::conn::error::stored(s.parse().ok(), table, column, s)
}

pub(crate) fn cents(mut d: Decimal) -> Decimal {
    d.rescale(2);
    d
}

/// The account's wallet balance and what its invoices still owe (zero without a row).
pub(crate) async fn wallet_state(conn: &mut dyn Conn, account: &str) -> Result<(Decimal, Decimal)> {
    match crate::conn::db::query(include_str!("../../queries/shared/select_wallet.sql"))
        .bind(account)
        .fetch_optional(&mut *conn)
        .await?
    {
        Some(r) => Ok((
            dec(&r.get::<String, _>("balance"), ("wallets", "balance"))?,
            dec(
                &r.get::<String, _>("outstanding"),
                ("wallets", "outstanding"),
            )?,
        )),
        None => Ok((Decimal::ZERO, Decimal::ZERO)),
    }
}

pub(crate) async fn set_wallet(
    conn: &mut dyn Conn,
    account: &str,
    (balance, outstanding): (Decimal, Decimal),
    now_ms: i64,
) -> Result<()> {
    crate::conn::db::query(include_str!("../../queries/shared/upsert_wallet.sql"))
        .bind(account)
        .bind(cents(balance).to_string())
        .bind(cents(outstanding).to_string())
        .bind(now_ms)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

pub(crate) fn movement_of(r: &crate::conn::db::DbRow) -> Result<Movement> {
    Ok(Movement {
        seq: r.get("seq"),
        kind: {
            let kind: String = r.get("kind");
            crate::conn::error::stored(
                MovementKind::parse(&kind),
                "wallet_movements",
                "kind",
                &kind,
            )?
        },
        amount: dec(
            &r.get::<String, _>("amount"),
            ("wallet_movements", "amount"),
        )?,
        reference: r.get("reference"),
        document_id: r.get("document_id"),
        at: format_secs(r.get::<i64, _>("at_ms").div_euclid(1000)),
    })
}

/// Appends a movement unless the account has its reference already; answers the stored
/// movement of the reference and whether this call made it. Keeps `wallets` in step.
pub(crate) async fn append(
    conn: &mut dyn Conn,
    account: &str,
    (kind, amount, reference, document): (MovementKind, Decimal, &str, Option<&str>),
    now_ms: i64,
) -> Result<(Movement, bool)> {
    let inserted = crate::conn::db::query(include_str!(
        "../../queries/shared/insert_wallet_movement.sql"
    ))
    .bind(account)
    .bind(kind.as_str())
    .bind(cents(amount).to_string())
    .bind(reference)
    .bind(document)
    .bind(now_ms)
    .execute(&mut *conn)
    .await?
    .rows_affected()
        == 1;
    if inserted {
        let (balance, outstanding) = wallet_state(conn, account).await?;
        let after = billing_core::settlement::WalletTotals {
            balance,
            outstanding,
        }
        .after_movement(amount);
        set_wallet(conn, account, (after.balance, after.outstanding), now_ms).await?;
    }
    let row = crate::conn::db::query(include_str!(
        "../../queries/shared/select_wallet_movement.sql"
    ))
    .bind(account)
    .bind(reference)
    .fetch_one(&mut *conn)
    .await?;
    Ok((movement_of(&row)?, inserted))
}

pub(crate) async fn payments_of(conn: &mut dyn Conn, id: &str) -> Result<Vec<Payment>> {
    crate::conn::db::query(include_str!(
        "../../queries/shared/select_payments_of_invoice.sql"
    ))
    .bind(id)
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(|r| {
        Ok(Payment {
            seq: r.get("seq"),
            amount: dec(
                &r.get::<String, _>("amount"),
                ("invoice_payments", "amount"),
            )?,
            method: {
                let method: String = r.get("method");
                crate::conn::error::stored(
                    PaymentMethod::parse(&method),
                    "invoice_payments",
                    "method",
                    &method,
                )?
            },
            reference: r.get("reference"),
            at: format_secs(r.get::<i64, _>("at_ms").div_euclid(1000)),
        })
    })
    .collect()
}
