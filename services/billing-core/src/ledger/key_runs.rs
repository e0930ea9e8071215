//! A usage key's runs in the ledger, with its coverage by source (section 10).

use crate::ledger::runs::Runs;
use rust_decimal::Decimal;

/// A key's ledger runs and, for SLA compensation (section 10), its coverage by each source
/// (the node that reported it) as runs of their own: union-with-max per source, so the
/// quantity a node gave a key at a second is known without keeping any heartbeat.
///
/// Almost every key is reported by one node only, and then that node's coverage *is* the
/// ledger: [`Sources::One`] keeps just the name, and the per-source runs are materialized
/// only when a second source appears (the first one's runs are then exactly the ledger's so
/// far). Metering a single-source key costs one string compare more than part 1.
#[derive(Debug, Clone, Default)]
pub(super) struct KeyRuns {
    pub(super) runs: Runs,
    pub(super) sources: Sources,
}

#[derive(Debug, Clone, Default)]
pub(super) enum Sources {
    /// Unknown (a ledger loaded from storage without its sources, or `insert_usage`).
    #[default]
    Unknown,
    /// Every event of the key came from this source: its coverage is `runs`.
    One(Box<str>),
    /// Sorted by source.
    Many(Vec<(Box<str>, Runs)>),
}

impl KeyRuns {
    pub(super) fn insert_from(
        &mut self,
        source: &str,
        from: i64,
        to: i64,
        quantity: Decimal,
    ) -> bool {
        match &mut self.sources {
            Sources::Unknown if self.runs.is_empty() => self.sources = Sources::One(source.into()),
            Sources::One(s) if **s == *source => {}
            Sources::Unknown | Sources::One(_) => {
                self.materialize();
                return self.insert_from(source, from, to, quantity);
            }
            Sources::Many(v) => match v.iter_mut().find(|(s, _)| **s == *source) {
                Some((_, r)) => {
                    r.insert(from, to, quantity);
                }
                None => {
                    let mut r = Runs::new();
                    r.insert(from, to, quantity);
                    let at = v.partition_point(|(s, _)| **s < *source);
                    v.insert(at, (source.into(), r));
                }
            },
        }
        self.runs.insert(from, to, quantity)
    }

    /// `One` (or `Unknown`) to `Many`, before an event that breaks "the ledger is the one
    /// source's coverage".
    pub(super) fn materialize(&mut self) {
        self.sources = match std::mem::take(&mut self.sources) {
            Sources::One(s) => Sources::Many(vec![(s, self.runs.clone())]),
            Sources::Unknown => Sources::Many(Vec::new()),
            many => many,
        };
    }

    pub(super) fn sources(&self) -> Vec<(&str, &Runs)> {
        match &self.sources {
            Sources::Unknown => Vec::new(),
            Sources::One(s) => vec![(&**s, &self.runs)],
            Sources::Many(v) => v.iter().map(|(s, r)| (&**s, r)).collect(),
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.runs.heap_bytes()
            + match &self.sources {
                Sources::Unknown => 0,
                Sources::One(s) => s.len(),
                Sources::Many(v) => {
                    v.capacity() * std::mem::size_of::<(Box<str>, Runs)>()
                        + v.iter()
                            .map(|(s, r)| s.len() + r.heap_bytes())
                            .sum::<usize>()
                }
            }
    }
}
