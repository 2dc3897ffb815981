import { describe, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';

const inCi = process.env.CI === 'true' || process.env.CI === '1';

/** Whether IsolatedProcessSandbox can run on this machine (bubblewrap, user namespaces, a cgroup). */
export const isolation = IsolatedProcessSandbox.availability();
const defaultIsolation = isolation;

/**
 * A suite that needs IsolatedProcessSandbox: runs where bubblewrap works; elsewhere it is
 * skipped with the reason shown — except in CI, where a missing bubblewrap is a failure.
 * `allowWeaker`: the suite runs where the sandbox can run in those weaker modes.
 */
export function describeIsolated(
  name: string,
  suite: () => void,
  options: { allowWeaker?: readonly string[] } = {},
): void {
  const isolation = options.allowWeaker
    ? IsolatedProcessSandbox.availability({ allowWeaker: options.allowWeaker })
    : defaultIsolation;
  if (isolation.available) {
    describe(name, suite);
  } else if (inCi) {
    describe(name, () => {
      it('runs in CI (bubblewrap must be installed: .ci/run installs it)', () => {
        throw new Error(isolation.reason);
      });
    });
  } else {
    describe.skip(`${name} — skipped: ${isolation.reason}`, () => {
      it('needs bubblewrap', () => undefined);
    });
  }
}
