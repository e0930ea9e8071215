-- The next fold stamp (migration 0020): drawn by every fold and close (one writer at a time).
update fold_stamps set last = last + 1 returning last as stamp
