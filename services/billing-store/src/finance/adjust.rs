//! Section 7 at a close (issue 12): every earlier closed period's invoice of an account is
//! recomputed over the ledger as it is now (late usage and part-2 events included, and
//! whatever an open period's events change in it: a minimum charge counts a resource's
//! seconds over all its events, a lease state or a price point holds until the next point),
//! with the price book version the period was closed with and the credit balance its close
//! had after the (effective) invoices of earlier periods. Where the recomputation differs from
//! what the period's invoice effectively says, the difference goes on the account's new
//! invoice as adjustment lines (`billing_core::adjustment`), and the recomputation becomes
//! what the period effectively says (the `adjustments` table): later credit balances count
//! its credit and compensation, and the next close compares against it.
//!
//! Recomputing every closed period rather than only those with late usage is on purpose: what
//! the rules read reaches beyond an event's own span, and a missed difference is money lost.
//! Its cost is one rating per account and closed period at each close (see docs/scaling.md).

use crate::conn::db::Conn;
use crate::conn::error::{Result, StoreError};
use crate::conn::handles::FinanceHandle;
use crate::conn::store::Store;
use crate::events::known::Known;
use crate::finance::close_error::CloseError;
use crate::finance::documents::parse_invoice;
use crate::pricing::issued::{IssuedCredit, credit_balance};
use crate::pricing::payers::{load_members, member_ids, members_with, payer_id};
use billing_core::adjustment::{AdjustmentLine, differences, needs_adjustment};
use billing_core::domain::{Domain, DomainRated, Domains};
use billing_core::invoice::Invoice;
use billing_core::ledger::AccountLedger;
use billing_core::period::Period;
use billing_core::platform::Platform;
use billing_core::pricebook::{AccountTerm, PriceBook};
use billing_core::rating::Unpriced;
use billing_core::term_changes::terms_for_closed_period;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What an account's invoice of a closed period effectively says: the issued invoice (its id
/// and number) or, once adjusted, the recomputation the latest adjustment was issued against.
#[derive(Debug, Clone)]
pub(crate) struct Effective {
    pub(crate) id: Option<String>,
    pub(crate) number: Option<String>,
    pub(crate) invoice: Invoice,
}

/// A closed period with the price book version it was closed with (and the account terms that
/// re-rate it merged in).
#[derive(Debug, Clone)]
pub(crate) struct ClosedPeriod {
    pub(crate) book: Arc<PriceBook>,
    pub(crate) period: Period,
}

/// What a close issues to one account besides its new invoice.
#[derive(Debug, Default)]
pub(crate) struct Adjusted {
    /// The adjustment lines for the new invoice, by original period then component.
    pub(crate) lines: Vec<AdjustmentLine>,
    /// The recomputations that became effective: (period label, invoice).
    pub(crate) recomputed: Vec<(String, Invoice)>,
    /// The account's effective invoices after them, for the new invoice's credit balance.
    pub(crate) effective: BTreeMap<String, Effective>,
}

/// What an invoice did to the credit pool: its period, the compensation it earned (section
/// 10) and the credit it consumed (the core's rule, `billing_core::credits::Contribution`).
pub(crate) fn issued_credit(label: &str, invoice: &Invoice) -> IssuedCredit {
    (
        label.to_string(),
        billing_core::credits::Contribution::of(invoice),
    )
}

/// The effective invoices of periods starting before `start`, as the credit pool reads them.
pub(crate) fn credits_before(
    effective: &BTreeMap<String, Effective>,
    starts: &BTreeMap<String, i64>,
    start: i64,
) -> Vec<IssuedCredit> {
    effective
        .iter()
        .filter(|(label, _)| starts.get(*label).is_some_and(|s| *s < start))
        .map(|(label, e)| issued_credit(label, &e.invoice))
        .collect()
}

