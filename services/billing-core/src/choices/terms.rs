//! Account terms as commands (issue 10) and account terms of closed periods (issue 24.1).
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
