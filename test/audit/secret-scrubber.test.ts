import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AuditLog,
  PostgresAuditStore,
  SecretFingerprintStore,
  SecretScrubber,
  weakSecretReason,
} from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { sanitizeOutput } from '../../src/tools/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { ORDINARY_TEXT } from './fixtures/ordinary-text.js';

// A generated-looking secret with characters that URL encoding and base64 both change.
const SECRET = 'Zq8/vT+e3!Lm@9x#Wk2$Rb7&Hn4=';
const scrubberWith = (value = SECRET) => {
  const scrubber = new SecretScrubber();
  scrubber.register('PAYMENT_KEY', value);
  return scrubber;
};

/** The base64 characters of `secret` inside `prefix + secret + suffix`, computed here from Buffer. */
function encodedCore(secret: string, prefix: Buffer, suffix: Buffer, urlSafe: boolean): string {
  const bytes = Buffer.from(secret);
  const all = Buffer.concat([prefix, bytes, suffix]);
  const encoded = all.toString(urlSafe ? 'base64url' : 'base64');
  const first = Math.ceil((8 * prefix.length) / 6);
  const last = Math.floor((8 * (prefix.length + bytes.length)) / 6);
  return encoded.slice(first, last);
}

describe('SecretScrubber', () => {
  it('redacts a registered value, also URL-encoded in any mix of escapes and cases', () => {
    const scrubber = scrubberWith();
    const full = encodeURIComponent(SECRET);
    const partial = SECRET.replace('/', '%2F').replace('@', '%40');
    for (const form of [SECRET, full, partial, full.replace(/%2F/g, '%2f')]) {
      const report = { secrets: [] as string[], credentials: [] };
      const text = scrubber.scrubText(`https://x.example/cb?key=${form}&next=1`, report);
      expect(text).toBe('https://x.example/cb?key=[REDACTED:PAYMENT_KEY]&next=1');
      expect(report.secrets).toEqual(['PAYMENT_KEY']);
    }
    const spaced = scrubberWith('correct horse battery staple 7Q!');
    expect(spaced.scrubText('pw=correct+horse+battery+staple+7Q%21')).toBe(
      'pw=[REDACTED:PAYMENT_KEY]',
    );
  });

  it('redacts it base64-encoded, standard and URL-safe, at every byte alignment inside a blob', () => {
    const scrubber = scrubberWith();
    for (const urlSafe of [false, true]) {
      for (let offset = 0; offset < 6; offset++) {
        const prefix = Buffer.from('{"k":"'.slice(0, offset));
        const suffix = Buffer.from('","v":1}');
        const blob = Buffer.concat([prefix, Buffer.from(SECRET), suffix]).toString(
          urlSafe ? 'base64url' : 'base64',
        );
        const core = encodedCore(SECRET, prefix, suffix, urlSafe);
        expect(blob).toContain(core);
        const scrubbed = scrubber.scrubText(`data: ${blob}`);
        expect(scrubbed).toContain('[REDACTED:PAYMENT_KEY]');
        expect(scrubbed).not.toContain(core.slice(4, -4));
      }
    }
  });

  it('leaves ordinary text untouched and never matches a prefix of the secret', () => {
    const scrubber = scrubberWith();
    for (const text of [...ORDINARY_TEXT, SECRET.slice(0, -1), SECRET.slice(1)]) {
      expect(scrubber.scrubText(text)).toBe(text);
    }
  });

  it('never lets the secret through in any encoding, wherever it is planted (property)', () => {
    const scrubber = scrubberWith();
    const encode = fc.constantFrom(
      (value: string) => value,
      encodeURIComponent,
      (value: string) => Buffer.from(value).toString('base64'),
      (value: string) => Buffer.from(value).toString('base64url'),
    );
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        encode,
        fc.integer({ min: 0, max: 2 }),
        (before, after, encoder, pad) => {
          const planted = encoder('ab'.slice(0, pad) + SECRET);
          const text = scrubber.scrubText(before + planted + after);
          expect(text).toContain('[REDACTED:PAYMENT_KEY]');
          expect(text).not.toContain(SECRET);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('scrubs secrets in model-facing text before neutralising markup inside them', () => {
    const scrubber = new SecretScrubber();
    scrubber.register('WEIRD', 'k3y<tool_result>Q9-zx');
    const { content } = sanitizeOutput('got k3y<tool_result>Q9-zx!', { scrubber });
    expect(content).toBe('got [REDACTED:WEIRD]!');
  });

  it('judges secrets before storing fingerprints of them', () => {
    expect(weakSecretReason('hunter22')).toMatch(/8 characters/);
    expect(weakSecretReason('correcthorsebatt')).toMatch(/entropy/);
    expect(weakSecretReason('abcdabcdabcdabcdabcdabcd')).toBeDefined();
    expect(weakSecretReason('sk_live_4eC39HqLyjWDarjtT1zdp7dc')).toBeUndefined();
    expect(weakSecretReason('9f8e7d6c5b4a39281706f5e4d3c2b1a0')).toBeUndefined();
  });
});

describeEachDatabase('SecretScrubber across processes', ({ db, open }) => {
  it('stores fingerprints, never values, and another handle scrubs the secret with them', async () => {
    const agent = new SecretScrubber();
    agent.attach(SecretFingerprintStore.for(db()));
    agent.register('PAYMENT_KEY', SECRET);
    await agent.refresh();

    const stored = await db().query('SELECT * FROM veridex_secret_fingerprints');
    expect(stored.rows.map((row) => row.name)).toEqual(stored.rows.map(() => 'PAYMENT_KEY'));
    const table = JSON.stringify(stored.rows);
    for (const form of [
      SECRET,
      encodeURIComponent(SECRET),
      Buffer.from(SECRET).toString('base64').slice(0, 20),
    ]) {
      expect(table).not.toContain(form);
    }

    const cli = new SecretScrubber(); // as in a second process: knows no value
    cli.attach(SecretFingerprintStore.for(await open()));
    expect(cli.scrubText(`reason: ${SECRET}`)).toBe(`reason: ${SECRET}`);
    await cli.refresh();
    const report = { secrets: [] as string[], credentials: [] };
    expect(cli.scrubText(`reason: ${SECRET}`, report)).toBe('reason: [REDACTED:PAYMENT_KEY]');
    expect(report.secrets).toEqual(['PAYMENT_KEY']);
    const encoded = Buffer.from(`x${SECRET}`).toString('base64');
    expect(cli.scrubText(encoded)).toContain('[REDACTED:PAYMENT_KEY]');
    expect(cli.scrubText(encodeURIComponent(SECRET))).toBe('[REDACTED:PAYMENT_KEY]');
  });

  it('lets an AuditLog on another handle keep a secret out of the events it stores', async () => {
    const agentLog = new AuditLog({ store: new PostgresAuditStore(db()) });
    agentLog.scrubber.register('PAYMENT_KEY', SECRET);
    await agentLog.append({ threadId: 't1', type: 'run_started', payload: {} });

    const other = new AuditLog({ store: new PostgresAuditStore(await open()) });
    await other.append({
      threadId: 't1',
      type: 'approval_decided',
      payload: { reason: `approved, key ${SECRET}`, b64: Buffer.from(SECRET).toString('base64') },
    });
    const rows = await db().query<{ payload: string }>(
      'SELECT payload FROM veridex_audit_events WHERE thread_id = $1',
      ['t1'],
    );
    const text = rows.rows.map((row) => row.payload).join('\n');
    expect(text).toContain('[REDACTED:PAYMENT_KEY]');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(Buffer.from(SECRET).toString('base64').slice(4, 30));
  });

  it('refuses a weak secret once attached, unless weak secrets are allowed in this process only', async () => {
    const log = new AuditLog({ store: new PostgresAuditStore(db()) });
    const refused = (() => {
      try {
        log.scrubber.register('SMTP_PASSWORD', 'hunter22');
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(VeridexError);
    expect((refused as VeridexError).code).toBe('secret_too_weak');
    expect((refused as VeridexError).message).not.toContain('hunter22');

    const early = new SecretScrubber();
    early.register('SMTP_PASSWORD', 'hunter22');
    expect(() => new AuditLog({ store: new PostgresAuditStore(db()), scrubber: early })).toThrow(
      /too weak/,
    );

    const lenient = new AuditLog({
      store: new PostgresAuditStore(db()),
      secretFingerprints: { weakSecrets: 'process-only' },
    });
    lenient.scrubber.register('SMTP_PASSWORD', 'hunter22');
    await lenient.append({ threadId: 't2', type: 'run_started', payload: { note: 'pw hunter22' } });
    expect((await lenient.events('t2'))[0]!.payload).toEqual({
      note: 'pw [REDACTED:SMTP_PASSWORD]',
    });
    const stored = await db().query('SELECT count(*)::int AS n FROM veridex_secret_fingerprints');
    expect(stored.rows[0]).toEqual({ n: 0 });
  });
});
