//! Usage per bucket, before any price: what `GET /v1/usage` answers from an account's ledger
//! (issue 25). A granularity is a bucket length (`step`); `from` is floored to it; the groups
//! (by sku, lease or resource, in key order) are paged by `group_limit` and `group_after`, the
//! buckets by [`MAX_BUCKETS`] per group and [`MAX_CELLS`] per page; a bucket holds
//! `quantity x seconds` of every run of its group inside it (unit-seconds). Buckets are UTC:
//! a `day` is `[00:00, 24:00)` UTC (calendar months depend on the price book's timezone and
//! are not offered). billing-api `usage.rs` parses the query, calls [`usage_buckets`] and
//! renders the page.

use crate::ledger::{AccountLedger, ResourceKey};
use crate::pricing::prices::sku_family;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};

/// Most buckets of one group in one page; longer ranges are paginated with `next_from`.
pub const MAX_BUCKETS: i64 = 1_000;

/// Most groups one page carries (`group_limit`, default [`DEFAULT_GROUPS`]); more are
/// paginated with `next_group_after`.
pub const MAX_GROUPS: usize = 1_000;

/// Groups per page when `group_limit` is not given.
pub const DEFAULT_GROUPS: usize = 100;

/// Most cells (groups x buckets) one page carries: a page of many groups carries fewer
/// buckets each. Bounds the work and memory of every usage query (~10,700 resources at second
/// granularity once built one answer of gigabytes and took the process down).
pub const MAX_CELLS: i64 = 100_000;

/// A usage query the engine does not take; the message is the API's 400 answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageQueryError {
    #[error("granularity {0:?} is not one of second, minute, hour, day")]
    Granularity(String),
    #[error("group_by {0:?} is not one of sku, lease, resource")]
    GroupBy(String),
    #[error("to must be after from")]
    EmptyRange,
    #[error("group_limit {0} is not between 1 and {MAX_GROUPS}")]
    GroupLimit(usize),
    #[error("family must be an sku's name up to its first \".\" (gpu, storage, ...)")]
    Family,
}

/// A bucket's length in seconds from a granularity's name (`second`, `minute`, `hour`,
/// `day`); `None` is `hour`.
pub fn granularity_step(granularity: Option<&str>) -> Result<i64, UsageQueryError> {
    match granularity.unwrap_or("hour") {
        "second" => Ok(1),
        "minute" => Ok(60),
        "hour" => Ok(3600),
        "day" => Ok(86_400),
        other => Err(UsageQueryError::Granularity(other.to_string())),
    }
}

/// What a group is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Sku,
    Lease,
    Resource,
}

impl GroupBy {
    /// `sku`, `lease` or `resource`; `None` is `sku`.
    pub fn parse(group_by: Option<&str>) -> Result<GroupBy, UsageQueryError> {
        match group_by.unwrap_or("sku") {
            "sku" => Ok(GroupBy::Sku),
            "lease" => Ok(GroupBy::Lease),
            "resource" => Ok(GroupBy::Resource),
            other => Err(UsageQueryError::GroupBy(other.to_string())),
        }
    }

    /// The name of `key`'s group.
    pub fn name_of(self, key: &ResourceKey) -> &str {
        match self {
            GroupBy::Lease => &key.lease,
            GroupBy::Resource => &key.resource,
            GroupBy::Sku => &key.sku,
        }
    }
}

/// The range asked for, `from` floored to the bucket length `step`: `[from, to)`, not empty.
pub fn bucket_range(from: i64, to: i64, step: i64) -> Result<(i64, i64), UsageQueryError> {
    let from = from.div_euclid(step) * step;
    if to <= from {
        return Err(UsageQueryError::EmptyRange);
    }
    Ok((from, to))
}

/// Groups per page: `group_limit`, default [`DEFAULT_GROUPS`], 1 to [`MAX_GROUPS`].
pub fn group_limit(group_limit: Option<usize>) -> Result<usize, UsageQueryError> {
    let limit = group_limit.unwrap_or(DEFAULT_GROUPS);
    if !(1..=MAX_GROUPS).contains(&limit) {
        return Err(UsageQueryError::GroupLimit(limit));
    }
    Ok(limit)
}

