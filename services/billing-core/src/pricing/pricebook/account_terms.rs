//! Account terms given as commands (issue 10: `PUT /v1/admin/accounts/{id}/terms/{kind}/{id}`),
//! merged into a copy of a price book with the price book parser's own rules.
//!
//! A term's body is the price book entry's fields as JSON, without `account` and `id` (both come
//! from the command). It is turned into the TOML entry it stands for and parsed by the same
//! functions as `[[reservations]]`, `[[discounts]]`, `[[credits]]`, `[[packages]]`,
//! `[[subscriptions]]` and `[[charges]]`, so a term is valid as a command exactly when it is
//! valid in a price book. Errors name the key as `{kind}."{term_id}".{field}` and its value.
//!
//! Merging: a command term whose id (credits, packages, subscriptions, charges) equals one of
//! the price book's own terms of the same account replaces it (the command's version wins);
//! every other command term is added after the price book's own, in (account, kind, term_id)
//! order, with the next index (so it draws and orders after the book's terms). A discount joins the book's
//! discounts (section 16: scoped, dated and capped ones too); a plain one adds its percent to
//! the account's plain price book discounts, and that sum stays at most 100.

use super::book::PriceBook;
use super::model::{PriceBookError, Reservation, Result};
use super::terms::{Charge, Credit, Discount, Package, Subscription};
use super::terms_parse;
use super::walk::quote_key;
use rust_decimal::Decimal;
use serde_json::Value as Json;
use toml::{Table, Value};

/// The kinds of account terms (the path segment of the route, the price book's array name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TermKind {
    Reservations,
    Discounts,
    Credits,
    Packages,
    Subscriptions,
    /// Section 20: one-off charges.
    Charges,
    /// Section 19: an account's settings (`[[accounts]]`: its `timezone`), term id = the
    /// account's id.
    Accounts,
}

impl TermKind {
    pub const ALL: [TermKind; 7] = [
        TermKind::Reservations,
        TermKind::Discounts,
        TermKind::Credits,
        TermKind::Packages,
        TermKind::Subscriptions,
        TermKind::Charges,
        TermKind::Accounts,
    ];

    /// Strict: an unknown kind is `None`, never a default.
    pub fn parse(s: &str) -> Option<TermKind> {
        TermKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TermKind::Reservations => "reservations",
            TermKind::Discounts => "discounts",
            TermKind::Credits => "credits",
            TermKind::Packages => "packages",
            TermKind::Subscriptions => "subscriptions",
            TermKind::Charges => "charges",
            TermKind::Accounts => "accounts",
        }
    }

    /// Whether the price book's entry has an `id` (the command's term id fills it).
    fn has_id(self) -> bool {
        matches!(
            self,
            TermKind::Credits | TermKind::Packages | TermKind::Subscriptions | TermKind::Charges
        )
    }
}

/// One account term as a command gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountTerm {
    pub account: String,
    pub kind: TermKind,
    pub term_id: String,
    /// The price book entry's fields, without `account` and `id`.
    pub fields: serde_json::Map<String, Json>,
}

/// A term parsed against a price book.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedTerm {
    Reservation(Reservation),
    Discount(Discount),
    Credit(Credit),
    Package(Package),
    Subscription(Subscription),
    Charge(Charge),
    Account(super::regions::AccountSettings),
}

impl AccountTerm {
    /// Where errors point: `packages."pk-1"`.
    fn path(&self) -> String {
        format!("{}.{}", self.kind.as_str(), quote_key(&self.term_id))
    }

    /// The price book entry the term stands for.
    fn entry(&self) -> Result<Table> {
        let path = self.path();
        let mut t = Table::new();
        for (k, v) in &self.fields {
            let key = format!("{path}.{}", quote_key(k));
            let names_itself = self.kind == TermKind::Accounts && k == "id";
            if k == "account" || (k == "id" && self.kind.has_id()) || names_itself {
                return Err(PriceBookError::Invalid {
                    key,
                    value: v.to_string(),
                    message: "comes from the path, not the body".into(),
                });
            }
            if k == "id" && self.kind == TermKind::Discounts {
                // A discount's `id` would make every invoice of the book a part-3 one
                // (section 19's `region`); the term id names a command discount instead.
                return Err(PriceBookError::Invalid {
                    key,
                    value: v.to_string(),
                    message: "a discount set by command is named by its term id in the path: leave `id` out".into(),
                });
            }
            t.insert(k.clone(), to_toml(v, &key)?);
        }
        if self.kind == TermKind::Accounts {
            // `[[accounts]]` names the account by `id`; its settings' term id is the account.
            if self.term_id != self.account {
                return Err(PriceBookError::Invalid {
                    key: path,
                    value: format!("{:?}", self.term_id),
                    message: format!(
                        "an account's settings are the term {:?} (the account's own id)",
                        self.account
                    ),
                });
            }
            t.insert("id".into(), Value::String(self.account.clone()));
            return Ok(t);
        }
        t.insert("account".into(), Value::String(self.account.clone()));
        if self.kind.has_id() {
            t.insert("id".into(), Value::String(self.term_id.clone()));
        }
        Ok(t)
    }
}

