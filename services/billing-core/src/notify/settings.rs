//! An account's notification settings (issue 28): its budgets, its balance alert, its
//! reminder windows and its arrears policy, as one document. The store keeps it per account
//! and changes it by the `notify.put` command.

use crate::notify::arrears::ArrearsPolicy;
use crate::notify::balance::BalanceAlert;
use crate::notify::budget::Budget;
use crate::notify::expiry::ReminderPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most budgets one account may have.
pub const MAX_BUDGETS_PER_ACCOUNT: usize = 25;

/// What an account asked to be told, and its arrears policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySettings {
    /// By budget id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub budgets: BTreeMap<String, Budget>,
    /// Low prepaid balance, by amount or by hours left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<BalanceAlert>,
    /// Expiry and renewal reminders (absent: none are sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reminders: Option<ReminderPolicy>,
    /// The arrears sequence (absent: the account is never stopped for arrears).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrears: Option<ArrearsPolicy>,
}

impl NotifySettings {
    /// Checks every part; the error names the field (`budgets.b1.thresholds[2]: ...`).
    pub fn validate(&self, account: &str) -> std::result::Result<(), String> {
        if self.budgets.len() > MAX_BUDGETS_PER_ACCOUNT {
            return Err(format!(
                "budgets: {} are more than {MAX_BUDGETS_PER_ACCOUNT} per account",
                self.budgets.len()
            ));
        }
        for (id, b) in &self.budgets {
            if &b.id != id {
                return Err(format!("budgets.{id}: its id is {:?}", b.id));
            }
            if b.account != account {
                return Err(format!("budgets.{id}: belongs to {:?}", b.account));
            }
            b.validate().map_err(|e| format!("budgets.{id}.{e}"))?;
        }
        if let Some(a) = &self.balance {
            a.validate().map_err(|e| format!("balance.{e}"))?;
        }
        if let Some(r) = &self.reminders {
            r.validate().map_err(|e| format!("reminders.{e}"))?;
        }
        if let Some(p) = &self.arrears {
            p.validate().map_err(|e| format!("arrears.{e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::budget::{BudgetAction, BudgetScope};
    use rust_decimal::Decimal;

    fn budget(id: &str, account: &str, thresholds: &[i64]) -> Budget {
        Budget {
            id: id.into(),
            account: account.into(),
            scope: BudgetScope::Account(account.into()),
            amount: Decimal::from(1000),
            thresholds: thresholds.iter().map(|&t| Decimal::from(t)).collect(),
            forecast: false,
            action: BudgetAction::Notify,
        }
    }

    #[test]
    fn each_error_names_the_field() {
        let mut s = NotifySettings::default();
        s.budgets
            .insert("b1".into(), budget("b1", "acme", &[50, 80, 100]));
        assert_eq!(s.validate("acme"), Ok(()));
        s.budgets
            .insert("b2".into(), budget("b2", "acme", &[50, 1001]));
        let e = s.validate("acme").unwrap_err();
        assert!(e.starts_with("budgets.b2.thresholds[1]"), "{e}");
        s.budgets.remove("b2");
        let mut tag = budget("t", "acme", &[100]);
        tag.scope = BudgetScope::Tag {
            tag: "project".into(),
            value: "x\ny".into(),
        };
        s.budgets.insert("t".into(), tag);
        assert!(
            s.validate("acme")
                .unwrap_err()
                .starts_with("budgets.t.scope.value")
        );
        s.budgets.remove("t");
        assert!(s.validate("other").unwrap_err().contains("belongs to"));
    }

    #[test]
    fn settings_round_trip_and_refuse_unknown_fields() {
        let mut s = NotifySettings::default();
        s.budgets.insert("b1".into(), budget("b1", "acme", &[100]));
        s.arrears = Some(ArrearsPolicy::default());
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<NotifySettings>(&text).unwrap(), s);
        assert!(serde_json::from_str::<NotifySettings>(r#"{"budget": {}}"#).is_err());
    }
}
