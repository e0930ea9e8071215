//! Rating one account for one period: billing-semantics.md sections 4 and 8 to 13, assembled
//! into an invoice by section 5.
//!
//! [`rate_account`] reads like the rules, each in its module: lease states split the keys first
//! ([`crate::rental::states`]), then on-demand usage with reservations, subscriptions, packages,
//! off-peak and tiers ([`crate::pricing::ondemand`]), the minimum charge
//! ([`crate::pricing::minimum`]), the account terms' own lines (commitments, subscription cycles,
//! package prices), spot usage with curves and interruptions ([`crate::pricing::spot`]), egress
//! with counters ([`crate::pricing::egress`], [`crate::rental::counters`]) and SLA compensation
//! ([`crate::rental::sla`]).
//! The on-demand, terms and egress lines are built in [`crate::pricing::rule_lines`]; this
//! module decides how the keys are read, assembles the invoice and rates many accounts.

use crate::common::money::show_quantity;
use crate::events::event::Class;
use crate::finance::credits::CreditPool;
use crate::ledger::AccountLedger;
use crate::ledger::meter::Meter;
use crate::pricing::allocation::Allocator;
use crate::pricing::egress::{bytes_in, gigabytes};
use crate::pricing::invoice::{Invoice, Line, LineDiscount, Terms, Unit};
use crate::pricing::magnitude::check_magnitude;
use crate::pricing::ondemand::SkuUsage;
use crate::pricing::period::Period;
use crate::pricing::pricebook::{PriceBook, Subscription};
pub use crate::pricing::rating_context::{RateMonthError, RatingContext, RatingError, Unpriced};
use crate::pricing::rule_lines::{Mine, egress_lines_of, on_demand_lines, term_lines};
use crate::pricing::subscriptions::started_bounds_until;
use crate::rental::states::split_keys;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};

/// An account's invoice and what could not be rated in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rated {
    pub invoice: Invoice,
    pub unpriced: Vec<Unpriced>,
    /// Section 18: the invoice's allocation to (member, tag value) cells, for a payer with
    /// members besides itself or a book with an `allocation_tag` (the invoice carries it only
    /// with the tag; without, every cell's tag is `""`: what each member costs, which an
    /// engine's budgets and allocation reports read).
    pub allocation: Option<Vec<crate::pricing::invoice::AllocationRow>>,
    /// Section 18, with an allocation: per member, per sku, its share of what `gpu_hours`
    /// quotas measure ([`Allocator::usage_shares`]).
    pub usage_shares: BTreeMap<String, BTreeMap<String, Decimal>>,
}

impl Rated {
    /// Section 18: what `member` costs on this (its payer's) invoice and its unit-seconds per
    /// sku, from the allocation (the invoice's own figures for a payer rated alone).
    pub fn member_measure(&self, member: &str) -> (Decimal, BTreeMap<String, Decimal>) {
        match &self.allocation {
            None => (
                self.invoice.total,
                crate::quota::unit_seconds(&self.invoice.lines),
            ),
            Some(rows) => (
                rows.iter()
                    .filter(|r| r.account == member)
                    .map(|r| r.total)
                    .sum(),
                self.usage_shares.get(member).cloned().unwrap_or_default(),
            ),
        }
    }
}

pub use crate::pricing::magnitude::MAX_AMOUNT;

/// An account's lines before the totals, and the SLA compensation earned in the period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountLines {
    pub lines: Vec<Line>,
    pub unpriced: Vec<Unpriced>,
    /// Section 10: added to the credit balance.
    pub compensation: Decimal,
    /// Section 17: per subscription id (sorted), the refund credited in the period, added to
    /// the credit balance after the compensation.
    pub refunds: Vec<(String, Decimal)>,
}

impl AccountLines {
    /// What the period adds to the credit balance: SLA compensation and refunds.
    pub fn credited(&self) -> Decimal {
        self.compensation + self.refunds.iter().map(|(_, a)| *a).sum::<Decimal>()
    }
}

