//! The parsed price book, [`PriceBook`], and its parser from the TOML tree.

use super::model::{PriceBookError, Reservation, Result, Sku};
use super::regions::{self, AccountSettings, Pricing, Region};
use super::terms::{Charge, Credit, Discount, Package, Sla, Subscription};
use super::terms_parse;
use super::walk::{instant, invalid, only_keys};
use crate::common::timestamp::Timestamp;
use crate::pricing::offpeak::OffpeakWindow;
use crate::pricing::tiers::Tier;
use chrono_tz::Tz;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use toml::{Table, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceBook {
    pub currency: String,
    pub timezone: Tz,
    pub effective_from: Option<Timestamp>,
    pub skus: BTreeMap<String, Sku>,
    pub offpeak: Vec<OffpeakWindow>,
    /// Per dest: graduated tiers with bounds in GB and rates per GB.
    pub egress: BTreeMap<String, Vec<Tier>>,
    pub tax_rate: Decimal,
    pub reservations: Vec<Reservation>,
    /// Per account: the summed percent of its plain discounts (`P` of section 16).
    pub discounts: BTreeMap<String, Decimal>,
    /// Every discount, in price book order (section 16: scoped, dated and capped ones too).
    pub discount_terms: Vec<Discount>,
    /// Per account: summed credits.
    pub credits: BTreeMap<String, Decimal>,
    /// Every credit, in price book order (section 12: `id`, `from`, `to`).
    pub credit_terms: Vec<Credit>,
    /// Section 10.
    pub sla: Sla,
    /// Section 12.
    pub packages: Vec<Package>,
    /// Section 13.
    pub subscriptions: Vec<Subscription>,
    /// Section 20.
    pub charges: Vec<Charge>,
    /// Section 19: the regions besides home (the top level), by name.
    pub regions: BTreeMap<String, Region>,
    /// Sections 18 and 19: `[[accounts]]`, in price book order.
    pub account_settings: Vec<AccountSettings>,
    /// Section 18: who pays for whom (from `[[accounts]]`, before any of their `moves`).
    pub org: super::org::Org,
    /// Issue 27: the organization from each month a move of `[[accounts]]` starts, in order
    /// ([`PriceBook::at_period`] picks one).
    pub org_moves: Vec<(String, super::org::Org)>,
    /// Section 18: the tag whose values split payer invoices into (member, value) cells.
    pub allocation_tag: Option<String>,
}

impl PriceBook {
    pub fn from_toml(text: &str) -> Result<PriceBook> {
        let table: Table = text
            .parse()
            .map_err(|e: toml::de::Error| PriceBookError::Syntax(e.to_string().trim().into()))?;
        parse(&table)
    }

    /// Accounts named by account terms (reservations, discounts, credits).
    pub fn accounts(&self) -> BTreeSet<&str> {
        let mut a: BTreeSet<&str> = self
            .reservations
            .iter()
            .map(|r| r.account.as_str())
            .collect();
        a.extend(self.discounts.keys().map(String::as_str));
        a.extend(self.discount_terms.iter().map(|d| d.account.as_str()));
        a.extend(self.credits.keys().map(String::as_str));
        a.extend(self.packages.iter().map(|p| p.account.as_str()));
        a.extend(self.subscriptions.iter().map(|s| s.account.as_str()));
        a.extend(self.charges.iter().map(|c| c.account.as_str()));
        a.extend(self.account_settings.iter().map(|x| x.id.as_str()));
        a
    }

    /// Sum of the account's credits that apply to the period `[start, end)` (section 12), at
    /// their full amounts (as `gpubill rate` starts them). Equals [`PriceBook::credit_total`]
    /// when no credit has `from` or `to`.
    pub fn credit_total_for(&self, account: &str, start: i64, end: i64) -> Decimal {
        self.credit_terms
            .iter()
            .filter(|c| c.account == account && c.applies_to(start, end))
            .map(|c| c.amount)
            .sum()
    }

    /// Whether the book uses a feature of part 3 (sections 15 to 21): its invoices then name
    /// their region (`null` for home, section 19). Without one, invoices are exactly those of
    /// parts 1 and 2.
    pub fn uses_part3(&self) -> bool {
        !self.charges.is_empty()
            || !self.regions.is_empty()
            || !self.account_settings.is_empty()
            || self.allocation_tag.is_some()
            || self.skus.values().any(|s| s.increment_seconds.is_some())
            || self.has_regional_terms()
            || self.subscriptions.iter().any(|s| {
                s.cycle == super::terms::Cycle::Year
                    || s.auto_renew
                    || s.end.is_some()
                    || s.refund != super::terms::Refund::None
            })
            || self
                .discount_terms
                .iter()
                .any(|d| d.id.is_some() || !d.is_plain())
    }

    /// Whether any account term names a region (section 19).
    pub fn has_regional_terms(&self) -> bool {
        self.reservations.iter().any(|r| r.region.is_some())
            || self.packages.iter().any(|p| p.region.is_some())
            || self.subscriptions.iter().any(|s| s.region.is_some())
            || self.credit_terms.iter().any(|c| c.region.is_some())
            || self.charges.iter().any(|c| c.region.is_some())
            || self.discount_terms.iter().any(|d| d.region.is_some())
    }

    /// Section 19: the book that rates `region` (`None`: home) as a book of its own: that
    /// region's currency, timezone, skus, off-peak windows, egress and tax, and the account
    /// terms of that region only (plain discounts apply in every region; `[sla]` and the
    /// accounts' settings stay). Borrowed for home when no term names a region. `None` for a
    /// region the book does not name.
    pub fn for_region(&self, region: Option<&str>) -> Option<std::borrow::Cow<'_, PriceBook>> {
        use std::borrow::Cow;
        let Some(name) = region else {
            if !self.has_regional_terms() {
                return Some(Cow::Borrowed(self));
            }
            return Some(Cow::Owned(self.terms_in(None)));
        };
        let r = self.regions.get(name)?;
        let mut book = self.terms_in(Some(name));
        book.currency = r.currency.clone();
        book.timezone = r.timezone;
        book.skus = r.skus.clone();
        book.offpeak = r.offpeak.clone();
        book.egress = r.egress.clone();
        book.tax_rate = r.tax_rate;
        Some(Cow::Owned(book))
    }

    /// A copy with only the account terms of `region` (plain discounts in every region).
    fn terms_in(&self, region: Option<&str>) -> PriceBook {
        let here = |r: &Option<String>| r.as_deref() == region;
        let mut book = self.clone();
        book.reservations.retain(|r| here(&r.region));
        book.packages.retain(|p| here(&p.region));
        book.subscriptions.retain(|s| here(&s.region));
        book.credit_terms.retain(|c| here(&c.region));
        book.charges.retain(|c| here(&c.region));
        book.discount_terms
            .retain(|d| d.is_plain() || here(&d.region));
        book.credits.clear();
        for c in &book.credit_terms {
            *book.credits.entry(c.account.clone()).or_default() += c.amount;
        }
        book
    }

    /// Section 19: the accounts with a term in `region` (`None`: home, where plain discounts
    /// and `[[accounts]]` count too).
    pub fn accounts_in(&self, region: Option<&str>) -> BTreeSet<&str> {
        let here = |r: &Option<String>| r.as_deref() == region;
        let mut a: BTreeSet<&str> = BTreeSet::new();
        a.extend(
            self.reservations
                .iter()
                .filter(|x| here(&x.region))
                .map(|x| x.account.as_str()),
        );
        a.extend(
            self.packages
                .iter()
                .filter(|x| here(&x.region))
                .map(|x| x.account.as_str()),
        );
        a.extend(
            self.subscriptions
                .iter()
                .filter(|x| here(&x.region))
                .map(|x| x.account.as_str()),
        );
        a.extend(
            self.credit_terms
                .iter()
                .filter(|x| here(&x.region))
                .map(|x| x.account.as_str()),
        );
        a.extend(
            self.charges
                .iter()
                .filter(|x| here(&x.region))
                .map(|x| x.account.as_str()),
        );
        a.extend(
            self.discount_terms
                .iter()
                .filter(|d| {
                    if d.is_plain() {
                        region.is_none()
                    } else {
                        here(&d.region)
                    }
                })
                .map(|x| x.account.as_str()),
        );
        if region.is_none() {
            a.extend(self.discounts.keys().map(String::as_str));
            a.extend(self.account_settings.iter().map(|x| x.id.as_str()));
        }
        a
    }

    /// Section 18: the account's payer (itself unless `[[accounts]]` says its parent pays).
    pub fn payer_of<'a>(&'a self, account: &'a str) -> &'a str {
        self.org.payer_of(account)
    }

    /// Section 18: whether the account pays for itself (gets invoices).
    pub fn is_payer(&self, account: &str) -> bool {
        self.org.is_payer(account)
    }

    /// Section 18: the accounts `payer` pays for, itself included, sorted.
    pub fn members_of<'a>(&'a self, payer: &'a str) -> Vec<&'a str> {
        self.org.members_of(payer)
    }

    /// The book as it rates period `label` (`YYYY-MM`): its organization after every move
    /// of `[[accounts]]` from that month or earlier (issue 27). Borrowed when no move has
    /// started by then.
    pub fn at_period(&self, label: &str) -> std::borrow::Cow<'_, PriceBook> {
        match super::org_moves::org_in(&self.org_moves, label) {
            None => std::borrow::Cow::Borrowed(self),
            Some(org) => {
                let mut book = self.clone();
                book.org = org.clone();
                std::borrow::Cow::Owned(book)
            }
        }
    }

    /// Whether some account moves (then the organization depends on the period).
    pub fn has_moves(&self) -> bool {
        !self.org_moves.is_empty()
    }

    /// Section 18: checks the organization against the account terms again (after terms
    /// were merged in) and keeps it.
    pub(super) fn reorganize(&mut self) -> Result<()> {
        let org = super::org::build(&self.account_settings).map_err(|p| p.in_book())?;
        super::org::check_terms(&org, &self.term_lists()).map_err(|p| p.in_book())?;
        self.org_moves =
            super::org_moves::orgs_after_moves(&self.account_settings, &self.term_lists())?;
        self.org = org;
        Ok(())
    }

    /// The terms section 18 checks.
    pub(super) fn term_lists(&self) -> super::org::TermLists<'_> {
        super::org::TermLists {
            discounts: &self.discount_terms,
            credits: &self.credit_terms,
            packages: &self.packages,
            subscriptions: &self.subscriptions,
            charges: &self.charges,
        }
    }

    /// Section 19: the account's own timezone (`[[accounts]]`), if it has one.
    pub fn account_timezone(&self, account: &str) -> Option<Tz> {
        self.account_settings
            .iter()
            .find(|a| a.id == account)
            .and_then(|a| a.timezone)
    }

    /// Section 16: the account's discounts other than plain ones that apply to the period
    /// `[start, end)`, in price book order.
    pub fn scoped_discounts(&self, account: &str, start: i64, end: i64) -> Vec<&Discount> {
        self.discount_terms
            .iter()
            .filter(|d| d.account == account && !d.is_plain() && d.applies_to(start, end))
            .collect()
    }

    pub fn discount_percent(&self, account: &str) -> Decimal {
        self.discounts.get(account).copied().unwrap_or_default()
    }

    /// Whether this version rates a period starting at `period_start` (Unix seconds): its
    /// `effective_from` is at or before that instant, compared exactly (a version effective at
    /// `00:00:00.5` does not rate the period starting at `00:00:00`).
    pub fn applies_to_period_starting(&self, period_start: i64) -> bool {
        self.effective_from
            .is_none_or(|t| t <= Timestamp::from_secs(period_start))
    }

    pub fn credit_total(&self, account: &str) -> Decimal {
        self.credits.get(account).copied().unwrap_or_default()
    }
}

