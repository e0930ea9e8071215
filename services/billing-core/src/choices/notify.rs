//! Notifications (issue 28): budgets, a low balance, reminders and the arrears sequence
//! ([`crate::notify`]).
//!
//! ## Budgets ([`crate::notify::budget`], [`crate::notify::budget_eval`])
//!
//! - **Crossing**: threshold `t` (percent of the amount, `0 < t <= 1000`, at most 2
//!   decimals, no two equal, at most 25) is crossed when the measured value is **at or over**
//!   `amount x t / 100` (as a quota's `limit` is at or over its limit). Each crossing is one
//!   `budget.crossed`; several thresholds crossed by one batch are one notice each.
//! - **Hysteresis**: a crossed threshold resolves when the value falls **strictly below**
//!   `amount x (t - h) / 100`, `h = min(2, t / 2)` percentage points: with 1000 and 80%,
//!   crossed at 800.00, resolved under 780.00; 100% resolves under 980.00; 3% under 15.00 (the
//!   half keeps a small threshold's line above zero). A value hovering between the two lines
//!   emits nothing.
//! - **Resolution** also happens when the period ends (every threshold still crossed
//!   resolves, reason `period_ended`, keyed with the ended period, carrying its last cost),
//!   and when a threshold or the forecast is taken off the budget (reason `removed`). A
//!   threshold put back later counts on (`crossed#2`), so no key is ever reused.
//! - **Forecast** `= cost + max(0, burn_rate_per_second) x (end - now')`, `now'` = `now`
//!   clamped into `[start, end]`, `cost` the period's cost of the scope so far (the
//!   provisional figure `spend_limit` measures), with no rounding until the payload (cents).
//!   Worked: November (2,592,000 s), day 10, cost 300.00, one GPU at 1.80/h = 0.0005/s:
//!   `300 + 0.0005 x 1,728,000 = 1164.00`. Forecast and actual are separate marks of each
//!   threshold; a budget stops only on the actual 100%.
//! - **Burn rate** ([`crate::notify::burn`]): the per-second cost of the usage **still
//!   running** at `now` (the usage keys [`crate::quota::is_running`] counts, each at its last
//!   quantity times its sku's on-demand rate, or the section 8 state rate of its lease, over
//!   3600), at list prices: no package, reservation, discount or credit is taken off, so it
//!   errs on the side of warning early. The engine computes it from the ledger it already
//!   reads for `max_concurrent`; not an average over a trailing window, which would lag a
//!   fleet that just started by the window's length.
//! - **Stop**: `action = stop` requires a threshold of 100; the actual crossing of 100% makes
//!   a decision `limit` due on quota `budget:<id>` (on the `budget.crossed` notice), and its
//!   resolution (below 98%, or the period's end) a `clear`. A limit in force is always lifted
//!   by the resolution, even if the action changed to `notify` since; a change to `stop`
//!   takes effect at the next crossing of 100%.
//! - **Stale observations**: an observation of a period earlier than the state's changes
//!   nothing (a late batch of a closed period reaches the invoice's adjustments, not alerts).
//! - **Keys**: `budget:{id}:{period}:{threshold}:{actual|forecast}:{crossed|resolved}#{n}`,
//!   `n` the crossing's number in the period (its resolution shares it).
//!
//! ## Low balance ([`crate::notify::balance`])
//!
//! - The balance is what a prepaid account can still spend ([`crate::quota::prepaid_available`]).
//! - By amount: low when `balance < low_amount`, resolved at `balance >= 1.1 x low_amount`
//!   (100.00: low at 99.99, still low at 105.00, resolved at 110.00).
//! - By hours: `hours_left = balance / (burn_rate_per_second x 3600)`, low under
//!   `low_hours`, resolved at `1.1 x low_hours` (2 h at 36.00/h: low at 50.00, 1.39 h; still
//!   low at 79.00, 2.19 h; resolved at 80.00, 2.22 h). With nothing running the hours are
//!   unknown and the condition keeps its state (starting and stopping an instance does not
//!   flap it); at or below zero the hours left are 0. The message is `余额可用约 N 小时`, `N`
//!   rounded down to one decimal.
//!
//! ## Reminders ([`crate::notify::expiry`])
//!
//! - Windows default to 7, 3 and 1 days (at most 5 windows of 1 to 90 days). A window of
//!   `w` days is open from `end - w x 86,400` to `end`; each (term, end, window) is reminded
//!   once. When several windows are open and none was sent (a term added late, an engine
//!   down), only the narrowest is sent and the wider count as sent.
//! - Terms: packages end at `to`; credits with a `to` at it (a credit without `id` is
//!   `#index`); a subscription without `auto_renew` at its last cycle's end or its `end`;
//!   an auto-renewing one **renews** at its next cycle's start (`subscription.renewing`, with
//!   `wallet_covers = wallet >= price`), or expires at its `end` when no cycle starts before
//!   it. A term whose end moves is a new end: its windows remind again.
//! - Keys: `term:{kind}:{id}:{end}:{w}d`, `subscription:{id}:{renews_at}:renewing:{w}d`.
//!
//! ## The arrears sequence ([`crate::notify::arrears`])
//!
//! - In arrears: the balance below zero or an invoice overdue. Default policy: a grace of one
//!   day, then 15 days stopped before the release (each at most 366 days, 0 allowed).
//! - A step due in the past is taken at the instant it was due, so a late timer or a replay
//!   does not move the schedule (the release counts from the scheduled stop).
//! - Cleared when the balance is at or above zero and nothing is overdue: `arrears.cleared`,
//!   with a `clear` decision when a stop (or a release) was made. A top-up before a step
//!   cancels it. A new debt after a clear is a new episode (keys `arrears:{account}:{n}:..`).
//! - Decisions are on quota `arrears`: `stop` (instances stopped, disks kept at the section 8
//!   storage rate), `release` (the rental backend deletes the disks), `clear`.
//!
//! ## Notices ([`crate::notify::notice`])
//!
//! - **Order of notices emitted together**: a budget's ended-period resolutions, then its
//!   resolutions (highest threshold first, actual before forecast), then its crossings
//!   (lowest first, forecast before actual: the forecast is the earlier warning); a balance's
//!   resolutions then lows, amount before hours; reminders by the term's date, then kind,
//!   then id; arrears steps in the order they happened. The store gives each its
//!   per-account sequence number in that order.
//! - Payload amounts are strings rounded to the cent (`"510.00"`), percents without trailing
//!   zeros (`"80"`), instants RFC 3339 UTC. Event types are parsed strictly; an unknown one is
//!   named with the list of known ones.
//!
//! ## In the engine (billing-store `notify/`)
//!
//! - **When**: budgets, the balance alert and the arrears sequence of prepaid accounts are
//!   evaluated in each batch's transaction, for the accounts it moved and every account above
//!   them; `now` is the latest usage second the batch brought to the account (as for quota
//!   decisions), never the clock, so a replay evaluates the same observations. A wallet
//!   movement or an invoice payment evaluates its account at the command's time. A tick
//!   (`serve --notify-tick-seconds`, `POST /v1/admin/notify/tick`) evaluates every account
//!   with settings at the clock: the arrears steps that came due, balances, reminders.
//! - **Budget cost**: scope `account`: the account's provisional invoice total of the period
//!   (a payer's: its invoice); scope `node`: the subtree's, as a `spend_limit` of issue 27
//!   measures it; scope `tag` (`{"tag": name, "value": v}`, the name must be the price
//!   book's `allocation_tag`): the total of the allocation rows (section 18) of the payer's
//!   provisional invoice with that value, among the accounts of the owner's subtree. Its
//!   forecast's burn rate is the subtree's times the value's share of the subtree's cost so
//!   far (authorizations and running units carry no tags). A tag budget with `action = stop`
//!   blocks the owner's whole subtree. Budgets of regional billing domains are not evaluated
//!   (home only).
//! - **The balance**: for an account with a `prepaid_balance` quota, what it can still spend
//!   (`prepaid_available` with no holds); for any other account, its wallet. The balance
//!   alert applies to prepaid accounts only.
//! - **Overdue**: an `issued` invoice with something to pay, issued more than the store's
//!   payment days ago (`serve --payment-days`).
//! - **The arrears sequence is off unless set** per account (`PUT
//!   /v1/admin/accounts/{id}/arrears`): stopping a customer's instances is the platform's
//!   decision to make per account, not a default.
//! - **Blocking**: a budget with `action = stop` at 100% blocks authorizations for its scope's
//!   subtree; an arrears stop or release blocks the account's. A denial names the node and
//!   the quota (`budget:<id>`, `arrears`), checked after the account's own quotas.
//! - **Sequence numbers** are given in the writing transaction as the account's highest plus
//!   one; a notice whose key is there already takes none.