/// Rates `account` (whose ledger may be empty) with `credit_balance` still available from
/// credits and earlier compensation; the SLA compensation earned in this period (section 10)
/// and the subscription refunds of the period (section 17) are added to it. The account is
/// rated alone: [`rate_payer`] rates a payer with its members (section 18).
pub fn rate_account(
    ctx: &RatingContext<'_>,
    account: &str,
    ledger: Option<&AccountLedger>,
    credit_balance: Decimal,
) -> Result<Rated, RatingError> {
    rate_payer(ctx, account, &[(account, ledger)], credit_balance)
}

/// Section 18: rates `payer` for its `members` (each with its ledger, the payer among them)
/// as one account: their keys stay distinct ([`AccountLedger::absorb_member`]), their terms
/// pool (the context's terms of a payer are its members'), and with the book's
/// `allocation_tag` the invoice carries its allocation to (member, tag value) cells.
pub fn rate_payer(
    ctx: &RatingContext<'_>,
    payer: &str,
    members: &[(&str, Option<&AccountLedger>)],
    credit_balance: Decimal,
) -> Result<Rated, RatingError> {
    let ledger = members_ledger(payer, members);
    let mut alloc = allocator(ctx, payer, members);
    let lines = account_lines_traced(ctx, payer, ledger.as_deref(), alloc.as_mut(), members)?;
    let balance = credit_balance + lines.credited();
    Ok(assemble(ctx, payer, lines, balance, alloc))
}

/// Section 18: the allocator of `payer`'s invoice when the book has an `allocation_tag` or
/// the payer has members besides itself (then by member alone, every tag `""`).
fn allocator(
    ctx: &RatingContext<'_>,
    payer: &str,
    members: &[(&str, Option<&AccountLedger>)],
) -> Option<Allocator> {
    let tag = ctx.book.allocation_tag.as_deref();
    (tag.is_some() || members.len() > 1).then(|| Allocator::new(payer, tag, members))
}

/// Section 18: the ledger a payer is rated on: its own when it has no other member (borrowed,
/// exactly as before section 18), else every member's absorbed into one, each lease prefixed
/// with its member so that keys never merge.
pub fn members_ledger<'l>(
    payer: &str,
    members: &[(&str, Option<&'l AccountLedger>)],
) -> Option<std::borrow::Cow<'l, AccountLedger>> {
    use std::borrow::Cow;
    if let [(only, ledger)] = members
        && *only == payer
    {
        return ledger.map(Cow::Borrowed);
    }
    let mut merged = AccountLedger::new();
    let mut any = false;
    for (member, ledger) in members {
        if let Some(l) = ledger {
            merged.absorb_member(member, l);
            any = true;
        }
    }
    any.then_some(Cow::Owned(merged))
}

fn assemble(
    ctx: &RatingContext<'_>,
    account: &str,
    lines: AccountLines,
    balance: Decimal,
    alloc: Option<Allocator>,
) -> Rated {
    let book = ctx.book;
    let terms = Terms {
        discount_percent: book.discount_percent(account),
        credit_balance: balance,
        tax_rate: book.tax_rate,
    };
    let period = ctx.period.to_json();
    let scoped_terms = ctx
        .terms_of(account)
        .scoped_discounts(ctx.period.start, ctx.period.end);
    let scoped: Vec<&dyn LineDiscount> = scoped_terms
        .iter()
        .map(|d| *d as &dyn LineDiscount)
        .collect();
    let mut invoice =
        Invoice::assemble_with(account, &book.currency, period, lines.lines, terms, &scoped);
    if book.uses_part3() {
        invoice.region = Some(None);
    }
    let usage_shares = alloc
        .as_ref()
        .map(|a| a.usage_shares(&invoice.lines))
        .unwrap_or_default();
    let allocation = alloc.map(|a| a.finish(&invoice, terms.discount_percent, &scoped_terms));
    if book.allocation_tag.is_some() {
        invoice.allocation = allocation.clone();
    }
    Rated {
        invoice,
        unpriced: lines.unpriced,
        allocation,
        usage_shares,
    }
}

/// Every line of the account for the period, in rule order (sorted later by the invoice).
pub fn account_lines(
    ctx: &RatingContext<'_>,
    account: &str,
    ledger: Option<&AccountLedger>,
) -> Result<AccountLines, RatingError> {
    account_lines_traced(ctx, account, ledger, None, &[])
}

