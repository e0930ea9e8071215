//! `serve --close-grace`: closing periods automatically (issue 12). Which periods are due is
//! `billing_core::period::due_for_close`'s; closing them is `Store::close_due`'s; this reads
//! the clock on a timer and reports what happened.

use billing_api::Clock;
use billing_store::Store;
use std::sync::Arc;

/// Looks for due periods every `check` (the first look at once) until aborted.
pub fn spawn(
    store: Arc<Store>,
    clock: Clock,
    grace_s: i64,
    check: std::time::Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(check);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            close_due(&store, clock(), grace_s).await;
        }
    })
}

/// `--close-grace`: a whole number of seconds, minutes, hours or days (`72h`, `3d`).
pub fn parse_grace(text: &str) -> Result<i64, String> {
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: i64 = digits
        .parse()
        .map_err(|_| format!("{text:?}: expected a whole number with s, m, h or d (e.g. 72h)"))?;
    let per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "{text:?}: the unit must be s, m, h or d (e.g. 72h)"
            ));
        }
    };
    n.checked_mul(per)
        .filter(|s| *s <= 366 * 86_400)
        .ok_or_else(|| format!("{text:?}: at most a year"))
}

/// One automatic-close round: closes what is due, logs and counts what it did, and reports
/// a close refused for unpriced usage on `/metrics` (`gpubill_close_blocked` 1) until it
/// goes through.
async fn close_due(store: &Store, now_ms: i64, grace_s: i64) {
    match store.finance().close_due(now_ms, grace_s).await {
        Ok(done) => {
            for period in &done.closed {
                tracing::info!(period = %period, "closed the period automatically");
                metrics::counter!("gpubill_periods_closed_automatically_total").increment(1);
            }
            match &done.blocked {
                Some((period, why)) => {
                    tracing::error!(period = %period, reason = %why, "cannot close the period automatically");
                    metrics::gauge!("gpubill_close_blocked").set(1.0);
                }
                None => metrics::gauge!("gpubill_close_blocked").set(0.0),
            }
        }
        Err(e) => tracing::error!(error = %e, "automatic close failed; retrying at the next check"),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_grace;

    #[test]
    fn close_grace_takes_whole_seconds_minutes_hours_or_days() {
        assert_eq!(parse_grace("72h"), Ok(259_200));
        assert_eq!(parse_grace("3d"), Ok(259_200));
        assert_eq!(parse_grace("90m"), Ok(5_400));
        assert_eq!(parse_grace("0s"), Ok(0));
        for bad in ["", "72", "h", "1.5h", "-1h", "72 h", "2y", "400d"] {
            assert!(parse_grace(bad).is_err(), "{bad:?}");
        }
    }
}
