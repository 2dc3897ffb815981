import { describe, expect, it } from 'vitest';
import { resolutionLine, timeLeft } from '../../src/server/page/format.js';

describe('what the inbox says about a resolved request', () => {
  it('says whether the run continued, never "time left" once it resolved', () => {
    expect(resolutionLine('approved', { state: 'waiting' })).toBe(
      'approved — waiting for a resumer',
    );
    const at = '2026-11-28T10:00:00.000Z';
    expect(resolutionLine('approved', { state: 'resumed', at, outcome: 'resumed' })).toBe(
      `approved — resumed at ${new Date(at).toLocaleString()}`,
    );
    expect(resolutionLine('rejected', { state: 'resumed', at, outcome: 'not_waiting' })).toMatch(
      /^rejected — the run no longer waited on it/,
    );
    expect(resolutionLine('expired', { state: 'retrying', error: 'db down' })).toBe(
      'expired — resume failed, retrying: db down',
    );
    expect(resolutionLine('approved', undefined)).toBe('approved');
  });

  it('counts time left to a deadline and says expired after it', () => {
    const now = Date.parse('2026-11-28T10:00:00.000Z');
    expect(timeLeft('2026-11-28T11:05:00.000Z', now)).toBe('1 h 5 min');
    expect(timeLeft('2026-11-28T10:00:00.000Z', now)).toBe('expired');
  });
});
