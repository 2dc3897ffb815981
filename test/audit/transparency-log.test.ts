import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditLog,
  type AuditStore,
  Ed25519Signer,
  eventTree,
  FileHeadWitness,
  generateKeyPair,
  headLeafHash,
  MemoryAuditStore,
  MemoryHeadWitness,
  MemoryTreeHeadStore,
  MerkleTree,
  PostgresAuditStore,
  PostgresTreeHeadStore,
  readHeadFile,
  type SignedTreeHead,
  sealAuditThread,
  signTreeHead,
  TREE_HEAD_FORMAT,
  TransparencyLog,
  type TreeHeadStore,
  verifyEvidence,
  verifyWitnessedHeads,
} from '../../src/audit/index.js';
import { describeEachDatabase } from '../support/databases.js';

const signer = new Ed25519Signer(generateKeyPair().privateKey);
const keys = [signer.verifier()];
const dir = mkdtempSync(join(tmpdir(), 'veridex-heads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function threadHead(threadId: string, treeSize: number, root = 'ab'): SignedTreeHead {
  return signTreeHead(
    {
      format: TREE_HEAD_FORMAT,
      scope: 'thread',
      threadId,
      treeSize,
      rootHash: root.repeat(32),
      timestamp: '2026-03-01T09:00:00.000Z',
    },
    [signer],
  );
}

async function appendEvents(audit: AuditLog, threadId: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    await audit.append({ threadId, type: 'turn_started', payload: { index } });
  }
}

function storeContract(
  name: string,
  makeStore: () => TreeHeadStore,
  open?: () => Promise<TreeHeadStore>,
) {
  describe(`${name} tree head store`, () => {
    it('records thread heads once per size, in recording order, and refuses another root', async () => {
      const store = makeStore();
      const a = `a-${randomUUID()}`;
      const b = `b-${randomUUID()}`;
      await store.recordThreadHead(threadHead(a, 2));
      await store.recordThreadHead(threadHead(b, 1));
      await store.recordThreadHead(threadHead(a, 1));
      const again = { ...threadHead(a, 2), timestamp: '2026-03-02T00:00:00.000Z' };
      expect(await store.recordThreadHead(again)).toEqual(threadHead(a, 2));
      expect((await store.threadHeads(a)).map((head) => head.treeSize)).toEqual([1, 2]);
      expect(
        (await store.globalLeaves()).map((head) => `${head.threadId}:${head.treeSize}`),
      ).toEqual([`${a}:2`, `${b}:1`, `${a}:1`]);
      await expect(store.recordThreadHead(threadHead(a, 2, 'cd'))).rejects.toMatchObject({
        code: 'audit_log_inconsistent',
      });
    });

    it('records global heads once per size and refuses another root', async () => {
      const store = makeStore();
      const global = (size: number, root: string) => ({
        ...threadHead('x', size, root),
        scope: 'global' as const,
        threadId: undefined,
      });
      const first = signTreeHead(global(1, 'ab'), [signer]);
      expect(await store.recordGlobalHead(first)).toEqual(first);
      expect(
        await store.recordGlobalHead(
          signTreeHead({ ...global(1, 'ab'), timestamp: '2027-01-01T00:00:00.000Z' }, [signer]),
        ),
      ).toEqual(first);
      await store.recordGlobalHead(signTreeHead(global(0, 'ef'), [signer]));
      expect((await store.globalHeads()).map((head) => head.treeSize)).toEqual([0, 1]);
      await expect(
        store.recordGlobalHead(signTreeHead(global(1, 'cd'), [signer])),
      ).rejects.toMatchObject({
        code: 'audit_log_inconsistent',
      });
    });

    if (open) {
      it('gives concurrent recorders on separate connections gap-free global indexes', async () => {
        const stores = [makeStore(), await open(), await open()];
        const threads = Array.from({ length: 12 }, (_, index) => `c${index}-${randomUUID()}`);
        await Promise.all(
          threads.map((threadId, index) =>
            stores[index % 3]!.recordThreadHead(threadHead(threadId, 1)),
          ),
        );
        const leaves = await stores[0]!.globalLeaves();
        expect(leaves).toHaveLength(12);
        expect(new Set(leaves.map((head) => head.threadId))).toEqual(new Set(threads));
      });
    }
  });
}

