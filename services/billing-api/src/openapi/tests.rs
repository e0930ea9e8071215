//! The OpenAPI document against the router: every route, its methods and answers.

use super::*;
use serde_json::Value;

/// `(path, method)` of every route `crate::routes::router` declares, read from routes.rs's source:
/// each `.route("PATH", get(..).post(..))` call.
fn router_routes() -> Vec<(String, String)> {
    let source = include_str!("../routes.rs");
    let mut out = Vec::new();
    for call in source.split(".route(").skip(1) {
        // The call's text up to its closing parenthesis.
        let mut depth = 1;
        let end = call
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map(|(i, _)| i)
            .expect("a .route( call closes");
        let call = &call[..end];
        let path = call.split('"').nth(1).expect("a route's path literal");
        let handlers = &call[call.find(',').expect("a route's handlers")..];
        for method in ["get", "post", "put", "delete", "patch"] {
            let called = handlers.match_indices(&format!("{method}(")).any(|(i, _)| {
                i == 0
                    || !handlers.as_bytes()[i - 1].is_ascii_alphanumeric()
                        && handlers.as_bytes()[i - 1] != b'_'
            });
            if called {
                out.push((path.to_string(), method.to_string()));
            }
        }
    }
    out
}

fn document() -> Value {
    serde_json::to_value(Doc::openapi()).expect("the document serializes")
}

#[test]
fn hold_ttls_are_documented_as_the_core_has_them() {
    // The schemas' doc comments are literals: "1 to 86,400 (default 300)" must be the
    // core's MAX_HOLD_TTL_S and DEFAULT_HOLD_TTL_S.
    use billing_core::quota::{DEFAULT_HOLD_TTL_S, MAX_HOLD_TTL_S};
    let max = MAX_HOLD_TTL_S.to_string();
    let (thousands, rest) = max.split_at(max.len() - 3);
    let range = format!("1 to {thousands},{rest} (default {DEFAULT_HOLD_TTL_S})");
    assert_eq!(range, "1 to 86,400 (default 300)");
    let doc = document();
    for schema in ["AuthorizeRequest", "ExtendHold"] {
        let text = doc["components"]["schemas"][schema]["properties"]["ttl_seconds"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains(&range), "{schema}.ttl_seconds: {text:?}");
    }
}

#[test]
fn every_route_of_the_router_is_in_the_document_and_nothing_else() {
    let routes = router_routes();
    assert!(routes.len() >= 30, "{routes:?}");
    assert!(routes.contains(&(
        "/v1/admin/accounts/{id}/terms/{kind}/{term_id}".into(),
        "delete".into()
    )));
    let doc = document();
    for (path, method) in &routes {
        assert!(
            doc["paths"][path][method].is_object(),
            "{} {path} is routed but missing from the OpenAPI document",
            method.to_uppercase()
        );
    }
    let paths = doc["paths"].as_object().unwrap();
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            assert!(
                routes.contains(&(path.clone(), method.clone())),
                "{} {path} is documented but not routed",
                method.to_uppercase()
            );
        }
    }
}

#[test]
fn every_answer_and_json_body_has_a_schema_and_every_error_is_the_error_body() {
    let doc = document();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{} {path}", method.to_uppercase());
            assert!(op["operationId"].is_string(), "{at}: no operationId");
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                let in_path = path.contains(&format!("{{{name}}}"));
                assert_eq!(
                    p["in"] == "path",
                    in_path,
                    "{at}: parameter {name} is {}",
                    p["in"]
                );
            }
            for (ctype, content) in op["requestBody"]["content"]
                .as_object()
                .into_iter()
                .flatten()
            {
                assert!(
                    content["schema"].is_object(),
                    "{at}: request {ctype} has no schema"
                );
            }
            let answers = op["responses"].as_object().unwrap();
            assert!(answers.keys().any(|s| s.starts_with('2')), "{at}: no 2xx");
            for (status, answer) in answers {
                let content = answer["content"].as_object();
                if status == "204" {
                    assert!(
                        content.is_none_or(|c| c.is_empty()),
                        "{at} 204 with content"
                    );
                    continue;
                }
                assert!(
                    content.is_some_and(|c| !c.is_empty()),
                    "{at} {status}: no content"
                );
                for (ctype, c) in content.unwrap() {
                    assert!(c["schema"].is_object(), "{at} {status} {ctype}: no schema");
                    if status.as_str() >= "400" {
                        assert_eq!(
                            c["schema"]["$ref"], "#/components/schemas/Error",
                            "{at} {status}"
                        );
                    }
                }
            }
            if op["security"].is_array() {
                assert!(
                    answers.contains_key("401") && answers.contains_key("429"),
                    "{at}"
                );
            }
        }
    }
}

#[test]
fn every_reject_reason_is_in_the_outcome_schema() {
    let doc = document();
    let reasons = &doc["components"]["schemas"]["EventOutcome"]["properties"]["reason"]["enum"];
    for r in billing_core::event::RejectReason::ALL {
        assert!(
            reasons.as_array().unwrap().iter().any(|v| v == r.as_str()),
            "{} missing from {reasons}",
            r.as_str()
        );
    }
}

/// Issue 25: the store's closed lists of words are enums in the document, all of them.
#[test]
fn the_stores_closed_lists_are_enums_of_the_schemas() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    let words = |schema: &str, field: &str| -> Vec<String> {
        let mut field = &schemas[schema]["properties"][field];
        if let Some(name) = field["$ref"].as_str() {
            field = &schemas[name.trim_start_matches("#/components/schemas/")];
        }
        field["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{schema}.{field} has no enum"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let all = |words: &[&str]| -> Vec<String> { words.iter().map(|w| w.to_string()).collect() };
    let kinds: Vec<&str> = billing_store::MovementKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(words("Movement", "kind"), all(&kinds));
    let methods: Vec<&str> = billing_store::PaymentMethod::ALL
        .iter()
        .map(|m| m.as_str())
        .collect();
    assert_eq!(words("Payment", "method"), all(&methods));
    let statuses: Vec<&str> = billing_store::HoldStatus::ALL
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(words("HoldState", "status"), all(&statuses));
    let statuses: Vec<&str> = billing_core::invoice::InvoiceStatus::ALL
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(words("IssuedInvoice", "status"), all(&statuses));
    let roles: Vec<&str> = billing_store::KeyRole::ALL
        .iter()
        .map(|r| r.as_str())
        .collect();
    for schema in ["KeyInfo", "KeyCreated", "KeyRotated"] {
        assert_eq!(words(schema, "role"), all(&roles), "{schema}");
    }
}
