-- What each execution under an idempotency key was (tool, input schema, arguments), so that a
-- retried call that changed is refused as a conflict instead of running again. Keys no longer
-- depend on the tool's description: a reworded tool finds its earlier executions.
ALTER TABLE veridex_idempotency_keys ADD COLUMN fingerprint text;