function transparencyContract(name: string, makeStore: () => AuditStore) {
  describe(`TransparencyLog over ${name}`, () => {
    it('signs a head per grown thread and a global head over them, published to the witnesses', async () => {
      const witness = new MemoryHeadWitness({ keys });
      const audit = new AuditLog({ store: makeStore(), witnesses: [witness] });
      const log = new TransparencyLog({
        audit,
        signers: [signer],
        now: () => new Date('2026-03-01T10:00:00Z'),
      });
      const [a, b] = [`a-${randomUUID()}`, `b-${randomUUID()}`];
      await appendEvents(audit, a, 3);
      await appendEvents(audit, b, 2);
      const first = await log.publish();
      expect(first.threads.map((head) => [head.threadId, head.treeSize])).toEqual(
        expect.arrayContaining([
          [a, 3],
          [b, 2],
        ]),
      );
      expect(first.threads.find((head) => head.threadId === a)?.rootHash).toBe(
        eventTree(await audit.events(a)).root(),
      );
      const leaves = await audit.heads.globalLeaves();
      expect(first.global).toMatchObject({ scope: 'global', treeSize: leaves.length });
      expect(first.global.rootHash).toBe(new MerkleTree(leaves.map(headLeafHash)).root());

      // Nothing grew: no new thread head, the same global head, nothing re-published.
      const published = witness.accepted.length;
      const second = await log.publish();
      expect(second.threads).toEqual([]);
      expect(second.global).toEqual(first.global);
      expect(witness.accepted).toHaveLength(published);

      await appendEvents(audit, a, 2);
      const third = await log.publish();
      expect(third.threads.map((head) => [head.threadId, head.treeSize])).toEqual([[a, 5]]);
      expect(third.global.treeSize).toBe(first.global.treeSize + 1);
      expect(witness.refused).toEqual([]);
      const verified = await verifyWitnessedHeads(
        audit,
        witness.accepted.map((value, at) => ({ at, value })),
        { keys },
      );
      expect(verified).toMatchObject({ valid: true });
      expect(verified.checks.filter((check) => check.globalIndex !== undefined).length).toBe(
        third.global.treeSize,
      );
    });

    it('seals bundles that link to the previous head, so successive bundles are one history', async () => {
      const audit = new AuditLog({ store: makeStore() });
      const threadId = `t-${randomUUID()}`;
      await appendEvents(audit, threadId, 3);
      const first = await sealAuditThread(audit, { threadId }, [signer]);
      await appendEvents(audit, threadId, 2);
      const second = await sealAuditThread(audit, { threadId }, [signer]);
      const result = verifyEvidence(second.bundle, { keys, previous: first.bundle });
      expect(result.reasons).toEqual([]);
      expect(result.log?.previous).toMatchObject({ treeSize: 3, consistent: true });
      expect((await audit.heads.threadHeads(threadId)).map((head) => head.treeSize)).toEqual([
        3, 5,
      ]);
      // Sealing again without new events records nothing new and still verifies.
      const third = await sealAuditThread(audit, { threadId }, [signer]);
      expect(verifyEvidence(third.bundle, { keys, previous: second.treeHead }).valid).toBe(true);
      expect(await audit.heads.threadHeads(threadId)).toHaveLength(2);
    });
  });
}

storeContract('memory', () => new MemoryTreeHeadStore());
transparencyContract('a memory store', () => new MemoryAuditStore());

describeEachDatabase('audit tree heads', ({ db, open }) => {
  storeContract(
    'PostgreSQL',
    () => new PostgresTreeHeadStore(db()),
    async () => new PostgresTreeHeadStore(await open()),
  );
  transparencyContract('PostgreSQL', () => new PostgresAuditStore(db()));

  it('keeps heads in the database for another process to verify against', async () => {
    const audit = new AuditLog({ store: new PostgresAuditStore(db()) });
    const threadId = `t-${randomUUID()}`;
    await appendEvents(audit, threadId, 4);
    const head = await new TransparencyLog({ audit, signers: [signer] }).signThread(threadId);
    const other = new AuditLog({ store: new PostgresAuditStore(await open()) });
    expect(await other.heads.threadHeads(threadId)).toEqual([head]);
  });
});