impl FinanceHandle<'_> {
    /// What the next close would adjust for `account`'s closed period `period_label`: what
    /// the period's invoice effectively says now, its recomputation, and the lines.
    pub async fn pending_adjustment(
        &self,
        account: &str,
        period_label: &str,
    ) -> Result<PendingAdjustment, CloseError> {
        let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
        let closed = self.closed_periods(&mut conn).await?;
        let Some(target) = closed.iter().position(|c| c.period.label == period_label) else {
            return Err(CloseError::NotClosed(period_label.to_string()));
        };
        let platform = crate::ledger::rental::load_platform(&mut conn).await?;
        let books: Vec<&PriceBook> = closed[..=target].iter().map(|c| &*c.book).collect();
        let mut ledgers = HashMap::new();
        load_members(&mut conn, &books, account, &mut ledgers).await?;
        let mut unpriced = Vec::new();
        let until = closed[target].period.end;
        let adjusted = self
            .adjust_account(
                &mut conn,
                (&closed[..=target], &platform),
                account,
                &ledgers,
                until,
                &mut unpriced,
            )
            .await?;
        let c = &closed[target];
        let recomputed = match adjusted.effective.get(period_label) {
            Some(e) => e.invoice.clone(),
            None => {
                let starts: BTreeMap<String, i64> = closed
                    .iter()
                    .map(|c| (c.period.label.clone(), c.period.start))
                    .collect();
                let earlier = credits_before(&adjusted.effective, &starts, c.period.start);
                match rate_domain(
                    &c.book,
                    &c.period.label,
                    &platform,
                    account,
                    &ledgers,
                    &earlier,
                )? {
                    DomainRated::Rated(r) => r.invoice,
                    DomainRated::UnknownRegion(unpriced) => {
                        return Err(CloseError::Unpriced {
                            period: period_label.to_string(),
                            unpriced,
                        });
                    }
                }
            }
        };
        // What the period effectively says now is the recomputation less its lines.
        let was = adjusted.effective.get(period_label);
        let lines: Vec<AdjustmentLine> = adjusted
            .lines
            .into_iter()
            .filter(|l| l.period == period_label)
            .collect();
        Ok(PendingAdjustment {
            invoice_id: was.and_then(|e| e.id.clone()),
            invoice_number: was.and_then(|e| e.number.clone()),
            effective_total: recomputed.total - lines.iter().map(|l| l.amount).sum::<Decimal>(),
            lines,
            recomputed,
        })
    }
}

/// See [`Store::pending_adjustment`].
#[derive(Debug, Clone)]
pub struct PendingAdjustment {
    pub invoice_id: Option<String>,
    pub invoice_number: Option<String>,
    /// The total the period's invoice effectively says (0 when none was issued).
    pub effective_total: Decimal,
    pub recomputed: Invoice,
    pub lines: Vec<AdjustmentLine>,
}

impl FinanceHandle<'_> {
    /// What `GET /v1/cost/current` said at `t_ms` (issue 12, as-known-at): the period holding
    /// `t_ms` rated from the ledger as the events ingested by then made it
    /// ([`Store::ledger_known_at`]), with the credit balance after the invoices issued by
    /// then. None: no price book applied then.
    pub async fn cost_known_at(
        &self,
        account: &str,
        t_ms: i64,
    ) -> Result<Option<(String, Invoice)>, CloseError> {
        let mut conn = self.pool.acquire().await.map_err(StoreError::from)?;
        let books = self.books(&mut conn).await?;
        let Some(label) = books.1.label_of(t_ms.div_euclid(1000)) else {
            return Ok(None);
        };
        let Some((book, period)) = books.1.for_period(&mut conn, &label).await? else {
            return Ok(None);
        };
        let mut issued = Vec::new();
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_account_invoices.sql"
        ))
        .bind(account)
        .fetch_all(&mut *conn)
        .await?
        {
            if r.get::<i64, _>("issued_at_ms") <= t_ms {
                let label: String = r.get("period");
                issued.push(issued_credit(
                    &label,
                    &parse_invoice(&r.get::<String, _>("body"))?,
                ));
            }
        }
        let platform =
            crate::ledger::rental::load_platform_known_at(&mut conn, Known::ByTime(t_ms)).await?;
        drop(conn);
        let mut ledgers = HashMap::new();
        for id in member_ids(&book, &payer_id(&book, account)) {
            let ledger = self.log().ledger_known_at(&id, Known::ByTime(t_ms)).await?;
            ledgers.insert(id, ledger);
        }
        match rate_domain(&book, &period.label, &platform, account, &ledgers, &issued)? {
            DomainRated::Rated(rated) => Ok(Some((label, rated.invoice))),
            DomainRated::UnknownRegion(_) => Ok(None),
        }
    }
}

