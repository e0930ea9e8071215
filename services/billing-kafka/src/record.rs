//! A Kafka message of the usage topic as the fold reads it.

use rdkafka::message::Message;

/// A usage record as the fold reads it: the payload, or for a CloudEvent in binary content
/// mode (Kafka binding: a `ce_specversion` header, the attributes in `ce_*` headers, the data
/// as the value) the structured record it stands for, or the stand-in that dead-letters it
/// with the reason it could not be converted ([`billing_core::binary_mode::record`]).
pub(crate) fn usage_record(msg: &impl Message) -> Vec<u8> {
    use billing_core::binary_mode::{Binding, is_binary, record};
    use rdkafka::message::Headers;
    let payload = msg.payload().unwrap_or_default();
    let Some(headers) = msg.headers() else {
        return payload.to_vec();
    };
    let pairs = || headers.iter().map(|h| (h.key, h.value.unwrap_or_default()));
    if is_binary(Binding::Kafka, pairs()) {
        record(Binding::Kafka, pairs(), payload)
    } else {
        payload.to_vec()
    }
}