/// A sku family filter: a sku's name up to its first `.` (not empty, no `.`, at most 256
/// bytes).
pub fn check_family(family: Option<&str>) -> Result<(), UsageQueryError> {
    if family.is_some_and(|f| f.is_empty() || f.contains('.') || f.len() > 256) {
        return Err(UsageQueryError::Family);
    }
    Ok(())
}

/// A usage query, checked ([`granularity_step`], [`GroupBy::parse`], [`bucket_range`],
/// [`group_limit`], [`check_family`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageRequest<'a> {
    /// Start, floored to `step` (UTC Unix seconds).
    pub from: i64,
    /// End (exclusive).
    pub to: i64,
    /// Bucket length in seconds.
    pub step: i64,
    pub group_by: GroupBy,
    pub group_limit: usize,
    /// Only groups whose name sorts after this one.
    pub group_after: Option<&'a str>,
    /// Only skus of this family ([`sku_family`]).
    pub family: Option<&'a str>,
}

/// One page of usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsagePage<'l> {
    /// The page's range `[from, end)`: `end` is `to` or earlier when the buckets are paged.
    pub from: i64,
    pub end: i64,
    /// Where the next page of buckets starts (`end`), when `end` is before `to`.
    pub next_from: Option<i64>,
    /// Every bucket's start, the same for every group.
    pub starts: Vec<i64>,
    /// Per group with usage in the page (in name order): unit-seconds per bucket.
    pub groups: Vec<(&'l str, Vec<Decimal>)>,
    /// The last group's name when more groups have usage in `[from, to)` after it.
    pub next_group_after: Option<&'l str>,
}

