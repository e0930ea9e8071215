//! Finance: numbering, closes and adjustments, wallets (issue 12), settling from the wallet
//! (issue 24.2), what `gpubill verify` checks (issue 24.3) and the FOCUS export (issue 27).
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
