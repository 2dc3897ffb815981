import { describe, expect, it } from 'vitest';
import { speakersOf, trustedSponsorChain } from '../../src/audit/same-person.js';

const approver = (id: string, ...sponsors: string[]) => ({
  id,
  keys: sponsors.length === 0 ? [{}] : sponsors.map((sponsor) => ({ sponsor })),
});

describe('the offline sponsor chain', () => {
  it('follows every sponsor up the chain, through any key of each sponsor', () => {
    const approvers = [
      approver('alice'),
      approver('erin', 'alice'),
      approver('erin-ops', 'erin'),
      approver('frank', 'erin-ops'),
    ];
    expect(trustedSponsorChain(approvers, 'erin-ops')).toEqual(['erin-ops', 'erin', 'alice']);
    expect(speakersOf({ approver: 'frank', sponsors: ['erin-ops', 'erin', 'alice'] })).toEqual([
      'frank',
      'erin-ops',
      'erin',
      'alice',
    ]);
  });

  it('stops at a cycle and at a look-alike spelling of a sponsor already in the chain', () => {
    const approvers = [
      approver('alice', 'bob'),
      approver('bob', 'ALICE'),
      approver('carol', 'alice'),
    ];
    expect(trustedSponsorChain(approvers, 'alice')).toEqual(['alice', 'bob']);
  });

  it('is bounded in depth whatever the file holds', () => {
    const approvers = Array.from({ length: 100 }, (_, index) =>
      approver(`a${index}`, `a${index + 1}`),
    );
    expect(trustedSponsorChain(approvers, 'a0')).toHaveLength(16);
  });

  it('reads an unsponsored key as no chain', () => {
    expect(trustedSponsorChain([approver('alice')], undefined)).toEqual([]);
    expect(speakersOf({ approver: 'alice' })).toEqual(['alice']);
  });
});
