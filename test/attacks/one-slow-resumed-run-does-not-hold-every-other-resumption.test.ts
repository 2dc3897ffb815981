// Resumer pass (startResumer), denial of service. A resumer handles resolutions one after
// another, and each resume runs the thread on until it ends or suspends again — the model's
// next turns included, with no deadline. One run that takes long (a model provider that hangs,
// a tool without a timeout, a long agent loop after the approved call) holds every other
// resolution in that resumer for as long as it lasts: approved payments of other threads wait
// unresumed although their approvals are in. With one resumer per app (the README's set-up)
// nothing else picks them up; and the stuck resolution's lease runs out meanwhile (it is never
// renewed), so another resumer would take that very thread again rather than the waiting ones.
// Secure: one slow run does not delay the others (resumes run side by side up to a bound, or
// each under a deadline, with the lease renewed while a run is in hand).
import { expect, it } from 'vitest';
import { type ResumeOutcome, startResumer } from '../../src/nodes/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { eventually, resumerApp } from './fixtures/resumer-app.js';

describeEachDatabase('a resumer with one run that does not end', (context) => {
  it('still resumes the other approved runs', async () => {
    const db = context.db();
    let answer!: () => void;
    const hungProvider = new Promise<void>((resolve) => (answer = resolve));
    const app = await resumerApp(db, {
      // The model provider never answers this thread's turn after the transfer.
      onTurnAfterTransfer: (threadId) => (threadId === 't-slow' ? hungProvider : undefined),
    });
    const slow = await app.suspend('t-slow');
    const other = await app.suspend('t-other');
    await app.approve(slow);
    await app.approve(other);

    const outcomes: ResumeOutcome[] = [];
    const resumer = startResumer({
      graph: app.graph,
      agentId: 'payout-bot',
      db,
      audit: app.audit,
      pollMs: 100,
      config: { durability: 'sync' },
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    try {
      await eventually(() => outcomes.some((o) => o.threadId === 't-other'), 20_000);
      expect(outcomes).toContainEqual(
        expect.objectContaining({ threadId: 't-other', outcome: 'resumed' }),
      );
      expect(app.counters.transfers).toEqual(['50000.00', '50000.00']);
    } finally {
      answer();
      await resumer.stop();
    }
  });
});
