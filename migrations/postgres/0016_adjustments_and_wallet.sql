-- Issue 12, finance. Adjustments (billing-semantics.md section 7), credit notes, what each
-- invoice owes after its adjustments, payments, and the prepaid wallet.

-- What a new invoice owes: its total plus its adjustment lines, never below 0.00 (the rest
-- of a negative adjustment is a credit note). Invoices issued before this column owe their
-- total.
alter table invoices add column amount_due text;
-- The adjustment lines the invoice carries (a JSON array; null: none) and the credit note
-- issued with it (its id; null: none). The body stays the section 6 invoice.
alter table invoices add column adjustments text;
alter table invoices add column credit_note text;

-- A closed period's invoice recomputed with the usage and part-2 events that arrived after
-- it was issued, recorded when the close of a later period (closed_period) issued the
-- difference as adjustment lines on document_id. The latest row of an (account, period) is
-- what the period's invoice effectively says from then on (its credit and compensation
-- count in later credit balances; the next difference is taken against it).
create table adjustments (
    account text not null,
    period text not null,
    closed_period text not null,
    document_id text not null,
    seq bigint not null,
    credit text not null,
    body text not null,
    issued_at_ms bigint not null,
    primary key (account, period, closed_period)
);

-- Credit notes: the part of an account's negative net adjustment its new invoice could not
-- absorb, a document of its own (own number series), credited to the account's wallet.
create table credit_notes (
    id text primary key,
    account text not null,
    period text not null,
    number text not null unique,
    invoice_id text not null,
    amount text not null,
    issued_at_ms bigint not null,
    body text not null,
    unique (account, period)
);

-- Payments of invoices: from the wallet at issue (method 'wallet') or recorded by the admin
-- (method 'external'). An invoice is paid once they cover its amount_due.
create table invoice_payments (
    seq bigint generated always as identity primary key,
    invoice_id text not null,
    amount text not null,
    method text not null,
    reference text not null,
    at_ms bigint not null,
    unique (invoice_id, reference)
);

-- The prepaid wallet: an append-only ledger of money movements per account. Signed amounts:
-- topup and credit_note positive, refund and settlement negative, correction either. The
-- balance is their sum. A reference is unique per account: a top-up or refund sent twice is
-- stored once.
create table wallet_movements (
    seq bigint generated always as identity primary key,
    account text not null,
    kind text not null,
    amount text not null,
    reference text not null,
    document_id text,
    at_ms bigint not null,
    unique (account, reference)
);

-- Per account, kept with every movement, issue and payment in their transactions: the
-- wallet's balance (the sum of its movements) and what its issued invoices still owe (their
-- amount_due less their payments). What authorization reads of a prepaid account.
create table wallets (
    account text primary key,
    balance text not null,
    outstanding text not null,
    updated_at_ms bigint not null
);
