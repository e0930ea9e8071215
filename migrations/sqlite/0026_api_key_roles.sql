-- Issue 27 (roles and scopes): every API key has a role (owner, finance, viewer, member; the
-- keys made before are owners, as they could do everything their account could), who made
-- it (`admin` or `key:<key id>`; unknown for the keys made before), and when it was revoked:
-- a revoked key stays listed (its id, role and times) and no longer authenticates. Same text
-- for both databases.
alter table api_keys add column role text not null default 'owner';
alter table api_keys add column created_by text;
alter table api_keys add column revoked_at_ms bigint;
