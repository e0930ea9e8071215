//! Admin commands as records: every change to the projections that does not come from the
//! usage topic (price book versions, accounts, period closes) is written to the outbox in the
//! transaction that makes it, and relayed to the commands topic. With the usage topic, that
//! topic is all `gpubill replay` needs to rebuild the database.
//!
//! A period close carries the usage positions it was computed at (the next offset of every
//! consumer partition, read under the writer lock in the close's transaction), so a replay
//! folds exactly the same records before issuing the same invoices.

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::LogHandle;
use crate::conn::sql::{Val, insert_rows};
use crate::conn::store::{EMBEDDED_CONSUMER, Store};
use serde::{Deserialize, Serialize};

/// The next offset of every consumer partition (consumer: the usage topic's name in Kafka
/// mode), ordered by consumer and partition.
pub type Positions = Vec<PartitionPosition>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionPosition {
    pub consumer: String,
    pub partition: i64,
    pub next_offset: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum Command {
    #[serde(rename = "pricebook.put")]
    PutPriceBook {
        version: i64,
        toml: String,
        at_ms: i64,
    },
    /// Only the API key's hash travels; the key was shown once to the admin.
    #[serde(rename = "account.create")]
    CreateAccount {
        id: String,
        key_hash: String,
        /// Who made it, kept as its key's `created_by` (absent in commands recorded before
        /// issue 27).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        at_ms: i64,
    },
    /// Another API key for an account (issue 14: rotation); only its hash travels. `role`
    /// (issue 27) is `owner` in commands recorded before roles; `by` names who made it.
    #[serde(rename = "account.key.add")]
    AddApiKey {
        account: String,
        key_hash: String,
        #[serde(default = "owner")]
        role: crate::admin::keys::KeyRole,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        at_ms: i64,
    },
    /// A key rotated (issue 27): a new key `key_hash` of the same account and `role`, and the
    /// old one, `key_id`, revoked, in one transaction.
    #[serde(rename = "account.key.rotate")]
    RotateApiKey {
        account: String,
        key_id: crate::admin::keys::ApiKeyId,
        key_hash: String,
        role: crate::admin::keys::KeyRole,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
        at_ms: i64,
    },
    /// A key revoked by its id (the first 16 hex digits of its hash).
    #[serde(rename = "account.key.revoke")]
    RevokeApiKey {
        account: String,
        key_id: crate::admin::keys::ApiKeyId,
        at_ms: i64,
    },
    /// Issue 28: an account's notification settings replaced (budgets, alerts, arrears).
    #[serde(rename = "notify.put")]
    PutNotify {
        account: String,
        settings: billing_core::notify::settings::NotifySettings,
        at_ms: i64,
    },
    #[serde(rename = "quotas.set")]
    SetQuotas {
        account: String,
        /// Section 19: the region of the billing domain the quotas are for (absent: home).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        region: Option<String>,
        quotas: billing_core::quota::Quotas,
        at_ms: i64,
    },
    /// An account term set (created or replaced) with its body as stored; `rev` is the
    /// store-wide revision it became (a replay must reproduce it).
    #[serde(rename = "terms.put")]
    PutTerm {
        account: String,
        kind: String,
        term_id: String,
        body: serde_json::Map<String, serde_json::Value>,
        rev: i64,
        at_ms: i64,
    },
    #[serde(rename = "terms.delete")]
    DeleteTerm {
        account: String,
        kind: String,
        term_id: String,
        rev: i64,
        at_ms: i64,
    },
    /// A buyer's profile set (`account`), or the seller's (`account` is
    /// [`crate::finance::profiles::SELLER_PROFILE`]).
    #[serde(rename = "profile.put")]
    PutProfile {
        account: String,
        profile: billing_core::profile::Profile,
        at_ms: i64,
    },
    /// A top-up or refund of an account's wallet (issue 12); unique by reference. `settle`:
    /// the top-up settled the account's unpaid invoices (issue 24.2; absent in commands
    /// recorded before, which did not).
    #[serde(rename = "wallet.movement")]
    WalletMovement {
        account: String,
        kind: crate::finance::wallet_rows::AdminMovement,
        amount: rust_decimal::Decimal,
        reference: String,
        #[serde(default)]
        settle: bool,
        at_ms: i64,
    },
    /// An invoice paid from its account's wallet on demand (issue 24.2).
    #[serde(rename = "invoice.settle")]
    SettleInvoice { invoice: String, at_ms: i64 },
    /// A payment of an invoice recorded by the admin (issue 12); unique by reference.
    #[serde(rename = "invoice.payment")]
    InvoicePayment {
        invoice: String,
        amount: Option<rust_decimal::Decimal>,
        reference: String,
        at_ms: i64,
    },
    /// `stamp`: the fold stamp the close drew (issue 30: a replay draws the same; absent in
    /// closes recorded before, whose replay draws the next one).
    #[serde(rename = "period.close")]
    ClosePeriod {
        period: String,
        at_ms: i64,
        positions: Positions,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stamp: Option<i64>,
    },
    /// Issue 29: this shard let go of the tree `root` to shard `shard` (the tree's move
    /// `seq`), records from `cutover` on (partition → first offset) being the target's.
    /// Written in the transaction that deleted the tree's rows; a replay deletes them again.
    #[serde(rename = "tree.moved_out")]
    TreeMovedOut {
        root: String,
        seq: i64,
        shard: u32,
        /// (partition, first offset) pairs: a map with integer keys does not come back
        /// through this enum's tag.
        cutover: Vec<(i64, i64)>,
        at_ms: i64,
    },
    /// Issue 29: part `part` of `parts` of the rows of a tree that moved in
    /// (`shard::replayed::MovedIn` as JSON, in hex, cut to fit a broker's message). Written in
    /// the transaction that wrote the rows; a replay joins the parts and writes them again.
    /// `nonce` is random, drawn by the move: a move abandoned and made again has the same
    /// number and may carry the same rows, and must not pass for a relayed duplicate.
    #[serde(rename = "tree.moved_in")]
    TreeMovedIn {
        root: String,
        seq: i64,
        nonce: i64,
        part: u32,
        parts: u32,
        data: String,
        at_ms: i64,
    },
    /// Issue 29: a move abandoned on its target (`gpubill shards abandon`): the rows it had
    /// copied are gone, and so is its record.
    #[serde(rename = "tree.move_abandoned")]
    TreeMoveAbandoned {
        root: String,
        seq: i64,
        nonce: i64,
        at_ms: i64,
    },
    /// What one fold of the Kafka engine did (issue 30), in the transaction that did it: the
    /// records it folded (per partition of `consumer`, offsets `[from, to)`), the clock it
    /// decided them with, and the fold stamp and dead-letter numbers it drew. Not applied
    /// like the other commands: `gpubill replay` folds the same records with the same clock
    /// and numbers ([`Recorded`]), so what the fold wrote comes back byte-identical.
    #[serde(rename = "usage.folded")]
    Folded {
        consumer: String,
        parts: Vec<FoldedPart>,
        now_ms: i64,
        stamp: i64,
        /// The dead letters' numbers, in the order of the fold's dead letters.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        dead_letters: Vec<i64>,
        /// Where the fold's dead letters were relayed (their outbox rows are written again).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dead_letter_topic: Option<String>,
    },
}

/// The outbox key of [`Command::Folded`] records (the admin's commands have `commands`).
pub(crate) const FOLDS_KEY: &str = "folds";

/// One partition's share of a recorded fold: offsets `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FoldedPart {
    pub partition: i64,
    pub from: i64,
    pub to: i64,
}

