import { describe, expect, it } from 'vitest';
import { detectConflict, higherConfidenceWins, type MemoryRecord } from '../../src/memory/index.js';

function record(
  content: string,
  confidence = 0.7,
  timestamp = '2026-01-01T00:00:00.000Z',
): MemoryRecord {
  return {
    id: `mem_${content.length}_${confidence}`,
    tier: 'semantic',
    namespace: ['t'],
    key: 'k',
    version: 1,
    content,
    confidence,
    tags: [],
    provenance: {
      threadId: 't',
      runId: 't',
      turn: 0,
      timestamp,
      source: 'user',
      trust: 'high',
      writeId: 'w',
    },
    validFrom: timestamp,
    createdAt: timestamp,
    storedAt: timestamp,
    strength: 1,
    reinforcedAt: timestamp,
    recallCount: 0,
  };
}

describe('detectConflict', () => {
  const verdict = (a: string, b: string) => detectConflict(record(a), record(b), 0.9);

  it('calls the same content words a duplicate', () => {
    expect(verdict('User prefers concise answers', 'the user PREFERS concise answers.')).toBe(
      'duplicate',
    );
  });

  it('calls a negated statement a conflict', () => {
    expect(verdict('Bob is allergic to peanuts', 'Bob is not allergic to peanuts')).toBe(
      'conflict',
    );
  });

  it('calls a different value in the value slot a conflict', () => {
    expect(verdict("Alice's favourite colour is blue", "Alice's favourite colour is green")).toBe(
      'conflict',
    );
    expect(
      verdict('The billing service runs on port 8443', 'The billing service runs on port 9000'),
    ).toBe('conflict');
  });

  it('calls a different subject, or a reworded statement, related rather than conflicting', () => {
    expect(verdict('Alice lives in Lisbon', 'Bob lives in Lisbon')).toBe('related');
    expect(
      verdict('Alice prefers dark mode in the editor', 'Alice likes dark mode in her editor'),
    ).toBe('related');
  });
});

describe('higherConfidenceWins', () => {
  it('keeps the record with the higher confidence', () => {
    expect(higherConfidenceWins(record('a', 0.9), record('b', 0.6))).toBe('existing');
    expect(higherConfidenceWins(record('a', 0.6), record('b', 0.9))).toBe('incoming');
  });

  it('gives a tie to the newer observation, and equal times to the incoming record', () => {
    const older = record('a', 0.8, '2026-01-01T00:00:00.000Z');
    const newer = record('b', 0.8, '2026-02-01T00:00:00.000Z');
    expect(higherConfidenceWins(older, newer)).toBe('incoming');
    expect(higherConfidenceWins(newer, older)).toBe('existing');
    expect(higherConfidenceWins(older, record('c', 0.8, older.provenance.timestamp))).toBe(
      'incoming',
    );
  });
});
