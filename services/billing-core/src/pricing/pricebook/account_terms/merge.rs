//! Account terms parsed against a price book ([`PriceBook::parse_account_term`]) and merged
//! into a copy of it ([`PriceBook::with_account_terms`]): a command term replaces the book's
//! own of the same id or follows them, and the organization (section 18) is checked again.

use crate::pricing::pricebook::account_terms::{AccountTerm, ParsedTerm, TermKind, renamed};
use crate::pricing::pricebook::book::PriceBook;
use crate::pricing::pricebook::model::{PriceBookError, Result};
use crate::pricing::pricebook::terms::Discount;
use crate::pricing::pricebook::{org, org_moves, regions, terms_parse};
use rust_decimal::Decimal;
use toml::{Table, Value};

impl PriceBook {
    /// The skus terms may name, by region.
    fn pricing(&self) -> regions::Pricing<'_> {
        regions::Pricing {
            home: &self.skus,
            regions: &self.regions,
        }
    }

    /// Parses one account term with the price book parser's rules, against this book's skus.
    pub fn parse_account_term(&self, term: &AccountTerm) -> Result<ParsedTerm> {
        let mut root = Table::new();
        root.insert(
            term.kind.as_str().into(),
            Value::Array(vec![Value::Table(term.entry()?)]),
        );
        let first = |n: usize| -> Result<()> {
            assert_eq!(n, 1, "one entry parses to one term");
            Ok(())
        };
        let parsed = match term.kind {
            TermKind::Reservations => terms_parse::parse_reservations(&root, &self.pricing())
                .and_then(|mut v| {
                    first(v.len())?;
                    Ok(ParsedTerm::Reservation(v.remove(0)))
                }),
            TermKind::Discounts => {
                terms_parse::parse_discounts(&root, &self.pricing()).and_then(|mut v| {
                    first(v.len())?;
                    Ok(ParsedTerm::Discount(v.remove(0)))
                })
            }
            TermKind::Credits => {
                terms_parse::parse_credits(&root, &self.pricing()).and_then(|mut v| {
                    first(v.len())?;
                    Ok(ParsedTerm::Credit(v.remove(0)))
                })
            }
            TermKind::Packages => {
                terms_parse::parse_packages(&root, &self.pricing()).and_then(|mut v| {
                    first(v.len())?;
                    Ok(ParsedTerm::Package(v.remove(0)))
                })
            }
            TermKind::Subscriptions => terms_parse::parse_subscriptions(&root, &self.pricing())
                .and_then(|mut v| {
                    first(v.len())?;
                    Ok(ParsedTerm::Subscription(v.remove(0)))
                }),
            TermKind::Charges => {
                terms_parse::parse_charges(&root, &self.pricing()).and_then(|mut v| {
                    first(v.len())?;
                    Ok(ParsedTerm::Charge(v.remove(0)))
                })
            }
            TermKind::Accounts => regions::parse_accounts(&root).and_then(|mut v| {
                first(v.len())?;
                Ok(ParsedTerm::Account(v.remove(0)))
            }),
        };
        parsed.map_err(|e| renamed(e, term))
    }

    /// A copy of this book with the account terms merged in (see the module header). Errors
    /// name the term's key and value.
    pub fn with_account_terms(&self, terms: &[AccountTerm]) -> Result<PriceBook> {
        let mut out = self.clone();
        for term in terms {
            let parsed = self.parse_account_term(term)?;
            out.merge_term(term, parsed)?;
            out.check_org_after(term)?;
        }
        out.credits.clear();
        for c in &out.credit_terms {
            *out.credits.entry(c.account.clone()).or_default() += c.amount;
        }
        Ok(out)
    }

    /// The term of `account` with this kind and id in this book, if it has one with an id.
    pub fn account_term(&self, account: &str, kind: TermKind, id: &str) -> Option<ParsedTerm> {
        match kind {
            TermKind::Credits => self
                .credit_terms
                .iter()
                .find(|c| c.account == account && c.id.as_deref() == Some(id))
                .cloned()
                .map(ParsedTerm::Credit),
            TermKind::Packages => self
                .packages
                .iter()
                .find(|p| p.account == account && p.id == id)
                .cloned()
                .map(ParsedTerm::Package),
            TermKind::Subscriptions => self
                .subscriptions
                .iter()
                .find(|s| s.account == account && s.id == id)
                .cloned()
                .map(ParsedTerm::Subscription),
            TermKind::Charges => self
                .charges
                .iter()
                .find(|c| c.account == account && c.id == id)
                .cloned()
                .map(ParsedTerm::Charge),
            TermKind::Accounts => self
                .account_settings
                .iter()
                .find(|a| a.id == account && id == account)
                .cloned()
                .map(ParsedTerm::Account),
            TermKind::Reservations | TermKind::Discounts => None,
        }
    }

    fn merge_term(&mut self, term: &AccountTerm, parsed: ParsedTerm) -> Result<()> {
        match parsed {
            ParsedTerm::Reservation(mut r) => {
                r.index = next_index(self.reservations.iter().map(|r| r.index));
                self.reservations.push(r);
            }
            ParsedTerm::Discount(d) => self.merge_discount(term, d)?,
            ParsedTerm::Credit(mut c) => {
                self.credit_terms
                    .retain(|x| !(x.account == c.account && x.id == c.id));
                c.index = next_index(self.credit_terms.iter().map(|c| c.index));
                self.credit_terms.push(c);
            }
            ParsedTerm::Package(mut p) => {
                self.packages
                    .retain(|x| !(x.account == p.account && x.id == p.id));
                p.index = next_index(self.packages.iter().map(|p| p.index));
                self.packages.push(p);
            }
            ParsedTerm::Subscription(mut s) => {
                self.subscriptions
                    .retain(|x| !(x.account == s.account && x.id == s.id));
                s.index = next_index(self.subscriptions.iter().map(|s| s.index));
                self.subscriptions.push(s);
            }
            ParsedTerm::Charge(mut c) => {
                self.charges
                    .retain(|x| !(x.account == c.account && x.id == c.id));
                c.index = next_index(self.charges.iter().map(|c| c.index));
                self.charges.push(c);
            }
            ParsedTerm::Account(mut a) => {
                self.account_settings.retain(|x| x.id != a.id);
                a.index = next_index(self.account_settings.iter().map(|a| a.index));
                self.account_settings.push(a);
            }
        }
        Ok(())
    }
}

