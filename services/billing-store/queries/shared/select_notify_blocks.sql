-- Every state that blocks authorizations: account, subject, block (JSON {node, used, limit}).
select account, subject, block from notify_states where block is not null order by account, subject
