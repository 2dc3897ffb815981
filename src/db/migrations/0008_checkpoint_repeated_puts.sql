-- How many times a checkpoint was put again with the same id, so that the thread's
-- checkpoint_count can grow by one on every put without first looking the id up (the count
-- check of verifyThread adds these back). Fast default: no table rewrite.
ALTER TABLE veridex_checkpoints ADD COLUMN repeated_puts integer NOT NULL DEFAULT 0;
