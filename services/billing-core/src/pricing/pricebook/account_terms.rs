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
//!
//! This module is the command term and the price book entry it stands for; [`merge`] parses
//! terms against a book and merges them in.

mod merge;
#[cfg(test)]
mod tests;

use super::model::{PriceBookError, Reservation, Result};
use super::terms::{Charge, Credit, Discount, Package, Subscription};
use super::walk::quote_key;
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
