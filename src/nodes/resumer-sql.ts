/** The resumer's SQL over `veridex_approvals` (migration 0018_resumptions.sql). */

// One resolved request of this resumer's agent ($4) not yet resumed, not leased by another
// resumer, under its attempt limit, and not one this resumer set aside: leased to the caller
// for $1 milliseconds.
export const CLAIM_RESOLUTION = `
UPDATE veridex_approvals
SET resume_lease_until = now() + make_interval(secs => $1::double precision / 1000),
    resume_attempts = resume_attempts + 1
WHERE id = (
  SELECT id FROM veridex_approvals
  WHERE status <> 'pending' AND resumed_at IS NULL AND resume_attempts < $2
    AND (resume_lease_until IS NULL OR resume_lease_until < now())
    AND NOT (id = ANY($3::text[]))
    AND proposer = $4
  ORDER BY decided_at NULLS LAST, id
  LIMIT 1
  FOR UPDATE SKIP LOCKED
)
RETURNING id, thread_id, status, resume_attempts`;

export const MARK_RESUMED = `
UPDATE veridex_approvals
SET resumed_at = now(), resume_outcome = $2, resume_lease_until = NULL, resume_error = NULL
WHERE id = $1`;

// A failed attempt waits $3 milliseconds (backoff) before any resumer tries again.
export const MARK_FAILED = `
UPDATE veridex_approvals
SET resume_error = $2,
    resume_lease_until = now() + make_interval(secs => $3::double precision / 1000)
WHERE id = $1`;

// Not this resumer's thread: give the lease and the attempt back at once.
export const RELEASE = `
UPDATE veridex_approvals
SET resume_lease_until = NULL, resume_attempts = greatest(resume_attempts - 1, 0)
WHERE id = $1`;

// A resolution in hand: its lease runs $2 milliseconds from now (only while not yet resumed).
export const RENEW_LEASE = `
UPDATE veridex_approvals
SET resume_lease_until = now() + make_interval(secs => $2::double precision / 1000)
WHERE id = $1 AND resumed_at IS NULL`;
