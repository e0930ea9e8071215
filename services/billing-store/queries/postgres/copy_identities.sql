-- The fast way in for a batch's identities (`identities.rs`): a binary `COPY`, each row
-- (16-byte identity, 16-byte fingerprint, account, log position, end in seconds). The
-- primary key on ident refuses a held identity (a unique violation) in the insert's descent.
copy events (ident, fingerprint, account, log_seq, end_s) from stdin (format binary)
