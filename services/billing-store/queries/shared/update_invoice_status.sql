-- Invoice $1's status $2 (`issued` or `paid`, issue 24.2: kept with its payments).
update invoices set status = $2 where id = $1
