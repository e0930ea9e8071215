//! Event-type filters of an endpoint. The core owns the event type names: the caller passes a
//! predicate that accepts the known ones (and may accept patterns of its own).

use crate::limits;

/// What is wrong with an endpoint's event filter.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FilterError {
    #[error("an endpoint has at most {max} event types, this one has {count}", max = limits::EVENT_FILTERS_MAX)]
    TooMany { count: usize },
    #[error("event type {event_type:?} is longer than {max} bytes", max = limits::EVENT_TYPE_BYTES_MAX)]
    TooLong { event_type: String },
    #[error("event type {event_type:?} is listed twice")]
    Duplicate { event_type: String },
    #[error("unknown event type {event_type:?}: {reason}")]
    Unknown { event_type: String, reason: String },
}

/// The event types an endpoint receives; no types means every type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    types: Vec<String>,
}

impl EventFilter {
    /// Every event type.
    pub fn all() -> EventFilter {
        EventFilter::default()
    }

    /// The types in `types`, each accepted by `known` (which says why not in its `Err`).
    pub fn new(
        types: &[String],
        known: &dyn Fn(&str) -> Result<(), String>,
    ) -> Result<EventFilter, FilterError> {
        if types.len() > limits::EVENT_FILTERS_MAX {
            return Err(FilterError::TooMany { count: types.len() });
        }
        for (index, event_type) in types.iter().enumerate() {
            if event_type.len() > limits::EVENT_TYPE_BYTES_MAX {
                return Err(FilterError::TooLong {
                    event_type: event_type.clone(),
                });
            }
            if types[..index].contains(event_type) {
                return Err(FilterError::Duplicate {
                    event_type: event_type.clone(),
                });
            }
            known(event_type).map_err(|reason| FilterError::Unknown {
                event_type: event_type.clone(),
                reason,
            })?;
        }
        Ok(EventFilter {
            types: types.to_vec(),
        })
    }

    /// A predicate for [`EventFilter::new`] accepting exactly `names`.
    pub fn known_names(names: &[&str]) -> impl Fn(&str) -> Result<(), String> {
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        move |event_type: &str| {
            if names.iter().any(|name| name == event_type) {
                Ok(())
            } else {
                Err(format!("the known types are {}", names.join(", ")))
            }
        }
    }

    /// Whether an event of `event_type` goes to the endpoint.
    pub fn matches(&self, event_type: &str) -> bool {
        self.types.is_empty() || self.types.iter().any(|t| t == event_type)
    }

    /// The listed types (empty: every type).
    pub fn types(&self) -> &[String] {
        &self.types
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(types: &[&str]) -> Vec<String> {
        types.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn known_types_filter_and_empty_means_all() {
        let known = EventFilter::known_names(&["budget.threshold_crossed", "arrears.started"]);
        let filter = EventFilter::new(&strings(&["arrears.started"]), &known).expect("known");
        assert!(filter.matches("arrears.started"));
        assert!(!filter.matches("budget.threshold_crossed"));
        assert!(EventFilter::all().matches("anything.at_all"));
    }

    #[test]
    fn unknown_duplicate_and_oversized_types_are_refused_by_name() {
        let known = EventFilter::known_names(&["arrears.started"]);
        let unknown = EventFilter::new(&strings(&["arrears.strated"]), &known);
        assert_eq!(
            unknown.map_err(|e| e.to_string()),
            Err(
                "unknown event type \"arrears.strated\": the known types are arrears.started"
                    .into()
            )
        );
        let twice = EventFilter::new(&strings(&["arrears.started", "arrears.started"]), &known);
        assert!(matches!(twice, Err(FilterError::Duplicate { .. })));
        let long = EventFilter::new(&["x".repeat(129)], &|_: &str| Ok(()));
        assert!(matches!(long, Err(FilterError::TooLong { .. })));
        let many: Vec<String> = (0..65).map(|i| format!("t{i}")).collect();
        assert_eq!(
            EventFilter::new(&many, &|_: &str| Ok(())),
            Err(FilterError::TooMany { count: 65 })
        );
    }
}
