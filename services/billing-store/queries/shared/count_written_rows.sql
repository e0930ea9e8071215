-- How many rows anything ever wrote (events, dead letters, price books, accounts, invoices,
-- account terms, profiles, positions of consumers other than the embedded consumer $1): 0 when
-- empty.
select (select count(*) from events) + (select count(*) from dead_letters)
+ (select count(*) from pricebooks) + (select count(*) from accounts)
+ (select count(*) from invoices) + (select count(*) from account_terms)
+ (select count(*) from account_profiles)
+ (select count(*) from consumer_offsets where consumer <> $1) as n_rows
