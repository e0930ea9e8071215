//! A receiver in the test process (axum) that fails while told to, and the worker's set-up.
#![allow(dead_code)] // each test binary uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use billing_webhooks::clock::{SplitMix64, TestClock};
use billing_webhooks::deliver::Worker;
use billing_webhooks::filter::EventFilter;
use billing_webhooks::memory::MemoryOutbox;
use billing_webhooks::outbox::{Endpoint, EndpointId};
use billing_webhooks::sign::{Secret, SignedHeaders, SigningSecrets};
use billing_webhooks::target::AddressPolicy;

/// 2023-11-14T22:13:20Z
pub const T0_MS: i64 = 1_700_000_000_000;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: SignedHeaders,
    pub content_type: String,
    pub body: Vec<u8>,
    pub answered: u16,
}

/// A receiver answering 500 to its next `fail_next` requests, then 204.
#[derive(Clone, Default)]
pub struct Receiver {
    pub fail_next: Arc<AtomicUsize>,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub fn set_fail_next(&self, count: usize) {
        self.fail_next.store(count, Ordering::SeqCst);
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("receiver lock").clone()
    }

    /// The `webhook-id`s received, in order.
    pub fn ids(&self) -> Vec<String> {
        self.received().into_iter().map(|r| r.headers.id).collect()
    }
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let failing = receiver
        .fail_next
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    let status = if failing {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::NO_CONTENT
    };
    receiver
        .received
        .lock()
        .expect("receiver lock")
        .push(Received {
            headers: SignedHeaders {
                id: header(&headers, "webhook-id"),
                timestamp: header(&headers, "webhook-timestamp"),
                signature: header(&headers, "webhook-signature"),
            },
            content_type: header(&headers, "content-type"),
            body: body.to_vec(),
            answered: status.as_u16(),
        });
    status
}

/// Starts a receiver on 127.0.0.1; returns it and its URL.
pub async fn spawn_receiver() -> (Receiver, String) {
    let receiver = Receiver::default();
    let app = Router::new()
        .route("/hook", post(receive))
        .with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local address").port();
    tokio::spawn(async move { axum::serve(listener, app).await.expect("receiver serves") });
    (receiver, format!("http://127.0.0.1:{port}/hook"))
}

pub fn secret(byte: u8) -> Secret {
    Secret::from_bytes(&[byte; 32]).expect("32 bytes")
}

pub fn endpoint(id: &str, account: Option<&str>, url: &str, secret: Secret) -> Endpoint {
    Endpoint {
        id: EndpointId(id.to_owned()),
        account: account.map(str::to_owned),
        url: url.to_owned(),
        secrets: SigningSecrets::new(secret),
        filter: EventFilter::all(),
    }
}

/// The operator's allow-list of the tests: the receivers listen on 127.0.0.1.
pub fn loopback_allowed() -> AddressPolicy {
    AddressPolicy::allowing(vec!["127.0.0.1/32".parse().expect("a net")])
}

pub fn worker(
    outbox: &Arc<MemoryOutbox>,
    clock: &Arc<TestClock>,
    policy: AddressPolicy,
) -> Worker<MemoryOutbox> {
    Worker::new(
        Arc::clone(outbox),
        clock.clone(),
        Box::new(SplitMix64::new(28)),
        policy,
    )
    .expect("the worker's client builds")
}
