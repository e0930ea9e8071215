//! Closing a period: rating every account with the period's price book version and issuing
//! immutable invoices, in one transaction.

use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::conn::sql::{Val, insert_rows};
use crate::conn::store::Store;
use crate::events::commands::{self, Command};
use crate::finance::adjust::{Adjusted, credits_before};
use crate::finance::close_error::CloseError;
use crate::finance::documents::DocumentNumber;
use crate::finance::documents::{CreditNote, CreditReference, IssuedInvoice};
use crate::pricing::issued::credit_balance;
use crate::pricing::payers::{load_members, members_with, payer_ids};
use billing_core::adjustment::{AdjustmentLine, settle};
use billing_core::domain::{Domain, DomainRated, Domains, term_domains};
use billing_core::invoice::Invoice;
use billing_core::numbering;
use billing_core::timestamp::format_secs;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What a close issues to one account: its new invoice and the adjustments with it.
pub(crate) struct Prepared {
    /// The billing domain's id: the account, or `account@region` (section 19).
    id: String,
    /// On a shard (issue 29): the root of the payer's tree, whose own series number its
    /// documents (`numbering::tree_series`).
    root: Option<String>,
    invoice: Invoice,
    adjusted: Adjusted,
}

/// What one automatic close did (see [`Store::close_due`]).
#[derive(Debug, Default)]
pub struct AutoClose {
    /// Periods due and closed now (or found closed by another engine in the meantime).
    pub closed: Vec<String>,
    /// The first due period that could not be closed, and why (unpriced usage, no price
    /// book): later periods wait for it, as credits carry from one period to the next.
    pub blocked: Option<(String, CloseError)>,
}

