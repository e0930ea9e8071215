#!/usr/bin/env bash
# No row of the database is read by column position (issue 25: the store boundary is typed):
# a row's columns are read by the names the statements give them (`r.get("column")`), so a
# reordered select list cannot silently swap two values. Lists every positional read
# (`.get(0)`, `.get::<T, _>(1)`, `.try_get(2)`, also with nested generics such as
# `.get::<Option<String>, _>(3)`) in services/*/src and exits 1; exits 0 when there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='\.(try_)?get(::<.*>)?\([0-9]+\)'
if hits=$(grep -rnE "$pattern" services/*/src); then
    echo "positional row reads (read the column by name instead):" >&2
    echo "$hits" >&2
    exit 1
fi
