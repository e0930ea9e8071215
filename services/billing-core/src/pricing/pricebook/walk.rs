//! Walking the TOML tree: every error names the key (as a path) and its value.

use super::model::{PriceBookError, Result};
use crate::common::limits::{MAX_EVENT_SECS, MAX_RATE, MAX_STRING_BYTES, MIN_EVENT_SECS};
use crate::common::timestamp::Timestamp;
use rust_decimal::Decimal;
use toml::{Table, Value};

pub(super) fn quote_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        quote_key(key)
    } else {
        format!("{path}.{}", quote_key(key))
    }
}

pub(super) fn invalid<T>(key: &str, value: &Value, message: impl Into<String>) -> Result<T> {
    let mut shown = value.to_string();
    if shown.len() > 80 {
        shown = format!("{}...", shown.chars().take(77).collect::<String>());
    }
    Err(PriceBookError::Invalid {
        key: key.to_string(),
        value: shown,
        message: message.into(),
    })
}

pub(super) fn missing<T>(key: &str, message: impl Into<String>) -> Result<T> {
    Err(PriceBookError::Missing {
        key: key.to_string(),
        message: message.into(),
    })
}

pub(super) fn only_keys(t: &Table, path: &str, allowed: &[&str]) -> Result<()> {
    for (k, v) in t {
        if !allowed.contains(&k.as_str()) {
            return invalid(
                &join(path, k),
                v,
                format!("unknown key (expected one of: {})", allowed.join(", ")),
            );
        }
    }
    Ok(())
}

pub(super) fn as_table<'a>(v: &'a Value, key: &str) -> Result<&'a Table> {
    v.as_table()
        .map_or_else(|| invalid(key, v, "must be a table"), Ok)
}

pub(super) fn as_array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>> {
    v.as_array()
        .map_or_else(|| invalid(key, v, "must be an array"), Ok)
}

pub(super) fn string<'a>(t: &'a Table, path: &str, key: &str) -> Result<Option<&'a str>> {
    let p = join(path, key);
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if s.is_empty() => {
            invalid(&p, &Value::String(s.clone()), "must not be empty")
        }
        Some(Value::String(s)) if s.len() > MAX_STRING_BYTES => invalid(
            &p,
            &Value::String(s.clone()),
            format!("longer than {MAX_STRING_BYTES} bytes"),
        ),
        Some(Value::String(s)) => match crate::common::text::check_name(s) {
            Ok(()) => Ok(Some(s)),
            Err(e) => invalid(&p, &Value::String(s.clone()), e.to_string()),
        },
        Some(v) => invalid(&p, v, "must be a string"),
    }
}

/// A name used as a key (an sku, an egress destination): the rules of
/// [`crate::common::text::check_name`].
pub(super) fn name_key(path: &str, name: &str, value: &Value) -> Result<()> {
    match crate::common::text::check_name(name) {
        Ok(()) => Ok(()),
        Err(e) => invalid(path, value, format!("the name {name:?} {e}")),
    }
}

pub(super) fn required_string<'a>(t: &'a Table, path: &str, key: &str) -> Result<&'a str> {
    string(t, path, key)?.map_or_else(|| missing(&join(path, key), "is required"), Ok)
}

/// A decimal: a string (`"24.00"`) or a TOML integer; never a float.
pub(super) fn decimal(t: &Table, path: &str, key: &str) -> Result<Option<Decimal>> {
    let p = join(path, key);
    match t.get(key) {
        None => Ok(None),
        Some(v @ Value::String(s)) => match crate::common::decimal::parse(s) {
            Ok(d) => Ok(Some(d)),
            Err(e) => invalid(&p, v, e.to_string()),
        },
        Some(Value::Integer(i)) => Ok(Some(Decimal::from(*i))),
        Some(v @ Value::Float(_)) => invalid(
            &p,
            v,
            "floats are not accepted (they are inexact): write the number as a string, e.g. \"0.5\"",
        ),
        Some(v) => invalid(&p, v, "must be a decimal string such as \"24.00\""),
    }
}

pub(super) fn bounded(
    t: &Table,
    path: &str,
    key: &str,
    min: Decimal,
    min_inclusive: bool,
    max: Decimal,
) -> Result<Option<Decimal>> {
    let Some(d) = decimal(t, path, key)? else {
        return Ok(None);
    };
    let low_ok = if min_inclusive { d >= min } else { d > min };
    if !low_ok || d > max {
        let lo = if min_inclusive { "[" } else { "(" };
        return invalid(
            &join(path, key),
            &t[key],
            format!("must be in {lo}{min}, {max}]"),
        );
    }
    Ok(Some(d))
}

pub(super) fn rate(t: &Table, path: &str, key: &str) -> Result<Option<Decimal>> {
    bounded(t, path, key, Decimal::ZERO, true, MAX_RATE)
}

pub(super) fn required<T>(v: Option<T>, path: &str, key: &str) -> Result<T> {
    v.map_or_else(|| missing(&join(path, key), "is required"), Ok)
}

pub(super) fn instant(t: &Table, path: &str, key: &str) -> Result<Option<Timestamp>> {
    let p = join(path, key);
    let text = match t.get(key) {
        None => return Ok(None),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Datetime(d)) => d.to_string(),
        Some(v) => {
            return invalid(
                &p,
                v,
                "must be an RFC 3339 time such as \"2026-11-01T00:00:00+08:00\"",
            );
        }
    };
    match Timestamp::parse_rfc3339(&text) {
        // The events' range (issue 24.6): a term from 0000-01-01 to 9999-12-31 was accepted.
        Some(ts) if !(MIN_EVENT_SECS..=MAX_EVENT_SECS).contains(&ts.secs) => invalid(
            &p,
            &t[key],
            "is outside 2000-01-01T00:00:00Z ..= 2100-01-01T00:00:00Z, the range of every instant gpubill reads",
        ),
        Some(ts) => Ok(Some(ts)),
        None => invalid(
            &p,
            &t[key],
            "is not an RFC 3339 time with an offset, such as \"2026-11-01T00:00:00+08:00\"",
        ),
    }
}

pub(super) fn time_of_day(t: &Table, path: &str, key: &str, allow_24: bool) -> Result<u32> {
    let p = join(path, key);
    let v = t
        .get(key)
        .map_or_else(|| missing(&p, "is required (\"HH:MM\")"), Ok)?;
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Datetime(d) => d.to_string(),
        _ => return invalid(&p, v, "must be a local time of day \"HH:MM\""),
    };
    let parts: Vec<&str> = text.split(':').collect();
    let num = |s: &str| {
        (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let parsed = match parts.as_slice() {
        [h, m] => num(h).zip(num(m)).map(|(h, m)| (h, m, 0)),
        [h, m, s] => num(h).zip(num(m)).zip(num(s)).map(|((h, m), s)| (h, m, s)),
        _ => None,
    };
    match parsed {
        Some((24, 0, 0)) if allow_24 => Ok(86_400),
        Some((h, m, s)) if h < 24 && m < 60 && s < 60 => Ok(h * 3600 + m * 60 + s),
        _ => invalid(
            &p,
            v,
            "must be a local time of day \"HH:MM\" (00:00 to 23:59, or 24:00 for `to`)",
        ),
    }
}

pub(super) fn entries<'a>(root: &'a Table, section: &str) -> Result<Vec<(String, &'a Table)>> {
    let Some(v) = root.get(section) else {
        return Ok(Vec::new());
    };
    as_array(v, section)?
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let path = format!("{section}[{i}]");
            let t = as_table(e, &path)?;
            Ok((path, t))
        })
        .collect()
}
