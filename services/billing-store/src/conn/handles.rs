//! The handles a caller takes from a [`Store`], one per kind of work, all over the store's one
//! connection layer (its pool, writer locks and caches):
//!
//! | handle | from | what it does |
//! |---|---|---|
//! | [`LogHandle`] | [`Store::log`] | ingest records, fold partitions, the commands topic, the outbox, dead letters, ledgers, compaction |
//! | [`FinanceHandle`] | [`Store::finance`] | closes, invoices and credit notes, adjustments, wallets and settlement, the journal, provisional cost, verification |
//! | [`QuotaHandle`] | [`Store::quota`] | quotas, authorizations and their holds, balances, quota decisions |
//! | [`NotifyHandle`] | [`Store::notify`] | notification settings (budgets, alerts, arrears), their evaluation on a tick, the notifications |
//! | [`WebhookHandle`] | [`Store::webhooks`] | webhook endpoints, their secrets, the delivery log, resend, test events |
//! | [`AdminHandle`] | [`Store::admin`] | accounts, API keys and their audit, price books and account terms, seller profiles, idempotency keys, settings |
//!
//! A handle is a borrowed view (`Copy`, no state of its own); it dereferences to the
//! connection layer, so its methods share the store's transactions and locks.

use crate::conn::store::Store;
use std::ops::Deref;

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $method:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name<'a> {
            store: &'a Store,
        }

        impl Deref for $name<'_> {
            type Target = Store;

            fn deref(&self) -> &Store {
                self.store
            }
        }

        impl Store {
            $(#[$doc])*
            pub fn $method(&self) -> $name<'_> {
                $name { store: self }
            }
        }
    };
}

handle!(
    /// The log and the fold: records in, partitions folded, commands applied, outputs out.
    LogHandle,
    log
);
handle!(
    /// Finance: closes, issued documents, adjustments, wallets, the journal, verification.
    FinanceHandle,
    finance
);
handle!(
    /// Quotas and authorization: limits, holds, balances and quota decisions.
    QuotaHandle,
    quota
);
handle!(
    /// Administration: accounts, keys, price books, terms, profiles, idempotency, settings.
    AdminHandle,
    admin
);
handle!(
    /// Notifications (issue 28): settings, ticks, the notifications written.
    NotifyHandle,
    notify
);
handle!(
    /// Webhooks (issue 28): endpoints, their secrets, the delivery log, resend, test events.
    WebhookHandle,
    webhooks
);
