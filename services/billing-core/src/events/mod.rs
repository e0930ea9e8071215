//! Records in: CloudEvents decoded and validated (billing-semantics.md section 1). The event
//! model and decoding ([`event`], with [`event::decode_any`] for every type), the readers of its
//! fields ([`event_fields`]), the strict JSON reader of the hot path ([`json`]), binary content
//! mode ([`binary_mode`]), records over the size limit ([`oversize`]), why a record is rejected
//! ([`reject`]) and identity dedupe ([`dedupe`]). The rental events' data is validated in
//! [`crate::rental`].

pub mod binary_mode;
pub mod dedupe;
pub mod event;
pub mod event_fields;
pub mod json;
pub mod oversize;
pub mod reject;