describe('witnesses', () => {
  async function twoHeads() {
    const audit = new AuditLog();
    const threadId = `t-${randomUUID()}`;
    await appendEvents(audit, threadId, 3);
    const tree3 = eventTree(await audit.events(threadId));
    const log = new TransparencyLog({ audit, signers: [signer] });
    const head3 = await log.signThread(threadId);
    await appendEvents(audit, threadId, 2);
    const tree5 = eventTree(await audit.events(threadId));
    const head5 = await log.signThread(threadId);
    return { head3, head5, tree3, tree5 };
  }

  it('the memory witness accepts consistent heads and refuses a rewrite, a truncation or a stranger', async () => {
    const { head3, head5, tree5 } = await twoHeads();
    const witness = new MemoryHeadWitness({ keys });
    await witness.submit(head3, []);
    await expect(witness.submit(head5, [])).rejects.toMatchObject({
      code: 'audit_log_inconsistent',
    });
    await witness.submit(head5, tree5.consistencyProof(3));
    const forged = signTreeHead({ ...head5, treeSize: 6, rootHash: head3.rootHash }, [signer]);
    await expect(witness.submit(forged, tree5.consistencyProof(3))).rejects.toThrow(
      /not consistent/,
    );
    await expect(witness.submit(head3, [])).rejects.toThrow(/older than/);
    const stranger = new Ed25519Signer(generateKeyPair().privateKey);
    await expect(
      witness.submit(signTreeHead({ ...head5, treeSize: 7 }, [stranger]), []),
    ).rejects.toThrow(/no signature by a trusted key/);
    expect(witness.accepted).toEqual([head3, head5]);
    expect(witness.refused).toHaveLength(4);
  });

  it('the file witness appends one canonical JSON line per head and checks consistency too', async () => {
    const { head3, head5, tree5 } = await twoHeads();
    const file = join(dir, `${randomUUID()}.jsonl`);
    const witness = new FileHeadWitness(file, { keys });
    expect(await witness.heads()).toEqual([]);
    await witness.submit(head3, []);
    await witness.submit(head5, tree5.consistencyProof(3));
    const forged = signTreeHead({ ...head5, treeSize: 6 }, [signer]);
    await expect(witness.submit(forged, tree5.consistencyProof(3))).rejects.toMatchObject({
      code: 'audit_log_inconsistent',
    });
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(await new FileHeadWitness(file).heads()).toEqual([head3, head5]);
    expect(await new FileHeadWitness(file).latest(`thread:${head5.threadId}`)).toEqual(head5);
  });

  it('verifyWitnessedHeads reports malformed and untrusted lines by line number', async () => {
    const { head3 } = await twoHeads();
    const file = join(dir, `${randomUUID()}.jsonl`);
    const stranger = new Ed25519Signer(generateKeyPair().privateKey);
    writeFileSync(
      file,
      `${JSON.stringify(head3)}\n\nnot json\n${JSON.stringify(signTreeHead(head3, [stranger]))}\n`,
    );
    const entries = readHeadFile(file);
    expect(entries.map((entry) => entry.line)).toEqual([1, 3, 4]);
    const result = await verifyWitnessedHeads(
      new AuditLog(),
      entries.map((entry) => ({ at: entry.line, value: entry.value })),
      { keys },
    );
    expect(result.valid).toBe(false);
    expect(result.checks.map((check) => [check.at, check.status])).toEqual([
      [1, 'inconsistent'], // an empty log cannot extend a head of 3 events
      [3, 'invalid'],
      [4, 'invalid'],
    ]);
    expect(result.first?.reason).toMatch(/now has only 0: entries it covered were dropped/);
  });
});