/// [`account_lines`], recording each line's weights in `alloc` (section 18) when given;
/// `members` are the payer's members with their own ledgers (egress reads them there).
fn account_lines_traced(
    ctx: &RatingContext<'_>,
    account: &str,
    ledger: Option<&AccountLedger>,
    mut alloc: Option<&mut Allocator>,
    members: &[(&str, Option<&AccountLedger>)],
) -> Result<AccountLines, RatingError> {
    let empty = AccountLedger::new();
    let ledger = ledger.unwrap_or(&empty);
    let terms = ctx.terms_of(account);
    let subscriptions: Vec<(&Subscription, Vec<i64>)> = terms
        .subscriptions
        .iter()
        .map(|&s| {
            let bounds = started_bounds_until(s, ctx.book.timezone, ctx.period.end);
            (s, bounds)
        })
        .collect();
    let summed = crate::pricing::summed::summed(ctx, ledger, alloc.is_some());
    let summed_usage = summed.map(|s| s.usage_bound);
    check_magnitude(ctx, &terms, &subscriptions, (account, ledger), summed_usage)?;
    let summed = summed.map(|s| s.profiles);
    let mut lines = Vec::new();
    let mut unpriced = Vec::new();
    // Rated from the keys' sum, no rule reads a key alone: no key is split.
    let keys = match summed {
        Some(_) => Vec::new(),
        None => split_keys(ctx.book, ledger, &ctx.period, &mut lines),
    };
    let mine = Mine {
        account,
        terms: &terms,
        subscriptions: &subscriptions,
        summed,
    };
    if let Some(a) = alloc.as_deref_mut() {
        a.states(ctx, ledger, &keys);
        a.spot(ctx, ledger, &keys);
        a.egress(members, &ctx.period);
    }
    on_demand_lines(
        ctx,
        &mine,
        &keys,
        &mut lines,
        &mut unpriced,
        alloc.as_deref_mut(),
    );
    let refunds = term_lines(ctx, &mine, &mut lines, alloc);
    crate::pricing::spot::spot_lines(ctx, account, ledger, &keys, &mut lines, &mut unpriced);
    egress_lines_of(ctx, account, ledger, &mut lines, &mut unpriced)?;
    let compensation = crate::rental::sla::sla_lines(ctx, ledger, &mut lines);
    Ok(AccountLines {
        lines,
        unpriced,
        compensation,
        refunds,
    })
}

/// Every payer to invoice: the payers of the accounts named by an accepted event or by the
/// price book's account terms, sorted; or only `only`.
fn accounts_of<'m>(
    book: &'m PriceBook,
    meter: &'m Meter,
    only: Option<&'m str>,
) -> BTreeSet<&'m str> {
    if let Some(one) = only {
        return BTreeSet::from([one]);
    }
    let mut accounts: BTreeSet<&str> = book
        .accounts()
        .into_iter()
        .map(|a| book.payer_of(a))
        .collect();
    accounts.extend(meter.accounts().map(|(a, _)| book.payer_of(a)));
    accounts
}

/// Section 18: the members of `payer` (itself included) with their ledgers in `meter` at
/// home.
fn home_members<'m>(
    book: &'m PriceBook,
    meter: &'m Meter,
    payer: &'m str,
) -> Vec<(&'m str, Option<&'m AccountLedger>)> {
    book.members_of(payer)
        .into_iter()
        .map(|m| (m, meter.account(m)))
        .collect()
}

/// Rates every payer of the accounts named by an accepted event or by the price book's
/// account terms (sorted by account), or only `only`, in the home region. Credits start from
/// their full amounts, those that apply to the period (as `gpubill rate`), and only the
/// compensation earned in the period is credited. [`rate_month`] adds the regions and account
/// timezones of section 19.
pub fn rate_all(
    book: &PriceBook,
    period: Period,
    meter: &Meter,
    only: Option<&str>,
) -> Result<Vec<Rated>, RatingError> {
    let home = book
        .for_region(None)
        .unwrap_or(std::borrow::Cow::Borrowed(book));
    let book = &*home;
    let ctx = RatingContext::with_platform(book, period, meter.platform()).indexed();
    accounts_of(book, meter, only)
        .into_iter()
        .map(|a| {
            let credit = ctx
                .terms_of(a)
                .credit_total_for(ctx.period.start, ctx.period.end);
            rate_payer(&ctx, a, &home_members(book, meter, a), credit)
        })
        .collect()
}

