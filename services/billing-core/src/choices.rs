//! Where billing-semantics.md is silent or ambiguous, gpubill chooses, and says so here.
//! Each choice is also documented at the code that makes it.
//!
//! Events (section 1, [`crate::events::event`])
//! - Content, for duplicate versus conflict, is the event's *meaning*: subject, time, type and
//!   data, with instants compared as instants and quantities as numbers. Key order, whitespace,
//!   `"Z"` versus `"+00:00"` or `"1"` versus `"1.0"` never turn a redelivery into a conflict.
//!   Unknown extension attributes are not part of the content.
//! - "The first one stands" means the first in delivery order (file order for `gpubill rate`,
//!   log order for the engine); the conflicting later one is dead-lettered.
//! - `time` is optional on `gpu.usage` and required on `net.egress`; `lease` is required on
//!   `gpu.usage` and optional on `net.egress`; an empty string counts as missing.
//! - `quantity` is a decimal string or a JSON integer; a JSON float is `bad_quantity`. The string
//!   follows one grammar everywhere gpubill reads a number ([`crate::common::decimal`]): plain
//!   digits with an optional fraction, no exponent, no underscores, at most 15 decimals (trailing
//!   zeros aside) and 13 integer digits, so every accepted value is exact and two texts that differ
//!   in value never read as one number.
//! - `subject` must be an account id, 1 to 256 of `A-Z a-z 0-9 . _ -` (the grammar of
//!   `POST /v1/admin/accounts`); anything else is `bad_subject` (it would become a billable
//!   account of its own).
//! - Every instant of an event lies in 2000-01-01T00:00:00Z ..= 2100-01-01T00:00:00Z, else
//!   `time_out_of_range`: every period of an event then exists in any timezone. The engine
//!   also refuses an event ending more than a configurable time (default a day) after its
//!   batch's clock as `too_early`. The clock is the engine's, recorded with each fold in the
//!   log (issue 30: the commands topic's `usage.folded` records), and a replay folds each
//!   batch again with it, so the same events are refused again; a record's own Kafka
//!   timestamp (a node agent's clock) never decides. `gpubill rate`, which has no clock,
//!   applies only the fixed range.
//! - The engine keeps identities for a dedupe horizon (default 90 days): an event ending
//!   before its batch's clock less the horizon is `too_late` (its identity may have been
//!   compacted away, so accepting it could count it twice). Late usage within the horizon is
//!   accepted and listed for adjustment (section 7).
//! - A leap second (`23:59:60Z`) is the first second of the next minute.
//! - A record over 64 KiB is kept as its length, SHA-256 and first 1 KiB (log and dead
//!   letter), rejected as `record_too_large`.
//! - In a batch body (a JSON array), each element is a record of its own: one that is not
//!   valid JSON is dead-lettered as `malformed_json` and the others are stored; only a body
//!   that is not an array of elements at all is refused as a whole.
//! - CloudEvents binary content mode ([`crate::events::binary_mode`]; HTTP `ce-*` headers, Kafka
//!   `ce_*` record headers, the data alone as the body) is read as the structured record it
//!   stands for, so one event sent in both modes is a duplicate, not a conflict. Binary mode
//!   is a `ce-specversion` header without a CloudEvents content type (structured and batch
//!   messages may repeat attributes in headers). HTTP header values are unquoted, then
//!   percent-decoded once (`node%2F1` is `node/1`), and must be UTF-8; Kafka header values are
//!   UTF-8 as they are. The data must be JSON (`application/json`, a `+json` type, or no
//!   content type): another content type is `wrong_type`, a body that is not JSON
//!   `malformed_json`, as are headers that do not decode, an attribute given twice, and a
//!   `ce-datacontenttype` or `ce-data` header. No new reason. A message that cannot be
//!   converted is kept as received in a stand-in that decoding refuses with that reason.
//! - Reason names beyond the page's examples: `record_too_large`, `malformed_json`,
//!   `bad_specversion`, `unknown_type`, `missing_id`, `missing_source`, `missing_subject`,
//!   `missing_field`, `wrong_type`, `string_too_long`, `control_character`, `bad_subject`, `bad_time`,
//!   `time_out_of_range`, `too_early`, `too_late`, `empty_interval`, `interval_too_long`, `bad_quantity`,
//!   `bad_bytes`, `bad_class`, `conflict`.
//!
//! Accounts (section 6)
//! - "Named by any event" means any *accepted* event, whatever its period; a rejected event
//!   names no account.
//!
//! Price book (section 3, [`crate::pricing::pricebook`])
//! - Credit amounts (and the quotas' money amounts) have at most the currency's 2 decimals:
//!   `0.005` is refused, not rounded into more credit than granted. `effective_from` is
//!   compared with a period's start exactly, fractions of a second included.
//! - Unknown keys are errors; decimals are strings or integers, never floats; `timezone`
//!   defaults to UTC; reservations must name an sku with an on-demand price;
//!   discount percents of one account add up to at most 100; a last tier with a bound still
//!   takes everything beyond it; off-peak `to = "24:00"` is allowed.
//!
//! Rating (section 4)
//! - An account that could owe more than 10^18 for a period (an upper bound over every
//!   unit-second at the book's highest rate and multiplier, and every GB at the highest egress
//!   rate) is a rating error, never an overflow: accepted but absurd magnitudes.
//! - Off-peak `days` are checked against the local weekday of each second itself, also in
//!   the after-midnight part of a window that wraps ([`crate::pricing::offpeak`]).
//! - The minimum charge counts seconds covered by the resource's events, not by reservations
//!   ([`crate::pricing::minimum`]).
//! - A period whose local midnight does not exist starts at the clock jump
//!   ([`crate::pricing::period`]).
//! - Volume tiers are priced per multiplier: one line per (chosen tier, multiplier).
//!
//! Lines (sections 5 and 6)
//! - Two `reserved_commitment` lines of the same sku sort by their order in the price book.
//! - Quantities are shown without trailing zeros (`2250`, not `2250.00`); multipliers as the
//!   price book wrote them (`0.70`), `1` when no window applies.
//! - A `reserved_usage` line is shown for a reserved sku only when it covered something
//!   (a zero-quantity line is left out like any other).
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
//!   as before). The engine (store, API, Kafka) does not implement section 18 yet: it still
//!   reads `lease.tags` as `unknown_type` ([`crate::events::event::decode_any`]); only the
//!   meter of `gpubill rate` reads it ([`crate::events::event::decode_meter`]).
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
//!
//! Account terms as commands (issue 10, [`crate::pricing::pricebook::AccountTerm`],
//! [`crate::finance::term_changes`], [`crate::finance::holdings`])
//! - A term's JSON body is the price book entry's fields without `account` and `id` (both come
//!   from the path; either in the body is a 400). It becomes the TOML entry it stands for and
//!   is parsed by the price book parser's own functions, so a command term is valid exactly
//!   when the same entry is valid in a price book; errors name the key as
//!   `{kind}.{term_id}.{field}` with its value. JSON floats are refused like TOML floats,
//!   `null` is refused (leave the key out).
//! - Reservations and discounts have no `id` in the price book: the command's `term_id` only
//!   names the command term. Credits, packages, subscriptions and charges (issue 26, kind
//!   `charges`) take `term_id` as their `id`; a command term with the id of one of the price book's own terms of the same
//!   account replaces it (the command's version wins). Other command terms come after the
//!   book's own, in (account, kind, term_id) order, with the next indexes (they draw and sort
//!   after the book's terms). A command discount adds to the account's price book discounts;
//!   the sum must stay at most 100.
//! - Merging happens where the store parses price book versions (`Store::pricebooks`,
//!   `provisional::Books`), once, so closes, provisional costs, the adjustments preview,
//!   quotas and authorization all see it. Terms merge into every version: the newest must
//!   accept them all (a PUT is validated against it; uploading a version that would not
//!   accept them is refused, naming the term); an older version takes the terms it accepts
//!   (a term naming an sku an older version lacks stays out of it, where usage of that sku
//!   is unpriced anyway).
//! - "Now" for the started and consumed rules is the API's clock (`AppState.clock`) when the
//!   command is made; the command carries it (`at_ms`). A replayed command is applied without
//!   those rules (it was allowed once, in the same state) but with the parser's.
//! - Allowed changes ([`crate::finance::term_changes`]): a new term always (whatever its dates); a
//!   reservation before its `from` freely, after it only `to`, not before now, and it cannot
//!   be ended; a discount always (it applies to periods not yet closed); a credit freely until
//!   an issued invoice drew from it, then only `amount`, not below what was drawn, and it
//!   cannot be ended; a package before its `from` freely, after it only a later `to` and more
//!   `hours`, and it cannot be ended; a subscription before its `start` freely, after it only
//!   `cycles`, to no fewer than the cycles started by now (a renewal adds cycles); a charge
//!   freely while the engine's period holding its `at` is open (even after `at`: it is billed
//!   at the close), and once that period is closed not at all, neither changed nor ended (it
//!   was invoiced; a correction is a credit or a new charge). Anything else is 409. A *new*
//!   charge dated into a closed period is allowed: it reaches that period as an adjustment at
//!   the next close (issue 24.1, a charge is dated into the period holding its `at`).
//! - DELETE ends a term set by command: the row keeps a null body (revisions never go back).
//!   A started subscription ended by DELETE keeps its started cycles (stored and recorded as a
//!   `terms.put` with that `cycles`). DELETE of a term that exists only in the price book is
//!   409 (upload a price book without it); of a term never set, 404; of an ended one, 200 with
//!   `changed: false`. A command term that had replaced a price book term of the same id,
//!   once ended, lets the price book's term apply again.
//! - Idempotence: a PUT with the body stored (compared as JSON values) changes nothing and
//!   records no command (`changed: false`).
//! - `GET /v1/balance` holdings are computed with the merged version rating the open period. A
//!   package's remaining unit-seconds are `hours x 3600` less what the rating's own package drawing
//!   takes from the account's ledger over `[earliest package from, now)`, closed or not
//!   ([`crate::finance::holdings::package_balances`]). Credits' remaining amounts come from
//!   [`crate::finance::credits::CreditPool::after_invoices`] (issued invoices only; the open
//!   period's provisional credit is not subtracted). `sla_compensation_credited` is the
//!   compensation issued invoices credited; `sla_compensation_left` what of it is not consumed.
//!   Instants are Unix seconds. A subscription's `current_cycle` is the cycle holding now (none
//!   before the start or after the last cycle); `cycles_left` counts cycles not started.
//!
//! Finance (issue 12)
//! - Invoice numbers are `{prefix}-{year}-{nnnnnn}` (`INV-2026-000123`, at least six digits),
//!   gapless per (prefix, year). The year is the calendar year of the **issue date** in the
//!   timezone of the price book version the invoice is rated with (a November invoice issued
//!   in January is numbered in January's year), as fapiao and most VAT regimes number by
//!   issue date. Within one close, invoices are numbered in account order. Zero invoices are
//!   numbered like any other ([`crate::finance::numbering`]).
//! - Automatic closing (`serve --close-grace`) starts at the period of the first metered
//!   second (usage or egress) and closes due periods in order; a refused one (unpriced usage,
//!   no price book) holds back the later ones, since credits carry from one period to the
//!   next. Periods before the first metered second are closed only by hand
//!   ([`crate::pricing::period::due_for_close`]).
//! - Section 7, what "the difference" is: each close rates every earlier closed period of
//!   each account again (over the ledger as it is now, with the period's price book version
//!   and the credit balance after the earlier periods' effective invoices) and compares it
//!   with what the period's invoice *effectively* says: the issued invoice, or the
//!   recomputation its latest adjustment was issued against. The difference is shown per
//!   line component plus `discount`, `credit` and `tax` (signed as they move what is owed),
//!   so an original's adjustment lines add up to the difference of the totals; zero
//!   differences make no line. A recomputation differing only in quantities or SLA
//!   compensation (no money moves) still becomes effective, with no line
//!   ([`crate::finance::adjustment`]).
//! - Adjustment lines do not enter the new invoice's section 5 arithmetic (its `total` stays a
//!   pure function of its own period); they add to `amount_due = max(0, total + Σ
//!   adjustments)`. When that sum is negative, the rest is one credit note per account and
//!   close (its own series, `CN`), referencing every original whose net adjustment is
//!   negative, and credited to the account's wallet.
//! - An account with no invoice for a closed period (unknown at its close) gets adjustment
//!   lines with no original id or number, naming the period.
//! - Credits consumed by an adjustment count against later periods as if consumed in the
//!   original period (the recomputation becomes that period's effective invoice).
//! - The wallet settles an invoice at issue as far as its balance goes (partial settlement
//!   possible); a top-up later does not settle older invoices by itself (finance records a
//!   payment). A refund may not take the balance below zero. References are unique per
//!   account across kinds; `:` is reserved for the engine's own references
//!   (`settlement:`, `credit_note:`, `correction:`).
//! - Status: `paid` when payments cover `amount_due` (an invoice owing 0.00 is paid at
//!   issue), else `overdue` from `payment_days` (30) days after issue, else `issued`.
//! - `prepaid_balance` in quotas sets the wallet by a `correction` movement and turns on the
//!   prepaid check (wallet balance against what invoices still owe, the open period's cost
//!   and live holds).
//! - As-known-at rebuilds usage from each accepted event's fact with its ingest time (the
//!   fold's clock; in a replay, the records' timestamps), and the credit balance from the
//!   invoices issued by then; platform events (spot prices, node faults) likewise by their
//!   ingest time. Events stored before migration 0018 have no ingest time (their egress and
//!   rental facts count as known from the start, their usage not at all).
//! - Journal: package and subscription lines are deferred revenue; a package is recognized
//!   by its `package_usage` lines (price x used / its unit-seconds, rounded per period), a
//!   subscription cycle by its seconds inside the period (rounded per period); rounding may
//!   leave a cent of deferred revenue per term. Top-ups, refunds and corrections belong to
//!   the journal of the period holding their time (price book timezone); payments to the
//!   journal of the invoice's period.
//!
//! Account terms and closed periods (issue 24.1,
//! [`crate::finance::term_changes::terms_for_closed_period`])
//! - A closed period is re-rated (at each later close, for adjustments; by the adjustments
//!   preview; by `gpubill verify`) with the account terms as they stood when it closed: every
//!   revision of a term is kept, and each period records the revision it closed at. A term
//!   set, changed or ended since reaches the closed period only when it is *dated into* it, in
//!   its version at the close or its version now: a reservation or package whose `[from, to)`
//!   overlaps the period, a subscription from its `start` to the end of its last cycle, a
//!   credit or a discount with a `from` before the period's end and no `to` at or before its
//!   start, a charge whose `at` is in the period. Then
//!   the term's current version (or its absence) rates the period and the difference is an
//!   adjustment at the next close, as late usage is, whether or not a late event arrives. An
//!   undated term (a discount or a credit without `from`) never reaches a period
//!   closed before it was set or changed; it applies from the first period not closed.
//! - `verify` rates an invoice with the terms of its period's close, and an adjustment's
//!   recomputation with the rule above as of the close that issued it.
//! - Periods closed before migration 0021 count as closed at the latest term revision of that
//!   moment, and the terms' earlier revisions (not kept before it) as that one.
//!
//! ## Hostile clients (issue 24, items 4 to 8)
//!
//! - `Idempotency-Key`: only the answer of a request whose handler ran is kept. An answer
//!   given before it (401 unknown token, 429 rate limited, 415 content type, 400 for a body
//!   that is not the JSON the route takes or repeats a member, axum's own 4xx for a path or
//!   query) is never kept: the same key runs again. The content type is part of the request's
//!   fingerprint (with method, path and query, body).
//! - Every JSON request body refuses a repeated member, at any depth, with a 400 naming it
//!   (after the route's token check: a wrong token is still a 403 first); a content type
//!   other than `application/json` or a `+json` type is a 415 (none at all is JSON).
//! - One decimal grammar for every amount (`crate::common::decimal`, the events'); one rule for
//!   names (`crate::common::text::check_name`: not empty, no control character, not only invisible
//!   characters) for buyer and seller fields and every string and name of a price book; a price
//!   book's `currency` is three capital letters (ISO 4217); every instant of a price book or term
//!   lies in the events' range, 2000-01-01T00:00:00Z ..= 2100-01-01T00:00:00Z.
//! - Audit actors: `admin` for the admin token, `key:<key id>` / `ingest` for other tokens,
//!   `system:<task>` for what the engine does by itself (`system:autoclose`), `system`
//!   for any other work outside a request. Carried by the command's outbox header
//!   `gpubill-actor`; a command recorded before reads `admin`.
//! - Rate limits are per API key: each customer key has its own bucket, a second key of the
//!   same account is not slowed by the first.
//!
//! ## What a customer sees (issue 24, items 11 to 15)
//!
//! - `GET /v1/me` answers every token (admin, ingest, customer) its role; a customer key's
//!   name is its key id (the first 16 hex digits of its SHA-256, as the key list shows it).
//! - An sku's unit is chosen by its family, the sku's name up to its first `.`
//!   ([`crate::pricing::prices::sku_unit`]): `gpu.*` in cards (`card_hour`), `storage.*` in GB
//!   (`gb_hour`), any other family in its own units (`unit_hour`). Usage charts and totals
//!   never add two families, and `GET /v1/usage?family=` answers one family.
//! - Every instant the API writes is RFC 3339 UTC (`GET /v1/balance`'s package, credit and
//!   subscription dates were Unix seconds).
//! - A printable invoice shows its period as the local dates of its first and last day in its
//!   price book version's timezone (the end is exclusive: the last day is the one before it).
//! - The price list (`GET /v1/prices`, [`crate::pricing::prices`]) is the version rating the open
//!   period with the account terms merged in; the spot price is the one in force now; off-peak
//!   rates are each on-demand tier's rate times the window's multiplier; rates show normalized
//!   with at least 2 decimals and are never rounded. Its top level is the home region (as
//!   before section 19); `regions` lists every other region by name (issue 26), each in its
//!   currency with only the skus it names (nothing inherited), its off-peak windows in its
//!   timezone, its egress and tax, and its spot price from its own curve, else its book's
//!   `spot_rate_per_hour` (the engine keeps one spot curve per sku, filed as home: see "Part
//!   3 in the engine"). The plain discount percent is shown once: it applies in every
//!   region; scoped discounts are not shown. The open period's label is home's.
//!   `GET /v1/admin/pricebook` answers a
//!   version's TOML exactly as uploaded (the terms set by command are not in it: they are
//!   listed by `GET /v1/admin/accounts/{id}/terms`).
//!
//! ## Settling invoices from the wallet after issue (issue 24.2)
//!
//! - A top-up pays the account's unpaid invoices from the wallet at once, in its transaction
//!   ([`crate::finance::settlement::oldest_first`]): the oldest first, by issue time, then number
//!   (the invoices of one close share an issue time), each as far as the wallet's whole balance
//!   goes (not only the top-up's amount: money already in the wallet pays too).
//! - An invoice the balance cannot cover is paid in part: a payment of what is left, the
//!   invoice stays `issued` (and turns `overdue` on time) until its payments cover its
//!   `amount_due`; then its stored status becomes `paid`.
//! - Credit notes are not payable (they were credited to the wallet at issue); settling one
//!   is refused (422). A refund, a correction or a credit note settles nothing by itself.
//! - Each payment is a `settlement` movement and a `wallet` payment under one reference:
//!   `settlement:{invoice}` for an invoice's first wallet payment, `settlement:{invoice}:{n}`
//!   for its n-th.
//! - `serve --no-topup-settlement` (settings file `topup_settlement = false`) turns it off;
//!   the top-up's command records whether it settled, so a replay repeats what happened
//!   whatever the replaying engine's setting. `POST /v1/admin/invoices/{id}/settle` pays one
//!   invoice on demand either way (an `invoice.settle` command).
//!
//! ## What `gpubill verify` checks of the money (issue 24.3)
//!
//! - Every stored figure a later figure is computed from: an invoice's `credit` column (the
//!   next periods' credit pool reads it) and `total` against its body, which is rated again;
//!   an adjustment's `credit` against its body; `status` against its payments (`paid` once
//!   they cover `amount_due`, else `issued`: `overdue` is never stored, it is the clock's).
//! - Numbering: a document number is `{prefix}-{year}-{nnnnnn}`; per series and year the
//!   stored invoices (or credit notes) hold exactly `1..=last` of `number_series`, and a
//!   later issue never has a lower number. A missing number is reported by itself (its
//!   document is gone); a number above `last` names its document.
//! - Wallets: `balance` is the sum of the movements, `outstanding` the sum over the
//!   account's invoices of amount due less payments; per invoice, the `wallet` payments add
//!   up to its `settlement` movements; each credit note has `credit_note` movements of its
//!   amount. The money checks are global: `--period` narrows only the re-rating.
//!
//! ## Price book versions in memory (issue 24, item 9)
//!
//! - A version is held compiled only while it can rate a period being rated: the latest (the
//!   account terms merged in) always; an older one when a period it rates is rated (an open
//!   period a later version's `effective_from` leaves to it), compiled on demand from its
//!   stored TOML and kept in a least-recently-used list of `billing_store::OLDER_COMPILED_MAX`
//!   (2). A closed period re-rated (at a close, by `gpubill verify`, the adjustments preview,
//!   the journal) compiles the version it was closed with for that work and does not keep
//!   it. An upload compiles its own version once and never the earlier ones; the version it
//!   replaces as the latest is dropped. Choosing the version that rates a period reads only
//!   the versions' numbers and `effective_from` (and, of an older version with an
//!   `effective_from`, its timezone, learned once). No cap on a book's size but the API's
//!   10 MiB body.
//! - Whether a period's rating reads the account's whole history (packages, SLA compensation)
//!   is decided by the version that rates it, not by any version ever uploaded.
//!
//! ## Kafka topics (issue 24, item 10)
//!
//! - `serve` in Kafka mode creates its missing topics at start (usage with
//!   `--usage-partitions`, default 4; commands with one partition and `retention.ms=-1`;
//!   invoices, quota decisions and dead letters with one), creating before looking so a
//!   metadata request never auto-creates one with the broker's defaults. Existing topics are
//!   kept as they are, except a commands topic of more than one partition: `serve` refuses to
//!   start, naming it. Brokers that do not answer within 30 s also stop the start.
//!
//! ## The ingest's 503 (issue 30)
//!
//! - `POST /v1/events` answering 503 means "retry", never "not written": the records may
//!   still reach the topic later, and their identities dedupe the client's retry. An ingest
//!   producer that was fenced (`ProducerFenced`, `InvalidProducerEpoch`) or failed fatally
//!   is replaced (at most 3 times per request) and the request retried within its own
//!   deadline.
//!
//! ## Estimates (issue 26, [`crate::pricing::estimate`])
//!
//! - `POST /v1/estimate` prices a lease as if it were the account's only usage in the
//!   billing periods it touches: the lease becomes `gpu.usage` events (cut at a day, folding
//!   back into one run) in a fresh meter, rated by [`crate::pricing::rating::rate_month`] for
//!   each period (the account's timezone, else the region's), so tiers start from zero and
//!   every rule (off-peak windows, increments, minimums, reservations, packages,
//!   subscriptions' reserved capacity) applies as for real usage. The basis is repeated in
//!   the response's `basis`.
//! - Only the lines of the lease's sku that bill its usage are kept (`on_demand`, `spot`,
//!   `reserved_usage`, `package_usage`, `spot_interrupted`, `state:*`, `minimum`,
//!   `increment`); the account's commitments, package and subscription prices, refunds,
//!   charges, egress and SLA lines are left out, then the account's discounts (plain and
//!   scoped) and the tax are applied to what is left. Credits are never applied: an estimate
//!   is a price, not what the account will pay after its balance.
//! - Spot is priced at the sku's `spot_rate_per_hour`: spot curves are market data, not
//!   terms, and the estimate reads no events.
//! - A lease lasts 1 s to 31 days; its quantity and instants obey the limits of a
//!   `gpu.usage` event. The price book is the version in force at the lease's start. Each
//!   refusal names its field (`sku`, `quantity`, `class`, `region`, `start`,
//!   `duration_seconds`); an estimate writes nothing.
//!
//! ## FOCUS export (issue 27, [`crate::finance::focus`])
//!
//! - Version and columns: what the FinOps Foundation's `focus-validator` 1.0.0 checks with its
//!   default FOCUS 1.0 rule set. That rule set still names some columns as FOCUS 1.0's preview
//!   did (`Provider`, `Publisher`, `InvoiceIssuer`, `ResourceID`), and its `SkuPriceId` rule
//!   reads the preview's `ChargeType`: each is written, and beside it the name of the final
//!   FOCUS 1.0 text (`ProviderName`, `PublisherName`, `InvoiceIssuerName`, `ResourceId`) with
//!   the same value; `ChargeType` repeats `ChargeCategory`. `InvoiceId` (FOCUS 1.1) is the
//!   document number; `x_Component` is gpubill's name of the row. Costs and quantities are
//!   exact decimals always written with a `.` (`36000.0`): the validator reads a column of
//!   whole numbers as integers and refuses it as not decimal. Instants are UTC with `Z`
//!   (the invoice's period, whatever its timezone).
//! - Rows of an invoice: one per line (`SubAccountId` the invoice's account, no `Tags`);
//!   with an `allocation` (section 18) one per allocation row's line instead (`SubAccountId`
//!   the row's account, `Tags` `{"<allocation_tag>": "<tag>"}`, `{}` for the empty tag, no
//!   quantities: allocated parts have none), and lines of amount 0, which the allocation does
//!   not split, have no row. Then the discount and the credit (`ChargeCategory` `Credit`,
//!   negative), the tax (`Tax`), per allocation row when there is one, each only when not
//!   zero; then one `Adjustment` row (`ChargeClass` `Correction`) per adjustment line, for
//!   the invoice's account, its charge period the invoice's (the original period is in
//!   `ChargeDescription`). The rows' `BilledCost` adds up to `total` plus the adjustment
//!   lines (the handler refuses to answer otherwise); a credit note is not a row (it is what
//!   negative adjustment rows leave below zero, already in them).
//! - Categories: `Usage` for on_demand, spot, reserved_usage, package_usage, state:*,
//!   egress, increment, minimum and spot_interrupted (frequency `Usage-Based`); `Purchase`
//!   for reserved_commitment and subscription (`Recurring`), package and charge
//!   (`One-Time`); `Credit` for sla_compensation and subscription_refund (amount 0 here:
//!   the money reaches a later invoice's `credit`). `PricingCategory`: `Standard` (on-demand
//!   rates, egress, minimum, increment, states), `Dynamic` (spot), `Committed`
//!   (reservations, packages, subscriptions), `Other` (charges).
//! - Costs: gpubill rates at the price book's prices and takes discounts off the invoice, so
//!   a line row's `ListCost` = `ContractedCost` = `EffectiveCost` = `BilledCost` = its
//!   amount. The discount row (a negotiated term) has `ListCost` 0 and the discount in
//!   `ContractedCost`, `EffectiveCost` and `BilledCost`; the credit row has `ListCost` and
//!   `ContractedCost` 0; tax rows carry the tax in all four. So per invoice `EffectiveCost`
//!   and `BilledCost` both add up to the total, `ListCost` to subtotal plus tax. Nothing is
//!   amortized: packages and reservations are billed in the period that charges them, and
//!   `CommitmentDiscount*`, `ListUnitPrice` and `ContractedUnitPrice` are null.
//! - Names: provider, publisher and invoice issuer are the seller's profile name, else
//!   `gpubill`; `ServiceName` `GPU Compute` (`Compute`), egress `Data Transfer`
//!   (`Networking`). `BillingAccountId` is the invoice's account (the payer),
//!   `BillingAccountName` and `SubAccountName` the account's profile name, else its id.
//!   `RegionId` and `RegionName` are the invoice's region, null at home. `SkuId` is the sku
//!   (`egress:<dest>` for egress, the component for a line without one); `SkuPriceId` the
//!   sku, component and tier (and multiplier or spot price); `ResourceId` the package,
//!   subscription or charge id of its line, else null (lines sum over leases). Units:
//!   `Unit-Seconds`, `GB`, `Package`, `Charge`; `ConsumedQuantity` only on `Usage` rows.
