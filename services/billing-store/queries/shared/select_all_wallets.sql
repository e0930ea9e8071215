-- Every wallet (issue 24.3, verify): account, balance, outstanding.
select account, balance, outstanding from wallets order by account
