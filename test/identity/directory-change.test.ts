import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ed25519Signer, generateKeyPair } from '../../src/audit/index.js';
import {
  checkDirectoryChangeProof,
  type DirectoryChangeStatement,
  parseDirectoryChangeProof,
  signDirectoryChange,
} from '../../src/identity/index.js';

const signer = new Ed25519Signer(generateKeyPair().privateKey);
const provingKey = {
  type: 'ed25519' as const,
  keyId: signer.keyId,
  publicKey: Buffer.from(signer.publicKey).toString('base64'),
};

const statements = fc.record({
  change: fc.constantFrom('approver_added', 'approver_revoked', 'key_added', 'key_revoked'),
  approver: fc.string({ maxLength: 40 }),
  keyId: fc.string({ maxLength: 40 }),
  audience: fc.string({ maxLength: 40 }),
  challenge: fc.string({ maxLength: 60 }),
}) as fc.Arbitrary<DirectoryChangeStatement>;

describe('directory change statements', () => {
  it('a proof verifies over exactly the statement signed, and over no other', () => {
    fc.assert(
      fc.property(statements, statements, (signed, other) => {
        const proof = signDirectoryChange(signed, signer);
        expect(checkDirectoryChangeProof(signed, proof, provingKey)).toBeUndefined();
        // Extra fields are not part of what is signed: the five fields are the statement.
        expect(
          checkDirectoryChangeProof({ ...signed, extra: 1 } as never, proof, provingKey),
        ).toBeUndefined();
        const same =
          JSON.stringify(Object.entries(signed)) === JSON.stringify(Object.entries(other));
        expect(checkDirectoryChangeProof(other, proof, provingKey) === undefined).toBe(same);
      }),
    );
  });

  it('refuses a proof naming another key, and never throws on garbage', () => {
    const statement: DirectoryChangeStatement = {
      change: 'key_added',
      approver: 'bob',
      keyId: 'webauthn:00',
      audience: 'http://localhost',
      challenge: 'c',
    };
    const proof = signDirectoryChange(statement, signer);
    const stranger = new Ed25519Signer(generateKeyPair().privateKey);
    expect(
      checkDirectoryChangeProof(statement, proof, {
        ...provingKey,
        keyId: stranger.keyId,
        publicKey: Buffer.from(stranger.publicKey).toString('base64'),
      }),
    ).toContain('names key');
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const parsed = parseDirectoryChangeProof(value);
        if (parsed) {
          expect(() => checkDirectoryChangeProof(statement, parsed, provingKey)).not.toThrow();
        }
      }),
    );
  });
});