/// The clock of a fold and what it numbered (issue 30): everything a fold decides or writes
/// that is not a function of its records and the store. The live engine takes `now_ms` from
/// its clock and draws the rest; a replay gives all of them back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Recorded {
    pub now_ms: i64,
    pub stamp: i64,
    /// The dead letters' numbers, in the order of the fold's dead letters.
    pub dead_letters: Vec<i64>,
}

impl Command {
    /// A stable identity: the same command relayed twice (a crash between the broker's
    /// acknowledgement and marking the outbox row) has the same id.
    pub fn id(&self) -> String {
        match self {
            Command::PutPriceBook { version, .. } => format!("pricebook.put:{version}"),
            Command::CreateAccount { id, .. } => format!("account.create:{id}"),
            Command::AddApiKey { key_hash, .. } => format!("account.key.add:{key_hash}"),
            Command::RotateApiKey { key_hash, .. } => format!("account.key.rotate:{key_hash}"),
            Command::RevokeApiKey {
                account, key_id, ..
            } => format!("account.key.revoke:{account}:{key_id}"),
            Command::ClosePeriod { period, .. } => format!("period.close:{period}"),
            // A committed fold continues a partition from its stored offset: once per offset.
            Command::Folded {
                consumer, parts, ..
            } => {
                let first = parts.first().map_or((-1, -1), |p| (p.partition, p.from));
                format!("usage.folded:{consumer}:{}:{}", first.0, first.1)
            }
            // A tree's moves are numbered in its history.
            Command::TreeMovedOut { root, seq, .. } => format!("tree.moved_out:{root}:{seq}"),
            Command::TreeMovedIn {
                root,
                seq,
                nonce,
                part,
                ..
            } => format!("tree.moved_in:{root}:{seq}:{nonce:016x}:{part}"),
            Command::TreeMoveAbandoned {
                root, seq, nonce, ..
            } => format!("tree.move_abandoned:{root}:{seq}:{nonce:016x}"),
            // References are unique per account and per invoice.
            Command::WalletMovement {
                account, reference, ..
            } => format!("wallet.movement:{account}:{reference}"),
            Command::InvoicePayment {
                invoice, reference, ..
            } => format!("invoice.payment:{invoice}:{reference}"),
            // An invoice is settled at most once per instant (the writer lock orders them).
            Command::SettleInvoice { invoice, at_ms } => {
                format!("invoice.settle:{invoice}:{at_ms}")
            }
            // The revision is store-wide and never reused.
            Command::PutTerm { rev, .. } => format!("terms.put:{rev}"),
            Command::DeleteTerm { rev, .. } => format!("terms.delete:{rev}"),
            // Quotas are set again and again: the time tells the settings apart.
            Command::SetQuotas {
                account,
                region,
                at_ms,
                ..
            } => {
                let domain = billing_core::domain::Domain {
                    account,
                    region: region.as_deref(),
                };
                format!("quotas.set:{}:{at_ms}", domain.id())
            }
            // Likewise (the writer lock orders them; one per account and millisecond).
            Command::PutNotify { account, at_ms, .. } => format!("notify.put:{account}:{at_ms}"),
            // Likewise; setting the same profile again records nothing.
            Command::PutProfile { account, at_ms, .. } => {
                format!("profile.put:{account}:{at_ms}")
            }
        }
    }
}

