-- Every account's notification settings (the tick evaluates them): account, body (JSON).
select account, body from notify_settings order by account
