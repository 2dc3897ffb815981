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