/// Rates `account` (a payer, with its members: section 18) over consecutive `periods` (in
/// time order), carrying credit balances from one to the next: expiring credits, SLA
/// compensation and subscription refunds, and open credits drawn in the order of sections
/// 12 and 17 ([`CreditPool`]).
pub fn rate_periods(
    book: &PriceBook,
    periods: &[Period],
    meter: &Meter,
    account: &str,
) -> Result<Vec<Rated>, RatingError> {
    let mut pool = CreditPool::for_account(book, account);
    let members = home_members(book, meter, account);
    let ledger = members_ledger(account, &members);
    let mut out = Vec::new();
    for period in periods {
        let ctx = RatingContext::with_platform(book, period.clone(), meter.platform());
        let mut alloc = allocator(&ctx, account, &members);
        let lines =
            account_lines_traced(&ctx, account, ledger.as_deref(), alloc.as_mut(), &members)?;
        pool.add_compensation(period.start, lines.compensation);
        for (id, amount) in &lines.refunds {
            pool.add_refund(period.start, id, *amount);
        }
        let rated = assemble(&ctx, account, lines, pool.available(period), alloc);
        pool.draw(period, rated.invoice.credit);
        out.push(rated);
    }
    Ok(out)
}

/// What `gpubill rate` gives for one month (section 19): one invoice per account and region,
/// sorted by account then region (home first, then by name), and the usage of regions the
/// price book does not name (unpriced: it gets no invoice, having no currency).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonthRating {
    pub rated: Vec<Rated>,
    pub unpriced: Vec<Unpriced>,
}

/// Section 19: rates the month `label` (`YYYY-MM`) for every account and region, or only the
/// account `only`. An account's invoices are in its regions' currencies, each period the
/// month in the account's timezone (`[[accounts]]`), else the region's; off-peak windows and
/// subscription cycles stay in the region's timezone. A payer (here every account) gets an
/// invoice in a region when it has a `gpu.usage`, `net.egress` or `net.counter` event or a
/// term there (plain discounts count for home only), and at home also when it is named by
/// any other event or by `[[accounts]]` (or by `only`). Credits start from their full
/// amounts; the compensation and refunds of the month are credited in their region.
/// Invoices name their region (`null` for home) when the book uses part 3 or an event names
/// a region; else they are exactly those of [`rate_all`].
pub fn rate_month(
    book: &PriceBook,
    label: &str,
    meter: &Meter,
    only: Option<&str>,
) -> Result<MonthRating, RateMonthError> {
    use std::borrow::Cow;
    use std::collections::HashMap;
    Period::month(label, book.timezone)?;
    // Issue 27: the organization after the moves from this month or earlier.
    let book = &*book.at_period(label);
    if let Some(one) = only
        && !book.is_payer(one)
    {
        return Err(RateMonthError::Rating(RatingError::NotAPayer {
            account: one.to_string(),
            payer: book.payer_of(one).to_string(),
        }));
    }
    let show_region = book.uses_part3() || meter.regions().next().is_some();
    let payer = |a: &'_ str| -> String { book.payer_of(a).to_string() };
    let wanted = |p: &str| only.is_none_or(|o| o == p);
    // (payer, region) of every invoice, in output order.
    let mut jobs: BTreeSet<(String, Option<&str>)> = BTreeSet::new();
    match only {
        Some(one) => {
            jobs.insert((one.to_string(), None));
        }
        None => {
            jobs.extend(book.accounts_in(None).into_iter().map(|a| (payer(a), None)));
            jobs.extend(meter.accounts().map(|(a, _)| (payer(a), None)));
        }
    }
    for region in book.regions.keys().map(String::as_str) {
        let named = book.accounts_in(Some(region)).into_iter();
        let used = meter.accounts_in(region).into_iter();
        jobs.extend(
            named
                .chain(used)
                .map(payer)
                .filter(|p| wanted(p))
                .map(|p| (p, Some(region))),
        );
    }
    let mut books: BTreeMap<Option<&str>, Cow<'_, PriceBook>> = BTreeMap::new();
    let mut platforms = BTreeMap::new();
    // One book per region, built once: a region's copies every term of the book (issue 26:
    // building it for every invoice made rating quadratic in the accounts).
    for region in jobs.iter().map(|(_, r)| *r) {
        if books.contains_key(&region) {
            continue;
        }
        if let Some(b) = book.for_region(region) {
            books.insert(region, b);
            platforms.insert(region, meter.platform().in_region(region));
        }
    }
    // One context per region and timezone of the period, shared by its accounts.
    let mut contexts: HashMap<(Option<&str>, &str), RatingContext<'_>> = HashMap::new();
    let mut rated = Vec::with_capacity(jobs.len());
    for (account, region) in &jobs {
        let (account, region) = (account.as_str(), *region);
        let (Some(rbook), Some(platform)) = (books.get(&region), platforms.get(&region)) else {
            continue;
        };
        let tz = book.account_timezone(account).unwrap_or(rbook.timezone);
        let ctx = match contexts.entry((region, tz.name())) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let period = Period::month(label, tz)?;
                e.insert(RatingContext::with_platform(rbook, period, platform).indexed())
            }
        };
        let credit = ctx
            .terms_of(account)
            .credit_total_for(ctx.period.start, ctx.period.end);
        let ledgers: Vec<(&str, Option<Cow<'_, AccountLedger>>)> = book
            .members_of(account)
            .into_iter()
            .map(|m| (m, meter.account_in(m, region)))
            .collect();
        let members: Vec<(&str, Option<&AccountLedger>)> =
            ledgers.iter().map(|(m, l)| (*m, l.as_deref())).collect();
        let mut r = rate_payer(ctx, account, &members, credit)?;
        if show_region {
            r.invoice.region = Some(region.map(str::to_string));
        }
        for u in &mut r.unpriced {
            u.region = region.map(str::to_string);
        }
        rated.push(r);
    }
    let mut unpriced = Vec::new();
    for region in meter.regions().filter(|r| !book.regions.contains_key(*r)) {
        for account in meter
            .accounts_in(region)
            .into_iter()
            .filter(|a| wanted(book.payer_of(a)))
        {
            let tz = book
                .account_timezone(book.payer_of(account))
                .unwrap_or(book.timezone);
            let period = Period::month(label, tz)?;
            if let Some(ledger) = meter.account_in(account, Some(region)) {
                unpriced.extend(unknown_region(account, region, &ledger, &period));
            }
        }
    }
    Ok(MonthRating { rated, unpriced })
}

