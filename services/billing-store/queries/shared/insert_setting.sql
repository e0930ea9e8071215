-- Sets setting $1 to $2 only when unset.
insert into settings (name, value) values ($1, $2) on conflict (name) do nothing
