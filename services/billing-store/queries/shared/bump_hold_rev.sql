-- Moves the hold revision of account $1 up by one (1 when it had none), answering it.
insert into hold_revs (account, rev) values ($1, 1)
on conflict (account) do update set rev = hold_revs.rev + 1 returning rev