impl Store {
    /// Recomputes `account`'s invoices of the `closed` periods (time order) that start before
    /// `until` (those it was a payer in: section 18), over its members' `ledgers` (by domain
    /// id, see [`load_members`]), each against what it effectively says, and answers the
    /// adjustment lines, the recomputations that become effective and the effective invoices
    /// after them. Unpriced usage found on the way is added to `unpriced`.
    pub(crate) async fn adjust_account(
        &self,
        conn: &mut dyn Conn,
        (closed, platform): (&[ClosedPeriod], &Platform),
        account: &str,
        ledgers: &HashMap<String, AccountLedger>,
        until: i64,
        unpriced: &mut Vec<Unpriced>,
    ) -> Result<Adjusted, CloseError> {
        let mut effective = self.effective_invoices(conn, account).await?;
        let starts: BTreeMap<String, i64> = closed
            .iter()
            .map(|c| (c.period.label.clone(), c.period.start))
            .collect();
        let mut out = Adjusted::default();
        let payer = Domain::parse(account).account;
        for c in closed
            .iter()
            .filter(|c| c.period.start < until && c.book.is_payer(payer))
        {
            let label = c.period.label.as_str();
            let earlier = credits_before(&effective, &starts, c.period.start);
            let rated = match rate_domain(&c.book, label, platform, account, ledgers, &earlier)? {
                DomainRated::Rated(r) => *r,
                DomainRated::UnknownRegion(u) => {
                    unpriced.extend(u);
                    continue;
                }
            };
            unpriced.extend(rated.unpriced);
            let was = effective.get(label);
            if !needs_adjustment(was.map(|e| &e.invoice), &rated.invoice) {
                continue;
            }
            let (id, number) = was.map_or((None, None), |e| (e.id.clone(), e.number.clone()));
            for (component, amount) in differences(was.map(|e| &e.invoice), &rated.invoice) {
                out.lines.push(AdjustmentLine {
                    period: label.to_string(),
                    invoice_id: id.clone(),
                    invoice_number: number.clone(),
                    component,
                    amount,
                });
            }
            out.recomputed
                .push((label.to_string(), rated.invoice.clone()));
            effective.insert(
                label.to_string(),
                Effective {
                    id,
                    number,
                    invoice: rated.invoice,
                },
            );
        }
        out.effective = effective;
        Ok(out)
    }

    /// Every closed period with its price book version and the account terms that re-rate it
    /// now, in time order (see [`Store::closed_periods_at`]).
    pub(crate) async fn closed_periods(&self, conn: &mut dyn Conn) -> Result<Vec<ClosedPeriod>> {
        self.closed_periods_at(conn, None).await
    }

