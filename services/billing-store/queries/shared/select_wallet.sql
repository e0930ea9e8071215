-- Account $1's wallet balance and what its invoices still owe; no row: no movement and no
-- invoice owing anything yet.
select balance, outstanding from wallets where account = $1