/// JSON to TOML: integers stay integers, a number with a fraction is refused (inexact),
/// `null` is refused (leave the key out instead).
fn to_toml(v: &Json, key: &str) -> Result<Value> {
    Ok(match v {
        Json::Null => {
            return Err(PriceBookError::Invalid {
                key: key.into(),
                value: "null".into(),
                message: "leave the key out instead of null".into(),
            });
        }
        Json::Bool(b) => Value::Boolean(*b),
        // Only integers pass as numbers: a fraction is not exact in JSON, so it is refused
        // here as the price book parser refuses a float (write decimals as strings).
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => {
                return Err(PriceBookError::Invalid {
                    key: key.into(),
                    value: n.to_string(),
                    message: "a number with a fraction is inexact: write it as a decimal string"
                        .into(),
                });
            }
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, e)| to_toml(e, &format!("{key}[{i}]")))
                .collect::<Result<_>>()?,
        ),
        Json::Object(o) => {
            let mut t = Table::new();
            for (k, e) in o {
                t.insert(k.clone(), to_toml(e, &format!("{key}.{}", quote_key(k)))?);
            }
            Value::Table(t)
        }
    })
}

/// The parser names the entry `{kind}[0]`; the command names it `{kind}."{term_id}"`.
fn renamed(e: PriceBookError, term: &AccountTerm) -> PriceBookError {
    let from = format!("{}[0]", term.kind.as_str());
    let fix = |k: String| match k.strip_prefix(&from) {
        Some(rest) => format!("{}{rest}", term.path()),
        None => k,
    };
    match e {
        PriceBookError::Invalid {
            key,
            value,
            message,
        } => PriceBookError::Invalid {
            key: fix(key),
            value,
            message,
        },
        PriceBookError::Missing { key, message } => PriceBookError::Missing {
            key: fix(key),
            message,
        },
        other => other,
    }
}

