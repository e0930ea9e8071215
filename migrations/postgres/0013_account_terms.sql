-- Account terms set as commands (issue 10: PUT /v1/admin/accounts/{id}/terms/{kind}/{term_id}).
-- One row per (account, kind, term_id): its current body (the price book's fields as JSON,
-- without `account` and `id`), or null once ended by DELETE. `rev` is the store-wide revision
-- of the last change (the largest is how far the cached price books have merged terms); rows
-- are never removed, so it never goes back.
create table account_terms (
    account text not null,
    kind text not null,
    term_id text not null,
    body text,
    rev bigint not null,
    updated_at_ms bigint not null,
    primary key (account, kind, term_id)
);
create index account_terms_by_rev on account_terms (rev);
