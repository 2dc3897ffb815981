// IsolatedProcessSandbox: the kernel's boundary. Every escape of issue 16 is tried for real and
// must fail here with no in-process guard loaded (the child has none).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { type AnyGovernedTool, SecretsProvider, tool } from '../../src/tools/index.js';
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
import { describeIsolated } from '../support/isolation.js';
import * as hostile from './fixtures/hostile-tools.js';

const { base, jail, outside } = attackJail('veridex-isolated-test-');
writeFileSync(join(jail, 'inside.txt'), 'inside');
afterAll(() => rmSync(base, { recursive: true, force: true }));

const call = runHostileTool;

function answer(result: unknown): string {
  expect(result).toMatchObject({ status: 'success' });
  return (result as { output: { result: string } }).output.result;
}

describe('IsolatedProcessSandbox where it cannot run', () => {
  it('throws sandbox_unavailable naming what to install when bubblewrap is missing', () => {
    expect(
      () => new IsolatedProcessSandbox({ jailRoot: jail, bwrapPath: join(base, 'no-bwrap') }),
    ).toThrow(
      expect.objectContaining({
        code: 'sandbox_unavailable',
        message: expect.stringMatching(/apt-get install bubblewrap/),
      }),
    );
  });

  it('throws sandbox_unavailable when the kernel refuses the namespaces (no silent downgrade)', () => {
    const fake = join(base, 'fake-bwrap');
    writeFileSync(
      fake,
      '#!/bin/sh\nif [ "$1" = --help ]; then echo "--disable-userns --size"; exit 0; fi\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
    );
    chmodSync(fake, 0o755);
    expect(IsolatedProcessSandbox.availability({ bwrapPath: fake })).toEqual({
      available: false,
      reason: expect.stringMatching(/No permissions to create new namespace.*user namespaces/),
    });
    expect(() => new IsolatedProcessSandbox({ jailRoot: jail, bwrapPath: fake })).toThrow(
      expect.objectContaining({ code: 'sandbox_unavailable' }),
    );
  });
});