impl PriceBook {
    /// The skus terms may name, by region.
    fn pricing(&self) -> super::regions::Pricing<'_> {
        super::regions::Pricing {
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
            TermKind::Accounts => super::regions::parse_accounts(&root).and_then(|mut v| {
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
                super::org::check_terms(&self.org, &self.term_lists()).map_err(|p| {
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

#[cfg(test)]
mod tests {
    use super::*;

    const BOOK: &str = r#"
currency = "CNY"
timezone = "UTC"
[skus."gpu.h100"]
rate_per_hour = "24.00"
[[packages]]
account = "acme"
id = "pk"
sku = "gpu.h100"
hours = "10"
from = "2026-11-01T00:00:00Z"
to = "2026-12-01T00:00:00Z"
price = "100.00"
[[discounts]]
account = "acme"
percent = "60"
"#;

    fn term(kind: TermKind, id: &str, body: Json) -> AccountTerm {
        AccountTerm {
            account: "acme".into(),
            kind,
            term_id: id.into(),
            fields: body.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn a_command_package_with_the_books_id_replaces_it_and_others_follow() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let pk = |hours: &str| {
            serde_json::json!({"sku":"gpu.h100","hours":hours,"from":"2026-11-01T00:00:00Z",
                "to":"2026-12-01T00:00:00Z","price":"0"})
        };
        let merged = book
            .with_account_terms(&[
                term(TermKind::Packages, "pk", pk("20")),
                term(TermKind::Packages, "pk2", pk("1")),
            ])
            .unwrap();
        assert_eq!(merged.packages.len(), 2);
        assert_eq!(merged.packages[0].id, "pk");
        assert_eq!(merged.packages[0].unit_seconds, Decimal::from(72_000));
        assert_eq!(merged.packages[0].price, Decimal::ZERO);
        assert_eq!(merged.packages[1].index, 1);
    }

    #[test]
    fn errors_name_the_command_term_and_field() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let e = book
            .with_account_terms(&[term(
                TermKind::Credits,
                "v1",
                serde_json::json!({"amount":"1.234"}),
            )])
            .unwrap_err();
        assert_eq!(e.key(), "credits.v1.amount", "{e}");
        let e = book
            .with_account_terms(&[term(
                TermKind::Discounts,
                "d",
                serde_json::json!({"percent":"50"}),
            )])
            .unwrap_err();
        assert_eq!(e.key(), "discounts.d.percent", "{e}");
        assert!(e.to_string().contains("110"), "{e}");
        let e = book
            .with_account_terms(&[term(
                TermKind::Credits,
                "v1",
                serde_json::json!({"amount":"1", "id":"x"}),
            )])
            .unwrap_err();
        assert_eq!(e.key(), "credits.v1.id", "{e}");
    }

    /// Section 20 as a command: a charge with the id of the book's own replaces it, another
    /// follows it; a negative or zero amount is refused naming `charges.{id}.amount`.
    #[test]
    fn a_command_charge_merges_by_id_and_refuses_a_non_positive_amount() {
        let book = PriceBook::from_toml(&format!(
            "{BOOK}[[charges]]\naccount = \"acme\"\nid = \"setup\"\namount = \"5.00\"\nat = \"2026-11-02T00:00:00Z\"\n"
        ))
        .unwrap();
        let fee = |amount: &str| {
            serde_json::json!({"description": "数据迁移服务", "amount": amount,
                "at": "2026-11-20T00:00:00.7Z"})
        };
        let merged = book
            .with_account_terms(&[
                term(TermKind::Charges, "migration", fee("800.00")),
                term(TermKind::Charges, "setup", fee("7")),
            ])
            .unwrap();
        let ids: Vec<(&str, usize, String)> = merged
            .charges
            .iter()
            .map(|c| (c.id.as_str(), c.index, c.amount.to_string()))
            .collect();
        assert_eq!(
            ids,
            [("migration", 1, "800.00".into()), ("setup", 2, "7".into())]
        );
        // 2026-11-20T00:00:00Z, floored to the second.
        assert_eq!(merged.charges[0].at, 1_795_132_800);
        assert_eq!(merged.charges[0].line().amount.to_string(), "800.00");
        for amount in ["-800.00", "0"] {
            let e = book
                .with_account_terms(&[term(TermKind::Charges, "bad", fee(amount))])
                .unwrap_err();
            assert_eq!(e.key(), "charges.bad.amount", "{e}");
        }
        let e = book
            .with_account_terms(&[term(
                TermKind::Charges,
                "bad",
                serde_json::json!({"amount": "1.00"}),
            )])
            .unwrap_err();
        assert_eq!(e.key(), "charges.bad.at", "{e}");
    }

    /// Section 16 as a command: a scoped, dated, capped discount joins the book's discounts
    /// without adding to the plain 60 %, and makes the book a part-3 one; `id` in a discount's
    /// body is refused (the term id names it).
    #[test]
    fn a_command_discount_may_be_scoped_dated_and_capped() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        assert!(!book.uses_part3());
        let scoped = serde_json::json!({"percent": "50", "skus": ["gpu.h100"],
            "components": ["on_demand"], "from": "2026-11-05T00:00:00Z",
            "to": "2026-12-01T00:00:00Z", "cap": "40.00"});
        let merged = book
            .with_account_terms(&[term(TermKind::Discounts, "subsidy", scoped)])
            .unwrap();
        assert_eq!(merged.discount_percent("acme"), Decimal::from(60));
        let d = &merged.discount_terms[1];
        assert_eq!((d.index, d.id.as_deref()), (1, None));
        assert_eq!(d.cap, Some(Decimal::new(4000, 2)));
        assert!(!d.is_plain() && merged.uses_part3());
        // 2026-11-10 to 2026-11-20 overlaps [from, to); December does not.
        assert_eq!(
            merged
                .scoped_discounts("acme", 1_793_836_800, 1_794_700_800)
                .len(),
            1
        );
        assert!(
            merged
                .scoped_discounts("acme", 1_796_083_200, 1_798_761_600)
                .is_empty()
        );
        let e = book
            .with_account_terms(&[term(
                TermKind::Discounts,
                "d",
                serde_json::json!({"percent": "5", "id": "x"}),
            )])
            .unwrap_err();
        assert_eq!(e.key(), "discounts.d.id", "{e}");
        let e = book
            .with_account_terms(&[term(
                TermKind::Discounts,
                "d",
                serde_json::json!({"percent": "5", "skus": ["gpu.a100"]}),
            )])
            .unwrap_err();
        assert_eq!(e.key(), "discounts.d.skus[0]", "{e}");
    }

    #[test]
    fn a_command_credit_counts_in_the_accounts_credit_total() {
        let book = PriceBook::from_toml(BOOK).unwrap();
        let merged = book
            .with_account_terms(&[term(
                TermKind::Credits,
                "v1",
                serde_json::json!({"amount":"50.00","to":"2026-12-01T00:00:00Z"}),
            )])
            .unwrap();
        assert_eq!(merged.credit_total("acme"), Decimal::from(50));
        assert_eq!(merged.credit_terms[0].id.as_deref(), Some("v1"));
    }
}
