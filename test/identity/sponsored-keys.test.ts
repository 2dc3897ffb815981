import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import { MemoryApproverDirectory } from '../../src/identity/index.js';
import { testApproverInits, testKey } from '../support/approvers.js';

describe('revoking a sponsor (in-memory directory, as the database one)', () => {
  it("revokes every other approver's key it sponsors, and nothing else", async () => {
    const directory = new MemoryApproverDirectory(testApproverInits(['alice', 'bob']));
    await directory.add({ id: 'pat' });
    await directory.addKey('pat', ed.getPublicKey(testKey('pat')), { sponsor: 'ALICE' });
    await directory.addKey('pat', ed.getPublicKey(testKey('pat-2')));
    await directory.revoke('alice');
    const pat = (await directory.get('pat'))!;
    expect(pat.revokedAt).toBeUndefined();
    expect(pat.keys.map((key) => key.revokedAt !== undefined)).toEqual([true, false]);
    expect((await directory.get('bob'))!.keys.every((key) => key.revokedAt === undefined)).toBe(
      true,
    );
  });
});
