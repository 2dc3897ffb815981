import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuditLog } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import {
  type SecretRef,
  SecretsProvider,
  type ToolExecuteArgs,
  tool,
} from '../../src/tools/index.js';

const VALUE = 'sk_live_51HxYzAbCdEfGhIjKlMnOpQr';

function provider() {
  return SecretsProvider.fromMap({ STRIPE_KEY: VALUE, OTHER_KEY: 'other-secret-value' });
}

type Execute = (args: ToolExecuteArgs<Record<string, never>>) => Promise<{ text: string }>;

function secretTool(execute: Execute, secrets: string[] = ['STRIPE_KEY']) {
  return tool({
    name: 'charge',
    description: 'Charge a card.',
    safetyClass: 'read',
    input: z.object({}),
    output: z.object({ text: z.string() }),
    secrets,
    execute,
  });
}

describe('SecretsProvider and SecretRef', () => {
  it('hands tools refs that print, serialise and inspect as [REDACTED:NAME]', async () => {
    let seen: SecretRef | undefined;
    const charge = secretTool(async ({ secrets }) => {
      seen = secrets.get('STRIPE_KEY');
      return { text: `${seen} ${JSON.stringify({ key: seen })} ${inspect(seen)} ${String(seen)}` };
    });
    const result = await executeTool(charge, {}, { secrets: provider() });
    expect(result).toMatchObject({
      status: 'success',
      content: JSON.stringify({
        text: '[REDACTED:STRIPE_KEY] {"key":"[REDACTED:STRIPE_KEY]"} [REDACTED:STRIPE_KEY] [REDACTED:STRIPE_KEY]',
      }),
    });
    expect(inspect(seen, { showHidden: true, depth: 5 })).not.toContain(VALUE);
    expect(JSON.stringify(structuredClone(seen))).not.toContain(VALUE);
  });

  it('reveals the value inside execute, but not after it returned (secret_access_denied)', async () => {
    let leaked: SecretRef | undefined;
    let inside = '';
    const charge = secretTool(async ({ secrets }) => {
      leaked = secrets.get('STRIPE_KEY');
      inside = leaked.reveal();
      return { text: 'ok' };
    });
    await executeTool(charge, {}, { secrets: provider() });
    expect(inside).toBe(VALUE);
    expect(() => leaked!.reveal()).toThrow(
      expect.objectContaining({ code: 'secret_access_denied' }),
    );
  });

  it('refuses a reveal from a callback that outlives the execution', async () => {
    let later: Promise<unknown> | undefined;
    const charge = secretTool(async ({ secrets }) => {
      const ref = secrets.get('STRIPE_KEY');
      later = new Promise((resolve) =>
        setTimeout(() => resolve(Promise.resolve().then(() => ref.reveal())), 5),
      ).catch((error) => error);
      return { text: 'ok' };
    });
    await executeTool(charge, {}, { secrets: provider() });
    const error = await later;
    expect(VeridexError.is(error, 'secret_access_denied')).toBe(true);
  });

  it('gives a tool only the secrets it declares (secret_not_found otherwise)', async () => {
    const greedy = secretTool(async ({ secrets }) => ({ text: secrets.get('OTHER_KEY').reveal() }));
    const audit = new AuditLog();
    const result = await executeTool(
      greedy,
      {},
      { secrets: provider(), audit, threadId: 't', toolCallId: 'c' },
    );
    expect(result).toMatchObject({ status: 'error', code: 'secret_not_found' });
    if (result.status === 'error') expect(result.message).toMatch(/does not declare/);
    const types = (await audit.events('t')).map((event) => event.type);
    expect(types).toEqual(['security_event', 'tool_failed']);
  });

  it('fails with secret_not_found when a declared secret is not configured', async () => {
    const charge = secretTool(async ({ secrets }) => ({
      text: secrets.get('STRIPE_KEY').reveal(),
    }));
    const result = await executeTool(
      charge,
      {},
      { secrets: SecretsProvider.fromEnv(['STRIPE_KEY'], {}) },
    );
    expect(result).toMatchObject({ status: 'error', code: 'secret_not_found' });
    if (result.status === 'error') expect(result.message).toMatch(/not configured/);
  });

  it('reads only allowlisted environment variables', () => {
    const secrets = SecretsProvider.fromEnv(['A_KEY', 'MISSING'], {
      A_KEY: 'value-a',
      B_KEY: 'value-b',
    });
    expect(secrets.names()).toEqual(['A_KEY']);
  });

  it('keeps a secret the tool echoes out of the tool message and the audit log', async () => {
    const echo = secretTool(async ({ secrets }) => ({
      text: `the key is ${secrets.get('STRIPE_KEY').reveal()}`,
    }));
    const audit = new AuditLog();
    const result = await executeTool(
      echo,
      {},
      { secrets: provider(), audit, threadId: 't', toolCallId: 'c' },
    );
    expect(result.status === 'success' && result.content).toBe(
      '{"text":"the key is [REDACTED:STRIPE_KEY]"}',
    );
    const events = JSON.stringify(await audit.events('t'));
    expect(events).not.toContain(VALUE);
    expect(events).toContain('"secret"');
  });

  it('keeps a secret the tool throws out of the error message and the audit log', async () => {
    const thrower = secretTool(async ({ secrets }) => {
      throw new Error(`auth failed with key ${secrets.get('STRIPE_KEY').reveal()}`);
    });
    const audit = new AuditLog();
    const result = await executeTool(
      thrower,
      {},
      { secrets: provider(), audit, threadId: 't', toolCallId: 'c' },
    );
    expect(result).toMatchObject({ status: 'error', code: 'tool_failed' });
    expect(JSON.stringify(result)).not.toContain(VALUE);
    expect(result.status === 'error' && result.message).toContain('[REDACTED:STRIPE_KEY]');
    expect(JSON.stringify(await audit.events('t'))).not.toContain(VALUE);
  });
});
