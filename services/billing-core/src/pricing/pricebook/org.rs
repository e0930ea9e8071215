//! Organizations (billing-semantics.md section 18): `[[accounts]]` with `parent` and `pays`
//! make a forest of accounts; an account's *payer* is itself when it has no parent or
//! `pays = "self"`, else its parent's payer. Only payers get invoices, each for its members
//! (the accounts it pays for, itself included).
//!
//! Validation, each error naming the key and the account:
//! - no cycle of parents (the cycle is named: `a -> b -> a`);
//! - at most [`MAX_DEPTH`] accounts from a root to a leaf;
//! - `pays = "parent"` needs a `parent`;
//! - discounts and credits belong to payers: a term naming an account that does not pay for
//!   itself is refused;
//! - the ids of terms (packages, subscriptions, credits, discounts, charges) are unique per
//!   payer within each kind (part 3's preamble): two members of one payer may not both hold a
//!   package `pk-1`.
//!
//! Without any `pays = "parent"`, every account is its own payer and nothing here changes a
//! book that was valid before.

use super::model::{PriceBookError, Result};
use super::regions::AccountSettings;
use super::terms::{Charge, Credit, Discount, Package, Subscription};
use std::collections::{BTreeMap, BTreeSet};

/// Most accounts on a path from a root to a leaf (section 18).
pub const MAX_DEPTH: usize = 8;

/// The organization of a price book: who pays for whom.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Org {
    /// Every account paid for by another (`pays = "parent"`, directly or through its parent):
    /// account -> payer. An account not here is its own payer.
    payers: BTreeMap<String, String>,
    /// Per payer with members besides itself: its members, itself included, sorted.
    members: BTreeMap<String, Vec<String>>,
    /// Every account with a `parent` (whether it pays for itself or not): account -> parent.
    /// The tree's lookups are in `org_tree.rs`.
    pub(super) parents: BTreeMap<String, String>,
}

impl Org {
    /// The account's payer (itself when nobody else pays for it).
    pub fn payer_of<'a>(&'a self, account: &'a str) -> &'a str {
        self.payers.get(account).map_or(account, String::as_str)
    }

    /// Whether the account pays for itself (gets invoices).
    pub fn is_payer(&self, account: &str) -> bool {
        !self.payers.contains_key(account)
    }

    /// The payer's members, itself included, sorted (just itself without an organization).
    pub fn members_of<'a>(&'a self, payer: &'a str) -> Vec<&'a str> {
        match self.members.get(payer) {
            Some(m) => m.iter().map(String::as_str).collect(),
            None => vec![payer],
        }
    }

    /// Whether some account is paid for by another.
    pub fn has_members(&self) -> bool {
        !self.payers.is_empty()
    }
}

/// What is wrong with an organization, before it is turned into an error naming a key (the
/// price book's `[[accounts]]` entry, or a command's term).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrgProblem {
    /// The settings entry `index` (of `account`) is on a cycle of parents.
    Cycle { index: usize, cycle: Vec<String> },
    /// The path from a root to `account` holds more than [`MAX_DEPTH`] accounts.
    TooDeep { index: usize, path: Vec<String> },
    /// `pays = "parent"` without a `parent`.
    PaysWithoutParent { index: usize, account: String },
    /// A discount or credit (`kind`, term `index`) of an account paid for by `payer`.
    NotPayer {
        kind: &'static str,
        index: usize,
        account: String,
        payer: String,
    },
    /// A term id repeated among the members of one payer within a kind.
    DuplicateId {
        kind: &'static str,
        index: usize,
        id: String,
        payer: String,
    },
}

impl OrgProblem {
    /// The error naming the price book's key (`accounts[2].parent`, `discounts[0].account`).
    pub fn in_book(&self) -> PriceBookError {
        let (key, value) = match self {
            OrgProblem::Cycle { index, cycle } => {
                (format!("accounts[{index}].parent"), quoted(&cycle[1]))
            }
            OrgProblem::TooDeep { index, path } => (
                format!("accounts[{index}].parent"),
                quoted(&path[path.len().saturating_sub(2)]),
            ),
            OrgProblem::PaysWithoutParent { index, .. } => {
                (format!("accounts[{index}].pays"), quoted("parent"))
            }
            OrgProblem::NotPayer {
                kind,
                index,
                account,
                ..
            } => (format!("{kind}[{index}].account"), quoted(account)),
            OrgProblem::DuplicateId {
                kind, index, id, ..
            } => (format!("{kind}[{index}].id"), quoted(id)),
        };
        PriceBookError::Invalid {
            key,
            value,
            message: self.message(),
        }
    }

    /// What is wrong, naming the accounts.
    pub fn message(&self) -> String {
        match self {
            OrgProblem::Cycle { cycle, .. } => format!(
                "the parents of [[accounts]] make a cycle: {}",
                cycle.join(" -> ")
            ),
            OrgProblem::TooDeep { path, .. } => format!(
                "more than {MAX_DEPTH} accounts from root to leaf: {}",
                path.join(" -> ")
            ),
            OrgProblem::PaysWithoutParent { account, .. } => {
                format!("account {account:?} has pays = \"parent\" but no parent")
            }
            OrgProblem::NotPayer {
                kind,
                account,
                payer,
                ..
            } => format!(
                "{kind} belong to payers: account {account:?} does not pay for itself (its payer is {payer:?})"
            ),
            OrgProblem::DuplicateId {
                kind, id, payer, ..
            } => format!(
                "another term of {kind} of payer {payer:?} (itself or an account it pays for) has the id {id:?}"
            ),
        }
    }
}

fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// Builds the organization of `[[accounts]]`: refuses a cycle, a path of more than
/// [`MAX_DEPTH`] accounts and `pays = "parent"` without a parent (each the first in
/// `[[accounts]]` order).
pub fn build(settings: &[AccountSettings]) -> std::result::Result<Org, OrgProblem> {
    let by_id: BTreeMap<&str, &AccountSettings> =
        settings.iter().map(|s| (s.id.as_str(), s)).collect();
    for s in settings {
        if s.pays_parent && s.parent.is_none() {
            return Err(OrgProblem::PaysWithoutParent {
                index: s.index,
                account: s.id.clone(),
            });
        }
    }
    // Cycles first (a long cycle is a cycle, not a path too deep), each reported at its
    // first member in `[[accounts]]` order, named from it.
    for s in settings {
        let mut path: Vec<&str> = vec![&s.id];
        let mut at = s;
        while let Some(parent) = at.parent.as_deref() {
            if parent == s.id {
                let mut cycle: Vec<String> = path.iter().map(|p| p.to_string()).collect();
                cycle.push(s.id.clone());
                return Err(OrgProblem::Cycle {
                    index: s.index,
                    cycle,
                });
            }
            if path.contains(&parent) {
                break; // a cycle above `s`, reported at one of its members
            }
            path.push(parent);
            match by_id.get(parent) {
                Some(p) => at = p,
                None => break,
            }
        }
    }
    for s in settings {
        let mut path: Vec<&str> = vec![&s.id];
        let mut at = s;
        while let Some(parent) = at.parent.as_deref() {
            path.push(parent);
            if path.len() > MAX_DEPTH {
                path.reverse();
                return Err(OrgProblem::TooDeep {
                    index: s.index,
                    path: path.iter().map(|p| p.to_string()).collect(),
                });
            }
            match by_id.get(parent) {
                Some(p) => at = p,
                None => break,
            }
        }
    }
    // No cycle: every payer is found by walking up while `pays = "parent"`.
    let mut payers = BTreeMap::new();
    for s in settings {
        let mut at = s;
        while at.pays_parent {
            let Some(parent) = at.parent.as_deref() else {
                break;
            };
            match by_id.get(parent) {
                Some(p) => at = p,
                None => {
                    payers.insert(s.id.clone(), parent.to_string());
                    break;
                }
            }
        }
        if at.id != s.id && !at.pays_parent {
            payers.insert(s.id.clone(), at.id.clone());
        }
    }
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (account, payer) in &payers {
        members
            .entry(payer.clone())
            .or_insert_with(|| vec![payer.clone()])
            .push(account.clone());
    }
    for m in members.values_mut() {
        m.sort();
        m.dedup();
    }
    let parents = settings
        .iter()
        .filter_map(|s| Some((s.id.clone(), s.parent.clone()?)))
        .collect();
    Ok(Org {
        payers,
        members,
        parents,
    })
}

/// The account terms of a book, by kind, for [`check_terms`].
pub struct TermLists<'a> {
    pub discounts: &'a [Discount],
    pub credits: &'a [Credit],
    pub packages: &'a [Package],
    pub subscriptions: &'a [Subscription],
    pub charges: &'a [Charge],
}

/// Discounts and credits on payers only; term ids unique per payer within each kind. The
/// first problem in kind order, then term order.
pub fn check_terms(org: &Org, terms: &TermLists<'_>) -> std::result::Result<(), OrgProblem> {
    for d in terms.discounts {
        not_payer(org, "discounts", d.index, &d.account)?;
    }
    for c in terms.credits {
        not_payer(org, "credits", c.index, &c.account)?;
    }
    if !org.has_members() {
        // Ids are unique per account already (the term parsers check it).
        return Ok(());
    }
    let ids = |kind: &'static str, items: Vec<(usize, &str, &str)>| {
        let mut seen = BTreeSet::new();
        for (index, account, id) in items {
            let payer = org.payer_of(account);
            if !seen.insert((payer, id)) {
                return Err(OrgProblem::DuplicateId {
                    kind,
                    index,
                    id: id.to_string(),
                    payer: payer.to_string(),
                });
            }
        }
        Ok(())
    };
    ids(
        "packages",
        terms
            .packages
            .iter()
            .map(|p| (p.index, p.account.as_str(), p.id.as_str()))
            .collect(),
    )?;
    ids(
        "subscriptions",
        terms
            .subscriptions
            .iter()
            .map(|s| (s.index, s.account.as_str(), s.id.as_str()))
            .collect(),
    )?;
    ids(
        "charges",
        terms
            .charges
            .iter()
            .map(|c| (c.index, c.account.as_str(), c.id.as_str()))
            .collect(),
    )?;
    Ok(())
}

fn not_payer(
    org: &Org,
    kind: &'static str,
    index: usize,
    account: &str,
) -> std::result::Result<(), OrgProblem> {
    if org.is_payer(account) {
        return Ok(());
    }
    Err(OrgProblem::NotPayer {
        kind,
        index,
        account: account.to_string(),
        payer: org.payer_of(account).to_string(),
    })
}

/// [`build`] and [`check_terms`] as a price book error naming the key.
pub fn validate(settings: &[AccountSettings], terms: &TermLists<'_>) -> Result<Org> {
    let org = build(settings).map_err(|p| p.in_book())?;
    check_terms(&org, terms).map_err(|p| p.in_book())?;
    Ok(org)
}
