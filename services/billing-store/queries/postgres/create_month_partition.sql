-- Makes a month's table `name` shaped like events (not attached yet). No parameters.
create table if not exists {name} (like events including all)