describeIsolated('IsolatedProcessSandbox', () => {
  let box: IsolatedProcessSandbox;
  let tcp: TcpTarget;
  let udp: UdpTarget;
  let victim: Victim;
  const victimSecret = canary('victim');
  beforeAll(async () => {
    box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 20_000 });
    tcp = await tcpTarget('0.0.0.0');
    udp = await udpTarget();
    victim = spawnVictim({ VERIDEX_VICTIM_SECRET: victimSecret });
  });
  afterAll(async () => {
    box.close();
    victim.stop();
    await tcp.close();
    await udp.close();
  });

  it('runs the tool in a fresh sandbox with no privileges, its own host name and no network', async () => {
    expect((await call(box, hostile.upper, 'hello')).result).toMatchObject({
      output: { result: 'HELLO' },
    });
    const report = JSON.parse(answer((await call(box, hostile.selfReport, '')).result));
    expect(report).toMatchObject({
      noNewPrivs: '1',
      capEff: '0000000000000000',
      hostname: 'veridex-sandbox',
      interfaces: ['lo'],
    });
    expect(report.pid).toBeLessThan(10);
  });

  it('gives the child only the allowlisted environment, secrets on stdin and redacted', async () => {
    process.env.VERIDEX_TEST_VISIBLE = 'yes';
    process.env.VERIDEX_TEST_HIDDEN = 'no';
    const withEnv = new IsolatedProcessSandbox({
      jailRoot: jail,
      envAllowlist: ['VERIDEX_TEST_VISIBLE'],
    });
    expect(answer((await call(withEnv, hostile.listEnv, '')).result)).toBe('VERIDEX_TEST_VISIBLE');
    const secrets = SecretsProvider.fromMap({ API_TOKEN: 'tok-0123456789-secret' });
    const { result } = await call(box, hostile.echoSecret, '', { secrets });
    expect(result).toMatchObject({ content: '{"result":"key=[REDACTED:API_TOKEN]"}' });
  });

  it('enforces the same limits as LocalProcessSandbox, with the same codes', async () => {
    const limit = async (subject: AnyGovernedTool, arg: string, options: object) => {
      const sandbox = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 20_000, ...options });
      return ((await call(sandbox, subject, arg)).result as { details?: { limit?: string } })
        .details?.limit;
    };
    expect(await limit(hostile.burnCpu, '', { cpuMs: 300 })).toBe('cpu');
    expect(await limit(hostile.growHeap, '', { memoryMb: 64 })).toBe('memory');
    expect(await limit(hostile.growBuffers, '', { memoryMb: 64 })).toBe('memory');
    expect(await limit(hostile.flood, String(1024 * 1024), { maxOutputBytes: 64 * 1024 })).toBe(
      'output',
    );
    expect(await limit(hostile.hang, '', { timeoutMs: 300 })).toBe('time');
    // runTool's own timeout aborts the call: the sandbox is killed, not left running.
    const quick = tool({ ...hostile.hang, timeoutMs: 200 });
    expect((await call(box, quick, '')).result).toMatchObject({ code: 'tool_timeout' });
  }, 60_000);

  it('shows readPaths read-only and the jail read-write', async () => {
    const data = join(base, 'data');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'rates.csv'), 'EUR,1');
    const withData = new IsolatedProcessSandbox({ jailRoot: jail, readPaths: [data] });
    expect(answer((await call(withData, hostile.readRaw, join(data, 'rates.csv'))).result)).toBe(
      'EUR,1',
    );
    const written = answer(
      (await call(withData, hostile.writeEverywhere, [join(data, 'rates.csv')])).result,
    );
    expect(JSON.parse(written)).toEqual([]);
    expect(readFileSync(join(data, 'rates.csv'), 'utf8')).toBe('EUR,1');
  });

  it('stops a fork bomb at maxProcesses and leaves none of its processes behind', async () => {
    const marker = `61.${Math.floor(Math.random() * 1e6)}`;
    const bombed = new IsolatedProcessSandbox({
      jailRoot: jail,
      maxProcesses: 32,
      memoryMb: 4096, // so that the process limit, not memory, is what stops it
      timeoutMs: 30_000,
    });
    const { result } = await call(bombed, hostile.forkBomb, { count: 400, marker });
    if (bombed.configuration.hostUid === 0 && bombed.resourceLimits === 'rlimit') {
      // RLIMIT_NPROC does not bind host root, nor does a cgroup exist: the watchdog stops it.
      expect(result).toMatchObject({
        code: 'sandbox_limit_exceeded',
        details: { limit: 'processes' },
      });
    } else if ((result as { status: string }).status === 'success') {
      // The call's cgroup (pids.max), or RLIMIT_NPROC for any other user, refuses the forks...
      expect(JSON.parse(answer(result)).refused).toBeGreaterThan(0);
    } else {
      // ...unless the watchdog saw the tree pass the limit first.
      expect(result).toMatchObject({ details: { limit: 'processes' } });
    }
    const survivors = () => {
      try {
        return execFileSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' }).trim();
      } catch {
        return ''; // pgrep exits 1 when nothing matches
      }
    };
    for (let waited = 0; survivors() !== '' && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(survivors()).toBe('');
  }, 60_000);

  it('with prewarm, runs every call in a fresh sandbox started ahead of time', async () => {
    const warm = new IsolatedProcessSandbox({ jailRoot: jail, prewarm: true });
    try {
      const calls: string[] = [];
      for (let round = 0; round < 3; round++)
        calls.push(answer((await call(warm, hostile.whoami, '')).result).split(':')[1]!);
      expect(calls).toEqual(['1', '1', '1']);
      expect((await call(warm, hostile.readRaw, join(outside, 'secret.txt'))).result).toMatchObject(
        { status: 'error' },
      );
    } finally {
      warm.close();
    }
  });

  it('sees none of the host: no host files, no parent environment, no host processes', async () => {
    for (const path of ['/etc/passwd', join(outside, 'secret.txt'), '/root', '/home']) {
      const { result } = await call(box, hostile.readRaw, path);
      expect(result, path).toMatchObject({ status: 'error' });
      expect(JSON.stringify(result)).not.toContain('SECRET');
    }
    expect(answer((await call(box, hostile.readRaw, join(jail, 'inside.txt'))).result)).toBe(
      'inside',
    );
    // /proc/<pid>/environ shows what a process was started with: the victim's secret, and
    // this worker's own start-up environment (its PATH, at least).
    const environs = answer((await call(box, hostile.readEnviron, '')).result);
    expect(environs).not.toContain(victimSecret);
    expect(environs).not.toContain(String(process.env.PATH));
    expect(environs.split('\n').length).toBeLessThanOrEqual(3); // bwrap's init, the child
  });

  it('writes nowhere but the jail (its /tmp is private)', async () => {
    const hostTmp = join(tmpdir(), `veridex-pwned-${canary('tmp')}`);
    const refused = [join(outside, 'pwned.txt'), '/usr/pwned', '/etc/pwned', '/pwned'];
    const privateTmp = [hostTmp, join(base, 'pwned.txt')];
    const targets = [...refused, ...privateTmp, join(jail, 'ok.txt')];
    const written = JSON.parse(answer((await call(box, hostile.writeEverywhere, targets)).result));
    // Paths under /tmp land in the sandbox's own /tmp, gone with it; the rest is refused.
    expect(written).toEqual([...privateTmp, join(jail, 'ok.txt')]);
    for (const path of [...refused, ...privateTmp]) expect(existsSync(path), path).toBe(false);
    expect(readFileSync(join(jail, 'ok.txt'), 'utf8')).toBe('pwned');
  });

  it('signals no process outside: not the parent, not an unrelated process', async () => {
    for (const how of ['kill', '_kill']) {
      for (const pid of [victim.pid, process.pid]) {
        const { result } = await call(box, hostile.signal, { pid, how });
        expect(result, `${how} ${pid}`).toMatchObject({
          status: 'error',
          message: expect.stringMatching(/ESRCH/),
        });
      }
    }
    expect(victim.alive()).toBe(true);
  });

  it('reaches nothing over TCP: custom lookup, TLS, raw loopback or a host address', async () => {
    const hostAddress = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
    const before = tcp.connections();
    const secret = canary('tcp');
    for (const [subject, arg] of [
      [hostile.lookupTcp, { port: tcp.port, secret }],
      [hostile.lookupTls, { port: tcp.port }],
      [hostile.rawConnect, { host: '127.0.0.1', port: tcp.port, secret }],
      ...(hostAddress ? [[hostile.rawConnect, { host: hostAddress, port: tcp.port, secret }]] : []),
    ] as Array<[AnyGovernedTool, object]>) {
      expect((await call(box, subject, arg)).result).toMatchObject({ status: 'error' });
    }
    expect(tcp.connections()).toBe(before);
    expect(tcp.received()).not.toContain(secret);
  });

  it('reaches nothing over UDP or DNS, whatever lookup or resolver it brings', async () => {
    const secret = canary('udp');
    for (const how of ['createSocket', 'constructor', 'raw-ip']) {
      await call(box, hostile.lookupUdp, { port: udp.port, secret, how });
    }
    for (const how of ['callback', 'promises', 'system']) {
      expect(
        (await call(box, hostile.dnsExfiltrate, { port: udp.port, secret, how })).result,
      ).toMatchObject({
        status: 'error',
      });
    }
    expect(udp.received()).not.toContain(secret);
  });

  it('reads nothing outside while a second process swaps a directory for a symlink (injected and raw fs)', async () => {
    const racer = startSwapRacer(join(jail, 'race'), 'a', outside);
    const outcomes: Array<Record<string, number>> = [];
    try {
      await racer.started;
      for (const raw of [false, true]) {
        const path = raw ? join(jail, 'race/a/b/file.txt') : 'race/a/b/file.txt';
        const result = (
          await call(box, hostile.raceRead, {
            path,
            rounds: 30_000,
            disturbed: 30,
            raw,
            budgetMs: 5_000,
          })
        ).result;
        outcomes.push(JSON.parse(answer(result)));
      }
    } finally {
      await racer.stop();
    }
    for (const seen of outcomes) {
      expect(seen.SECRET, JSON.stringify(seen)).toBeUndefined();
      expect(
        Boolean(seen.inside) && Object.keys(seen).some((outcome) => outcome !== 'inside'),
        JSON.stringify(seen),
      ).toBe(true);
    }
  }, 120_000);

  it('refuses a hard link planted in the jail through the injected fs', async () => {
    expect((await call(box, hostile.readJailed, 'hard.txt')).result).toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('runs child processes, confined like itself', async () => {
    const listing = answer((await call(box, hostile.spawnShell, 'ls /')).result).split('\n');
    expect(listing).toContain('usr');
    for (const hidden of ['home', 'root', 'var', 'srv', 'opt'])
      expect(listing).not.toContain(hidden);
  });
});
