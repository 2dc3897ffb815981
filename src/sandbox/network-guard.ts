import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';
import { VeridexError } from '../errors/index.js';
import type { SandboxViolation } from './sandbox.js';

// Loaded first in a LocalProcessSandbox child, before any tool code. Node 20's permission
// model does not cover the network, so outgoing sockets, UDP and DNS are refused here unless
// the host is allowlisted. This is a guard for honest mistakes and simple attacks, not an
// isolation boundary: code that reaches Node's internal bindings can get around it.

let isAllowed: (host: string) => boolean = () => false;
let report: (violation: SandboxViolation) => void = () => undefined;

/** Opens the hosts `allowed` accepts; refusals are passed to `onViolation`. */
export function configureNetworkGuard(
  allowed: (host: string) => boolean,
  onViolation: (violation: SandboxViolation) => void,
): void {
  isAllowed = allowed;
  report = onViolation;
}

function refuse(capability: 'http', target: string, reason: string): never {
  report({ capability, target, reason });
  throw new VeridexError('sandbox_violation', `Network access to ${target} refused: ${reason}.`, {
    details: { capability, target, reason },
  });
}

const originalConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  // net.connect() passes its normalised arguments as one array: [options, callback].
  const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  let host: string | undefined;
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: string; path?: string };
    if (options.path !== undefined)
      refuse('http', String(options.path), 'local sockets are not allowed');
    host = options.host ?? 'localhost';
  } else if (typeof first === 'string' && Number.isNaN(Number(first))) {
    refuse('http', first, 'local sockets are not allowed');
  } else {
    host = typeof second === 'string' ? second : 'localhost';
  }
  if (!isAllowed(host)) refuse('http', host, `host ${host} is not on the network allowlist`);
  return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;

dgram.createSocket = ((..._args: unknown[]) =>
  refuse('http', 'udp', 'UDP sockets are not allowed')) as typeof dgram.createSocket;

const originalLookup = dns.lookup;
dns.lookup = ((hostname: string, ...rest: unknown[]) => {
  if (!isAllowed(hostname)) refuse('http', hostname, `DNS lookup of ${hostname} is not allowed`);
  return (originalLookup as (...a: unknown[]) => unknown)(hostname, ...rest);
}) as typeof dns.lookup;

const originalPromiseLookup = dns.promises.lookup;
dns.promises.lookup = ((hostname: string, ...rest: unknown[]) => {
  if (!isAllowed(hostname)) refuse('http', hostname, `DNS lookup of ${hostname} is not allowed`);
  return (originalPromiseLookup as (...a: unknown[]) => unknown)(hostname, ...rest);
}) as typeof dns.promises.lookup;
