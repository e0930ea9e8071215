-- Issue 12, printable invoices: the buyer's and seller's profiles (增值税发票 fields: 名称 name,
-- 纳税人识别号 tax id, 地址 address, 电话 phone, 开户行 bank, 账号 bank account, email), set
-- with PUT /v1/admin/accounts/{id}/profile and PUT /v1/admin/seller. One row per account, its
-- profile as JSON (billing_core::profile::Profile, validated before it is written); the
-- platform's own profile, the seller's, is the row of the reserved key '@seller' (not an
-- account id: those are A-Z a-z 0-9 . _ -). Every change is a `profile.put` command.
create table account_profiles (
    account text primary key,
    body text not null,
    updated_at_ms bigint not null
);