/// Unit-seconds per bucket of `ledger`'s usage keys for `q`: this page's groups are the first
/// `group_limit` names after `group_after` with usage in `[from, to)`; the page ends after at
/// most `MAX_CELLS / groups` (at most [`MAX_BUCKETS`]) buckets; a run crossing a bucket's end
/// counts in each bucket with its seconds there, times its quantity.
pub fn usage_buckets<'l>(ledger: &'l AccountLedger, q: &UsageRequest<'_>) -> UsagePage<'l> {
    let (from, to, step) = (q.from, q.to, q.step);
    let in_family = |key: &ResourceKey| q.family.is_none_or(|f| sku_family(&key.sku) == f);
    // This page's groups: the first `group_limit` keys after `group_after` with usage in range.
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for (key, runs) in ledger.usage().filter(|(k, _)| in_family(k)) {
        let name = q.group_by.name_of(key);
        let after = q.group_after.is_none_or(|a| name > a);
        if after && runs.clipped(from, to).next().is_some() {
            names.insert(name);
            if names.len() > q.group_limit {
                names.pop_last();
            }
        }
    }
    // Whether groups remain after this page.
    let last = names.last().copied();
    let more_groups = last.is_some_and(|l| {
        ledger.usage().any(|(key, runs)| {
            in_family(key) && q.group_by.name_of(key) > l && runs.clipped(from, to).next().is_some()
        })
    });
    // One page: at most MAX_CELLS cells, MAX_BUCKETS buckets per group.
    let per_group = (MAX_CELLS / names.len().max(1) as i64).min(MAX_BUCKETS);
    let page_end = to.min(from.saturating_add(step.saturating_mul(per_group)));
    let buckets = ((page_end - from) + step - 1) / step;
    // Per group, seconds per bucket summed as integers for each distinct quantity (a group's
    // keys have few), multiplied out once per bucket at the end: exact, as every step is, and
    // a few integer additions per bucket instead of a decimal multiplication and addition.
    let mut by_quantity: BTreeMap<&str, Vec<(Decimal, Vec<i64>)>> = BTreeMap::new();
    for (key, runs) in ledger.usage().filter(|(k, _)| in_family(k)) {
        let name = q.group_by.name_of(key);
        if !names.contains(name) {
            continue;
        }
        for run in runs.clipped(from, page_end) {
            let per_quantity = by_quantity.entry(name).or_default();
            let at = match per_quantity.iter().position(|(q, _)| *q == run.quantity) {
                Some(at) => at,
                None => {
                    per_quantity.push((run.quantity, vec![0; buckets as usize]));
                    per_quantity.len() - 1
                }
            };
            let seconds = &mut per_quantity[at].1;
            let mut t = run.from;
            while t < run.to {
                let b = (t - from) / step;
                let end = (from + (b + 1) * step).min(run.to);
                seconds[b as usize] += end - t;
                t = end;
            }
        }
    }
    let groups = by_quantity
        .into_iter()
        .map(|(name, per_quantity)| {
            let mut series = vec![Decimal::ZERO; buckets as usize];
            for (q, seconds) in per_quantity {
                for (total, s) in series.iter_mut().zip(seconds) {
                    if s != 0 {
                        *total += q * Decimal::from(s);
                    }
                }
            }
            (name, series)
        })
        .collect();
    UsagePage {
        from,
        end: page_end,
        next_from: (page_end < to).then_some(page_end),
        starts: (0..buckets).map(|i| from + i * step).collect(),
        groups,
        next_group_after: if more_groups { last } else { None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::event::Class;
    use crate::ledger::runs::Runs;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn key(lease: &str, resource: &str, sku: &str) -> ResourceKey {
        ResourceKey {
            lease: lease.into(),
            resource: resource.into(),
            sku: sku.into(),
            class: Class::OnDemand,
        }
    }

    /// A ledger of `(lease, resource, sku, from, to, quantity)` runs.
    fn ledger(runs: &[(&str, &str, &str, i64, i64, &str)]) -> AccountLedger {
        let mut l = AccountLedger::new();
        let mut by_key: BTreeMap<ResourceKey, Runs> = BTreeMap::new();
        for (lease, resource, sku, from, to, q) in runs {
            by_key
                .entry(key(lease, resource, sku))
                .or_default()
                .insert(*from, *to, d(q));
        }
        for (k, r) in by_key {
            l.set_runs(k, r);
        }
        l
    }

    fn request(from: i64, to: i64, step: i64) -> UsageRequest<'static> {
        UsageRequest {
            from,
            to,
            step,
            group_by: GroupBy::Sku,
            group_limit: DEFAULT_GROUPS,
            group_after: None,
            family: None,
        }
    }

    // 2026-11-01T00:00:00Z.
    const NOV1: i64 = 1_793_491_200;

    #[test]
    fn a_run_crossing_an_hour_is_split_between_two_hourly_buckets() {
        // 2 GPUs from 00:40 to 01:15: 20 min in the first hour (2 x 1200 = 2400 unit-seconds),
        // 15 min in the second (2 x 900 = 1800). Asked from 00:10: floored to 00:00.
        let l = ledger(&[("l1", "r1", "gpu.h100", NOV1 + 2400, NOV1 + 4500, "2")]);
        let (from, to) = bucket_range(NOV1 + 600, NOV1 + 7200, 3600).unwrap();
        assert_eq!(from, NOV1);
        let page = usage_buckets(&l, &request(from, to, 3600));
        assert_eq!(page.starts, vec![NOV1, NOV1 + 3600]);
        assert_eq!(page.groups, vec![("gpu.h100", vec![d("2400"), d("1800")])]);
        assert_eq!(
            (page.end, page.next_from, page.next_group_after),
            (to, None, None)
        );
    }

    #[test]
    fn a_day_bucket_is_a_utc_day_and_quantities_add_per_group() {
        // Day buckets from 2026-11-01 00:00 UTC (asked from 13:00: floored to midnight).
        // h100: 1 unit 22:00-02:00 (7200 s on each day), then 0.5 unit on day 2 for an hour of
        // another lease (1800); storage (another group) 100 GB for 10 s on day 1 (1000).
        let l = ledger(&[
            ("l1", "r1", "gpu.h100", NOV1 + 79_200, NOV1 + 93_600, "1"),
            ("l2", "r2", "gpu.h100", NOV1 + 90_000, NOV1 + 93_600, "0.5"),
            ("l1", "d1", "storage.ssd", NOV1 + 10, NOV1 + 20, "100"),
        ]);
        let (from, to) = bucket_range(NOV1 + 46_800, NOV1 + 2 * 86_400, 86_400).unwrap();
        let page = usage_buckets(&l, &request(from, to, 86_400));
        assert_eq!(page.starts, vec![NOV1, NOV1 + 86_400]);
        assert_eq!(
            page.groups,
            vec![
                ("gpu.h100", vec![d("7200"), d("9000")]),
                ("storage.ssd", vec![d("1000"), d("0")]),
            ]
        );
        // Only the gpu family, grouped by lease: l1 7200 + 7200, l2 0 + 1800.
        let q = UsageRequest {
            group_by: GroupBy::Lease,
            family: Some("gpu"),
            ..request(from, to, 86_400)
        };
        assert_eq!(
            usage_buckets(&l, &q).groups,
            vec![
                ("l1", vec![d("7200"), d("7200")]),
                ("l2", vec![d("0"), d("1800")]),
            ]
        );
    }

    #[test]
    fn groups_and_buckets_are_paged() {
        // Three skus with usage; a page of 2 groups holds a and b and says c remains; the page
        // after b holds c only.
        let l = ledger(&[
            ("l", "r", "gpu.a", NOV1, NOV1 + 10, "1"),
            ("l", "r", "gpu.b", NOV1, NOV1 + 10, "1"),
            ("l", "r", "gpu.c", NOV1, NOV1 + 10, "1"),
        ]);
        let q = UsageRequest {
            group_limit: 2,
            ..request(NOV1, NOV1 + 60, 60)
        };
        let page = usage_buckets(&l, &q);
        let names: Vec<&str> = page.groups.iter().map(|g| g.0).collect();
        assert_eq!(names, ["gpu.a", "gpu.b"]);
        assert_eq!(page.next_group_after, Some("gpu.b"));
        let page = usage_buckets(
            &l,
            &UsageRequest {
                group_after: Some("gpu.b"),
                ..q
            },
        );
        assert_eq!(page.groups, vec![("gpu.c", vec![d("10")])]);
        assert_eq!(page.next_group_after, None);
        // 3 groups at second granularity over 2 days: 100_000 / 3 = 33_333 cells each, at
        // most 1000 buckets: the page ends after 1000 s and the next starts there.
        let page = usage_buckets(&l, &request(NOV1, NOV1 + 172_800, 1));
        assert_eq!(page.end, NOV1 + 1000);
        assert_eq!(page.next_from, Some(NOV1 + 1000));
        assert_eq!(page.starts.len(), 1000);
        assert_eq!(page.groups[0].1[9], d("1"));
        assert_eq!(page.groups[0].1[10], d("0"));
        // 200 groups: 100_000 / 200 = 500 buckets each.
        let many: Vec<(String, i64)> = (0..200).map(|i| (format!("gpu.s{i:03}"), NOV1)).collect();
        let rows: Vec<(&str, &str, &str, i64, i64, &str)> = many
            .iter()
            .map(|(s, t)| ("l", "r", s.as_str(), *t, *t + 1, "1"))
            .collect();
        let q = UsageRequest {
            group_limit: MAX_GROUPS,
            ..request(NOV1, NOV1 + 86_400, 1)
        };
        let l = ledger(&rows);
        let page = usage_buckets(&l, &q);
        assert_eq!(page.groups.len(), 200);
        assert_eq!(page.end, NOV1 + 500);
    }

    #[test]
    fn queries_are_checked_with_the_api_messages() {
        assert_eq!(granularity_step(None), Ok(3600));
        assert_eq!(granularity_step(Some("day")), Ok(86_400));
        assert_eq!(
            granularity_step(Some("month")).unwrap_err().to_string(),
            "granularity \"month\" is not one of second, minute, hour, day"
        );
        assert_eq!(GroupBy::parse(None), Ok(GroupBy::Sku));
        assert_eq!(
            GroupBy::parse(Some("node")).unwrap_err().to_string(),
            "group_by \"node\" is not one of sku, lease, resource"
        );
        // 00:59:59 floored to the hour is 00:00; a `to` at or before it is refused.
        assert_eq!(
            bucket_range(NOV1 + 3599, NOV1 + 3600, 3600),
            Ok((NOV1, NOV1 + 3600))
        );
        assert_eq!(
            bucket_range(NOV1 + 3599, NOV1, 3600)
                .unwrap_err()
                .to_string(),
            "to must be after from"
        );
        assert_eq!(group_limit(None), Ok(100));
        assert_eq!(
            group_limit(Some(1001)).unwrap_err().to_string(),
            "group_limit 1001 is not between 1 and 1000"
        );
        assert_eq!(check_family(Some("gpu")), Ok(()));
        assert_eq!(check_family(Some("gpu.h100")), Err(UsageQueryError::Family));
        assert_eq!(check_family(Some("")), Err(UsageQueryError::Family));
    }
}
