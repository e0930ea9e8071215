-- The next fold stamp (migration 0020): drawn by every fold and close under the writer lock.
select nextval('fold_stamps') as stamp
