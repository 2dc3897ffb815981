import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AuditLog,
  Ed25519Signer,
  Ed25519Verifier,
  EVIDENCE_PAYLOAD_TYPE,
  type EvidenceBundle,
  type EvidenceVerifier,
  encodeBase64,
  generateKeyPair,
  HmacSigner,
  preAuthEncoding,
  sealEvidence,
  verifyEvidence,
} from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { evidenceFileName, sealThreadEvidence } from '../../src/nodes/index.js';

async function events(threadId: string) {
  const audit = new AuditLog();
  await audit.append({ threadId, type: 'run_started', payload: {} });
  await audit.append({ threadId, type: 'transfer_executed', payload: { tool: 'transfer' } });
  return { audit, events: await audit.events(threadId) };
}

describe('key ids are namespaced by algorithm', () => {
  const agent = generateKeyPair();
  const agentKeyId = new Ed25519Verifier(agent.publicKey).keyId;
  const sharedSecret = 'a partner also holds this secret 0123456789';

  it('prefixes a chosen HMAC key id, so it never equals an Ed25519 key id', () => {
    expect(new HmacSigner(sharedSecret, { keyId: agentKeyId }).keyId).toBe(`hmac:${agentKeyId}`);
    expect(new HmacSigner(sharedSecret, { keyId: 'hmac:partner' }).keyId).toBe('hmac:partner');
    expect(new HmacSigner(sharedSecret, { keyId: 'partner' }).keyId).toBe('hmac:partner');
  });

  it('never lets an HMAC key check a signature claimed by an Ed25519 key id (forgery attempt)', async () => {
    const { events: chain } = await events('thread-forged');
    // The holder of the shared HMAC secret forges a bundle "signed by the agent's Ed25519 key".
    const hmac = new HmacSigner(sharedSecret, { keyId: agentKeyId });
    const forged = sealEvidence({ threadId: 'thread-forged', events: chain }, [hmac]);
    forged.signatures[0]!.keyid = agentKeyId;
    // An auditor trusts both keys; the HMAC one was configured under the Ed25519 id, listed first.
    const keys = [hmac, new Ed25519Verifier(agent.publicKey)];
    const report = verifyEvidence(forged, { keys });
    expect(report.valid).toBe(false);
    expect(report.signatures).toEqual([{ keyid: agentKeyId, status: 'invalid' }]);

    // A hand-rolled verifier that claims the Ed25519 id for HMAC is ignored too.
    const aliasing: EvidenceVerifier = {
      keyId: agentKeyId,
      algorithm: 'hmac-sha256',
      verify: (message, signature) => hmac.verify(message, signature),
    };
    expect(verifyEvidence(forged, { keys: [aliasing] }).signatures).toEqual([
      { keyid: agentKeyId, status: 'unknown_key' },
    ]);
    // The genuine agent signature still verifies.
    const genuine = sealEvidence({ threadId: 'thread-forged', events: chain }, [
      new Ed25519Signer(agent.privateKey),
    ]);
    expect(verifyEvidence(genuine, { keys }).valid).toBe(true);
  });

  it('refuses to seal with a signer whose key id is outside its namespace', async () => {
    const { events: chain } = await events('thread-misnamed');
    const signer = new Ed25519Signer(agent.privateKey);
    const misnamed = {
      keyId: 'hmac:x',
      algorithm: 'ed25519' as const,
      sign: signer.sign.bind(signer),
    };
    try {
      sealEvidence({ threadId: 'thread-misnamed', events: chain }, [misnamed]);
      expect.unreachable();
    } catch (error) {
      expect(VeridexError.is(error, 'signer_key_invalid')).toBe(true);
    }
  });

  it('treats an id two trusted keys of one algorithm share as proving nothing', async () => {
    const { events: chain } = await events('thread-twice');
    const one = new HmacSigner('first secret of thirty-two bytes or more', { keyId: 'ops' });
    const two = new HmacSigner('second secret of thirty-two bytes or more', { keyId: 'ops' });
    const bundle: EvidenceBundle = sealEvidence({ threadId: 'thread-twice', events: chain }, [one]);
    const report = verifyEvidence(bundle, { keys: [two, one] });
    expect(report.valid).toBe(false);
    expect(report.reasons.join(' ')).toMatch(/more than one trusted key/);
    // Sanity: the encoding of what was signed is the DSSE PAE.
    expect(
      one.verify(
        preAuthEncoding(EVIDENCE_PAYLOAD_TYPE, Buffer.from(bundle.payload, 'base64')),
        Buffer.from(bundle.signatures[0]!.sig, 'base64'),
      ),
    ).toBe(true);
    expect(encodeBase64(new Uint8Array([1]))).toBe('AQ==');
  });
});

describe('evidence file names', () => {
  it('gives acme/1 and acme_1 different files, each holding its own thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'evidence-names-'));
    const signer = new Ed25519Signer(generateKeyPair().privateKey);
    for (const threadId of ['acme/1', 'acme_1', 'Acme_1', 'acme:1']) {
      const { audit } = await events(threadId);
      await sealThreadEvidence(threadId, { audit, signers: [signer], outDir: dir });
    }
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(4);
    expect(evidenceFileName('acme/1')).toBe('acme_2f1.json');
    expect(evidenceFileName('acme_1')).toBe('acme_5f1.json');
    const body = (file: string) =>
      JSON.parse(
        Buffer.from(
          (JSON.parse(readFileSync(join(dir, file), 'utf8')) as EvidenceBundle).payload,
          'base64',
        ).toString('utf8'),
      ) as { threadId: string };
    expect(body(evidenceFileName('acme/1')).threadId).toBe('acme/1');
    expect(body(evidenceFileName('acme_1')).threadId).toBe('acme_1');
  });

  it('is injective, safe as a file name and case-insensitive-file-system safe (property)', () => {
    const id = fc.string({ unit: 'binary', maxLength: 120 });
    fc.assert(
      fc.property(id, id, (a, b) => {
        const [nameA, nameB] = [evidenceFileName(a), evidenceFileName(b)];
        for (const name of [nameA, nameB]) {
          expect(name).toMatch(/^[a-z0-9._~-]+\.json$/);
          expect(name.startsWith('.')).toBe(false);
          expect(name.length).toBeLessThanOrEqual(205);
        }
        if (a !== b) expect(nameA.toLowerCase()).not.toBe(nameB.toLowerCase());
      }),
      { numRuns: 2000 },
    );
    // Near-collisions an attacker would try.
    const tricky = [
      'a_2f',
      'a/',
      'A',
      'a',
      '.',
      '..',
      '_',
      '_5f',
      'x'.repeat(300),
      'x'.repeat(301),
    ];
    expect(new Set(tricky.map(evidenceFileName)).size).toBe(tricky.length);
  });
});
