import dgram from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { VeridexError } from '../errors/index.js';
import type { SandboxViolation } from './sandbox.js';

// Loaded first in a LocalProcessSandbox child, before any tool code. Node 20's permission
// model covers neither the network nor signals, so they are guarded here: TCP/TLS connections,
// UDP sends and DNS queries only to allowlisted hosts; no custom `lookup` (it would map an
// allowlisted name to any address); no custom DNS servers; `process.kill` of this process only.
// A guard for honest mistakes and known tricks, not an isolation boundary: code that reaches
// Node's internals can get around it. IsolatedProcessSandbox is the boundary.

const GUARDED = Symbol.for('veridex.networkGuard');
let isAllowed: (host: string) => boolean = () => false;
let report: (violation: SandboxViolation) => void = () => undefined;
let configured = false;

/**
 * Opens the hosts `allowed` accepts; refusals are passed to `onViolation`. Called once, by the
 * sandbox, before the tool runs.
 * @throws VeridexError `sandbox_violation` when something configured the guard first.
 */
export function configureNetworkGuard(
  allowed: (host: string) => boolean,
  onViolation: (violation: SandboxViolation) => void,
): void {
  if (configured) {
    throw new VeridexError(
      'sandbox_violation',
      'The network guard was configured before the sandbox configured it: refusing to run.',
      { details: { capability: 'http', reason: 'guard tampered with' } },
    );
  }
  configured = true;
  isAllowed = allowed;
  report = onViolation;
  installNetworkGuard();
}

function refuse(capability: 'http' | 'process', target: string, reason: string): never {
  report({ capability, target, reason });
  const what = capability === 'process' ? 'Signal to' : 'Network access to';
  throw new VeridexError('sandbox_violation', `${what} ${target} refused: ${reason}.`, {
    details: { capability, target, reason },
  });
}

function checkHost(host: string, what = 'host'): void {
  if (!isAllowed(host)) refuse('http', host, `${what} ${host} is not on the network allowlist`);
}

function noCustomLookup(options: unknown, target: string): void {
  if (typeof (options as { lookup?: unknown } | null)?.lookup === 'function') {
    refuse(
      'http',
      target,
      'a custom DNS lookup is not allowed (it could map any name to any address)',
    );
  }
}

type Fn = (...args: unknown[]) => unknown;
function guard<T extends object>(
  target: T,
  name: keyof T & string,
  wrap: (original: Fn) => Fn,
): void {
  const original = target[name] as unknown as Fn & { [GUARDED]?: true };
  if (typeof original !== 'function' || original[GUARDED]) return;
  const wrapped = Object.assign(wrap(original), { [GUARDED]: true as const });
  (target as Record<string, unknown>)[name] = wrapped;
}

/** Installs the guard (idempotent: also re-checked after a startup snapshot is restored). */
export function installNetworkGuard(): void {
  guard(
    net.Socket.prototype,
    'connect',
    (original) =>
      function guardedConnect(this: net.Socket, ...args: unknown[]) {
        // net.connect() passes its normalised arguments as one array: [options, callback].
        const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
        let host: string;
        if (typeof first === 'object' && first !== null) {
          const options = first as { host?: string; path?: string };
          if (options.path !== undefined)
            refuse('http', String(options.path), 'local sockets are not allowed');
          host = options.host ?? 'localhost';
          noCustomLookup(first, host);
        } else if (typeof first === 'string' && Number.isNaN(Number(first))) {
          refuse('http', first, 'local sockets are not allowed');
        } else {
          host = typeof second === 'string' ? second : 'localhost';
        }
        checkHost(host);
        return original.apply(this, args);
      },
  );
  guardUdp();
  guardDns();
  for (const name of ['kill', '_kill', '_debugProcess'] as const) {
    guard(
      process as unknown as Record<string, unknown>,
      name,
      (original) =>
        function guardedKill(this: unknown, ...args: unknown[]) {
          if (Number(args[0]) !== process.pid || typeof args[0] === 'object') {
            refuse(
              'process',
              `pid ${String(args[0])}`,
              'signals to other processes are not allowed',
            );
          }
          return original.apply(this, args);
        },
    );
  }
  syncBuiltinESMExports();
}

function guardUdp(): void {
  const Original = dgram.Socket as unknown as Fn & { prototype: object; [GUARDED]?: true };
  if (!Original[GUARDED]) {
    // `new dgram.Socket(...)` bypasses createSocket, and so does the prototype's constructor.
    const Guarded = function Socket(type: unknown, listener?: unknown) {
      noCustomLookup(type, 'udp');
      return Reflect.construct(Original, [type, listener]);
    } as unknown as Fn & { prototype: object; [GUARDED]?: true };
    Guarded.prototype = Original.prototype;
    Guarded[GUARDED] = true;
    Object.defineProperty(Original.prototype, 'constructor', { value: Guarded, writable: true });
    (dgram as { Socket: unknown }).Socket = Guarded;
  }
  guard(dgram, 'createSocket', (original) => (...args: unknown[]) => {
    noCustomLookup(args[0], 'udp');
    return original(...args);
  });
  const prototype = dgram.Socket.prototype as unknown as Record<string, unknown>;
  guard(
    prototype,
    'connect',
    (original) =>
      function guardedUdpConnect(this: unknown, ...args: unknown[]) {
        checkHost(typeof args[1] === 'string' ? args[1] : 'localhost');
        return original.apply(this, args);
      },
  );
  guard(
    prototype,
    'send',
    (original) =>
      function guardedSend(this: dgram.Socket, ...args: unknown[]) {
        let connected = true;
        try {
          this.remoteAddress();
        } catch {
          connected = false;
        }
        if (!connected) {
          // send(msg, offset, length, port, address) or send(msg, port, address): as Node reads them.
          const [, , length, port, address] = args;
          const long = Boolean(address) || (Boolean(port) && typeof port !== 'function');
          const destination = long ? address : length;
          checkHost(typeof destination === 'string' ? destination : 'localhost');
        }
        return original.apply(this, args);
      },
  );
}

function guardDns(): void {
  const lookup =
    (original: Fn) =>
    (hostname: unknown, ...rest: unknown[]) => {
      checkHost(String(hostname), 'DNS lookup of');
      return original(hostname, ...rest);
    };
  const query = (original: Fn) =>
    function guardedQuery(this: unknown, name: unknown, ...rest: unknown[]) {
      // A query name carries data to whichever server answers: only allowlisted names.
      checkHost(String(name), 'DNS query for');
      return original.call(this, name, ...rest);
    };
  const noServers = () => () =>
    refuse('http', 'dns', 'custom DNS servers are not allowed (queries could reach any host)');
  guard(dns, 'lookup', lookup);
  guard(dns.promises, 'lookup', lookup);
  for (const target of [
    dns,
    dns.promises,
    dns.Resolver.prototype,
    dns.promises.Resolver.prototype,
  ]) {
    const record = target as unknown as Record<string, unknown>;
    for (const name of Object.keys(record).concat(Object.getOwnPropertyNames(target))) {
      if (/^resolve|^reverse$|^lookupService$/.test(name)) guard(record, name, query);
    }
    guard(record, 'setServers', noServers);
    guard(record, 'setLocalAddress', noServers);
  }
}

installNetworkGuard();
