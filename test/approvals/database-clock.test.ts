import { afterEach, expect, it, vi } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { approvalsIn, escalate, transferProposal } from '../support/proposals.js';

// Found by `npm run soak`: an approver process whose clock ran 90 s behind approved requests
// after their deadline, and the transfers ran. Deadlines and decision times are judged by the
// database's clock, which every process shares. A second clock needs a server of its own, so
// these run on PostgreSQL only (PGlite runs inside this process and reads its clock).

function manager(db: Database, defaultTimeoutMs = 60_000) {
  return approvalsIn(db, { approvers: testApproverInits(['alice']), defaultTimeoutMs });
}

/** From here on this process's clock (Date) is off by `skewMs`; the server's is not. */
function skewProcessClock(skewMs: number): void {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + skewMs, shouldAdvanceTime: true });
}

async function databaseNow(db: Database): Promise<number> {
  const { rows } = await db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return rows[0]!.now.getTime();
}

afterEach(() => {
  vi.useRealTimers();
});

describeEachDatabase(
  'approval deadlines are judged by the database clock',
  ({ db }) => {
    it('refuses an approval sent after the deadline by a process whose clock is behind', async () => {
      const request = await manager(db(), 1_500).request(
        transferProposal('thread-clock', 'call_late'),
        escalate('human_required'),
      );
      while ((await databaseNow(db())) <= Date.parse(request.expiresAt) + 50) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      skewProcessClock(-90_000);
      const late = manager(db());
      const error = await late.decide(request.id, signAs(request, 'alice')).catch((e) => e);
      expect(VeridexError.is(error, 'approval_expired'), String(error)).toBe(true);
      expect((await late.get(request.id))?.status).toBe('expired');
    });

    it('does not expire requests early from a process whose clock is ahead', async () => {
      const request = await manager(db()).request(
        transferProposal('thread-clock', 'call_ahead'),
        escalate('human_required'),
      );
      skewProcessClock(+120_000);
      const ahead = manager(db());
      expect(await ahead.sweep()).toEqual([]);
      expect((await ahead.get(request.id))?.status).toBe('pending');
      expect((await ahead.listPending()).map((pending) => pending.id)).toEqual([request.id]);
      const approved = await ahead.decide(request.id, signAs(request, 'alice'));
      expect(approved.status).toBe('approved');
    });

    it('records when the database took the decision, not what a skewed process believes', async () => {
      const request = await manager(db()).request(
        transferProposal('thread-clock', 'call_record'),
        escalate('human_required'),
      );
      skewProcessClock(-90_000);
      const decided = await manager(db()).decide(request.id, signAs(request, 'alice'));
      vi.useRealTimers();
      const serverNow = await databaseNow(db());
      expect(Math.abs(serverNow - Date.parse(decided.decidedAt!))).toBeLessThan(30_000);
      expect(Math.abs(serverNow - Date.parse(decided.decisions[0]!.decidedAt))).toBeLessThan(
        30_000,
      );
    });
  },
  { backends: ['postgres'] },
);
