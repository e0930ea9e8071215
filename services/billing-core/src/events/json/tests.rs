//! Tests of `json.rs`.

use super::*;

#[test]
fn reads_members_and_borrows_plain_strings() {
    let o = read_event(
        r#" {"id":"a1","x":[1,{"y":null}],"data":{"bytes":12,"sku":"g\"pu"},"time":null} "#,
    )
    .unwrap();
    assert_eq!(o.attrs[1], Scalar::Str(Cow::Borrowed("a1")));
    assert!(matches!(o.attrs[1], Scalar::Str(Cow::Borrowed(_))));
    assert_eq!(o.attrs[5], Scalar::Null);
    let data = o.data.unwrap().unwrap();
    assert_eq!(data[8], Scalar::UInt(12));
    assert_eq!(data[2], Scalar::Str(Cow::Owned("g\"pu".into())));
}

#[test]
fn numbers_are_classified_like_serde_json() {
    let n = |s: &str| {
        read_event(&format!(r#"{{"id":{s}}}"#))
            .map(|o| format!("{:?}", o.attrs[1]))
            .map_err(|_| ())
    };
    let n = |s: &str| n(s).map(|d| d.replace("Borrowed", "").replace("Owned", ""));
    let w = |v: Scalar<'_>| Ok(format!("{v:?}"));
    assert_eq!(n("0"), w(Scalar::UInt(0)));
    assert_eq!(n("-0"), w(Scalar::Float));
    assert_eq!(n("-5"), w(Scalar::NegInt(-5)));
    assert_eq!(n("18446744073709551615"), w(Scalar::UInt(u64::MAX)));
    assert_eq!(n("18446744073709551616"), w(Scalar::Float));
    assert_eq!(n("1.5"), w(Scalar::Float));
    assert_eq!(n("1e3"), w(Scalar::Float));
    assert_eq!(n("1.7976931348623157e308"), w(Scalar::Float));
    assert_eq!(n("0.00001e-400"), w(Scalar::Float));
    assert_eq!(n("-123456789012345678901234567890"), w(Scalar::Float));
    for bad in [
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "+1",
        "0x10",
        "NaN",
        "1e309",
        "18e307",
        "-1.8e308",
        "1e99999999999999999999",
    ] {
        assert!(n(bad).is_err(), "{bad}");
    }
}

#[test]
fn escapes_and_surrogates() {
    let s = |s: &str| match read_event(&format!(r#"{{"id":"{s}"}}"#)) {
        Ok(o) => match &o.attrs[1] {
            Scalar::Str(c) => Ok(c.to_string()),
            _ => Err(()),
        },
        Err(_) => Err(()),
    };
    assert_eq!(s(r"\u00e9\n\/"), Ok("é\n/".to_string()));
    assert_eq!(s(r"\ud83d\ude00"), Ok("😀".to_string()));
    for bad in [r"\ud83d", r"\ude00", r"\x41", r"\u12", "tab\there"] {
        assert!(s(bad).is_err(), "{bad}");
    }
}

#[test]
fn structure_errors() {
    for bad in [
        "",
        "[]",
        "{",
        "{\"a\"}",
        "{\"a\":1,}",
        "{\"a\":1} x",
        "{\"id\":1,\"id\":2}",
        "{'a':1}",
        "{\"data\":{\"sku\":1,\"sku\":2}}",
    ] {
        assert!(read_event(bad).is_err(), "{bad}");
    }
    let deep = format!("{{\"x\":{}{}}}", "[".repeat(200), "]".repeat(200));
    assert!(read_event(&deep).is_err());
    let fine = format!("{{\"x\":{}{}}}", "[".repeat(100), "]".repeat(100));
    assert!(read_event(&fine).is_ok());
}

#[test]
fn data_that_is_not_an_object() {
    assert_eq!(read_event(r#"{"data":5}"#).unwrap().data, Some(Err(())));
    assert_eq!(read_event(r#"{"data":null}"#).unwrap().data, None);
    assert_eq!(read_event(r#"{"data":[1]}"#).unwrap().data, Some(Err(())));
}

#[test]
fn a_batch_splits_record_by_record_whatever_each_record_is() {
    // Issue 14, finding 9: one bad record no longer fails the batch.
    let body = "[ {\"a\":\"x\\qy\"} , {\"a\":\"raw\u{1}ctl\"},{\"a\":1,}, {\"b\":[1,{\"c\":\"],}\"}]} ,7 ]";
    let parts = split_array(body.as_bytes(), 100).unwrap();
    let parts: Vec<&str> = parts
        .iter()
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    assert_eq!(
        parts,
        vec![
            "{\"a\":\"x\\qy\"}",
            "{\"a\":\"raw\u{1}ctl\"}",
            "{\"a\":1,}",
            "{\"b\":[1,{\"c\":\"],}\"}]}",
            "7"
        ]
    );
    assert!(split_array(b" [ ] ", 10).unwrap().is_empty());
    assert_eq!(
        split_array(b"[\xff\xfe, 1]", 10).unwrap(),
        vec![&b"\xff\xfe"[..], b"1"]
    );
    for bad in [
        "",
        "{}",
        "[",
        "[1,",
        "[1,]",
        "[,1]",
        "[1,,2]",
        "[{\"a\":\"x]",
        "[{]",
        "[1] x",
        "[\"\\\"]",
    ] {
        assert!(split_array(bad.as_bytes(), 10).is_err(), "{bad:?}");
    }
    assert!(split_array(b"[1,2,3]", 2).is_err());
    assert_eq!(split_array(b"[1,2]", 2).unwrap().len(), 2);
}

#[test]
fn splitting_agrees_with_serde_json_on_valid_arrays() {
    let body = r#"[{"x":[1,2,{"y":"a,b]"}]},"s\"]",null,true, 1.5e3 ,[[]]]"#;
    let ours = split_array(body.as_bytes(), 100).unwrap();
    let ours: Vec<&str> = ours
        .iter()
        .map(|p| std::str::from_utf8(p).unwrap())
        .collect();
    let theirs: Vec<&serde_json::value::RawValue> = serde_json::from_str(body).unwrap();
    let theirs: Vec<&str> = theirs.iter().map(|r| r.get()).collect();
    assert_eq!(ours, theirs);
}