/// The role of a key added before roles (issue 27).
fn owner() -> crate::admin::keys::KeyRole {
    crate::admin::keys::KeyRole::Owner
}

/// The stored next offset of every Kafka consumer partition.
pub(crate) async fn positions(conn: &mut dyn Conn) -> Result<Positions> {
    let rows = crate::conn::db::query(include_str!(
        "../../queries/shared/select_kafka_positions.sql"
    ))
    .bind(EMBEDDED_CONSUMER)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| PartitionPosition {
            consumer: r.get("consumer"),
            partition: r.get("partition"),
            next_offset: r.get("next_offset"),
        })
        .collect())
}

impl LogHandle<'_> {
    /// Applies a command read back from the commands topic (replay). Price book versions must
    /// come back with the numbers they had. (Over 80 lines: one match arm per kind of
    /// command, each a call of the store's own method for it.)
    pub async fn apply_command(
        &self,
        command: &Command,
    ) -> Result<(), crate::finance::close_error::CloseError> {
        match command {
            Command::PutPriceBook {
                version,
                toml,
                at_ms,
            } => {
                let got = self.admin().put_pricebook(toml, *at_ms).await?;
                if got != *version {
                    return Err(StoreError::Corrupt(format!(
                        "replayed price book became version {got}, was {version}: the commands topic is missing a version"
                    ))
                    .into());
                }
            }
            Command::CreateAccount {
                id,
                key_hash,
                by,
                at_ms,
            } => {
                self.admin()
                    .create_account_by(id, key_hash, by.as_deref(), *at_ms)
                    .await?
            }
            c @ (Command::AddApiKey { .. }
            | Command::RotateApiKey { .. }
            | Command::RevokeApiKey { .. }) => self.apply_key_command(c).await?,
            Command::SetQuotas {
                account,
                region,
                quotas,
                at_ms,
            } => self
                .quota()
                .set_quotas(account, region.as_deref(), quotas, *at_ms)
                .await
                .map_err(|e| match e {
                    crate::quota::holds::HoldError::Store(s) => s,
                    other => StoreError::Corrupt(format!("replayed quotas: {other}")),
                })?,
            c @ (Command::ClosePeriod { .. }
            | Command::Folded { .. }
            | Command::WalletMovement { .. }
            | Command::SettleInvoice { .. }
            | Command::InvoicePayment { .. }) => self.apply_money_command(c).await?,
            c @ (Command::TreeMovedOut { .. }
            | Command::TreeMovedIn { .. }
            | Command::TreeMoveAbandoned { .. }) => self.apply_move(c).await?,
            Command::PutProfile {
                account,
                profile,
                at_ms,
            } => self.apply_profile(account, profile, *at_ms).await?,
            Command::PutNotify {
                account,
                settings,
                at_ms,
            } => self.notify().apply_put(account, settings, *at_ms).await?,
            Command::PutTerm {
                account,
                kind,
                term_id,
                body,
                rev,
                at_ms,
            } => {
                let at = (*rev, *at_ms);
                self.apply_term(account, kind, term_id, Some(body.clone()), at)
                    .await?
            }
            Command::DeleteTerm {
                account,
                kind,
                term_id,
                rev,
                at_ms,
            } => {
                self.apply_term(account, kind, term_id, None, (*rev, *at_ms))
                    .await?
            }
        }
        Ok(())
    }

    /// [`Store::apply_command`] of the API key commands (issue 27: issue, rotate, revoke).
    async fn apply_key_command(
        &self,
        command: &Command,
    ) -> Result<(), crate::finance::close_error::CloseError> {
        match command {
            Command::AddApiKey {
                account,
                key_hash,
                role,
                by,
                at_ms,
            } => {
                let key = crate::admin::keys::NewKey {
                    key_hash,
                    role: *role,
                    by: by.as_deref(),
                };
                if !self.admin().add_api_key(account, &key, *at_ms).await? {
                    return Err(StoreError::Corrupt(format!(
                        "replayed key for unknown account {account:?}"
                    ))
                    .into());
                }
            }
            Command::RotateApiKey {
                account,
                key_id,
                key_hash,
                role,
                by,
                at_ms,
            } => {
                let key = crate::admin::keys::NewKey {
                    key_hash,
                    role: *role,
                    by: by.as_deref(),
                };
                let rotated = self
                    .admin()
                    .rotate_api_key(account, key_id, &key, *at_ms)
                    .await?;
                if rotated != Some(*role) {
                    return Err(StoreError::Corrupt(format!(
                        "replayed rotation of key {key_id} of account {account:?}: it was {rotated:?}, not a live {role} key"
                    ))
                    .into());
                }
            }
            Command::RevokeApiKey {
                account,
                key_id,
                at_ms,
            } => {
                self.admin().revoke_api_key(account, key_id, *at_ms).await?;
            }
            _ => {}
        }
        Ok(())
    }

    /// [`Store::apply_command`] of the commands that move money or close periods.
    async fn apply_money_command(
        &self,
        command: &Command,
    ) -> Result<(), crate::finance::close_error::CloseError> {
        match command {
            Command::ClosePeriod {
                period,
                at_ms,
                stamp,
                ..
            } => {
                self.close_period_stamped(period, *at_ms, *stamp).await?;
            }
            Command::Folded { .. } => {
                return Err(StoreError::Corrupt(
                    "a usage.folded record is replayed with its records (billing_kafka::replay), not applied alone".into(),
                )
                .into());
            }
            Command::WalletMovement {
                account,
                kind,
                amount,
                reference,
                settle,
                at_ms,
            } => {
                self.wallet_movement_settling(
                    account,
                    (*kind, *amount, reference),
                    *settle,
                    *at_ms,
                )
                .await
                .map_err(|e| replayed("wallet movement", e))?;
            }
            Command::SettleInvoice { invoice, at_ms } => {
                self.finance()
                    .settle_invoice(invoice, *at_ms)
                    .await
                    .map_err(|e| replayed("invoice settlement", e))?;
            }
            Command::InvoicePayment {
                invoice,
                amount,
                reference,
                at_ms,
            } => {
                self.finance()
                    .pay_invoice(invoice, *amount, reference, *at_ms)
                    .await
                    .map_err(|e| replayed("invoice payment", e))?;
            }
            other => {
                return Err(
                    StoreError::Corrupt(format!("{} is not a money command", other.id())).into(),
                );
            }
        }
        Ok(())
    }

    /// Whether nothing was ever written: no events, dead letters, price books, accounts,
    /// invoices or Kafka positions (what `gpubill replay` requires).
    pub async fn is_empty(&self) -> Result<bool> {
        let row =
            crate::conn::db::query(include_str!("../../queries/shared/count_written_rows.sql"))
                .bind(EMBEDDED_CONSUMER)
                .fetch_one(&self.pool)
                .await?;
        Ok(row.get::<i64, _>("n_rows") == 0)
    }

    /// Marks every outbox row published (after a replay: its outputs are on the topics
    /// already, from the original run).
    pub async fn outbox_mark_all_published(&self, now_ms: i64) -> Result<u64> {
        Ok(crate::conn::db::query(include_str!(
            "../../queries/shared/mark_all_outbox_published.sql"
        ))
        .bind(now_ms)
        .execute(&self.pool)
        .await?
        .rows_affected())
    }
}

/// A replayed command the store refused: the commands topic and the database disagree.
fn replayed(what: &str, e: crate::finance::wallet_rows::WalletError) -> StoreError {
    match e {
        crate::finance::wallet_rows::WalletError::Store(s) => s,
        other => StoreError::Corrupt(format!("replayed {what}: {other}")),
    }
}

impl Store {
    pub(crate) async fn record_command(
        &self,
        conn: &mut dyn Conn,
        command: &Command,
        now_ms: i64,
    ) -> Result<()> {
        let payload =
            serde_json::to_string(command).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let headers = serde_json::json!({
            "gpubill-command-id": command.id(),
            "gpubill-actor": crate::admin::actor::current(),
        })
        .to_string();
        // Fold records are keyed apart: the audit log lists the admin's commands only.
        let key = match command {
            Command::Folded { .. } => FOLDS_KEY,
            _ => "commands",
        };
        insert_rows(
            conn,
            include_str!("../../queries/shared/insert_outbox_with_headers.sql"),
            "",
            vec![vec![
                Val::Text(self.topics().commands.clone()),
                Val::Text(key.into()),
                Val::Text(payload),
                Val::I64(now_ms),
                Val::Text(headers),
            ]],
        )
        .await?;
        Ok(())
    }
}