impl FinanceHandle<'_> {
    /// Closes, in order, every period whose end plus `grace_s` is at or before `now_ms` and
    /// that is not closed yet, from the first period with usage or egress on (issue 12,
    /// `serve --close-grace`). The caller reads the clock; the store decides nothing about
    /// time but what `billing_core::period::due_for_close` says. Each close is
    /// [`Store::close_period`]: under the exclusive writer lock, so engines racing on one
    /// database close a period once and the others get the same invoices. Stops at the first
    /// period refused for unpriced usage or a missing price book ([`AutoClose::blocked`]).
    pub async fn close_due(&self, now_ms: i64, grace_s: i64) -> Result<AutoClose, CloseError> {
        let mut done = AutoClose::default();
        let Some(from_s) =
            crate::conn::db::query(include_str!("../../queries/shared/select_close_start.sql"))
                .fetch_one(&self.pool)
                .await?
                .get::<Option<i64>, _>("first_s")
        else {
            return Ok(done);
        };
        let tz = {
            let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
            match self.books(&mut conn).await?.1.timezone() {
                Some(tz) => tz,
                None => return Ok(done),
            }
        };
        let closed: BTreeSet<String> = crate::conn::db::query(include_str!(
            "../../queries/shared/select_closed_period_labels.sql"
        ))
        .fetch_all(&self.pool)
        .await?
        .into_iter()
        .map(|r| r.get("period"))
        .collect();
        let now_s = now_ms.div_euclid(1000);
        for period in billing_core::period::due_for_close(from_s, now_s, grace_s, tz) {
            if closed.contains(&period.label) {
                continue;
            }
            let close = self.close_period(&period.label, now_ms);
            match crate::admin::actor::as_actor(crate::admin::actor::AUTOCLOSE, close).await {
                Ok(_) => done.closed.push(period.label),
                Err(
                    e @ (CloseError::Unpriced { .. }
                    | CloseError::NoPriceBook(_)
                    | CloseError::NotEnded { .. }),
                ) => {
                    done.blocked = Some((period.label, e));
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// Issues the invoices of `period_label` for every account (named by an event, registered,
    /// or in the price book's terms). Closing a closed period returns the same invoices.
    pub async fn close_period(
        &self,
        period_label: &str,
        now_ms: i64,
    ) -> Result<Vec<IssuedInvoice>, CloseError> {
        self.close_period_stamped(period_label, now_ms, None).await
    }

    async fn close_in(
        &self,
        tx: &mut crate::conn::db::Tx,
        period_label: &str,
        (now_ms, given_stamp): (i64, Option<i64>),
    ) -> Result<Vec<IssuedInvoice>, CloseError> {
        if self.period_closed(period_label).await? {
            return Ok(self.invoices(None, Some(period_label)).await?);
        }
        let (version, book, period) = self
            .rating_version(tx, period_label)
            .await?
            .ok_or_else(|| CloseError::NoPriceBook(period_label.to_string()))?;
        if period.end.saturating_mul(1000) > now_ms {
            return Err(CloseError::NotEnded {
                period: period_label.to_string(),
                ends: format_secs(period.end),
            });
        }
        let issued = self
            .prepare_close(&book, &period, period_label, now_ms)
            .await?;
        let positions = commands::positions(tx).await?;
        let stamp = crate::events::writes::stamp(tx, self.backend, given_stamp).await?;
        let (out, _) = self
            .issue(
                tx,
                (period_label, period.start),
                (version, book.timezone),
                issued,
                now_ms,
            )
            .await?;
        self.failpoints.hit("close.after_issue")?;
        // The account terms the period was closed with (issue 24.1): it is re-rated with them.
        let terms_rev: i64 =
            crate::conn::db::query(include_str!("../../queries/shared/select_terms_rev.sql"))
                .fetch_one(&mut **tx)
                .await?
                .get("rev");
        crate::conn::db::query(include_str!("../../queries/shared/insert_period.sql"))
            .bind(period_label)
            .bind(period.start)
            .bind(period.end)
            .bind(version)
            .bind(now_ms)
            .bind(stamp)
            .bind(terms_rev)
            .execute(&mut **tx)
            .await?;
        // The closed period's provisional costs give way to its invoices; later periods are
        // re-rated (the credits these invoices consumed are gone for them).
        let books = self.books(tx).await.map_err(CloseError::from)?;
        crate::pricing::provisional::refresh_all(tx, self.backend, &books.1, now_ms)
            .await
            .map_err(CloseError::from)?;
        self.record_command(
            tx,
            &Command::ClosePeriod {
                period: period_label.to_string(),
                at_ms: now_ms,
                positions,
                stamp: Some(stamp),
            },
            now_ms,
        )
        .await?;
        self.failpoints.hit("close.before_commit")?;
        Ok(out)
    }

    /// Every account's invoice for the period (named by an event, registered, or in the
    /// price book's terms), with the credit each has left, and the adjustments of its earlier
    /// closed periods (`adjust.rs`); refuses while usage is unpriced, in this period or in a
    /// recomputed one.
    async fn prepare_close(
        &self,
        book: &billing_core::PriceBook,
        period: &billing_core::Period,
        period_label: &str,
        now_ms: i64,
    ) -> Result<Vec<Prepared>, CloseError> {
        let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
        let platform = crate::ledger::rental::load_platform(&mut conn).await?;
        let closed = self.closed_periods(&mut conn).await?;
        let starts: BTreeMap<String, i64> = closed
            .iter()
            .map(|c| (c.period.label.clone(), c.period.start))
            .collect();
        // Every billing domain (section 19): an account at home or `account@region`; each
        // invoiced to its payer's (section 18), rated over the payer's members.
        let mut ids: BTreeSet<String> = self.admin().known_accounts().await?;
        ids.extend(term_domains(book).into_iter().map(|d| d.id().into_owned()));
        // A shard invoices the trees it holds (issue 29); the others are its other shards'.
        let placements = crate::shard::placements::Placements::load(&mut conn).await?;
        ids.retain(|id| self.holds(Some(book), &placements, id));
        let payers = payer_ids(book, ids.iter().map(String::as_str));
        let mut domains = Domains::new(book, &platform);
        let mut out = Vec::new();
        let mut unpriced = Vec::new();
        let books: Vec<&billing_core::PriceBook> = std::iter::once(book)
            .chain(closed.iter().map(|c| &*c.book))
            .collect();
        for id in &payers {
            let domain = Domain::parse(id);
            // A domain's month in its account's or region's timezone may end after home's.
            if let Ok(Some((_, _, p))) = domains.view(domain, period_label)
                && p.end.saturating_mul(1000) > now_ms
            {
                return Err(CloseError::NotEnded {
                    period: period_label.to_string(),
                    ends: format_secs(p.end),
                });
            }
            let mut ledgers = HashMap::new();
            load_members(&mut conn, &books, id, &mut ledgers).await?;
            let adjusted = self
                .adjust_account(
                    &mut conn,
                    (&closed, &platform),
                    id,
                    &ledgers,
                    period.start,
                    &mut unpriced,
                )
                .await?;
            // Every closed period's effective invoice counts, as at any close.
            let before = credits_before(&adjusted.effective, &starts, i64::MAX);
            let members = members_with(book, id, &ledgers);
            let rated = domains
                .rate_members(domain, period_label, &members, |rbook, p| {
                    credit_balance(rbook, domain.account, &before, p)
                })
                .map_err(|e| CloseError::of_month(period_label, e))?;
            match rated {
                DomainRated::Rated(rated) => {
                    unpriced.extend(rated.unpriced);
                    out.push(Prepared {
                        id: id.clone(),
                        root: self.shard.map(|_| {
                            crate::shard::key::root_of(Some(book), domain.account).to_string()
                        }),
                        invoice: rated.invoice,
                        adjusted,
                    });
                }
                DomainRated::UnknownRegion(u) => unpriced.extend(u),
            }
        }
        if !unpriced.is_empty() {
            return Err(CloseError::Unpriced {
                period: period_label.to_string(),
                unpriced,
            });
        }
        Ok(out)
    }

    /// The invoice and credit note series of a prepared document: the store's, or its
    /// region's own; on a shard, the tree's own of either (`numbering::tree_series`).
    fn series_of(&self, p: &Prepared) -> (String, String) {
        let (invoice, note) = self.prefixes_of(Domain::parse(&p.id).region);
        match &p.root {
            Some(root) => (
                numbering::tree_series(invoice, root),
                numbering::tree_series(note, root),
            ),
            None => (invoice.to_string(), note.to_string()),
        }
    }

    /// Each series the documents of `prepared` need takes a block of numbers of `year`, in
    /// series order (per series, documents are numbered in the order prepared). Answers each
    /// series' first number of its block.
    async fn take_blocks(
        &self,
        tx: &mut crate::conn::db::Tx,
        prepared: &[Prepared],
        year: i32,
    ) -> Result<BTreeMap<String, i64>, CloseError> {
        let mut wanted: BTreeMap<String, usize> = BTreeMap::new();
        for p in prepared {
            let (invoice_series, note_series) = self.series_of(p);
            *wanted.entry(invoice_series).or_default() += 1;
            if !settle(p.invoice.total, &p.adjusted.lines).1.is_zero() {
                *wanted.entry(note_series).or_default() += 1;
            }
        }
        let mut next = BTreeMap::new();
        for (series, n) in wanted {
            let last = take_numbers(tx, &series, year, n).await?;
            next.insert(series, last);
        }
        Ok(next)
    }

    /// Writes the invoices with their ids and numbers, the credit notes their adjustments
    /// leave, the recomputations those adjustments were issued against, the wallets'
    /// settlements, and the outbox rows. Numbers come from the series of the issue date's
    /// year (`numbering`), taken in this transaction: gapless and never reused, whatever
    /// rolls back. (Over 80 lines: the writes of one close in the order they must happen in
    /// its transaction, each a call; split, the order would be spread over functions.)
    async fn issue(
        &self,
        tx: &mut crate::conn::db::Tx,
        (period_label, period_start): (&str, i64),
        (version, tz): (i64, chrono_tz::Tz),
        prepared: Vec<Prepared>,
        now_ms: i64,
    ) -> Result<(Vec<IssuedInvoice>, Vec<CreditNote>), CloseError> {
        let issued_s = now_ms.div_euclid(1000);
        let issued_at = format_secs(issued_s);
        let year = numbering::year_of(issued_s, tz)
            .ok_or_else(|| StoreError::Corrupt(format!("no calendar year for {issued_at}")))?;
        let mut next = self.take_blocks(tx, &prepared, year).await?;
        let mut take = |prefix: &str| -> Result<DocumentNumber, CloseError> {
            let n = next.get_mut(prefix).ok_or_else(|| {
                StoreError::Corrupt(format!("no numbers taken for series {prefix:?}"))
            })?;
            *n += 1;
            Ok(DocumentNumber::new(numbering::number(prefix, year, *n - 1)))
        };
        let mut out = Vec::new();
        let mut credit_notes = Vec::new();
        let mut adjustment_rows = Vec::new();
        for p in prepared {
            let (invoice_series, note_series) = self.series_of(&p);
            let invoice = p.invoice;
            let id = invoice_id(&p.id, period_label);
            let number = take(&invoice_series)?;
            let (amount_due, note_amount) = settle(invoice.total, &p.adjusted.lines);
            let note_number = match note_amount.is_zero() {
                true => None,
                false => Some(take(&note_series)?),
            };
            let note = note_number.map(|note_number| CreditNote {
                kind: crate::finance::documents::DocumentKind::CreditNote,
                id: credit_note_id(&p.id, period_label),
                number: note_number,
                account: invoice.account.clone(),
                region: invoice.region.clone().flatten(),
                currency: invoice.currency.clone(),
                period: period_label.to_string(),
                issued_at: issued_at.clone(),
                invoice_id: id.clone(),
                invoice_number: number.clone(),
                references: negative_references(&p.adjusted.lines),
                amount: note_amount,
                status: crate::finance::documents::CreditNoteStatus::Credited,
            });
            for (label, recomputed) in &p.adjusted.recomputed {
                adjustment_rows.push(vec![
                    Val::Text(p.id.clone()),
                    Val::Text(label.clone()),
                    Val::Text(period_label.to_string()),
                    Val::Text(id.clone()),
                    Val::I64(period_start),
                    Val::Text(recomputed.credit.to_string()),
                    Val::Text(to_json(recomputed)?),
                    Val::I64(now_ms),
                ]);
            }
            // The domain's wallet: one currency, the invoice's (section 19).
            let paid = crate::finance::wallet::settle_issued(
                tx,
                &p.id,
                (&id, amount_due),
                note.as_ref().map(|c| (c.id.as_str(), c.amount)),
                now_ms,
            )
            .await?;
            let issued = IssuedInvoice {
                kind: crate::finance::documents::DocumentKind::Invoice,
                id,
                number,
                // Paid at issue when the wallet covered it (`billing_core::invoice::status`).
                status: billing_core::invoice::status(amount_due, paid),
                issued_at: issued_at.clone(),
                pricebook_version: version,
                invoice,
                adjustments: p.adjusted.lines,
                amount_due,
                paid,
                credit_note: note.as_ref().map(|c| c.id.clone()),
                issued_at_ms: now_ms,
            };
            credit_notes.extend(note);
            out.push(issued);
        }
        self.write_documents(
            tx,
            (period_label, version, now_ms),
            (&out, &credit_notes),
            adjustment_rows,
        )
        .await?;
        Ok((out, credit_notes))
    }

    /// The rows of what a close issues: invoices, the recomputations adjustments were issued
    /// against, credit notes, and the outbox rows relaying the documents. (Over 80 lines: one
    /// batched insert per kind of row, side by side.)
    async fn write_documents(
        &self,
        tx: &mut crate::conn::db::Tx,
        (period_label, version, now_ms): (&str, i64, i64),
        (out, credit_notes): (&[IssuedInvoice], &[CreditNote]),
        adjustment_rows: Vec<Vec<Val>>,
    ) -> Result<()> {
        let rows = out
            .iter()
            .map(|i| {
                Ok(vec![
                    Val::Text(i.id.clone()),
                    Val::Text(invoice_domain(&i.invoice)),
                    Val::Text(period_label.to_string()),
                    Val::Text(i.number.as_str().to_string()),
                    // `paid` when the wallet paid it all at issue (issue 24.2).
                    Val::Text(i.status.as_str().to_string()),
                    Val::I64(now_ms),
                    Val::I64(version),
                    Val::Text(i.invoice.credit.to_string()),
                    Val::Text(i.invoice.total.to_string()),
                    Val::Text(to_json(&i.invoice)?),
                    Val::Text(i.amount_due.to_string()),
                    Val::OptText(if i.adjustments.is_empty() {
                        None
                    } else {
                        Some(to_json(&i.adjustments)?)
                    }),
                    Val::OptText(i.credit_note.clone()),
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let sql = |q| (q, "");
        for ((q, tail), rows) in [
            (
                sql(include_str!("../../queries/shared/insert_invoices.sql")),
                rows,
            ),
            (
                sql(include_str!("../../queries/shared/insert_adjustments.sql")),
                adjustment_rows,
            ),
            (
                sql(include_str!("../../queries/shared/insert_credit_notes.sql")),
                credit_notes
                    .iter()
                    .map(|c| {
                        Ok(vec![
                            Val::Text(c.id.clone()),
                            Val::Text(
                                Domain {
                                    account: &c.account,
                                    region: c.region.as_deref(),
                                }
                                .id()
                                .into_owned(),
                            ),
                            Val::Text(period_label.to_string()),
                            Val::Text(c.number.as_str().to_string()),
                            Val::Text(c.invoice_id.clone()),
                            Val::Text(c.amount.to_string()),
                            Val::I64(now_ms),
                            Val::Text(to_json(c)?),
                        ])
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        ] {
            insert_rows(tx, q, tail, rows)
                .await
                .map_err(StoreError::from)?;
        }
        let mut outbox = Vec::new();
        for (account, payload) in out
            .iter()
            .map(|i| (&i.invoice.account, to_json(i)))
            .chain(credit_notes.iter().map(|c| (&c.account, to_json(c))))
        {
            outbox.push(vec![
                Val::Text(self.topics().invoices.clone()),
                Val::Text(account.clone()),
                Val::Text(payload?),
                Val::I64(now_ms),
            ]);
        }
        insert_rows(
            tx,
            include_str!("../../queries/shared/insert_outbox.sql"),
            "",
            outbox,
        )
        .await
        .map_err(StoreError::from)?;
        Ok(())
    }
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The originals the credit note credits (the core's rule,
/// `billing_core::adjustment::credited_originals`), as the note shows them.
fn negative_references(lines: &[AdjustmentLine]) -> Vec<CreditReference> {
    billing_core::adjustment::credited_originals(lines)
        .into_iter()
        .map(|c| CreditReference {
            period: c.period,
            invoice_id: c.invoice_id,
            invoice_number: c.invoice_number.map(DocumentNumber::new),
            amount: c.amount,
        })
        .collect()
}

/// `cn_` + the first 20 hex digits of SHA-256(account, period, "credit_note"): stable, like
/// [`invoice_id`].
pub fn credit_note_id(account: &str, period: &str) -> String {
    let h =
        crate::admin::keys::hash_key(&format!("{}:{account}|{period}|credit_note", account.len()));
    format!("cn_{}", &h[..20])
}

/// Takes the next `n` numbers of `prefix`'s series in `year` (in the caller's transaction)
/// and answers the first of them.
async fn take_numbers(
    tx: &mut crate::conn::db::Tx,
    prefix: &str,
    year: i32,
    n: usize,
) -> Result<i64> {
    if n == 0 {
        return Ok(1);
    }
    let last: i64 = crate::conn::db::query(include_str!("../../queries/shared/take_numbers.sql"))
        .bind(prefix)
        .bind(year)
        .bind(n as i64)
        .fetch_one(&mut **tx)
        .await?
        .get("last");
    Ok(last - n as i64 + 1)
}

/// `inv_` + the first 20 hex digits of SHA-256(account, period): stable, so a replay into an
/// empty database issues invoices with the same ids.
pub fn invoice_id(account: &str, period: &str) -> String {
    let h = crate::admin::keys::hash_key(&format!("{}:{account}|{period}", account.len()));
    format!("inv_{}", &h[..20])
}

impl Store {
    /// [`Store::close_period`] with the fold stamp it draws given (a replay gives the one the
    /// original close drew, issue 30).
    pub(crate) async fn close_period_stamped(
        &self,
        period_label: &str,
        now_ms: i64,
        stamp: Option<i64>,
    ) -> Result<Vec<IssuedInvoice>, CloseError> {
        let _w = self.writer.lock().await;
        // Taken before reading anything: the ledger read below is the one at `positions`.
        let mut tx = self.begin_write().await?;
        match self
            .finance()
            .close_in(&mut tx, period_label, (now_ms, stamp))
            .await
        {
            Ok(out) => {
                tx.commit().await?;
                Ok(out)
            }
            Err(e) => {
                tx.rollback().await?;
                Err(e)
            }
        }
    }
}

/// The billing domain an invoice is stored under (section 19): its account, or
/// `account@region` for a region's invoice.
pub(crate) fn invoice_domain(invoice: &Invoice) -> String {
    Domain {
        account: &invoice.account,
        region: invoice.region.as_ref().and_then(|r| r.as_deref()),
    }
    .id()
    .into_owned()
}
