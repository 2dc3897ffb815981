import { isIP } from 'node:net';

/**
 * True when `host` is a literal IP address in a loopback, private, link-local, unique-local,
 * carrier-grade NAT, multicast or unspecified range — or `localhost` — i.e. somewhere a
 * server-side request forgery would aim (cloud metadata at 169.254.169.254, admin ports on
 * 127.0.0.1). Host names are not resolved: that is the allowlist's job.
 *
 * @example isPrivateAddress('169.254.169.254') // true
 */
export function isPrivateAddress(host: string): boolean {
  let address = host.toLowerCase();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  if (address === 'localhost' || address.endsWith('.localhost')) return true;
  const version = isIP(address);
  if (version === 4) return isPrivateV4(address);
  if (version !== 6) return false;
  // IPv4-mapped and -compatible IPv6 (::ffff:10.0.0.1, ::ffff:a00:1) carry an IPv4 address.
  const mapped = /^(?:0{0,4}:){0,5}(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return isPrivateV4(mapped[1]!);
  const hexMapped = /^(?:0{0,4}:){0,5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  if (hexMapped) {
    const high = Number.parseInt(hexMapped[1]!, 16);
    const low = Number.parseInt(hexMapped[2]!, 16);
    return isPrivateV4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  const expanded = expandV6(address);
  const first = Number.parseInt(expanded.slice(0, 4), 16);
  return (
    expanded === '0'.repeat(32) || // unspecified ::
    expanded === `${'0'.repeat(31)}1` || // loopback ::1
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link local fe80::/10
    (first & 0xff00) === 0xff00 // multicast ff00::/8
  );
}

function isPrivateV4(address: string): boolean {
  const [a, b] = address.split('.').map(Number) as [number, number, number, number];
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224
  );
}

function expandV6(address: string): string {
  const [head = '', tail] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(Math.max(0, missing)).fill('0'), ...tailGroups];
  return groups.map((group) => group.padStart(4, '0')).join('');
}
