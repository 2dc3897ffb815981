import { isIP } from 'node:net';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Checks one network allowlist entry: an exact host (`api.example.com`, `127.0.0.1`, `::1`)
 * or a wildcard over subdomains (`*.example.com`, which does not match `example.com` itself).
 * Returns what is wrong, or `undefined` when the entry is valid.
 *
 * @example validateHostPattern('*.stripe.com') // undefined
 */
export function validateHostPattern(pattern: unknown): string | undefined {
  if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > 253) {
    return `entries must be host names like "api.example.com" or "*.example.com"; got ${JSON.stringify(pattern)}.`;
  }
  const host = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
  if (isIP(stripBrackets(host)) !== 0 && !pattern.startsWith('*.')) return undefined;
  const labels = host.toLowerCase().split('.');
  if (labels.length < (pattern.startsWith('*.') ? 2 : 1) || !labels.every((l) => LABEL.test(l))) {
    return `"${pattern}" is not a host name or "*.domain" wildcard (no schemes, ports, paths or bare "*").`;
  }
  return undefined;
}

/** True when `host` (as in a URL, lower-cased) is allowed by one of `patterns`. */
export function hostMatches(host: string, patterns: readonly string[]): boolean {
  const normalized = stripBrackets(host.toLowerCase()).replace(/\.$/, '');
  for (const raw of patterns) {
    const pattern = stripBrackets(raw.toLowerCase());
    if (pattern.startsWith('*.')) {
      if (normalized.endsWith(pattern.slice(1)) && isIP(normalized) === 0) return true;
    } else if (normalized === pattern) {
      return true;
    }
  }
  return false;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
