//! Part 2 (sections 8 to 14): rental events, their price book terms, their rating, and the
//! engine.
//!
//! Part 2: rental events (sections 8 to 11, [`crate::rental`])
//! - [`crate::events::event::decode`] still reads only `gpu.usage` and `net.egress` (the part-2
//!   types are `unknown_type` there, as before part 2), so callers that do not handle them yet
//!   behave exactly as before; [`crate::events::event::decode_any`] and the
//!   [`crate::ledger::meter::Meter`] read every type. A part-1 event fingerprints exactly as
//!   before.
//! - Every instant (`at`, `from`, `start`, `end`) is required, RFC 3339, inside 2000..=2100
//!   (`time_out_of_range`); `time` stays optional on all four types.
//! - New reasons: `bad_state` (a state outside the six, or not a string) and `bad_price`
//!   (`price_per_hour` not a decimal string or integer, negative, or above the price book's
//!   rate limit). `bytes_total` reuses `bad_bytes`, a fault with `end <= start` reuses
//!   `empty_interval`, missing fields `missing_field`. A fault's length is not limited
//!   beyond the time range.
//! - Platform events (`spot.price`, `node.fault`) follow the account-id grammar for their
//!   subject (a zone or `platform`) and name no account: they get no invoice and do not
//!   scope anything (curves are per sku, faults per node, whatever the zone).
//! - Instants keep their nanoseconds in the content (fingerprint) and are floored or ceiled
//!   to seconds when metered. Prices compare as numbers: `"9.6"` and `"9.60"` are one price.
//!
//! Part 2: price book ([`crate::pricing::pricebook`])
//! - `state_rates` keys must be lease states; values are rates. `[sla]` takes only
//!   `compensation_multiplier` (0 to 100) and `attach_seconds` (1 to 86,400, default 300);
//!   `[sla]` without the multiplier is valid and compensates nothing.
//! - Packages and subscriptions require `id`, unique per account (as are credit ids when
//!   given), an sku with an on-demand price, instants floored to the second, `from < to`, money with
//!   at most 2 decimals; `hours > 0`; `cycles` an integer from 1 to 1,200. A credit's
//!   `from < to` when both are given.
//!
//! Part 2: rating
//! - Section 8: the state of a lease without points is `running` at every second, so an
//!   sku pricing `running` prices every second of leases without a timeline. State lines
//!   apply to both classes. An sku not in the price book has no state rates (its usage stays
//!   unpriced as in part 1).
//! - Section 9: only spot lines of an sku with a curve carry `price`; an sku without a curve
//!   rates exactly as part 1 (one `spot` line, no `price`), as the preamble of part 2
//!   requires. Prices show normalized with at least 2 decimals (`"9.60"`, `"3.125"`). A
//!   curve prices spot usage even of an sku the price book does not name (section 9 is the
//!   more specific rule). Waived usage is never unpriced. `spot_interrupted` lines sort
//!   after `spot` by name.
//! - Section 10: every class is compensated, at the sku's first-tier (or plain) on-demand
//!   rate; an sku without one earns nothing and shows no line. A key reported by two nodes
//!   that both fault is affected by each fault. The compensation is rounded once per
//!   (account, sku) and period. `rate_account` adds the period's compensation to the balance
//!   it is given; `rate_periods` carries what is left ([`crate::finance::credits`]).
//! - Section 11: counter steps join the dest's `net.egress` bytes before the tiers; a dest
//!   with counter bytes and no egress table is unpriced like egress.
//! - Section 12: packages are drawn per segment of constant usage (exactly what drawing second by
//!   second gives, see [`crate::pricing::ondemand`]); a package's balance before the rated period
//!   is what the walk from its `from` left, whatever period the earlier seconds fall in. A
//!   `package` line has `unit = "package"`, quantity 1, and is billed even when the package covers
//!   nothing. Credits apply to a period when `from < period end` and `to > period start`;
//!   `gpubill rate` (`rate_all`) starts every applicable credit at its full amount.
//! - Section 13: a month cycle keeps the local time of day of `start`; a local time in a DST
//!   gap moves forward by the gap (section 17's rule since part 3; before it, the first minute
//!   after the gap). A subscription's cycles are contiguous, so
//!   it counts in `R(s)` over `[start_0, start_cycles)`. Subscription lines of one id sort
//!   by the price book order of the subscription.
//! - Section 14: lines sort by the component's *name* (`state:host_down` between
//!   `spot_interrupted` and `subscription`), then sku or dest, tier, multiplier, price,
//!   package, subscription. New optional fields serialize only when present, so part-1
//!   invoices are byte-identical.
//!
//! Part 2: the engine (billing-store)
//! - Rental facts are stored as sets (`rental_events`, one row per distinct fact), so a
//!   redelivery or a second event saying the same thing changes nothing, as in the meter.
//! - Platform events (`spot.price`, `node.fault`) travel on the usage topic keyed by their
//!   subject and are folded by whichever engine owns that partition into the shared
//!   database; every engine's rating reads them from there, so every account sees all of
//!   them. A close records the usage positions it was computed at (as before), which cover
//!   the platform events too, so a replay folds exactly the same ones before the close.
//! - A platform event moves no account's provisional cost when it arrives (it would mean
//!   re-rating every account): each account's cost picks it up at its next batch or read.
//! - Late part-2 events: an account's lease state or counter sample in a closed period is
//!   noted for adjustment like usage (the period holding its instant); a platform event in a
//!   closed period is noted once for every account invoiced in that period. Issued invoices
//!   never change.
//! - Credits across periods in the engine: the pool of [`crate::finance::credits::CreditPool`]
//!   replayed over the account's issued invoices (each adds the compensation it earned and
//!   draws the credit it consumed, capped at what the pool holds for its period).
//! - With packages or an SLA in a price book version, re-rating a period loads the account's
//!   usage from its beginning up to the period's end (package balances and the coverage
//!   before a fault read it); without them, only the keys with a second in the period.
