//! The API: hostile clients (issue 24, items 4 to 8), what a customer sees (items 11 to 15),
//! the ingest's 503 (issue 30) and estimates (issue 26).
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
