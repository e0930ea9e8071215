-- Takes the next $3 numbers of series $1 in year $2 and answers the last of them (the block
-- is last - $3 + 1 .. last). Run in the transaction that issues the documents.
insert into number_series (series, year, last) values ($1, $2, $3)
on conflict (series, year) do update set last = number_series.last + excluded.last
returning last
