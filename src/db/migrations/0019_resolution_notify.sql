-- Wakes resumers (README "Resuming runs when approvals resolve") the moment a request
-- resolves: a NOTIFY on `veridex_approval_resolved` whose payload is the schema, so resumers of
-- other schemas on the same database ignore it. Only a hint: the resumer re-reads the requests
-- under a row lock and re-proves every approval before a call runs, and polls as well.
CREATE FUNCTION veridex_notify_resolution() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('veridex_approval_resolved', TG_TABLE_SCHEMA);
  RETURN NULL;
END;
$$;

CREATE TRIGGER veridex_approvals_resolved
AFTER INSERT OR UPDATE OF status ON veridex_approvals
FOR EACH ROW WHEN (NEW.status <> 'pending')
EXECUTE FUNCTION veridex_notify_resolution();
