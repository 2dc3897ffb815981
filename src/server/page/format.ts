/** `50000.00` → `50,000.00` (digits grouped; amounts stay decimal strings, never floats). */
export function groupDigits(amount: string): string {
  const [whole = '', fraction] = amount.split('.');
  let grouped = '';
  for (let index = 0; index < whole.length; index++) {
    if (index > 0 && (whole.length - index) % 3 === 0) grouped += ',';
    grouped += whole[index];
  }
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** Time left until `iso`, e.g. `23 h 59 min`, or `expired`. */
export function timeLeft(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now;
  if (ms <= 0) return 'expired';
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * What became of a resolved request's run, e.g. `approved — resumed at 14:02:11`,
 * `approved — waiting for a resumer`, `rejected — resume failed, retrying: …`.
 */
export function resolutionLine(
  status: string,
  resumption: { state: string; at?: string; outcome?: string; error?: string } | undefined,
): string {
  if (!resumption) return status;
  if (resumption.state === 'waiting') return `${status} — waiting for a resumer`;
  if (resumption.state === 'retrying') {
    return `${status} — resume failed, retrying: ${resumption.error ?? 'unknown error'}`;
  }
  const at = resumption.at ? new Date(resumption.at).toLocaleString() : 'an unknown time';
  return resumption.outcome === 'not_waiting'
    ? `${status} — the run no longer waited on it (${at})`
    : `${status} — resumed at ${at}`;
}
