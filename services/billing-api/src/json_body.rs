//! `JsonBody<T>`: the one extractor of every route that takes a JSON body (issue 24.5).
//!
//! serde_json keeps the last of a repeated member when it reads into a map or a `Value`, so
//! `{"amount":"5.00","reference":"a","amount":"500.00"}` once credited 500.00. Events and the
//! derived request structs refused duplicates; now every JSON body does, at any depth, before
//! it is read into `T`: a 400 naming the member. Also:
//!
//! - a `Content-Type` other than `application/json` (or a `+json` type) is a 415; none at all
//!   (or an empty one) is read as JSON, as the routes always did;
//! - an empty body is read as `null`, so a route whose body is optional takes
//!   `JsonBody<Option<T>>`; for any other `T` it is a 400 saying a body is expected.
//!
//! Its errors are answers given before the route did anything ([`ApiError::Refused`]): an
//! `Idempotency-Key` never keeps them. The handler takes them after its token check.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde::de::{DeserializeOwned, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// A JSON request body read into `T`, or why it could not be: the handler takes the error
/// with `?` *after* checking the caller (`principal.admin()?; let body = body?;`), so a
/// wrong token is still a 403 before a bad body's 400 or 415. The error is
/// [`ApiError::Refused`]: the route did nothing.
#[derive(Debug)]
pub struct JsonBody<T>(pub Result<T, ApiError>);

/// Whether `content-type` names JSON: `application/json` or `application/<anything>+json`,
/// parameters aside.
fn is_json(content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// Checks that `body` is JSON without a repeated member in any object (names compared after
/// unescaping: `"am\u006funt"` repeats `"amount"`). The error names the member.
pub fn check_duplicates(body: &[u8]) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(body);
    de.deserialize_any(Walk)?;
    de.end()
}

/// Visits a whole JSON value, refusing a repeated member.
struct Walk;

impl<'de> serde::de::DeserializeSeed<'de> for Walk {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Walk)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E: serde::de::Error>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E: serde::de::Error>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Walk)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                let shown: String = key.chars().take(64).collect();
                return Err(A::Error::custom(format!(
                    "duplicate member {shown:?} (a member may appear once)"
                )));
            }
            map.next_value_seed(Walk)?;
            seen.insert(key);
        }
        Ok(())
    }
}

/// Reads a JSON body (already taken from the request) into `T` with the rules above.
pub fn read<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.trim_ascii().is_empty() {
        return serde_json::from_slice(b"null").map_err(|_| {
            ApiError::BadRequest("the request body is empty: this route takes a JSON body".into())
        });
    }
    check_duplicates(body).map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?;
    serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Ok(JsonBody(
            extract(req, state).await.map_err(ApiError::refused),
        ))
    }
}

async fn extract<T: DeserializeOwned, S: Send + Sync>(
    req: Request,
    state: &S,
) -> Result<T, ApiError> {
    if let Some(ct) = req.headers().get(axum::http::header::CONTENT_TYPE) {
        let ct = ct.to_str().unwrap_or("\u{fffd}");
        if !ct.trim().is_empty() && !is_json(ct) {
            let shown: String = ct.chars().take(64).collect();
            return Err(ApiError::UnsupportedMediaType(format!(
                "content type {shown:?}: this route takes application/json"
            )));
        }
    }
    let bytes = Bytes::from_request(req, state).await.map_err(|e| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge(format!(
                "the body is over {} bytes",
                crate::limits::MAX_BODY_BYTES
            ))
        } else {
            ApiError::BadRequest(format!("the body could not be read: {e}"))
        }
    })?;
    read(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_members_are_refused_at_any_depth_and_named() {
        for (body, member) in [
            (
                r#"{"amount":"5.00","reference":"a","amount":"500.00"}"#,
                "amount",
            ),
            (r#"{"a":{"b":1,"b":2}}"#, "b"),
            (r#"[{"x":1},{"y":1,"y":1}]"#, "y"),
            (r#"{"am\u006funt":"1","amount":"2"}"#, "amount"),
        ] {
            let e = check_duplicates(body.as_bytes())
                .expect_err(body)
                .to_string();
            assert!(
                e.contains(&format!("duplicate member {member:?}")),
                "{body}: {e}"
            );
        }
        for ok in [
            r#"{"a":1,"b":{"a":1}}"#,
            "[1,2,3]",
            "null",
            r#"{"a":[{"a":1},{"a":2}]}"#,
        ] {
            check_duplicates(ok.as_bytes()).unwrap();
        }
        assert!(check_duplicates(b"{\"a\":1} x").is_err());
    }

    #[test]
    fn json_content_types() {
        assert!(is_json("application/json"));
        assert!(is_json("Application/JSON; charset=utf-8"));
        assert!(is_json("application/merge-patch+json"));
        assert!(!is_json("text/plain"));
        assert!(!is_json("application/x-www-form-urlencoded"));
        assert!(!is_json(""));
    }
}
