import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AuditLog,
  deriveEventId,
  loadOrCreateSigner,
  PostgresAuditStore,
  sealEvidence,
  verifyEvidence,
} from '../audit/index.js';
import { createDatabase, DEFAULT_PGLITE_DIR, migrate } from '../db/index.js';
import { type CliIo, EXIT } from './io.js';

export const DEMO_USAGE = `Usage: veridex demo

Runs the end-to-end scenario on embedded PGlite in ./.veridex (no server, no keys needed).`;

/**
 * `veridex demo`: records a short audited run on PGlite, seals it into a signed evidence
 * bundle, verifies it, and prints the command to verify it offline. Exits 1 on any deviation.
 */
export async function demoCommand(_argv: string[], io: CliIo): Promise<number> {
  const db = await createDatabase({ dataDir: DEFAULT_PGLITE_DIR });
  try {
    await migrate(db);
    const { signer, created, publicKeyPath } = loadOrCreateSigner();
    io.out(
      created
        ? `Generated an Ed25519 evidence key ${signer.keyId} (${publicKeyPath})`
        : `Using evidence key ${signer.keyId}`,
    );
    const audit = new AuditLog({ store: new PostgresAuditStore(db) });
    const threadId = `demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    const steps = [
      { type: 'run_started', payload: { prompt: 'Check the treasury balance.' } },
      { type: 'tool_proposed', payload: { tool: 'get_balance', arguments: { currency: 'USD' } } },
      { type: 'policy_decision', payload: { verdict: 'allow', rule: 'safety_class.read' } },
      {
        type: 'tool_executed',
        payload: { tool: 'get_balance', output: { amount: '1000000.00', currency: 'USD' } },
      },
      { type: 'run_completed', payload: { output: 'The balance is 1,000,000.00 USD.' } },
    ] as const;
    for (const [index, step] of steps.entries()) {
      await audit.append({ threadId, eventId: deriveEventId(threadId, index), ...step });
      io.out(`  ${String(index + 1).padStart(2)}. ${step.type}`);
    }
    const bundle = sealEvidence(
      { threadId, events: await audit.events(threadId), subject: { demo: 'evidence' } },
      [signer],
    );
    const dir = './.veridex/evidence';
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${threadId}.json`);
    writeFileSync(file, `${JSON.stringify(bundle, null, 2)}\n`);
    const result = verifyEvidence(bundle, { keys: [signer.verifier()] });
    if (!result.valid) {
      io.err(`Evidence did not verify: ${result.reasons.join('; ')}`);
      return EXIT.failed;
    }
    io.out(
      `Evidence bundle written to ${file} and verified (${result.body?.events.length} events).`,
    );
    io.out('Verify it offline with:');
    io.out(`  npx veridex verify ${file} --key ${publicKeyPath}`);
    return EXIT.ok;
  } finally {
    await db.close();
  }
}
