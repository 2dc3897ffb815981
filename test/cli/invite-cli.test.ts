import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { createDatabase, migrate } from '../../src/db/index.js';
import { PostgresApproverDirectory } from '../../src/identity/index.js';
import { startApprovalsServer } from '../../src/server/index.js';
import { postgresUrl, uniqueSchema } from '../support/databases.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

describe.runIf(postgresUrl)('veridex approvers invite', () => {
  it('prints a one-time link with which the approver registers a passkey in the inbox', async () => {
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', uniqueSchema());
    const db = await createDatabase({ url: url.toString() });
    await migrate(db);
    const server = await startApprovalsServer({ db, port: 0 });
    try {
      const lines: string[] = [];
      const io = { out: (line = '') => lines.push(line), err: (line = '') => lines.push(line) };
      const code = await runCli(
        [
          'approvers',
          'invite',
          'dave@ops.example',
          '--name',
          'Dave',
          '--origin',
          server.origin,
          '--database-url',
          url.toString(),
        ],
        io,
      );
      expect(code, lines.join('\n')).toBe(0);
      const link = lines.find((line) => line.startsWith(`${server.origin}/#/enrol/`))!;
      const invitation = link.slice(link.lastIndexOf('/') + 1);
      const post = (path: string, body: unknown) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const authenticator = new SoftAuthenticator(server.origin);
      const options = await (await post('/api/passkeys/register/options', { invitation })).json();
      const registered = await post('/api/passkeys/register', {
        invitation,
        response: authenticator.register(options),
      });
      expect(registered.status).toBe(200);
      const dave = await new PostgresApproverDirectory(db).get('dave@ops.example');
      expect(dave?.keys.map((key) => key.type)).toEqual(['webauthn']);
      expect((await post('/api/passkeys/register/options', { invitation })).status).toBe(410);
    } finally {
      await server.close();
      await db.close();
    }
  });
});
