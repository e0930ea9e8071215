-- Provisional cost: each account's open period rated so far (the invoice it would get, with the
-- invoices' own function), rewritten in the transaction of every batch that moves the account's
-- ledger and of every price book upload or close (which change what the ledger rates to).
create table provisional_costs (
    account text not null,
    period text not null,
    total text not null,
    -- {"sku": "unit-seconds"} of on-demand, reserved and spot usage (gpu_hours quotas)
    unit_seconds text not null,
    -- the provisional invoice, as JSON
    body text not null,
    -- the batch position it was computed at (partitions and next offsets), or null
    position text,
    updated_at_ms bigint not null,
    primary key (account, period)
);