/// Section 19: the usage of a region the price book does not name, as unpriced items: per
/// (sku, class) its unit-seconds in the period, per dest its GB (egress and counters).
pub(crate) fn unknown_region(
    account: &str,
    region: &str,
    ledger: &AccountLedger,
    period: &Period,
) -> Vec<Unpriced> {
    let why = "region not in the price book";
    let mut usage: BTreeMap<(&str, Class), Decimal> = BTreeMap::new();
    for (key, runs) in ledger.usage() {
        let used = SkuUsage::Keys(vec![runs]).unit_seconds(period.start, period.end);
        if !used.is_zero() {
            *usage.entry((&key.sku, key.class)).or_default() += used;
        }
    }
    let mut out: Vec<Unpriced> = usage
        .into_iter()
        .map(|((sku, class), used)| Unpriced {
            account: account.to_string(),
            sku: Some(sku.to_string()),
            class: Some(class),
            dest: None,
            quantity: show_quantity(used),
            unit: Unit::UnitSeconds,
            why: why.into(),
            region: Some(region.to_string()),
        })
        .collect();
    let counters = crate::rental::counters::counter_bytes(ledger, period);
    let mut dests: BTreeSet<&str> = ledger.egress().keys().map(String::as_str).collect();
    dests.extend(counters.keys().copied());
    for dest in dests {
        let records = ledger.egress().get(dest).map_or(&[][..], Vec::as_slice);
        let bytes = bytes_in(records, period) + counters.get(dest).copied().unwrap_or(0);
        if let Some(gb) = gigabytes(bytes).filter(|g| !g.is_zero()) {
            out.push(Unpriced {
                account: account.to_string(),
                sku: None,
                class: None,
                dest: Some(dest.to_string()),
                quantity: show_quantity(gb),
                unit: Unit::Gb,
                why: why.into(),
                region: Some(region.to_string()),
            });
        }
    }
    out
}
