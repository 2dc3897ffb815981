-- Who sponsored a key enrolled without its approver's own proof (README "Approvals inbox"): the
-- inbox admin whose invitation enrolled it. Sealed with the key; decisions made with it never
-- count in one quorum with the sponsor's own.
ALTER TABLE veridex_approver_keys ADD COLUMN sponsor text;
