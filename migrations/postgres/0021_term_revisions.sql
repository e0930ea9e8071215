-- Issue 24.1: account terms reached back into closed periods. Re-rating a closed period (an
-- adjustment at a later close, `gpubill verify`) merged the terms as they are now into its
-- price book version, so a discount set after the close applied to it. A closed period is now
-- re-rated with the terms as they stood at its close, plus the later changes of terms dated
-- into it (billing_core::term_changes::terms_for_closed_period). That needs every revision of
-- every term, not only the current one `account_terms` keeps, and the revision each period
-- was closed at.
--
-- `account_term_revisions`: one row per change, `rev` the store-wide revision of
-- `account_terms` (body null: ended). The terms at revision R are, per (account, kind,
-- term_id), the body of its latest row with rev <= R. Rows are never removed.
create table account_term_revisions (
    rev bigint primary key,
    account text not null,
    kind text not null,
    term_id text not null,
    body text,
    recorded_at_ms bigint not null
);
-- Before this migration only the latest revision of each term is known: it stands for all.
insert into account_term_revisions (rev, account, kind, term_id, body, recorded_at_ms)
select rev, account, kind, term_id, body, updated_at_ms from account_terms;
-- The latest term revision when the period was closed. Periods closed before this migration
-- count as closed at the latest revision now (the terms they were and are re-rated with).
alter table periods add column terms_rev bigint;
update periods set terms_rev = (select coalesce(max(rev), 0) from account_terms);
