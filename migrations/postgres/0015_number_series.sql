-- Issue 12, document numbers: one gapless series per (prefix, year), e.g. INV-2026-000123.
-- `last` is the last number issued; a close takes its block of numbers by moving it, in the
-- transaction that writes the invoices, so a close that rolls back (a crash, a refusal)
-- leaves no gap and a number is never issued twice.
create table number_series (
    series text not null,
    year integer not null,
    last bigint not null check (last > 0),
    primary key (series, year)
);
