//! Moves of accounts in an organization over time (issue 27): an `[[accounts]]` entry's
//! `moves` give its place (`parent`, `pays`) from a month on. An account has one place per
//! period: the organization that rates period `YYYY-MM` is the one after every move from that
//! month or earlier (`PriceBook::at_period`). The organization is checked in every month a
//! move starts (no cycle, at most 8 levels, discounts and credits on payers, term ids unique
//! per payer), so a move that would break it in some month is refused up front.

use super::model::{PriceBookError, Result};
use super::org::{Org, OrgProblem, TermLists, build, check_terms};
use super::regions::AccountSettings;
use std::collections::BTreeSet;

/// The settings as they stand in month `label`: each account's parent and pays from its last
/// move from `label` or earlier (its own `parent` and `pays` before the first).
pub(super) fn settings_at(settings: &[AccountSettings], label: &str) -> Vec<AccountSettings> {
    settings
        .iter()
        .map(|s| {
            let mut s = s.clone();
            if let Some(m) = s.moves.iter().rev().find(|m| m.from.as_str() <= label) {
                s.parent = m.parent.clone();
                s.pays_parent = m.pays_parent;
            }
            s
        })
        .collect()
}

/// Every month a move starts, in order.
fn move_months(settings: &[AccountSettings]) -> BTreeSet<&str> {
    settings
        .iter()
        .flat_map(|s| s.moves.iter().map(|m| m.from.as_str()))
        .collect()
}

/// The organization from every month a move starts, in order, each checked against the
/// terms; an error names the month.
pub(super) fn orgs_after_moves(
    settings: &[AccountSettings],
    terms: &TermLists<'_>,
) -> Result<Vec<(String, Org)>> {
    let mut out = Vec::new();
    for label in move_months(settings) {
        let at = settings_at(settings, label);
        let org = build(&at)
            .and_then(|o| check_terms(&o, terms).map(|()| o))
            .map_err(|p| in_month(&p, label))?;
        out.push((label.to_string(), org));
    }
    Ok(out)
}

/// A problem of the organization from `label` on, as a price book error naming the month.
fn in_month(p: &OrgProblem, label: &str) -> PriceBookError {
    match p.in_book() {
        PriceBookError::Invalid {
            key,
            value,
            message,
        } => PriceBookError::Invalid {
            key,
            value,
            message: format!(
                "{message}, in the organization from {label} on (after the moves of [[accounts]])"
            ),
        },
        other => other,
    }
}

/// The organization of month `label` among `org_moves` (as `PriceBook::org_moves` holds
/// them): the one after the last move from `label` or earlier; None before any.
pub(super) fn org_in<'o>(org_moves: &'o [(String, Org)], label: &str) -> Option<&'o Org> {
    org_moves
        .iter()
        .rev()
        .find(|(from, _)| from.as_str() <= label)
        .map(|(_, org)| org)
}
