//! Platform events: spot price curves (section 9) and node faults (section 10). They apply to
//! every account and name none, so the meter keeps them once, outside the accounts' ledgers.

use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// Spot curves per sku and faults per node, each a function of the set of events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Platform {
    /// Per sku: `from` (floored) -> price per unit-hour, the lowest of the points at one
    /// `from`. Prices are kept normalized (`9.6`, not `9.60`): two spellings of one price are
    /// one price whatever arrived first.
    spot: BTreeMap<String, BTreeMap<i64, Decimal>>,
    /// Per node: `[start, end)` in whole seconds (start floored, end ceiled), sorted, as
    /// delivered (merged when read: [`Platform::faults`]).
    faults: BTreeMap<String, Vec<(i64, i64)>>,
    /// Section 19: per region, its own curves per sku (the home region's are `spot`).
    regional_spot: BTreeMap<String, BTreeMap<String, BTreeMap<i64, Decimal>>>,
}

/// No curves, no faults: what a rating context without platform events reads.
pub static NO_PLATFORM: Platform = Platform::empty();

impl Platform {
    pub fn new() -> Self {
        Self::default()
    }

    pub const fn empty() -> Self {
        Platform {
            spot: BTreeMap::new(),
            faults: BTreeMap::new(),
            regional_spot: BTreeMap::new(),
        }
    }

    /// Section 19: a spot price of `region`'s curve (`None`: home).
    pub fn add_spot_price_in(
        &mut self,
        region: Option<&str>,
        sku: &str,
        from: i64,
        price_per_hour: Decimal,
    ) {
        let Some(region) = region else {
            return self.add_spot_price(sku, from, price_per_hour);
        };
        let price = price_per_hour.normalize();
        self.regional_spot
            .entry(region.to_string())
            .or_default()
            .entry(sku.to_string())
            .or_default()
            .entry(from)
            .and_modify(|p| *p = (*p).min(price))
            .or_insert(price);
    }

    /// Section 19: the platform as `region` sees it (`None`: home): that region's spot
    /// curves, and every node fault (faults apply to the keys of their node in every region).
    pub fn in_region(&self, region: Option<&str>) -> std::borrow::Cow<'_, Platform> {
        match region {
            None => std::borrow::Cow::Borrowed(self),
            Some(r) => std::borrow::Cow::Owned(Platform {
                spot: self.regional_spot.get(r).cloned().unwrap_or_default(),
                faults: self.faults.clone(),
                regional_spot: BTreeMap::new(),
            }),
        }
    }

    pub fn add_spot_price(&mut self, sku: &str, from: i64, price_per_hour: Decimal) {
        let price = price_per_hour.normalize();
        let curve = match self.spot.get_mut(sku) {
            Some(c) => c,
            None => self.spot.entry(sku.to_string()).or_default(),
        };
        curve
            .entry(from)
            .and_modify(|p| *p = (*p).min(price))
            .or_insert(price);
    }

    pub fn add_fault(&mut self, node: &str, start: i64, end: i64) {
        assert!(
            start < end,
            "fault of node {node:?} is empty: {start}..{end}"
        );
        let v = self.faults.entry(node.to_string()).or_default();
        let at = v.partition_point(|f| *f < (start, end));
        if v.get(at) != Some(&(start, end)) {
            v.insert(at, (start, end));
        }
    }

    /// The curve of `sku`: `from` -> price.
    pub fn curve(&self, sku: &str) -> Option<&BTreeMap<i64, Decimal>> {
        self.spot.get(sku)
    }

    pub fn curves(&self) -> &BTreeMap<String, BTreeMap<i64, Decimal>> {
        &self.spot
    }

    /// Every node's faults, overlapping or touching ones merged into one.
    pub fn faults(&self) -> impl Iterator<Item = (&str, Vec<(i64, i64)>)> {
        self.faults.iter().map(|(n, v)| (n.as_str(), merge(v)))
    }

    /// Highest price of any curve (for the magnitude bound of rating).
    pub fn max_spot_price(&self) -> Decimal {
        self.spot
            .values()
            .flat_map(|c| c.values())
            .copied()
            .max()
            .unwrap_or_default()
    }
}

/// Merges sorted intervals that overlap or touch.
fn merge(sorted: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(sorted.len());
    for &(a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_touching_faults_merge() {
        let mut p = Platform::new();
        p.add_fault("n", 20, 30);
        p.add_fault("n", 0, 10);
        p.add_fault("n", 10, 15);
        p.add_fault("n", 25, 40);
        p.add_fault("n", 50, 60);
        let f: Vec<_> = p.faults().collect();
        assert_eq!(f, vec![("n", vec![(0, 15), (20, 40), (50, 60)])]);
    }

    #[test]
    fn the_lowest_price_at_one_from_wins_whatever_the_order() {
        let mut a = Platform::new();
        a.add_spot_price("g", 100, "3.20".parse().unwrap());
        a.add_spot_price("g", 100, "2.5".parse().unwrap());
        let mut b = Platform::new();
        b.add_spot_price("g", 100, "2.50".parse().unwrap());
        b.add_spot_price("g", 100, "3.2".parse().unwrap());
        assert_eq!(a, b);
        assert_eq!(a.curve("g").unwrap()[&100].to_string(), "2.5");
    }
}
