import { describe, expect, it } from 'vitest';
import type { SandboxViolation } from '../../src/sandbox/index.js';
import { ViolationTally } from '../../src/tools/violation-tally.js';

const http = (target: string, reportedBy?: 'child'): SandboxViolation => ({
  capability: 'http',
  target,
  reason: 'not on the allowlist',
  ...(reportedBy ? { reportedBy } : {}),
});

describe('ViolationTally', () => {
  it('keeps each distinct (capability, target) once, with how many times it was refused', () => {
    const tally = new ViolationTally();
    for (let repeat = 0; repeat < 1_000; repeat++) tally.add(http('https://decoy/'));
    tally.add(http('https://exfil/'));
    tally.add({ capability: 'fs', target: 'https://decoy/', reason: 'other capability' });
    expect(tally.summary()).toEqual({
      violations: [
        { ...http('https://decoy/'), count: 1_000 },
        { ...http('https://exfil/'), count: 1 },
        { capability: 'fs', target: 'https://decoy/', reason: 'other capability', count: 1 },
      ],
      total: 1_002,
    });
  });

  it('lists what the sandbox observed ahead of what the child claims, whatever the order', () => {
    const tally = new ViolationTally();
    tally.add(http('https://claimed/', 'child'));
    tally.add(http('https://observed/'));
    const [first, second] = tally.summary().violations;
    expect(first).toMatchObject({ target: 'https://observed/' });
    expect(first).not.toHaveProperty('reportedBy');
    expect(second).toMatchObject({ target: 'https://claimed/', reportedBy: 'child' });
  });

  it('caps the distinct entries of each source apart, and counts what it drops', () => {
    const tally = new ViolationTally(4);
    for (let index = 0; index < 10; index++) tally.add(http(`https://claim-${index}/`, 'child'));
    for (let index = 0; index < 6; index++) tally.add(http(`https://seen-${index}/`));
    tally.add(http('https://seen-5/'));
    const summary = tally.summary();
    expect(summary.violations.map((entry) => entry.target)).toEqual([
      'https://seen-0/',
      'https://seen-1/',
      'https://seen-2/',
      'https://seen-3/',
      'https://claim-0/',
      'https://claim-1/',
      'https://claim-2/',
      'https://claim-3/',
    ]);
    expect(summary.total).toBe(17);
    expect(summary.dropped).toEqual({ distinct: 8, count: 9 });
  });

  it('clips a target or reason longer than 300 characters', () => {
    const tally = new ViolationTally();
    tally.add({ capability: 'fs', target: 'a'.repeat(1_000_000), reason: 'b'.repeat(5_000) });
    const [entry] = tally.summary().violations;
    expect(entry!.target).toHaveLength(300);
    expect(entry!.reason).toHaveLength(300);
  });
});
