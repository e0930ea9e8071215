//! Part 3 (sections 15 to 21): the commercial terms, and part 3 in the engine.
//!
//! Part 3: the commercial terms (sections 15 to 21)
//! - Invoices name their `region` (section 19, `null` for home) only when the price book uses a
//!   part-3 feature (regions, `[[accounts]]`, `allocation_tag`, `increment_seconds`, charges, a discount with an
//!   `id` or that is not plain, a subscription with `cycle = "year"`, `auto_renew`, `end`,
//!   `refund` or `region`, any term with a `region`) or when an event names a region: a price
//!   book and events of parts 1 and 2 keep giving byte-identical invoices (worked example 1 has
//!   no `region`), while the part-3 worked examples show `"region": null` on home invoices.
//! - Instants of account terms are floored to whole seconds, as part 3 says (part 2 refused a
//!   fraction of a second; part 3's rule replaces that): `start = "...T00:00:00.5+08:00"`
//!   starts at `...T00:00:00+08:00`. `effective_from` is not a term and stays exact.
//! - Section 15: `increment_seconds` needs an on-demand rate like `minimum_seconds`; runs of
//!   consecutive seconds ignore quantity changes (the padding takes the quantity of the run's
//!   last second); state seconds a sku prices (section 8) break runs. The `increment` line has
//!   `tier` 0 and no `multiplier`. Only `on_demand` keys are padded (never spot).
//! - Section 16: a discount's `skus` must be skus of the price book (of its region) and its
//!   `components` component names (`state:stopped` included); both, when given, name at least
//!   one. `cap` is money (2 decimals). Percents of plain discounts of one account still add up
//!   to at most 100; scoped ones are each 0 to 100 and are held by "at most subtotal". Each
//!   scoped discount is rounded on its own before the sum, as the formula writes it. A
//!   discount set by command (issue 26) takes every key of section 16 but `id` (its term id
//!   names it; an `id` would make every invoice of the book a part-3 one): a plain one adds to
//!   the account's plain percent (at most 100 with the book's), a scoped one is rated like the
//!   book's scoped ones, after them.
//! - Section 17: `auto_renew` subscriptions carry the cycles that start before 400 days after
//!   2100-01-01 (the last instant gpubill reads), so `cycles` stays a count for the engine's
//!   views. `end` may be given with `cycles` or `auto_renew`; an `end` at or before `start`
//!   leaves no cycle. The DST rule of section 17 (a local time in a gap is moved forward by
//!   the gap, 02:30 becomes 03:30) replaces the part-2 choice (the first minute after the gap)
//!   for months too. A refund is drawn with the SLA compensation of its period, after it, and
//!   refunds of one period by subscription id; SLA compensation of one period is one amount
//!   (its skus' parts never expire, so their order changes nothing drawn).
//! - Section 20: a charge needs `id` (it names the line), `amount` > 0 with 2 decimals and
//!   `at`; `description` is optional and the line carries it only when given. A charge line
//!   has no `sku`, `tier` 0, unit `charge`; only discounts without `skus` can match it.
//! - Section 21: a missing sku or dest sorts before any name (only `charge` lines have
//!   neither).
//! - Section 19: a region table takes exactly the top level's pricing keys (`currency`,
//!   `timezone`, `skus`, `offpeak`, `egress`, `tax`); its errors name keys below it
//!   (`regions.us-east.skus."gpu.h100".rate_per_hour`). A term's `region` must name a
//!   `[regions."name"]` table, and the skus a term names are its region's. An empty `region`
//!   in an event is home (an empty string counts as missing, as everywhere in events); the
//!   region is part of an event's content only when given, so events without one fingerprint
//!   as before. `region` on `lease.state` and `node.fault` is ignored.
//! - Section 19: usage, egress and counters of a region the price book does not name are
//!   listed as unpriced (`"why": "region not in the price book"`, with `region`) and get no
//!   invoice: there is no currency to invoice them in. Their quantities are those of the
//!   month in the account's timezone, else the home timezone.
//! - Section 19: `gpubill rate --account A` prints A's home invoice (even when A is unknown,
//!   as before) and its invoices in every region where it has an event or a term.
//!   `rate_all` (the engine's entry point) stays home-only, with the home book's terms;
//!   [`crate::pricing::rating::rate_month`] is the whole of section 19.
//! - Section 18 ([`crate::pricing::pricebook::Org`], [`crate::pricing::allocation`]):
//!   `[[accounts]]` takes `parent` and `pays` (`"self"`, the default, or `"parent"`);
//!   `pays = "parent"` without a `parent` is invalid; `pays = "self"` with a parent is an
//!   account of the tree paying for itself (its own invoices, for itself and the accounts
//!   that pay through it). A parent need not have an `[[accounts]]` entry (it is a root
//!   paying for itself). A cycle is refused at its first member in `[[accounts]]` order,
//!   named from it (`a -> b -> c -> a`), before any depth rule; a path of more than 8
//!   accounts at its first leaf, key `accounts[i].parent`. The rules are checked again when
//!   account terms come as commands (each command term in turn, its errors naming the term:
//!   `discounts.d1.account`, `accounts.x.parent`): an account's settings by command that would
//!   leave a discount or credit on a non-payer are refused like the discount itself.
//! - Section 18: the ids that must be unique per payer (part 3's preamble) are checked for
//!   packages, subscriptions and charges across a payer's members (credits and discounts are
//!   on payers only, so per account is per payer); without any `pays = "parent"` the check is
//!   the per-account one of before.
//! - Section 18: a payer's members are rated as one account on one ledger where each lease
//!   is prefixed with its member (`member` NUL `lease`: neither an account id nor an event
//!   string holds a NUL), so keys, resources (minimum, increments), lease states, tags and
//!   counters of two members never merge, while `U(s)`, tiers, egress tiers and the pooled
//!   terms see them together. A payer without other members is rated on its own ledger,
//!   exactly as before. Unpriced usage of a member is listed under the payer's account (the
//!   invoice it would be on). Packages draw by (`to`, `id`, account).
//! - Section 18: `gpubill rate --account` naming an account that does not pay for itself
//!   exits 2 before reading events, naming the account and its payer;
//!   [`crate::pricing::rating::rate_month`] refuses it as `RatingError::NotAPayer` (in `RateMonthError::Rating`).
//!   `rate_all` and `rate_periods` rate payers with their members at home;
//!   [`crate::pricing::domain::Domains::rate_members`] is the engine's entry point for a
//!   payer with its members' ledgers (`Domains::rate` rates an account on its ledger alone,
//!   as before). The engine and `gpubill rate` read `lease.tags` with the same reader
//!   ([`crate::events::event::decode_any`]); the engine's choices are in
//!   [`super::engine`], "Organizations in the engine".
//! - Section 18, `lease.tags`: `tags` is required and an object whose members are strings
//!   (at most 256 bytes, no control character; a name not empty); a missing `tags` is
//!   `missing_field`, another type or a member that is not a string `wrong_type`, a repeated
//!   name `malformed_json`. An empty value is `""` (as a missing one). `time` is optional.
//!   Content (dedupe) is the lease, the tags as a set of (name, value) and `at` (with its
//!   nanoseconds); `at` is floored to the second when metered.
//! - Section 18, allocation: weights are exact rationals (a share `q / U` is not a decimal),
//!   so a split never misses a cent by rounding; the `on_demand` walk is cut where a key's
//!   tag changes (cutting changes no amount). `reserved_usage`, `package_usage`,
//!   `spot_interrupted`, `sla_compensation` and `subscription_refund` lines have amount 0 and
//!   are not split. A row is a cell with a positive weight in some line of non-zero amount,
//!   even when all its parts round to 0.00 (then its `lines` are empty). The `allocation`
//!   field is shown only when the book has an `allocation_tag` (every payer invoice then has
//!   one, possibly empty); `allocation_tag` alone makes a book a part-3 one (its invoices name
//!   their region). In the discount's split, "the parts would give a cell more discount than
//!   its line total" is judged on the sum of the cell's parts of every discount. A line of
//!   non-zero amount without weights (none is known) would go to the payer's own cell with
//!   tag `""`, so the allocation always adds up.
//! - Part 3 in the engine (billing-store, billing-api, billing-kafka): each (account, region)
//!   is a billing domain ([`crate::pricing::domain`]) stored under the account's id at home and
//!   `account@region` in a region (`@` is outside the account id grammar): its own usage keys,
//!   egress, counters, provisional cost, invoices (one per domain and period, numbered in the
//!   one invoice series unless the region has its own), credit balance, adjustments and wallet. A region's spot curve is
//!   kept under `["sku","region"]`. Lease states are kept at home and join every regional
//!   ledger of the account when it is read; a regional ledger is therefore never kept in the
//!   ledger cache (a lease state stamps the home account only). Every rating of the engine
//!   (close, provisional cost, adjustment, as-known-at, verify) goes through
//!   [`crate::pricing::domain::Domains::rate`], so the book, platform and period (the month in
//!   the account's timezone, else the region's) are chosen as `gpubill rate` chooses them.
//!   A close waits (`NotEnded`, and `close_due` stops there) until every domain's month has
//!   ended, in whatever timezone. Late usage is noted against a closed period with the
//!   period's home bounds; a recomputation at the next close covers every closed period
//!   anyway, so the only effect is on the pending-adjustment list of an event within hours of
//!   a month's edge in another timezone. Subscription refunds not consumed carry to later
//!   closes ([`crate::finance::credits::Contribution`] counts `subscription_refund` lines), as
//!   [`crate::pricing::rating::rate_periods`] carries them. An account's timezone may be
//!   set by command (term kind `accounts`, term id the account's id) only while the account
//!   has no issued invoice (409 after: its closed periods would not tile with the new ones).
//!   Part-3 terms may come from the
//!   price book or as commands (charges, scoped discounts, subscriptions with `end`, `refund`
//!   and `auto_renew`).
//! - Wallets per currency: a wallet is a domain's, so it holds that domain's currency. A
//!   top-up or refund names `region` (absent: home) and may name `currency`, which must be the
//!   wallet's (else 422 naming both); a region's invoice is settled from that region's wallet
//!   only. Two regions in one currency keep two wallets (a wallet per region, never mixing
//!   currencies, rather than a wallet per currency shared across regions).
//! - Quotas, holds and balances are a domain's too: quotas are set per (account, region)
//!   (`?region=`), in the region's currency, and measure that domain's provisional cost,
//!   unit-hours, holds and wallet; an authorization names its `region` and holds at the region's
//!   first-tier rate. There is no account-wide limit summed across regions: that would add
//!   amounts in different currencies (an exchange rate is outside the rules). A quota decision
//!   names its account and region apart and is keyed by the account on the quota topic.
//!   Periods of quota decisions and holds are labelled in the price book's timezone, as at home.
//! - Numbering: one invoice series and one credit note series for every domain, unless a region
//!   is given series of its own (`serve --region-prefix REGION=INVOICE:NOTE`); within a close,
//!   each series numbers its documents in domain order.
//! - A started subscription (section 17 by command): what it sold stays (sku, quantity, cycle,
//!   start, price, region); until its `end` has passed, `end` (no earlier than now: elapsed
//!   seconds stay billed), `refund` and `auto_renew` may change, and `cycles` never below the
//!   cycles started. Once its `end` has passed only `cycles` may change: the refund was given.
//!   A DELETE of a started plan still keeps its started cycles and refunds nothing (ending with
//!   a refund is an explicit `end` with `refund = "prorata"`).