    /// Every closed period with its price book version, in time order, each with the account
    /// terms that re-rate it as of term revision `as_of` (None: the latest): the terms it was
    /// closed with, and of the changes since, those of terms dated into it (issue 24.1,
    /// [`billing_core::term_changes::terms_for_closed_period`]). A period closed at `as_of`
    /// itself gets exactly the terms it was closed with.
    pub(crate) async fn closed_periods_at(
        &self,
        conn: &mut dyn Conn,
        as_of: Option<i64>,
    ) -> Result<Vec<ClosedPeriod>> {
        let rows = crate::conn::db::query(include_str!(
            "../../queries/shared/select_closed_period_versions.sql"
        ))
        .fetch_all(&mut *conn)
        .await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let history = crate::pricing::terms_merge::TermHistory::load(conn).await?;
        let current = history.at(as_of.unwrap_or(i64::MAX));
        let mut at_rev: BTreeMap<i64, Vec<AccountTerm>> = BTreeMap::new();
        // One merged book per (version, terms): periods sharing them share it.
        let mut merged: Vec<(i64, Vec<AccountTerm>, Arc<PriceBook>)> = Vec::new();
        let mut raw: BTreeMap<i64, Arc<PriceBook>> = BTreeMap::new();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let period = Period {
                label: r.get("period"),
                start: r.get("start_s"),
                end: r.get("end_s"),
            };
            let version: i64 = r.get("pricebook_version");
            let terms_rev: Option<i64> = r.get("terms_rev");
            let book = match raw.get(&version) {
                Some(b) => b.clone(),
                None => {
                    let b = self.raw_version(conn, version).await?.ok_or_else(|| {
                        StoreError::Corrupt(format!(
                            "period {} was closed with price book version {version}, which is not stored",
                            period.label
                        ))
                    })?;
                    raw.insert(version, b.clone());
                    b
                }
            };
            let at_close = match terms_rev {
                Some(rev) => at_rev.entry(rev).or_insert_with(|| history.at(rev)),
                None => &current,
            };
            let terms =
                terms_for_closed_period(&book, (period.start, period.end), at_close, &current);
            let book = match merged.iter().find(|(v, t, _)| *v == version && *t == terms) {
                Some((_, _, b)) => b.clone(),
                None => {
                    let b = match crate::pricing::terms_merge::merge_lenient(&book, &terms) {
                        Some(m) => Arc::new(m),
                        None => book,
                    };
                    merged.push((version, terms, b.clone()));
                    b
                }
            };
            // Issue 27: the organization of the period, after the moves from its month.
            let book = crate::pricing::moves::in_period(book, &period.label);
            out.push(ClosedPeriod { book, period });
        }
        Ok(out)
    }

    /// The account's effective invoices of closed periods, by period label.
    pub(crate) async fn effective_invoices(
        &self,
        conn: &mut dyn Conn,
        account: &str,
    ) -> Result<BTreeMap<String, Effective>> {
        let mut out = BTreeMap::new();
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_account_invoices.sql"
        ))
        .bind(account)
        .fetch_all(&mut *conn)
        .await?
        {
            out.insert(
                r.get::<String, _>("period"),
                Effective {
                    id: Some(r.get("id")),
                    number: Some(r.get("number")),
                    invoice: parse_invoice(&r.get::<String, _>("body"))?,
                },
            );
        }
        for r in crate::conn::db::query(include_str!(
            "../../queries/shared/select_account_adjustments.sql"
        ))
        .bind(account)
        .fetch_all(&mut *conn)
        .await?
        {
            let label: String = r.get("period");
            let invoice = parse_invoice(&r.get::<String, _>("body"))?;
            match out.get_mut(&label) {
                Some(e) => e.invoice = invoice,
                None => {
                    out.insert(
                        label,
                        Effective {
                            id: None,
                            number: None,
                            invoice,
                        },
                    );
                }
            }
        }
        Ok(out)
    }
}

/// Rates the billing domain `id` (section 19: an account, or `account@region` with the
/// region's book, currency and period; section 18: a payer, over its members' `ledgers` by
/// domain id) for the month `label` of `book`, with the credit left after `issued` (the
/// effective invoices before it): what every rating of an adjustment, an as-known-at cost
/// and `verify` goes through.
pub(crate) fn rate_domain(
    book: &PriceBook,
    label: &str,
    platform: &Platform,
    id: &str,
    ledgers: &HashMap<String, AccountLedger>,
    issued: &[IssuedCredit],
) -> Result<DomainRated, CloseError> {
    let domain = Domain::parse(id);
    Domains::new(book, platform)
        .rate_members(
            domain,
            label,
            &members_with(book, id, ledgers),
            |rbook, period| credit_balance(rbook, domain.account, issued, period),
        )
        .map_err(|e| CloseError::of_month(label, e))
}