impl PriceBook {
    /// Section 18 after merging `term`: an account's settings must leave a valid organization
    /// (no cycle, at most 8 accounts root to leaf, discounts and credits still on payers, ids
    /// unique per payer); a discount or credit must name a payer; a package, subscription or
    /// charge id must be unique among its payer's members. Errors name the command's term.
    fn check_org_after(&mut self, term: &AccountTerm) -> Result<()> {
        self.check_org_now(term)?;
        if self.has_moves() && term.kind != TermKind::Accounts {
            // Every month a move starts, with this term in (issue 27).
            if let Err(e) = org_moves::orgs_after_moves(&self.account_settings, &self.term_lists())
            {
                return Err(PriceBookError::Invalid {
                    key: format!("{}.account", term.path()),
                    value: format!("{:?}", term.account),
                    message: e.to_string(),
                });
            }
        }
        Ok(())
    }

    /// [`PriceBook::check_org_after`] in the organization before any move.
    fn check_org_now(&mut self, term: &AccountTerm) -> Result<()> {
        let named = |message: String, field: &str| PriceBookError::Invalid {
            key: format!("{}.{field}", term.path()),
            value: format!("{:?}", term.account),
            message,
        };
        match term.kind {
            TermKind::Accounts => {
                if let Err(e) = self.reorganize() {
                    let message = match e {
                        PriceBookError::Invalid { key, message, .. } => {
                            format!("{message} (at {key})")
                        }
                        other => other.to_string(),
                    };
                    return Err(named(message, "parent"));
                }
                Ok(())
            }
            TermKind::Discounts | TermKind::Credits => {
                let account = term.account.as_str();
                if self.is_payer(account) {
                    return Ok(());
                }
                let payer = self.payer_of(account).to_string();
                Err(named(
                    format!(
                        "{} belong to payers: account {account:?} does not pay for itself (its payer is {payer:?})",
                        term.kind.as_str()
                    ),
                    "account",
                ))
            }
            TermKind::Packages | TermKind::Subscriptions | TermKind::Charges => {
                if !self.org.has_members() {
                    return Ok(());
                }
                org::check_terms(&self.org, &self.term_lists()).map_err(|p| {
                    let message = p.message();
                    named(message, "id")
                })
            }
            TermKind::Reservations => Ok(()),
        }
    }

    /// A discount joins the book's discounts (section 16); a plain one also adds its percent
    /// to the account's `P`, which stays at most 100.
    fn merge_discount(&mut self, term: &AccountTerm, mut d: Discount) -> Result<()> {
        if d.is_plain() {
            let (account, percent) = (&d.account, d.percent);
            let total = self.discount_percent(account) + percent;
            if total > Decimal::ONE_HUNDRED {
                return Err(PriceBookError::Invalid {
                    key: format!("{}.percent", term.path()),
                    value: format!("\"{percent}\""),
                    message: format!(
                        "the discounts of account {account:?} would add up to {total} percent, over 100"
                    ),
                });
            }
            self.discounts.insert(account.clone(), total);
        }
        d.index = next_index(self.discount_terms.iter().map(|d| d.index));
        self.discount_terms.push(d);
        Ok(())
    }
}

fn next_index(indices: impl Iterator<Item = usize>) -> usize {
    indices.max().map_or(0, |m| m + 1)
}
