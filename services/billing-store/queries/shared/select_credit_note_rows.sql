-- Every credit note (issue 24.3, verify): id, account, number, amount, issued_at_ms.
select id, account, number, amount, issued_at_ms from credit_notes order by issued_at_ms, number
