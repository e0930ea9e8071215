//! Lease tags: billing-semantics.md section 18 (`lease.tags`).
//!
//! A lease's tags at second `s` are those of its latest point with `at <= s`; several points
//! at one second resolve, for the allocation tag, to the greatest value byte by byte (a
//! missing value counting as `""`); before its first point the lease has none (`""`). Kept
//! as the *set* of its (at, tags) points, so the tags are a function of the set of events.

use std::collections::BTreeSet;

/// One `lease.tags` point's tags: (name, value), sorted by name.
pub type Tags = Vec<(String, String)>;

/// The (at, tags) points of one lease, `at` in whole seconds (floored).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagTimeline(BTreeSet<(i64, Tags)>);

impl TagTimeline {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, at: i64, tags: Tags) {
        self.0.insert((at, tags));
    }

    pub fn points(&self) -> impl Iterator<Item = &(i64, Tags)> + '_ {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of `tag` as a step function: `(from, value)` in time order, one per second
    /// holding points (the greatest value among them), each holding until the next `from`;
    /// `""` before the first.
    pub fn steps<'t>(&'t self, tag: &str) -> Vec<(i64, &'t str)> {
        let mut out: Vec<(i64, &str)> = Vec::new();
        for (at, tags) in &self.0 {
            let value = tags
                .binary_search_by(|(k, _)| k.as_str().cmp(tag))
                .map_or("", |i| tags[i].1.as_str());
            match out.last_mut() {
                Some((last, v)) if *last == *at => {
                    if value.as_bytes() > v.as_bytes() {
                        *v = value;
                    }
                }
                _ => out.push((*at, value)),
            }
        }
        out
    }
}

/// The value at second `s` of a step function of [`TagTimeline::steps`].
pub fn value_at<'t>(steps: &[(i64, &'t str)], s: i64) -> &'t str {
    let i = steps.partition_point(|(at, _)| *at <= s);
    if i == 0 { "" } else { steps[i - 1].1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(pairs: &[(&str, &str)]) -> Tags {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_greatest_value_wins_at_one_second_and_none_before_the_first_point() {
        // Worked example 3-organization, ml-1: three points at one second (`p-x`, `p-a`, a
        // point without `project`): the greatest value, `p-x`.
        let mut t = TagTimeline::new();
        t.insert(100, tags(&[("project", "p-a"), ("team", "t")]));
        t.insert(100, tags(&[("team", "z")]));
        t.insert(100, tags(&[("project", "p-x")]));
        t.insert(200, tags(&[("team", "z")]));
        let steps = t.steps("project");
        assert_eq!(steps, vec![(100, "p-x"), (200, "")]);
        assert_eq!(value_at(&steps, 99), "");
        assert_eq!(value_at(&steps, 100), "p-x");
        assert_eq!(value_at(&steps, 199), "p-x");
        assert_eq!(value_at(&steps, 200), "");
    }
}
