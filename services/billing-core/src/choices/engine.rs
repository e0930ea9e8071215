//! The engine: price book versions in memory (issue 24, item 9), Kafka topics (item 10) and
//! organizations (issue 27).
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
//! ## Organizations in the engine (issue 27)
//!
//! - **Who pays is the price book's, terms merged**: the organization that rates a period is
//!   that of the price book version rating it, with the account terms set by command merged
//!   in (`[[accounts]]`'s `parent` and `pays`, or the `accounts` term of
//!   `POST`/`PATCH /v1/admin/accounts`). Ledgers, provisional costs and wallets stay per
//!   billing domain; a payer's invoice is rated over its members' ledgers in its region.
//! - **A move takes effect from a period, never in a closed one.** Moving an account (a
//!   change of its `accounts` term, a command) re-rates the open periods with the new tree,
//!   as any term change does. With `effective_from` the term keeps the account's places over
//!   time (`moves`, each from a month `YYYY-MM`): period `M` is rated with the tree after the
//!   moves from `M` or earlier (`PriceBook::at_period`), so the periods before keep their
//!   payer, open or closed. An account has one place per period (one payer, one invoice):
//!   `effective_from` is a month or the instant a period of the account starts (in its
//!   payer's timezone), and an instant inside a period is refused rather than rounded; a
//!   period is never split between two payers. A move from a closed period, or a change of
//!   one, is a 409 (`term_changes::check_change`). Without `effective_from` a move reaches
//!   every period not yet closed: the account's own place when no move is held by a closed
//!   period, else a move from the month after the last closed period. A closed period is
//!   re-rated (adjustments, `verify`) with the terms it was closed with and the tree of its
//!   month. The tree of the organization view and of key scopes is that of the current month
//!   (a move scheduled for December changes scopes on December's first instant).
//! - **A member's own cost is its allocated part.** The provisional invoice of a payer with
//!   members carries its allocation (by member when the book has no `allocation_tag`, every
//!   tag `""`), also without an `allocation_tag`; an issued invoice carries one only with the
//!   tag, as `gpubill rate`'s. Each member has a provisional row of its own: its allocated
//!   total, and its share of the usage lines' unit-seconds (by the allocation's weights,
//!   rounded toward zero to 6 decimals), which its quotas and authorizations measure.
//!   `GET /v1/cost/current` of a member is a 409 naming its payer; `GET /v1/allocation` is its
//!   view.
//! - **A member that stops paying for itself** keeps its issued invoices; adjustments of its
//!   closed periods are made only while it is a payer (it has no invoice of its own to carry
//!   them after it joins another payer).
//!
//! ## Shards (issue 29)
//!
//! - The shard key is the **root of an organization tree**, not the payer: a payer inside a
//!   tree (`pays = "self"` under a parent) stays with its tree, because budgets of an ancestor
//!   read the whole subtree. The root is taken from the latest price book's organization with
//!   the account terms merged in; moves of accounts dated later do not move a tree.
//! - An organization change that would carry an account whose data a shard holds into a tree
//!   that shard does not hold (a price book upload, an `accounts` term) is refused there with
//!   409, naming the account and the two roots: its past usage would stay behind. A shard that
//!   never saw the account accepts the same upload (price books are uploaded shard by shard).
//! - A record is folded by the shard holding its tree **at the record's position** in its
//!   partition: before a move's cutover by the source, from it on by the target. Platform
//!   events are folded by every shard; a record that cannot be decoded (no account known) is
//!   dead-lettered by shard 0 only.
//! - On shards each tree numbers its documents in a series of its own, `{prefix}-{root}`
//!   (`INV-corp-2026-000001`; regions' prefixes alike), not in the store-wide series: shards
//!   would otherwise need one sequence between them, and a moved tree's numbers would depend
//!   on which shard issued them. The series (its `number_series` rows) moves with the tree, so
//!   its numbers are gapless per tree and the same as a run without the move. A store-wide
//!   series is then only the documents a store issued before it became a shard.
//! - A move is **a command of both shards** (`tree.moved_out` with the source's delete,
//!   `tree.moved_in` with the target's rows, `tree.move_abandoned`), so a shard's replay
//!   rebuilds what trees left or joined. The target's command carries the rows themselves,
//!   not a pointer to the source's history: a replay of one shard reads only its own topics.
//!   The rows travel in parts of at most 512 KiB of hex (one broker message each); an attempt
//!   draws a random nonce, so an abandoned attempt and the move made again (same number,
//!   perhaps the same rows) are two commands, not one relayed twice.
