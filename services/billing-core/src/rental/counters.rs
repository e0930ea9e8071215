//! Egress from interface counters: billing-semantics.md section 11.
//!
//! Per (account, lease, interface, dest), the distinct (at, bytes_total) samples sorted by
//! `at` then `bytes_total`; each step from one sample to the next adds `next - prev` bytes,
//! or `next` when `next < prev` (the counter reset when the node rebooted). A step counts in
//! the period holding the later sample's `at` and joins the `net.egress` bytes of its dest.
//! The first sample only sets the baseline.

use crate::ledger::AccountLedger;
use crate::pricing::period::Period;
use std::collections::{BTreeMap, BTreeSet};

/// Bytes of one counter's steps whose later sample lies in the period.
pub fn steps_in(samples: &BTreeSet<(i64, u64)>, period: &Period) -> u128 {
    let mut total: u128 = 0;
    let mut prev: Option<u64> = None;
    for &(at, bytes) in samples {
        if let Some(p) = prev
            && period.contains(at)
        {
            total += u128::from(if bytes < p { bytes } else { bytes - p });
        }
        prev = Some(bytes);
    }
    total
}

/// Per dest: the counter bytes of the account in the period (dests with none left out).
pub fn counter_bytes<'l>(ledger: &'l AccountLedger, period: &Period) -> BTreeMap<&'l str, u128> {
    let mut out: BTreeMap<&str, u128> = BTreeMap::new();
    for (key, samples) in ledger.counters() {
        let bytes = steps_in(samples, period);
        if bytes > 0 {
            *out.entry(key.dest.as_str()).or_default() += bytes;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reset_counts_the_new_value_and_the_first_sample_is_a_baseline() {
        let p = Period {
            label: "x".into(),
            start: 0,
            end: 1000,
        };
        // 100 -> 400 (+300), reboot -> 50 (+50), -> 80 (+30).
        let samples = BTreeSet::from([(10, 100), (20, 400), (30, 50), (40, 80)]);
        assert_eq!(steps_in(&samples, &p), 380);
        // Redelivered and equal-at samples sort by bytes: (20, 400) then (20, 500) is +100.
        let tie = BTreeSet::from([(10, 100), (20, 500), (20, 400)]);
        assert_eq!(steps_in(&tie, &p), 300 + 100);
        // A step counts in the period of its later sample.
        let across = BTreeSet::from([(-5, 100), (5, 150)]);
        assert_eq!(steps_in(&across, &p), 50);
        let before = Period {
            label: "y".into(),
            start: -1000,
            end: 0,
        };
        assert_eq!(steps_in(&across, &before), 0);
    }
}
