-- Inbox sessions and invitations sealed by the directory key (README "Approvals inbox"): a row
-- inserted or edited with psql — a session for an admin, an invitation, its inviter — has no
-- valid seal and opens nothing. Rows from before this migration have none: they are refused
-- (approvers sign in again; admins issue new invitations).
ALTER TABLE veridex_inbox_sessions ADD COLUMN seal text;
ALTER TABLE veridex_inbox_invitations ADD COLUMN seal text;
