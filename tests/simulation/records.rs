//! What the schedule sends: valid usage events, hostile records, price book versions.

use crate::{DEC_1_S, NOV_1_S, SKUS};
use gpubill_tests::Rng;
use serde_json::json;

/// A usage event; `[lease, resource, sku, quantity]`.
pub(crate) fn usage(
    source: u32,
    id: &str,
    account: &str,
    data: [&str; 4],
    (start_s, end_s): (i64, i64),
) -> String {
    let [lease, resource, sku, quantity] = data;
    let t = billing_core::timestamp::format_secs;
    json!({"specversion":"1.0","id":id,"source":format!("node/{source}"),"type":"gpu.usage","subject":account,
        "data":{"lease":lease,"resource":resource,"sku":sku,"quantity":quantity,"start":t(start_s),"end":t(end_s)}})
    .to_string()
}

/// A new valid event: mostly November, some in December up to two hours before `now_s` (the
/// open period, where quotas and hold captures act).
pub(crate) fn valid_event(rng: &mut Rng, n: u64, accounts: &[&str], now_s: i64) -> String {
    let account = accounts[rng.below(accounts.len() as u64) as usize];
    let lease = format!("L-{account}-{}", rng.below(3));
    let resource = format!("g{}", rng.below(4));
    let sku = SKUS[rng.below(2) as usize];
    let quantity = ["1", "2", "4", "8", "0.25"][rng.below(5) as usize];
    let span_s = 60 * (1 + rng.below(60) as i64);
    let start_s = if rng.permille(150) {
        DEC_1_S + rng.below((now_s - DEC_1_S - 2 * 3600) as u64) as i64
    } else {
        NOV_1_S + rng.below(30 * 86_400 - 3600) as i64
    };
    usage(
        1 + rng.below(3) as u32,
        &format!("e{n}"),
        account,
        [&lease, &resource, sku, quantity],
        (start_s, start_s + span_s),
    )
}

/// A record the engine must dead-letter with a reason (after tests/hostile.rs `hostile()`),
/// and whether it must travel alone (a truncated record would swallow the rest of a batch).
pub(crate) fn hostile_record(rng: &mut Rng, n: u64) -> (bool, String) {
    let base = usage(
        9,
        &format!("h{n}"),
        "acme",
        ["L1", "g0", "gpu.h100", "1"],
        (NOV_1_S + 86_400, NOV_1_S + 86_460),
    );
    let with = |from: &str, to: &str| base.replacen(from, to, 1);
    let kind = rng.below(10);
    let record = match kind {
        0 => base[..1 + rng.below(base.len() as u64 - 2) as usize].to_string(),
        1 => with("\"specversion\":\"1.0\"", "\"specversion\":\"0.3\""),
        2 => with(
            "\"subject\":\"acme\"",
            ["\"subject\":\"\"", "\"subject\":\"a/b\"", "\"subject\":7"][rng.below(3) as usize],
        ),
        3 => with(
            "\"quantity\":\"1\"",
            [
                "\"quantity\":\"-1\"",
                "\"quantity\":\"NaN\"",
                "\"quantity\":\"1e3\"",
            ][rng.below(3) as usize],
        ),
        4 => with(&format!("\"id\":\"h{n}\","), ""),
        5 => with("\"type\":\"gpu.usage\"", "\"type\":\"gpu.usagee\""),
        6 => format!("{},}}", &base[..base.len() - 1]),
        7 => with("\"lease\":\"L1\"", "\"lease\":\"L\u{1}1\""),
        8 => ["42", "\"str\"", "null", "[]"][rng.below(4) as usize].to_string(),
        _ => with(
            "\"sku\":\"gpu.h100\"",
            &format!("\"sku\":\"{}\"", "s".repeat(300)),
        ),
    };
    (kind == 0, record)
}

/// A price book version: the rates, tax and a discount move between versions.
pub(crate) fn price_book(rng: &mut Rng, accounts: &[&str]) -> String {
    let mut book = format!(
        "currency = \"USD\"\ntimezone = \"UTC\"\n\n[skus.\"gpu.h100\"]\nrate_per_hour = \"{}.{:02}\"\nminimum_seconds = {}\n\n[skus.\"gpu.a100\"]\ntiers = [ {{ up_to_hours = {}, rate_per_hour = \"{}.00\" }}, {{ rate_per_hour = \"{}.50\" }} ]\n\n[tax]\nrate = \"0.0{}\"\n",
        20 + rng.below(20),
        rng.below(100),
        [1, 60, 300][rng.below(3) as usize],
        1 + rng.below(10),
        10 + rng.below(10),
        5 + rng.below(5),
        rng.below(10),
    );
    if rng.permille(500) {
        let a = accounts[rng.below(accounts.len() as u64) as usize];
        book.push_str(&format!(
            "\n[[discounts]]\naccount = \"{a}\"\npercent = \"{}\"\n",
            5 + rng.below(20)
        ));
    }
    book
}