// ---- sections ---------------------------------------------------------------------------

fn parse(root: &Table) -> Result<PriceBook> {
    only_keys(
        root,
        "",
        &[
            "currency",
            "timezone",
            "effective_from",
            "skus",
            "offpeak",
            "egress",
            "tax",
            "reservations",
            "discounts",
            "credits",
            "sla",
            "packages",
            "subscriptions",
            "charges",
            "regions",
            "accounts",
            "allocation_tag",
        ],
    )?;
    let home = regions::parse_pricing(root, "", true)?;
    let Region {
        currency,
        timezone,
        skus,
        offpeak,
        egress,
        tax_rate,
    } = home;
    let effective_from = instant(root, "", "effective_from")?;
    let regions = regions::parse_regions(root)?;
    let account_settings = regions::parse_accounts(root)?;
    let pricing = Pricing {
        home: &skus,
        regions: &regions,
    };
    let reservations = terms_parse::parse_reservations(root, &pricing)?;
    let discount_terms = terms_parse::parse_discounts(root, &pricing)?;
    // Per account, `P`: the plain discounts' percents (section 16).
    let mut discounts: BTreeMap<String, Decimal> = BTreeMap::new();
    for d in discount_terms.iter().filter(|d| d.is_plain()) {
        *discounts.entry(d.account.clone()).or_default() += d.percent;
    }
    for (account, total) in &discounts {
        if *total > Decimal::ONE_HUNDRED {
            return invalid(
                "discounts",
                &Value::String(account.clone()),
                format!("the discounts of this account add up to {total} percent, over 100"),
            );
        }
    }
    let credit_terms = terms_parse::parse_credits(root, &pricing)?;
    let mut credits: BTreeMap<String, Decimal> = BTreeMap::new();
    for c in &credit_terms {
        *credits.entry(c.account.clone()).or_default() += c.amount;
    }
    let sla = terms_parse::parse_sla(root)?;
    let packages = terms_parse::parse_packages(root, &pricing)?;
    let subscriptions = terms_parse::parse_subscriptions(root, &pricing)?;
    let charges = terms_parse::parse_charges(root, &pricing)?;
    let term_lists = super::org::TermLists {
        discounts: &discount_terms,
        credits: &credit_terms,
        packages: &packages,
        subscriptions: &subscriptions,
        charges: &charges,
    };
    let org = super::org::validate(&account_settings, &term_lists)?;
    let org_moves = super::org_moves::orgs_after_moves(&account_settings, &term_lists)?;
    let allocation_tag = super::walk::string(root, "", "allocation_tag")?.map(str::to_string);
    Ok(PriceBook {
        currency,
        timezone,
        effective_from,
        skus,
        offpeak,
        egress,
        tax_rate,
        reservations,
        discounts,
        discount_terms,
        credits,
        credit_terms,
        sla,
        packages,
        subscriptions,
        charges,
        regions,
        account_settings,
        org,
        org_moves,
        allocation_tag,
    })
}
