-- The directory key's seal over each approver and each key (README "Approver directory"): a
-- row whose seal does not verify — inserted or edited with psql rather than through
-- `veridex approvers`, the inbox or the library — is ignored. Rows from before this migration
-- have none until an operator vouches for them with `veridex approvers seal`.
ALTER TABLE veridex_approvers ADD COLUMN seal text;
ALTER TABLE veridex_approver_keys ADD COLUMN seal text;
