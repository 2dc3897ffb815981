// IsolatedProcessSandbox bounds what a call writes to its jail and its share of the kernel pools
// every sandbox shares (README "Sandboxes"); the attacks are in test/attacks/
// (hostile-tool-cannot-fill-the-host-disk-…, hostile-tool-cannot-exhaust-kernel-pools-…).
import { rmSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { shell } from '../attacks/fixtures/repass-probe-tools.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';

const { base, jail } = attackJail('veridex-jail-pools-test-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** What `script` printed in the sandbox, or the error the call ended with. */
async function run(box: IsolatedProcessSandbox, script: string): Promise<string> {
  const { result } = await runHostileTool(box, shell, script);
  const output = (result as { output?: { result: string } }).output;
  return output ? (JSON.parse(output.result) as { stdout: string }).stdout : JSON.stringify(result);
}

describeIsolated('IsolatedProcessSandbox jail and kernel pool bounds', () => {
  it('refuses bounds that are not whole numbers in range (config_invalid)', () => {
    for (const options of [
      { jailWriteMb: 0 },
      { jailWriteFiles: 1.5 },
      { maxInotifyInstances: -1 },
      { maxInotifyWatches: Number.NaN },
      { maxPseudoTerminals: -1 },
    ]) {
      expect(() => new IsolatedProcessSandbox({ jailRoot: jail, ...options })).toThrow(
        expect.objectContaining({ code: 'config_invalid' }),
      );
    }
  });

  it('gives a call the standard /dev, a terminal and an inotify instance within its bounds', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail });
    const printed = await run(
      box,
      [
        'echo x > /dev/null && head -c 4 /dev/urandom | wc -c',
        'ls /dev/fd/ >/dev/null && echo fd',
        'python3 -c \'import ctypes, os; libc = ctypes.CDLL(None); os.open("/dev/ptmx", os.O_RDWR); print("pty", libc.inotify_init() >= 0)\'',
        'id -u',
      ].join('; '),
    );
    expect(printed.split('\n').slice(0, 3)).toEqual(['4', 'fd', 'pty True']);
    expect(printed.split('\n')[3]).toBe(String(box.configuration.hostUid));
  });

  it('holds a call to maxPseudoTerminals and maxInotifyInstances (0: none at all)', async () => {
    const none = new IsolatedProcessSandbox({
      jailRoot: jail,
      maxPseudoTerminals: 0,
      maxInotifyInstances: 0,
    });
    const count = `python3 -c 'import ctypes, os
libc = ctypes.CDLL(None)
ptys = 0
try:
    while ptys < 50: os.open("/dev/ptmx", os.O_RDWR); ptys += 1
except OSError: pass
print(ptys, sum(1 for _ in range(50) if libc.inotify_init() >= 0))'`;
    expect(await run(none, count)).toBe('0 0\n');
    const some = new IsolatedProcessSandbox({
      jailRoot: jail,
      maxPseudoTerminals: 3,
      maxInotifyInstances: 2,
    });
    expect(await run(some, count)).toBe('3 2\n');
  });
});
