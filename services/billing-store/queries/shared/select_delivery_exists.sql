-- Whether delivery (endpoint $1, notification $2) exists: its status.
select status from deliveries where endpoint = $1 and notification = $2
